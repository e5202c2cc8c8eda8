"""host/backends/: the backend interface, its typed results and declared capabilities, the spec
parser and the registry (built in and plugged in), its errors, and the RTL backend's perft and search on
the Verilator search core (the build tests/test_search.py uses), checked against python-chess and
the contract's alpha-beta (tests/oracle.py). The RTL move list (cocotb + Icarus, a minute) is left
to tests/test_movegen.py's harness.
"""

import chess
import pytest

from chessaccel.contract.defs import INF
from chessaccel.contract.geometry import move_uci
from chessaccel.contract.errors import first_line
from chessaccel.host.backends import (BUILTIN, Backend, BackendError, BackendSpec, Capabilities,
                                      JobResult, PerftResult, backend_class, backend_names,
                                      get_backend, optional_module, parse_spec,
                                      registered_backends)
from chessaccel.host.backends.model import ModelBackend
from chessaccel.host.backends.rtl import RtlBackend, simulated
from chessaccel.model.position import chess_from_board, parse_position
from chessaccel.sim.rtl_search import SIM_ENV, verilator_missing

import suites
from oracle import alphabeta

#: Three legal moves (Ka1-b1, a2, b2): a divide of three jobs.
KINGS = "8/8/8/4k3/8/8/8/K7 w - - 0 1"
PAWN_ENDING = "8/8/4k3/8/2p5/8/B2P2K1/8 w - - 0 1"

needs_verilator = pytest.mark.skipif(verilator_missing() is not None,
                                     reason=f"{verilator_missing()}")


def board(fen):
    return parse_position(fen)[0]


def test_the_interface_refuses_what_a_backend_cannot_do():
    class Half(Backend):
        name = "half"

        def search(self, board, depth, alpha, beta):
            return {"depth": depth, "window": (alpha, beta)}

    half = Half()
    for call, what in ((lambda: half.moves(None), "list moves"),
                       (lambda: half.perft(None, 1), "run perft")):
        with pytest.raises(BackendError, match=rf"^backend 'half' cannot {what}$"):
            call()
    assert half.search_many([(None, 1, -5, 5), (None, 2, 0, 9)]) == \
        [{"depth": 1, "window": (-5, 5)}, {"depth": 2, "window": (0, 9)}]
    with pytest.raises(BackendError, match=r"^backend '\?' cannot search$"):
        Backend().search(None, 1, -INF, INF)
    assert Backend().close() is None


def test_backend_names_and_unknown_ones():
    assert isinstance(get_backend("model"), ModelBackend)
    assert isinstance(get_backend("rtl"), RtlBackend)
    with pytest.raises(BackendError) as error:
        get_backend("fpga")
    assert str(error.value) == ("unknown backend 'fpga' (choose from: model, rtl, "
                                "verilator[:BOARDS], serial:PORT[,PORT...], "
                                "opencl[:PLATFORM[:INDEX|I,J,...|all]], ray:SPEC[@ADDRESS])")
    assert backend_names() == ("model", "rtl", "verilator[:BOARDS]", "serial:PORT[,PORT...]",
                               "opencl[:PLATFORM[:INDEX|I,J,...|all]]", "ray:SPEC[@ADDRESS]")
    for spec in ("serial:", "serial"):
        with pytest.raises(BackendError, match=r"^serial backend needs a port: --backend "
                                               r"serial:/dev/ttyUSB0$"):
            get_backend(spec)
    for spec in ("model:x", "rtl:"):
        with pytest.raises(BackendError) as error:
            get_backend(spec)
        assert str(error.value) == (f"backend {spec.split(':')[0]!r} takes no argument: "
                                    f"{spec!r}")


@pytest.mark.parametrize("text,scheme,argument", [
    ("model", "model", None),
    ("serial:/dev/ttyUSB0", "serial", "/dev/ttyUSB0"),
    ("serial:", "serial", ""),
    ("opencl:NVIDIA:1", "opencl", "NVIDIA:1"),
    ("Model", "Model", None),
])
def test_the_spec_parser_splits_at_the_first_colon(text, scheme, argument):
    spec = parse_spec(text)
    assert spec == BackendSpec(scheme, argument) and spec.text == str(spec) == text
    assert parse_spec(spec) is spec


@pytest.mark.parametrize("text", ["", ":model", " model", "model ", None, 3])
def test_what_is_no_spec_at_all_is_one_line(text):
    with pytest.raises(BackendError) as error:
        parse_spec(text)
    assert "\n" not in str(error.value)
    assert str(error.value).startswith(("not a backend spec: ", "a backend spec is a string"))
    with pytest.raises(BackendError):
        get_backend(text)


def test_the_built_in_table_is_the_one_pyproject_declares():
    import tomllib
    from pathlib import Path
    project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml")
                            .read_text())["project"]
    assert project["entry-points"]["chessaccel.backends"] == BUILTIN
    for scheme in BUILTIN:
        assert issubclass(backend_class(scheme), Backend)


class _Abacus(Backend):
    """A backend of another package: answers every job with its depth."""
    name = "abacus"
    capabilities = Capabilities(batch=True, parallel_batches=True)

    @classmethod
    def usage(cls, scheme):
        return f"{scheme}:BEADS"

    @classmethod
    def from_spec(cls, spec, *, accelerators=None, log=None):
        backend = cls()
        backend.beads, backend.accelerators = spec.argument, accelerators
        return backend

    def search(self, board, depth, alpha, beta):
        return JobResult(depth, None, [], 1)


def _plug_in(monkeypatch, **entries):
    """Entry points in the chessaccel.backends group, as another installed package gives them."""
    from importlib import metadata
    found = [metadata.EntryPoint(name, value, "chessaccel.backends")
             for name, value in entries.items()]
    real = metadata.entry_points

    def entry_points(**select):
        if select.get("group") == "chessaccel.backends":
            return metadata.EntryPoints(found)
        return real(**select)

    monkeypatch.setattr(metadata, "entry_points", entry_points)


def test_a_backend_of_another_package_plugs_in_through_an_entry_point(monkeypatch):
    _plug_in(monkeypatch, abacus=f"{__name__}:_Abacus",
             model=f"{__name__}:_Abacus",            # a built-in scheme is never taken over
             broken="no_such_package.backend:Backend", nothing=f"{__name__}:_NoSuchClass",
             notabackend=f"{__name__}:board")
    assert list(registered_backends())[:len(BUILTIN)] == list(BUILTIN)
    assert backend_names()[-5:] == ("ray:SPEC[@ADDRESS]", "abacus:BEADS", "broken",
                                    "nothing", "notabackend")
    backend = get_backend("abacus:12", accelerators=3)
    assert isinstance(backend, _Abacus) and (backend.beads, backend.accelerators) == ("12", 3)
    assert backend.search_many([(None, 4, -INF, INF)]) == [JobResult(4, None, [], 1)]
    assert isinstance(get_backend("model"), ModelBackend)
    with pytest.raises(BackendError, match=r"^the broken backend is not available in this "
                                           r"build \(No module named 'no_such_package'\)$"):
        get_backend("broken")
    with pytest.raises(BackendError, match="entry point .* names nothing"):
        get_backend("nothing")
    with pytest.raises(BackendError, match="entry point .* is not a Backend"):
        get_backend("notabackend")
    from chessaccel.host.engine.executors import BatchExecutor, make_executor
    executor = make_executor("abacus:7", 2)
    try:
        assert isinstance(executor, BatchExecutor) and executor.parallel
        assert executor.backend.accelerators == 2
    finally:
        executor.close()


def test_each_backend_declares_its_capabilities():
    from chessaccel.host.backends.board import BoardBackend
    from chessaccel.host.backends.opencl import OpenCLBackend
    from chessaccel.lab.dispatch import InstantBackend, ThreadedInstantBackend
    assert Backend.capabilities == Capabilities()
    assert ModelBackend.capabilities == Capabilities(worker_processes=True)
    assert RtlBackend.capabilities == Capabilities(batch=True, cycles=True)
    assert BoardBackend.capabilities == Capabilities(link_cores=True, cycles=True)
    assert OpenCLBackend.capabilities == Capabilities(batch=True, async_launches=True)
    opened = OpenCLBackend("pocl").open()    # launch_jobs comes from the device: units x lanes
    assert opened.capabilities == Capabilities(
        batch=True, async_launches=True, launch_jobs=opened.device.compute_units)
    assert OpenCLBackend.capabilities.launch_jobs == 0
    assert InstantBackend.capabilities == Capabilities(batch=True, parallel_batches=True,
                                                       inline_batches=True)
    assert ThreadedInstantBackend.capabilities.inline_batches is False
    with pytest.raises(AttributeError):
        ModelBackend.capabilities.batch = True


def test_results_are_typed_and_read_as_the_dicts_they_were():
    r = JobResult(5, (12, 28, 0), [(12, 28, 0)], 40)
    assert (r.score, r.best_move, r.pv, r.nodes, r.cycles) == (5, (12, 28, 0), [(12, 28, 0)], 40,
                                                               None)
    assert r["nodes"] == 40 and set(r) == {"score", "best_move", "pv", "nodes", "cycles"}
    assert r == {"score": 5, "best_move": (12, 28, 0), "pv": [(12, 28, 0)], "nodes": 40,
                 "cycles": None} == r.as_dict()
    assert r != JobResult(5, (12, 28, 0), [(12, 28, 0)], 41)
    with pytest.raises(KeyError):
        r["seconds"]
    with pytest.raises(AttributeError):
        r.nodes = 3
    import pickle
    assert pickle.loads(pickle.dumps(r)) == r, "results cross the worker processes' pipes"
    p = PerftResult(20)
    assert p == {"nodes": 20, "divide": None, "cycles": None} and repr(p) == \
        "PerftResult(nodes=20, divide=None, cycles=None)"


def test_the_first_line_of_an_error_or_its_type():
    from chessaccel.host.backends import first_line as host_first_line
    assert host_first_line is first_line
    assert first_line(ValueError("  one\ntwo\n")) == "one"
    assert first_line(ValueError("")) == "ValueError"


def test_missing_parts_and_simulator_failures_are_backend_errors():
    with pytest.raises(BackendError) as error:
        optional_module("chessaccel.no_such_part", "the no-such part")
    assert str(error.value) == ("the no-such part is not available in this build "
                                "(No module named 'chessaccel.no_such_part')")

    def fail(error):
        raise error

    for error, message in ((RuntimeError("build broken\nsecond line"), "build broken"),
                           (OSError("no verilator"), "no verilator"),
                           (AssertionError(), "AssertionError"),
                           (RuntimeError("  \n"), "RuntimeError")):
        with pytest.raises(BackendError) as raised:
            simulated(fail, error)
        assert str(raised.value) == f"RTL simulation failed: {message}"
    with pytest.raises(BackendError, match="^as it was$"):
        simulated(fail, BackendError("as it was"))
    with pytest.raises(ValueError):
        simulated(fail, ValueError("not a simulator failure"))
    assert simulated(lambda a, b: a + b, 2, 3) == 5


def test_the_model_backend_divides_in_generation_order():
    model = ModelBackend()
    result = model.perft(board(PAWN_ENDING), 2, divide=True)
    assert {move_uci(m): n for m, n in result["divide"].items()} == \
        suites.chess_divide(chess.Board(PAWN_ENDING), 2)
    assert [move_uci(m) for m in result["divide"]] == [move_uci(m) for m in
                                                       model.moves(board(PAWN_ENDING))]
    assert (result["nodes"], result["cycles"]) == (102, None)
    assert model.perft(board(PAWN_ENDING), 0, divide=True) == \
        {"nodes": 1, "divide": None, "cycles": None}


@needs_verilator
def test_the_rtl_backend_on_the_verilator_core(monkeypatch):
    monkeypatch.delenv(SIM_ENV, raising=False)
    rtl = RtlBackend()
    kings = board(KINGS)
    whole = rtl.perft(kings, 2)
    divided = rtl.perft(kings, 2, divide=True)
    assert board(KINGS).key() == kings.key(), "divide left the board changed"
    expected = suites.chess_divide(chess.Board(KINGS), 2)
    assert {move_uci(m): n for m, n in divided["divide"].items()} == expected
    assert whole["nodes"] == divided["nodes"] == sum(expected.values()) and whole["divide"] is None
    children = []
    for move in list(divided["divide"]):
        child = kings.copy()
        child.make(move)
        children.append(rtl.perft(child, 1)["cycles"])
    assert divided["cycles"] == sum(children) and all(c > 0 for c in children)
    assert whole["cycles"] > 0
    jobs = [(board(PAWN_ENDING), 1, -INF, INF), (board(KINGS), 1, -30, 30)]
    found = rtl.search_many(jobs)
    for (b, depth, alpha, beta), got, fen in zip(jobs, found, (PAWN_ENDING, KINGS)):
        score, best, nodes = alphabeta(chess.Board(fen), depth, alpha, beta)
        assert (got["score"], move_uci(got["best_move"]), got["nodes"]) == (score, best, nodes)
        assert got["pv"] == [got["best_move"]] and got["cycles"] > 0
    assert rtl.search(board(PAWN_ENDING), 1, -INF, INF) == found[0]


def test_a_simulator_that_cannot_run_is_one_line(monkeypatch):
    monkeypatch.setenv(SIM_ENV, "nonsense")
    with pytest.raises(BackendError) as error:
        RtlBackend().search(board(KINGS), 1, -INF, INF)
    assert str(error.value) == ("RTL simulation failed: CHESSACCEL_RTL_SIM='nonsense': choose one "
                                "of verilator, icarus")


# --- the RTL backend's bookkeeping and the backend names, on stand-in simulators ----------------

class _FakeRtl:
    """chessaccel.sim.rtl_search / rtl_movegen stand-ins: perft counts python-chess's leaves and
    takes 10 cycles a leaf (+1); search answers each job with its depth as score and nodes."""

    def __init__(self):
        self.calls = []

    def rtl_perft(self, board, depth):
        self.calls.append(("perft", board.key(), depth))
        nodes = suites.chess_perft(chess_from_board(board), depth)
        return nodes, 10 * nodes + 1

    def rtl_search_many(self, jobs, evaluation="pst"):
        self.calls.append(("search", len(jobs)))
        return [(depth, legal[0] if (legal := ModelBackend().moves(b)) else None, depth * 7, 99)
                for b, depth, _, _ in jobs]

    def rtl_moves(self, board):
        return ["moves of", board.key()]


@pytest.fixture
def fake_rtl(monkeypatch):
    import sys
    fake = _FakeRtl()
    monkeypatch.setitem(sys.modules, "chessaccel.sim.rtl_search", fake)
    monkeypatch.setitem(sys.modules, "chessaccel.sim.rtl_movegen", fake)
    return fake


def test_the_rtl_divide_sums_its_childrens_nodes_and_cycles(fake_rtl):
    kings = board(KINGS)
    divided = RtlBackend().perft(kings, 2, divide=True)
    assert kings.key() == board(KINGS).key(), "each child unmade"
    expected = suites.chess_divide(chess.Board(KINGS), 2)
    assert {move_uci(m): n for m, n in divided["divide"].items()} == expected
    assert divided["nodes"] == sum(expected.values())
    # each child's simulation: 10 cycles a leaf plus 1
    assert divided["cycles"] == 10 * sum(expected.values()) + len(expected)
    assert [c[2] for c in fake_rtl.calls] == [1] * len(expected)
    whole = RtlBackend().perft(kings, 2)
    assert whole == {"nodes": sum(expected.values()), "divide": None,
                     "cycles": 10 * sum(expected.values()) + 1}
    assert RtlBackend().perft(kings, 0, divide=True) == {"nodes": 1, "divide": None, "cycles": 11}


def test_the_rtl_search_batches_its_jobs_and_gives_a_one_move_pv(fake_rtl):
    rtl = RtlBackend()
    stalemate = board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")
    found = rtl.search_many([(board(KINGS), 2, -INF, INF), (stalemate, 3, -5, 5)])
    assert fake_rtl.calls == [("search", 2)]
    first = ModelBackend().moves(board(KINGS))[0]
    assert found == [{"score": 2, "best_move": first, "pv": [first], "nodes": 14, "cycles": 99},
                     {"score": 3, "best_move": None, "pv": [], "nodes": 21, "cycles": 99}]
    assert rtl.search(board(KINGS), 1, -INF, INF)["nodes"] == 7
    assert rtl.moves(board(KINGS)) == ["moves of", board(KINGS).key()]


def test_each_backend_name_reaches_its_implementation(monkeypatch):
    """verilator and serial:PORT open the board link (the simulated board with the cores asked
    for); opencl, opencl:PLATFORM and opencl:PLATFORM:INDEX the OpenCL backend with the
    platform's name (None: any) and the device's index."""
    from chessaccel.host.backends import board as board_module
    from chessaccel.host.backends.opencl import OpenCLBackend
    opened = []
    monkeypatch.setattr(board_module, "open_simulated_board",
                        lambda cores, log, evaluation: opened.append(("sim", cores, log,
                                                                      evaluation)) or "sim")
    monkeypatch.setattr(board_module, "open_transport",
                        lambda port: opened.append(("port", port)) or port)
    monkeypatch.setattr(board_module.BoardBackend, "__init__",
                        lambda self, transport, name, log: opened.append((transport, name)))
    assert get_backend("verilator") == "sim"
    assert get_backend("verilator", accelerators=3, log=print) == "sim"
    assert get_backend("verilator", evaluation="terms") == "sim"   # a board of terms cores
    assert isinstance(get_backend("serial:/dev/ttyUSB0"), board_module.BoardBackend)
    assert opened == [("sim", None, None, "pst"), ("sim", 3, print, "pst"),
                      ("sim", None, None, "terms"), ("port", "/dev/ttyUSB0"),
                      ("/dev/ttyUSB0", "serial:/dev/ttyUSB0")]
    for spec, platform, index, name in (("opencl", None, None, "opencl"),
                                        ("opencl:Portable", "Portable", None, "opencl:Portable"),
                                        ("opencl:NVIDIA:1", "NVIDIA", 1, "opencl:NVIDIA:1")):
        backend = get_backend(spec)
        assert isinstance(backend, OpenCLBackend)
        assert (backend.platform, backend.device_index, backend.name) == (platform, index, name)
    for spec in ("opencl:", "opencl:  ", "opencl::1"):
        with pytest.raises(BackendError) as error:
            get_backend(spec)
        assert str(error.value) == ("opencl backend needs a platform name after the colon: "
                                    "--backend opencl:NVIDIA or opencl:Portable")
    for spec in ("opencl:NVIDIA:", "opencl:NVIDIA:-1", "opencl:NVIDIA:one"):
        with pytest.raises(BackendError, match=r"^opencl device index must be a number 0, 1, "):
            get_backend(spec)
    for spec in ("openclx", "Model", "verilator2"):
        with pytest.raises(BackendError, match="^unknown backend"):
            get_backend(spec)


def test_the_model_backend_answers_in_the_common_form():
    model = ModelBackend()
    kings = board(KINGS)
    assert sorted(move_uci(m) for m in model.moves(kings)) == ["a1a2", "a1b1", "a1b2"]
    assert model.perft(kings, 3) == {"nodes": suites.chess_perft(chess.Board(KINGS), 3),
                                     "divide": None, "cycles": None}
    r = model.search(kings, 1, -INF, INF)
    assert set(r) == {"score", "best_move", "pv", "nodes", "cycles"} and r["cycles"] is None
    assert r["best_move"] == r["pv"][0] and r["nodes"] >= 4
