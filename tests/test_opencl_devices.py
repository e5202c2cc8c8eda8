"""Several OpenCL devices as one backend (``opencl:PLATFORM:I,J`` and ``opencl:PLATFORM:all``,
host/opencl/devices.py), on PoCL: its one CPU device is all there is here, so these check the
spec, the routing of launches and the results (the model's, job by job); the two-GPU figures
are the GPU machine's (docs/engine.md)."""

import chess
import pytest

from chessaccel.host.backends import BackendError, get_backend
from chessaccel.host.engine.executors import BatchExecutor
from chessaccel.host.engine.hostsearch import CompiledSearch
from chessaccel.host.engine.search import Limits, SearchOptions
from chessaccel.host.opencl.devices import OpenCLDevices

from test_opencl_inflight import _jobs, _same_as_model

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


@pytest.fixture(scope="module")
def every_device():
    backend = get_backend("opencl:pocl:all")
    assert isinstance(backend, OpenCLDevices)
    yield backend.open()
    backend.close()


def test_the_specs_name_devices_or_all():
    assert get_backend("opencl:pocl:0,1").name == "opencl:pocl:0,1"
    assert get_backend("opencl:pocl:all").name == "opencl:pocl:all"
    for spec, words in (("opencl:pocl:0,x", "indices must be numbers"),
                        ("opencl:pocl:0,0", "named twice"),
                        ("opencl:pocl:one", "must be a number")):
        with pytest.raises(BackendError, match=words) as error:
            get_backend(spec)
        assert "\n" not in str(error.value)


def test_a_device_that_is_not_there_is_one_line():
    backend = get_backend("opencl:pocl:0,7")
    with pytest.raises(BackendError) as error:
        backend.open()
    assert "no device 7" in str(error.value) and "\n" not in str(error.value)


def test_launches_go_to_the_devices_and_equal_the_model(every_device):
    jobs = _jobs(31, 60)
    launches = [every_device.start_search(jobs[k:k + 20]) for k in range(0, 60, 20)]
    assert every_device._in_flight == [3] * len(every_device.devices)
    results = [r for launch in launches for r in launch.results()]
    assert every_device._in_flight == [0] * len(every_device.devices)
    assert _same_as_model(jobs, results) == []
    assert _same_as_model(jobs[:5], every_device.search_many(jobs[:5])) == []


def test_the_compiled_search_on_every_device_is_the_one_device_search(every_device):
    one = BatchExecutor(get_backend("opencl:pocl"))
    many = BatchExecutor(every_device)
    try:
        results = []
        for executor in (one, many):
            search = CompiledSearch(executor, 16, SearchOptions(hardware_plies=2))
            try:
                results.append(search.search(chess.Board(KIWIPETE), Limits(depth=4)))
            finally:
                search.close()
        a, b = results
        assert (a.score, a.best_move, a.nodes, a.jobs) == (b.score, b.best_move, b.nodes, b.jobs)
    finally:
        one.close()
