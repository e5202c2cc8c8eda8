"""host/backends.py: the backend interface, its errors, and the RTL backend's perft and search on
the Verilator search core (the build tests/test_search.py uses), checked against python-chess and
the contract's alpha-beta (tests/oracle.py). The RTL move list (cocotb + Icarus, a minute) is left
to tests/test_movegen.py's harness.
"""

import chess
import pytest

from chessaccel.contract.defs import INF
from chessaccel.contract.geometry import move_uci
from chessaccel.host import backends
from chessaccel.host.backends import (BACKEND_NAMES, Backend, BackendError, ModelBackend,
                                      RtlBackend, get_backend)
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
    assert str(error.value) == ("unknown backend 'fpga' (choose from: model, rtl, verilator, "
                                "serial:PORT, opencl[:PLATFORM])")
    assert BACKEND_NAMES == ("model", "rtl", "verilator", "serial:PORT", "opencl[:PLATFORM]")
    with pytest.raises(BackendError, match=r"^serial backend needs a port: --backend "
                                           r"serial:/dev/ttyUSB0$"):
        get_backend("serial:")


def test_missing_parts_and_simulator_failures_are_backend_errors():
    with pytest.raises(BackendError) as error:
        backends._optional("chessaccel.no_such_part", "the no-such part")
    assert str(error.value) == ("the no-such part is not available in this build "
                                "(No module named 'chessaccel.no_such_part')")

    def fail(error):
        raise error

    for error, message in ((RuntimeError("build broken\nsecond line"), "build broken"),
                           (OSError("no verilator"), "no verilator"),
                           (AssertionError(), "AssertionError"),
                           (RuntimeError("  \n"), "RuntimeError")):
        with pytest.raises(BackendError) as raised:
            backends._simulated(fail, error)
        assert str(raised.value) == f"RTL simulation failed: {message}"
    with pytest.raises(BackendError, match="^as it was$"):
        backends._simulated(fail, BackendError("as it was"))
    with pytest.raises(ValueError):
        backends._simulated(fail, ValueError("not a simulator failure"))
    assert backends._simulated(lambda a, b: a + b, 2, 3) == 5


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

    def rtl_search_many(self, jobs):
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
    """verilator and serial:PORT open the board link with the whole spec; opencl and
    opencl:PLATFORM the OpenCL backend with the platform's name (None: any)."""
    import sys
    import types
    opened = []
    monkeypatch.setitem(sys.modules, "chessaccel.host.boardcli",
                        types.SimpleNamespace(open_backend=lambda spec: opened.append(spec) or spec))
    monkeypatch.setitem(sys.modules, "chessaccel.host.opencl",
                        types.SimpleNamespace(OpenCLBackend=lambda p: ("opencl", p)))
    assert get_backend("verilator") == "verilator"
    assert get_backend("serial:/dev/ttyUSB0") == "serial:/dev/ttyUSB0"
    assert opened == ["verilator", "serial:/dev/ttyUSB0"]
    assert get_backend("opencl") == ("opencl", None)
    assert get_backend("opencl:Portable") == ("opencl", "Portable")
    for spec in ("opencl:", "opencl:  "):
        with pytest.raises(BackendError) as error:
            get_backend(spec)
        assert str(error.value) == ("opencl backend needs a platform name after the colon: "
                                    "--backend opencl:NVIDIA or opencl:Portable")
    for spec in ("openclx", "serial", "Model", "verilator2"):
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
