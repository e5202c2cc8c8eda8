"""The board as a backend and on the command line (host/backends/board/, host/boardcli.py,
host/cli.py) against the scripted board of tests/linkpeer.py on a pty: ``--backend serial:PORT``,
``chessaccel board info``, the text and JSON the commands print with cycle counts, and every way
opening a board can fail. Answers are python-chess's and the contract alpha-beta's (the peer's),
never the model's. The simulated board (Verilator) is used only where the backend starts it
itself (``--backend verilator``), on the link-only and two-core builds test_boardsim.py shares.
"""

import argparse
import json
import os
import re

import chess
import pytest

from chessaccel.contract.defs import INF, MATE
from chessaccel.contract.geometry import move_uci
from chessaccel.host import cli
from chessaccel.host.backends import BackendError, get_backend
from chessaccel.contract.bench import BenchJob
from chessaccel.host.backends.board import SIM_CORES_ENV, BoardBackend, open_simulated_board
from chessaccel.host.boardcli import board_info_main
from chessaccel.model.position import parse_position
from chessaccel.host.backends.board.transport import PtyTransport
from chessaccel.sim.boardsim import verilator_missing
from chessaccel.model.movegen import legal_moves

import suites
from linkpeer import CMD, STATUS, ScriptedBoard, unpack
from oracle import alphabeta

STARTPOS = chess.STARTING_FEN
RICH = "r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1"
PAWN_ENDING = "8/8/4k3/8/2p5/8/B2P2K1/8 w - - 0 1"
FOOLS_MATE = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"
TIME = r"\(\d+\.\d{3} s\)"


def cycles_of(nodes):
    """The scripted board's cycle count for a job of ``nodes`` nodes."""
    return 5 * nodes + 17


def board(fen):
    return parse_position(fen)[0]


def open_fds():
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
def peer():
    with ScriptedBoard(cores=2) as scripted:
        yield scripted


def run(capsys, argv):
    status = cli.main(argv)
    captured = capsys.readouterr()
    return status, captured.out.splitlines(), captured.err.splitlines()


# --- BoardBackend ------------------------------------------------------------------------

def test_the_serial_backend_runs_jobs_on_the_board(peer):
    before = open_fds()
    backend = get_backend(f"serial:{peer.port}")
    assert isinstance(backend, BoardBackend) and backend.name == f"serial:{peer.port}"
    assert backend.info.cores == 2
    [(_, info, _, _), (_, abort, payload, _)] = peer.requests
    assert (info, abort) == (CMD["INFO"], CMD["ABORT"])
    assert unpack((("job_id", 16), ("scope", 8)), payload) == {"job_id": 0, "scope": 1}

    got = backend.search(board(RICH), 1, -INF, INF)
    score, best, nodes = alphabeta(chess.Board(RICH), 1)
    assert {**got, "best_move": move_uci(got["best_move"]),
            "pv": [move_uci(m) for m in got["pv"]]} == \
        {"score": score, "best_move": best, "pv": [best], "nodes": nodes,
         "cycles": cycles_of(nodes)}

    fens = [STARTPOS, RICH, PAWN_ENDING]
    many = backend.search_many([(board(f), 2, -50, 50) for f in fens])
    assert [(r["score"], move_uci(r["best_move"]), r["nodes"]) for r in many] == \
        [alphabeta(chess.Board(f), 2, -50, 50) for f in fens]

    assert backend.perft(board(STARTPOS), 2) == {"nodes": 400, "divide": None,
                                                 "cycles": cycles_of(400)}
    assert backend.perft(board(STARTPOS), 0, divide=True) == {"nodes": 1, "divide": None,
                                                              "cycles": cycles_of(1)}
    divided = backend.perft(board(RICH), 2, divide=True)
    expected = suites.chess_divide(chess.Board(RICH), 2)
    assert [move_uci(m) for m in divided["divide"]] == [move_uci(m) for m in
                                                        legal_moves(board(RICH))]
    assert {move_uci(m): n for m, n in divided["divide"].items()} == expected
    assert divided["nodes"] == sum(expected.values())
    assert divided["cycles"] == sum(cycles_of(n) for n in expected.values())
    assert all(job[3] == 1 for job in peer.started[-len(expected):]), "children at depth 1"
    backend.close()
    assert open_fds() == before


def test_a_mated_root_has_no_move_and_an_empty_pv(peer):
    backend = get_backend(f"serial:{peer.port}")
    try:
        assert backend.search(board(FOOLS_MATE), 1, -INF, INF) == \
            {"score": -MATE, "best_move": None, "pv": [], "nodes": 1, "cycles": cycles_of(1)}
    finally:
        backend.close()


def test_a_job_that_fails_is_a_backend_error(peer):
    peer.script("ok", "ok", "ok", ("fields", {"status": STATUS["ABORTED"]}))
    backend = get_backend(f"serial:{peer.port}")
    try:
        with pytest.raises(BackendError, match=r"^job 0 ended ABORTED$"):
            backend.perft(board(STARTPOS), 1)
    finally:
        backend.close()


def test_a_board_without_cores_is_refused_and_closed():
    with ScriptedBoard(cores=0) as peer:
        before = open_fds()
        with pytest.raises(BackendError) as error:
            get_backend(f"serial:{peer.port}")
        assert str(error.value) == f"the board on {peer.port} has no search core"
        assert open_fds() == before


@pytest.mark.parametrize("answered,message", [
    (0, "no board answers on {port} (13 tries, 0.02 s each)"),
    (1, "ABORT failed after 13 tries on {port}: no reply within 0.08 s"),
])
def test_a_board_that_does_not_answer_is_a_backend_error(peer, answered, message):
    peer.script(*["ok"] * answered, *["lose"] * 13)
    before = open_fds()
    with pytest.raises(BackendError) as error:
        BoardBackend(PtyTransport(peer.port), "serial", timeout=0.02)
    assert str(error.value) == message.format(port=peer.port)
    assert open_fds() == before


@pytest.mark.parametrize("spec,message", [
    ("serial:", "serial backend needs a port: --backend serial:/dev/ttyUSB0"),
    ("usb", "unknown backend 'usb' (choose from: "),
    ("serial:/dev/pts/999999", "cannot open /dev/pts/999999: No such file or directory"),
    ("serial:/dev/no-such-port", "cannot open serial port /dev/no-such-port: "),
])
def test_board_backends_that_cannot_open(spec, message):
    with pytest.raises(BackendError) as error:
        get_backend(spec)
    assert str(error.value).startswith(message)


@pytest.mark.parametrize("cores", ["abc", "9", "-1", ""])
def test_a_bad_core_count_for_the_simulated_board_is_one_line(capsys, monkeypatch, cores):
    monkeypatch.setenv(SIM_CORES_ENV, cores)
    message = f"CHESSACCEL_SIM_CORES must be a number of cores in 0..8, got {cores!r}"
    with pytest.raises(BackendError) as error:
        get_backend("verilator")
    assert str(error.value) == message
    assert run(capsys, ["perft", "startpos", "--depth", "1", "--backend", "verilator"]) == \
        (2, [], [f"chessaccel: error: {message}"])


@pytest.mark.parametrize("cores", [-1, 9])
def test_a_core_count_given_out_of_range_is_one_line_before_any_build(cores):
    with pytest.raises(BackendError) as error:
        open_simulated_board(cores)
    assert str(error.value) == f"a simulated board has 0..8 cores, not {cores}"


def test_more_job_slots_than_the_link_addresses_is_one_line_before_any_build(capsys, tmp_path,
                                                                             monkeypatch):
    import chessaccel.sim.boardsim as boardsim
    from chessaccel.host.cli import main as chessaccel_main
    monkeypatch.setattr(boardsim, "BUILD_ROOT", tmp_path)
    assert chessaccel_main(["board-sim", "--cores", "5", "--threads", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["chessaccel board-sim: 5 cores of 2 threads are 10 job slots; the link "
                   "addresses at most 8"], err
    assert not any(tmp_path.iterdir()), "nothing may be built"


@pytest.mark.skipif(verilator_missing() is not None, reason=f"{verilator_missing()}")
def test_the_verilator_backend_starts_its_own_board(monkeypatch):
    """The link-only and two-core builds are the ones tests/test_boardsim.py uses."""
    def boardsims():
        children = set()
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as listing:
                children |= set(listing.read().split())
        return {pid for pid in children
                if os.path.exists(f"/proc/{pid}/cmdline")
                and b"boardsim" in open(f"/proc/{pid}/cmdline", "rb").read()}

    monkeypatch.setenv(SIM_CORES_ENV, "0")
    with pytest.raises(BackendError, match=r"^the board on /dev/pts/\d+ has no search core$"):
        get_backend("verilator")
    assert boardsims() == set(), "the simulated board was left running"
    monkeypatch.setenv(SIM_CORES_ENV, "7")       # the caller's count wins over the variable
    backend = get_backend("verilator", accelerators=2)
    try:
        assert backend.info.cores == 2 and backend.sim is not None
        assert backend.client.timeout == 5.0        # SIM_REPLY_TIMEOUT, docs/protocol.md
        assert backend.perft(board(STARTPOS), 0)["nodes"] == 1
    finally:
        backend.close()
    assert backend.sim is None and boardsims() == set()


# --- chessaccel board info ---------------------------------------------------------------

def info_lines(cores, busy, good):
    return ["protocol version: 1", f"cores: {cores}", "clock: 48000000 Hz",
            "clocks per bit: 16 (3000000 baud)", "build id: 5eedb0a2", f"busy cores: {busy}",
            f"frames received: {good} good, 0 bad"]


def test_board_info_prints_what_the_board_reports(capsys):
    with ScriptedBoard(cores=3, busy_polls=None) as peer:
        assert run(capsys, ["board", "info", "--port", peer.port]) == \
            (0, info_lines(3, "000", 2), [])
        with PtyTransport(peer.port) as transport:
            from chessaccel.host.backends.board.client import BoardClient
            client = BoardClient(transport)
            client.submit(0, board(STARTPOS), 1, -INF, INF)
            client.submit(1, board(STARTPOS), 1, -INF, INF)
            client.abort(0)
            client.submit(2, board(STARTPOS), 1, -INF, INF)
        args = argparse.Namespace(port=peer.port, timeout=1.0, retries=0)
        assert board_info_main(args) == 0
        assert capsys.readouterr().out.splitlines() == info_lines(3, "011", 8)
    with ScriptedBoard(cores=0) as peer:
        assert run(capsys, ["board", "info", "--port", peer.port]) == \
            (0, info_lines(0, "0", 2), [])


def test_board_info_failures_are_one_line(capsys):
    assert run(capsys, ["board", "info", "--port", "/dev/pts/999999"]) == \
        (2, [], ["chessaccel board info: cannot open /dev/pts/999999: No such file or directory"])
    with ScriptedBoard() as peer:
        peer.script("lose", "lose")
        assert run(capsys, ["board", "info", "--port", peer.port, "--timeout", "0.02",
                            "--retries", "1"]) == \
            (2, [], [f"chessaccel board info: no board answers on {peer.port} "
                     f"(2 tries, 0.02 s each)"])


def test_board_info_options_and_their_defaults():
    args = cli._parser().parse_args(["board", "info", "--port", "/dev/ttyUSB0"])
    assert (args.command, args.board_command, args.port, args.timeout, args.retries) == \
        ("board", "info", "/dev/ttyUSB0", 1.0, 12)
    with pytest.raises(cli.UsageError, match="--port"):
        cli._parser().parse_args(["board", "info"])


# --- the commands' output with a board behind them -----------------------------------------

def test_perft_text_and_json_with_cycles(peer, capsys):
    spec = f"serial:{peer.port}"
    status, out, err = run(capsys, ["perft", "startpos", "--depth", "2", "--backend", spec])
    assert (status, err, len(out)) == (0, [], 1)
    assert re.fullmatch(rf"perft 2: nodes 400  cycles {cycles_of(400)}  {TIME}", out[0]), out
    status, out, _ = run(capsys, ["perft", PAWN_ENDING, "--depth", "1", "--divide", "--backend",
                                  spec])
    moves = [move_uci(m) for m in legal_moves(board(PAWN_ENDING))]
    assert out[:-2] == [f"{m}: 1" for m in moves] and out[-2] == ""
    assert re.fullmatch(rf"perft 1: nodes {len(moves)}  cycles {len(moves) * cycles_of(1)}  "
                        rf"{TIME}", out[-1]), out
    status, out, _ = run(capsys, ["perft", "startpos", "--depth", "1", "--json", "--backend",
                                  spec])
    obj = json.loads(out[0])
    assert (obj["nodes"], obj["cycles"]) == (20, cycles_of(20)) and "divide" not in obj


def test_search_text_and_json_with_cycles(peer, capsys):
    spec = f"serial:{peer.port}"
    score, best, nodes = alphabeta(chess.Board(RICH), 2, -100, 100)
    status, out, err = run(capsys, ["search", RICH, "--depth", "2", "--alpha", "-100", "--beta",
                                    "100", "--backend", spec])
    assert (status, err) == (0, [])
    assert out[:2] == [f"bestmove {best}  score cp {score}  depth 2", f"pv {best}"]
    assert re.fullmatch(rf"nodes {nodes}  cycles {cycles_of(nodes)}  {TIME}", out[2]), out
    status, out, _ = run(capsys, ["search", FOOLS_MATE, "--depth", "1", "--backend", spec])
    assert out[:2] == [f"bestmove (none)  score mate 0  depth 1", "pv "]
    status, out, _ = run(capsys, ["search", RICH, "--depth", "1", "--json", "--backend", spec])
    obj = json.loads(out[0])
    score, best, nodes = alphabeta(chess.Board(RICH), 1)
    assert {k: obj[k] for k in ("score", "mate", "best_move", "pv", "nodes", "cycles", "depth")} \
        == {"score": score, "mate": None, "best_move": best, "pv": [best], "nodes": nodes,
            "cycles": cycles_of(nodes), "depth": 1}


def test_bench_on_a_board_reports_cycles_per_node(peer, capsys, monkeypatch, tmp_path):
    jobs = (BenchJob("startpos", STARTPOS, 1), BenchJob("pawn-ending", PAWN_ENDING, 2))
    monkeypatch.setattr(cli, "BENCH", jobs)
    monkeypatch.chdir(tmp_path)
    spec = f"serial:{peer.port}"
    status, out, err = run(capsys, ["bench", "--backend", spec])
    nodes = [alphabeta(chess.Board(job.fen), job.depth)[2] for job in jobs]
    cycles = [cycles_of(n) for n in nodes]
    name = f"bench-serial_{peer.port.replace('/', '_')}"
    assert status == 0
    assert re.fullmatch(rf"bench \({re.escape(spec)}\): nodes {sum(nodes)}  \d+\.\d\d s  "
                        rf"\d+ nodes/s  cycles/node {sum(cycles) / sum(nodes):.2f}", out[0]), out
    assert out[1:] == [f"signature {sum(nodes)}", f"wrote out/{name}.json and out/{name}.png"]
    assert [line.split()[:5] for line in err] == \
        [[job.name, "depth", str(job.depth), "nodes", str(n)] for job, n in zip(jobs, nodes)]
    obj = json.loads((tmp_path / "out" / f"{name}.json").read_text())
    assert (obj["backend"], obj["nodes"], obj["signature"], obj["cycles"]) == \
        (spec, sum(nodes), sum(nodes), sum(cycles))
    assert obj["cycles_per_node"] == pytest.approx(sum(cycles) / sum(nodes))
    assert [(p["name"], p["nodes"], p["cycles"], p["cycles_per_node"]) for p in obj["positions"]] \
        == [(job.name, n, c, pytest.approx(c / n)) for job, n, c in zip(jobs, nodes, cycles)]
    assert (tmp_path / "out" / f"{name}.png").stat().st_size > 1000


# --- the commands' text output on the model (the JSON is test_cli.py's) ----------------------

def test_text_output_on_the_model(capsys):
    status, out, err = run(capsys, ["moves", PAWN_ENDING])
    assert (status, err) == (0, []) and out == [" ".join(
        move_uci(m) for m in legal_moves(board(PAWN_ENDING)))]
    assert run(capsys, ["moves", FOOLS_MATE])[1] == ["(no legal moves)"]
    status, out, _ = run(capsys, ["perft", "startpos", "--depth", "1"])
    assert re.fullmatch(rf"perft 1: nodes 20  {TIME}", out[0]), out
    scholar = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"
    status, out, _ = run(capsys, ["search", scholar, "--depth", "1"])
    assert out[:2] == ["bestmove h5f7  score mate 1  depth 1", "pv h5f7"]
    assert re.fullmatch(rf"nodes \d+  {TIME}", out[2]), out
