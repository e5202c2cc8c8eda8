"""Search launches in flight (PoCL): the batch executor merging the batches of several threads
into one launch, launches started asynchronously (``start_search``), the launch's pooled
buffers reused across sizes, and jobs stopped on the device when their batch is cancelled.
Every result a batch receives is compared with the model's, job by job."""

import random
import threading
import time

import pytest

from chessaccel.contract.bench import BENCH
from chessaccel.contract.defs import INF
from chessaccel.host.backends.base import Backend, Capabilities, JobResult
from chessaccel.host.engine.executors import BatchExecutor, ExecutorError, Job
from chessaccel.host.opencl.backend import OpenCLBackend
from chessaccel.model.position import parse_position
from chessaccel.model.search import search as model_search

import suites

#: lanes per compute unit for these tests: launch_jobs is then units x 8, room to merge batches
LANES = 8
BOARDS = [parse_position(job.fen)[0] for job in BENCH]
#: a job of some millions of nodes: seconds on PoCL unless it is stopped
LONG_JOB = Job(parse_position(next(j.fen for j in BENCH if j.name == "WAC.001"))[0], 6, -INF, INF)


def _jobs(seed, count, depths=(0, 1, 2)):
    """Leaf jobs of random-play and bench positions, narrow and full windows."""
    rng = random.Random(seed)
    boards = BOARDS + [suites.board_of(fen) for fen in suites.random_play_positions(seed, 40)]
    jobs = []
    for _ in range(count):
        alpha = rng.choice((-INF, -60, 0, 25))
        beta = INF if alpha == -INF else alpha + rng.choice((1, 1, 80))
        jobs.append(Job(rng.choice(boards), rng.choice(depths), alpha, beta))
    return jobs


_MODEL = {}


def _model(job):
    key = (job.board.key(), job.depth, job.alpha, job.beta)
    if key not in _MODEL:
        want = model_search(job.board.copy(), job.depth, job.alpha, job.beta)
        _MODEL[key] = (want.score, want.best_move, want.nodes)
    return _MODEL[key]


def _same_as_model(jobs, results):
    return [i for i, (job, got) in enumerate(zip(jobs, results))
            if (got.score, got.best_move, got.nodes) != _model(job)]


def _collect(batch, timeout=60):
    end = time.monotonic() + timeout
    while not batch.done():
        assert time.monotonic() < end, "batch never finished"
        batch.wait(0.5)
    return batch.results


@pytest.fixture
def executor():
    ex = BatchExecutor(OpenCLBackend("pocl", threads_per_unit=LANES))
    yield ex
    ex.close()


def test_launch_jobs_is_compute_units_times_lanes(executor):
    units = executor.backend.device.compute_units
    assert executor.launch_jobs == units * LANES
    assert BatchExecutor(OpenCLBackend("pocl").open()).launch_jobs == units   # PoCL: one lane


def test_batches_queued_together_go_in_one_launch_and_split_back(executor):
    """Batches queued while the executor's thread is held are merged into launches of at most
    launch_jobs jobs; each batch gets exactly its own jobs' results, equal to the model's."""
    batches = []
    cap = executor.launch_jobs
    with executor._cond:            # the thread cannot take a batch until all are queued
        for seed in range(6):
            jobs = _jobs(seed, 1 + seed % 4)
            batches.append((jobs, executor.submit(jobs)))
    for jobs, batch in batches:
        assert not _same_as_model(jobs, _collect(batch))
    total = sum(len(jobs) for jobs, _ in batches)
    assert executor.stats["jobs"] == total
    assert executor.stats["launches"] <= -(-total // cap) + 1 < len(batches)
    assert executor.stats["merged_batches"] >= 2


def test_many_threads_submitting_at_once_get_the_models_results(executor):
    bad, errors = [], []

    def thread(seed):
        rng = random.Random(seed)
        try:
            for round_ in range(12):
                jobs = _jobs(seed * 100 + round_, rng.randint(1, 5))
                results = _collect(executor.submit(jobs))
                bad.extend((seed, round_, i) for i in _same_as_model(jobs, results))
        except Exception as error:   # reported below, with the thread's seed
            errors.append((seed, error))

    threads = [threading.Thread(target=thread, args=(seed,)) for seed in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors and not bad
    assert executor.stats["batches"] == 6 * 12


def test_buffers_grow_and_are_reused_at_every_size():
    """The pooled buffers of a launch grow to the largest batch and are kept: batches of every
    size after them (smaller ones too) give the model's results."""
    backend = OpenCLBackend("pocl")
    capacities = []
    for size in (3, 150, 1, 70, 150, 9, 300, 2):
        jobs = _jobs(size, size, depths=(0, 1))
        assert not _same_as_model(jobs, backend.search_many(jobs)), size
        capacities.append(max(slot.capacity for slot in backend._free_slots))
    assert capacities == sorted(capacities) and capacities[-1] >= 300
    assert len(backend._free_slots) == 1         # one launch at a time: one set of buffers
    launches = [backend.start_search(_jobs(s, s, depths=(0, 1))) for s in (40, 5)]
    assert len(backend._free_slots) == 0         # two in flight: two sets
    for launch, size in zip(launches, (40, 5)):
        assert not _same_as_model(_jobs(size, size, depths=(0, 1)), launch.results())
    assert len(backend._free_slots) == 2


def test_stopped_jobs_stop_on_the_device_and_the_rest_are_exact():
    backend = OpenCLBackend("pocl")
    small = _jobs(7, 6)
    launch = backend.start_search([LONG_JOB] + small)
    launch.stop(0, 1)
    results = launch.results()
    assert results[0].nodes == 0                 # given up: a searched job counts its root
    assert not _same_as_model(small, results[1:])
    # stopped while another thread already waits for the results (as the executor's does)
    launch = backend.start_search([LONG_JOB] + small)
    waiting = []
    waiter = threading.Thread(target=lambda: waiting.append(launch.results()))
    waiter.start()
    time.sleep(0.1)
    launch.stop(0, 1)
    waiter.join(60)
    assert waiting[0][0].nodes == 0 and not _same_as_model(small, waiting[0][1:])
    assert backend.start_search([]).results() == []
    # every lane busy with a long job: the small jobs behind them are stopped before they
    # start, and given up without a node; the buffers serve the next launch
    lanes = backend.capabilities.launch_jobs
    launch = backend.start_search([LONG_JOB] * lanes + small)
    launch.stop(0, lanes + len(small))
    assert [r.nodes for r in launch.results()] == [0] * (lanes + len(small))
    assert not _same_as_model(small, backend.search_many(small))


def test_a_batch_cancelled_in_flight_is_stopped_never_delivered_and_the_executor_goes_on(
        executor):
    small = _jobs(11, 3)
    batch = executor.submit([LONG_JOB] + small)
    end = time.monotonic() + 30
    while executor.stats["launches"] == 0:     # the launch is in flight
        assert time.monotonic() < end
        time.sleep(0.001)
    batch.cancel()
    after = _jobs(12, 4)
    results = _collect(executor.submit(after))
    assert not _same_as_model(after, results)
    # the long job was stopped on the device (given up: 0 nodes), not run to its millions (the
    # small jobs beside it ran to their end or were stopped too)
    assert (sum(_model(job)[2] for job in after) <= executor.stats["nodes"]
            <= sum(_model(job)[2] for job in small + after))
    assert batch.results == [None] * 4 and batch.wait(0.01) == []
    assert executor.stats["stopped_jobs"] == 4
    assert executor.backend.last_run["jobs"] == 4 and executor.stats["jobs"] == 8


def test_a_cancelled_batch_merged_with_others_leaves_them_exact(executor):
    keep = _jobs(21, 4)
    with executor._cond:
        dropped = executor.submit([LONG_JOB])
        kept = executor.submit(keep)
        dropped.cancel()
    assert not _same_as_model(keep, _collect(kept))
    assert dropped.results == [None]


def test_a_failed_merged_launch_fails_every_batch_in_it_with_one_line(executor):
    good = _jobs(31, 2)
    bad_board = parse_position("8/8/8/8/8/8/8/K6k w - - 0 1")[0]
    bad_board.sq[1] = bad_board.sq[0]          # a second white king: refused
    with executor._cond:
        first = executor.submit(good)
        second = executor.submit([Job(bad_board, 1, -INF, INF)])
    for batch in (first, second):
        with pytest.raises(ExecutorError) as failed:
            _collect(batch)
        line = str(failed.value)
        assert "\n" not in line and line.startswith("opencl:pocl backend failed (a run of 2 "
                                                    "batches): ")
    assert not _same_as_model(good, _collect(executor.submit(good)))


class _SlowBackend(Backend):
    """A backend without start_search whose runs can be counted: search_many as before."""

    name = "slow"
    capabilities = Capabilities(batch=True)

    def __init__(self):
        self.calls = []

    def search_many(self, jobs):
        self.calls.append(len(jobs))
        time.sleep(0.01)
        return [JobResult(job.depth, None, [], 1) for job in jobs]


def test_a_backend_that_declares_no_launch_size_gets_one_batch_per_call():
    backend = _SlowBackend()
    ex = BatchExecutor(backend)
    try:
        with ex._cond:
            batches = [ex.submit([Job(None, d, 0, 1)] * 2) for d in range(4)]
        for d, batch in enumerate(batches):
            assert [r.score for r in _collect(batch)] == [d, d]
        assert backend.calls == [2, 2, 2, 2] and ex.launch_jobs == 0
    finally:
        ex.close()


def test_the_gpu_way_of_stopping_and_resetting_gives_the_same_results(monkeypatch):
    """On a GPU the stop flags and the counter are device memory, reset by a copy and stopped
    through a second queue: the same code run on PoCL told it is a GPU."""
    backend = OpenCLBackend("pocl", threads_per_unit=1, local_size=1).open()
    monkeypatch.setattr(backend.device, "is_gpu", True)
    small = _jobs(41, 5)
    for size in (5, 100, 3):
        jobs = _jobs(size, size, depths=(0, 1))
        assert not _same_as_model(jobs, backend.search_many(jobs))
    slot = backend._free_slots[0]
    assert not slot.host_flags
    launch = backend.start_search([LONG_JOB] + small)
    launch.stop(0, 1)
    results = launch.results()
    assert not _same_as_model(small, results[1:])
    assert not _same_as_model(small, backend.search_many(small))   # no stop left behind


def test_closing_with_a_launch_in_flight_stops_it_and_delivers_nothing():
    executor = BatchExecutor(OpenCLBackend("pocl"))
    batch = executor.submit([LONG_JOB])
    end = time.monotonic() + 30
    while executor.stats["launches"] == 0:
        assert time.monotonic() < end
        time.sleep(0.001)
    executor.close()
    assert executor.backend.last_run["nodes"] == 0   # stopped, not searched to its millions
    with pytest.raises(ExecutorError, match="executor closed"):
        batch.wait(0.1)
    assert batch.results == [None]
