"""Several boards as one backend: ``serial:PORT1,PORT2,...`` and ``verilator:BOARDS``
(host/backends/board/'s ``BoardSet``, fed by engine/executors/link.py's ``LinkExecutor``).

On the scripted boards of tests/linkpeer.py (answers from python-chess and the contract's
alpha-beta, never the model), each on its own pty:

- the boards' cores are one executor's slots, and the jobs land on every board;
- a search at a fixed depth in deterministic mode gives the same score, best move, PV and node
  count on two one-core boards as on one two-core board;
- a board that dies mid-search (its pty closed while it holds a job) is survived: its job runs
  on the other board, one line says so, the search ends as it would have; when every board is
  gone the batch fails with one line; through ``chessaccel uci``: an ``info string`` and a legal
  move either way;
- bad specs (an empty port, a port twice, under two names, one that does not exist, a number
  of simulated boards out of range) are one line each, from the backend, the command line
  (status 2) and the UCI engine, and leave no port open.

On the simulated board (Verilator, the two-core build tests/test_boardsim.py uses): two boards
search as one, and one killed mid-search is survived.
"""

import os
import threading
import time

import chess
import pytest

from chessaccel.contract.defs import INF
from chessaccel.contract.geometry import move_uci
from chessaccel.host import cli
from chessaccel.host.backends import BackendError, get_backend
from chessaccel.host.backends.board import BoardBackend, BoardSet
from chessaccel.host.engine.executors import ExecutorError, Job, LinkExecutor, make_executor
from chessaccel.host.engine.search import HostSearch, SearchOptions
from chessaccel.sim.boardsim import verilator_missing

import suites
from linkpeer import CMD, ScriptedBoard
from oracle import alphabeta
from uci_harness import RawEngine

ITALIAN = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"
ENDGAME = "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"
#: Seconds any one search or wait here may take before the test calls it a hang.
HANG = 60

needs_verilator = pytest.mark.skipif(verilator_missing() is not None,
                                     reason=f"{verilator_missing()}")


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def _wait_for(condition, what, timeout=HANG):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.005)


def _finish(batch):
    deadline = time.monotonic() + HANG
    while not batch.done():
        batch.wait(0.5)
        assert time.monotonic() < deadline, "the batch never finished"


class _Search:
    """HostSearch at a fixed depth in deterministic mode, in a thread (``result()`` waits)."""

    def __init__(self, executor, fen, depth, plies):
        self.out = {}

        def run():
            search = HostSearch(executor, options=SearchOptions.exact(plies))
            self.out["result"] = search.search_depth(chess.Board(fen), depth)
        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def result(self):
        self.thread.join(HANG)
        assert not self.thread.is_alive(), f"the search still runs after {HANG} s"
        return self.out["result"]


def _summary(result):
    return (result.score, result.best_move, [m.uci() for m in result.pv], result.nodes,
            result.error)


# --- several serial ports ------------------------------------------------------------------

def test_several_ports_are_one_backend_whose_cores_are_the_executors_slots():
    with ScriptedBoard(cores=2, busy_polls=3) as first, ScriptedBoard(cores=1) as second:
        spec = f"serial:{first.port},{second.port}"
        backend = get_backend(spec)
        assert isinstance(backend, BoardSet) and backend.name == spec
        assert [b.name for b in backend.boards] == [f"serial:{first.port}",
                                                    f"serial:{second.port}"]
        assert all(isinstance(b, BoardBackend) for b in backend.boards)
        executor = LinkExecutor(backend)
        try:
            assert (executor.slots, executor.parallel, executor.speculate) == (3, True, True)
            fens = [suites.sparse_position(40 + i, pieces=4, plies=2) for i in range(6)]
            batch = executor.submit([Job(suites.board_of(f), 1, -INF, INF) for f in fens])
            _finish(batch)
            assert [(r.score, move_uci(r.best_move) if r.best_move else None, r.nodes)
                    for r in batch.results] == [alphabeta(chess.Board(f), 1) for f in fens]
            per_board = executor.jobs_per_board()
            assert sum(per_board.values()) == 6 and all(per_board.values()), per_board
            assert (len(first.started), len(second.started)) == tuple(per_board.values())
        finally:
            executor.close()


def test_the_command_line_spreads_a_divided_perft_over_the_boards(capsys):
    rich = "r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1"
    with ScriptedBoard(cores=1) as first, ScriptedBoard(cores=1) as second:
        status = cli.main(["perft", rich, "--depth", "2", "--divide", "--backend",
                           f"serial:{first.port},{second.port}"])
        out = capsys.readouterr().out.splitlines()
        assert status == 0
        expected = suites.chess_divide(chess.Board(rich), 2)
        assert {line.split(": ")[0]: int(line.split(": ")[1]) for line in out[:-2]} == expected
        assert out[-1].startswith(f"perft 2: nodes {sum(expected.values())} ")
        assert first.started and second.started
        assert len(first.started) + len(second.started) == len(expected)


def test_two_boards_search_as_one_board_of_as_many_cores(inline):
    with ScriptedBoard(cores=1) as a, ScriptedBoard(cores=1) as b, \
            ScriptedBoard(cores=2) as both:
        two = make_executor(f"serial:{a.port},{b.port}")
        one = make_executor(f"serial:{both.port}")
        try:
            assert two.slots == one.slots == 2
            for fen, depth, plies in ((ITALIAN, 2, 1), (ENDGAME, 3, 1)):
                expected = _summary(_Search(one, fen, depth, plies).result())
                assert _summary(_Search(two, fen, depth, plies).result()) == expected, fen
                model = _summary(_Search(inline, fen, depth, plies).result())
                assert model[:3] == expected[:3] and expected[1] is not None
            per_board = two.jobs_per_board()
            assert all(per_board.values()), per_board
            assert two.events == [] and two.stats["boards_lost"] == 0
        finally:
            two.close()
            one.close()


def test_a_board_that_dies_mid_search_leaves_its_job_to_the_other():
    """The second board keeps every job it is given (it never answers DONE) until its pty is
    closed: the job it holds then runs on the first, and the search ends as on one board."""
    with ScriptedBoard(cores=2) as reference:
        executor = make_executor(f"serial:{reference.port}")
        try:
            expected = _summary(_Search(executor, ITALIAN, 2, 1).result())
        finally:
            executor.close()
    lines = []
    with ScriptedBoard(cores=1) as good, ScriptedBoard(cores=1, busy_polls=None) as stuck:
        spec = f"serial:{good.port},{stuck.port}"
        executor = make_executor(spec, log=lines.append)
        try:
            search = _Search(executor, ITALIAN, 2, 1)
            _wait_for(lambda: stuck.started, "a job on the second board")
            stuck.close()
            assert _summary(search.result()) == expected
            assert executor.events == lines and len(lines) == 1, lines
            assert lines[0].startswith(f"board serial:{stuck.port} failed (")
            assert lines[0].endswith(f"); its 1 running job(s) go to serial:{good.port}")
            assert (executor.stats["boards_lost"], executor.stats["jobs_rerun"]) == (1, 1)
            assert executor.broken is None
            batch = executor.submit([Job(suites.board_of(ENDGAME), 1, -INF, INF)])
            _finish(batch)      # the board left goes on
            assert batch.results[0].nodes == alphabeta(chess.Board(ENDGAME), 1)[2]
        finally:
            executor.close()


def test_when_every_board_has_failed_the_batch_fails_in_one_line():
    with ScriptedBoard(cores=1, busy_polls=None) as a, \
            ScriptedBoard(cores=1, busy_polls=None) as b:
        spec = f"serial:{a.port},{b.port}"
        executor = make_executor(spec)
        try:
            batch = executor.submit([Job(suites.board_of(ENDGAME), 1, -INF, INF)] * 3)
            _wait_for(lambda: a.started and b.started, "a job on each board")
            a.close()
            _wait_for(lambda: executor.events, "the first board's line")
            b.close()
            with pytest.raises(ExecutorError) as error:
                _finish(batch)
            message = str(error.value)
            assert "\n" not in message and message.startswith(f"board serial:{b.port}: ")
            assert message.endswith(f" (no board of {spec} is left)")
            assert executor.broken is error.value
            with pytest.raises(ExecutorError, match="no board of"):
                executor.submit([Job(suites.board_of(ENDGAME), 1, -INF, INF)])
        finally:
            executor.close()


def test_a_job_no_core_can_hold_fails_its_batch_only():
    """An empty window is refused before it is sent (BadJob): it would be on any board, so its
    batch fails in one line naming the board, and the boards go on."""
    with ScriptedBoard(cores=1) as a, ScriptedBoard(cores=1) as b:
        executor = make_executor(f"serial:{a.port},{b.port}")
        try:
            bad = executor.submit([Job(suites.board_of(ENDGAME), 1, 10, 5)])
            with pytest.raises(ExecutorError, match=r"^board serial:/dev/pts/\d+: job \d+ not "
                                                    r"sent: .*window"):
                _finish(bad)
            good = executor.submit([Job(suites.board_of(ENDGAME), 1, -INF, INF)] * 2)
            _finish(good)
            assert executor.broken is None and executor.events == []
            assert len(a.started) + len(b.started) == 2      # the bad job never went out
        finally:
            executor.close()


def _engine_on(spec):
    """``chessaccel uci`` on ``spec``, ready; (the engine, what it said before readyok)."""
    engine = RawEngine()
    engine.send("uci")
    engine.send(f"setoption name Backend value {spec}")
    engine.send("setoption name HardwarePlies value 1")
    said = engine.sync(HANG)
    assert not [line for line in said if line.startswith("info string error")], said
    return engine, said


def _go(engine, fen):
    engine.send(f"position fen {fen}")
    engine.send("go depth 3")


def _bestmove(engine, fen):
    lines, _ = engine.read_until(lambda l: l.startswith("bestmove"), HANG)
    assert chess.Move.from_uci(lines[-1].split()[1]) in chess.Board(fen).legal_moves, lines
    return lines


def test_the_uci_engine_goes_on_without_a_dead_board_and_plays_without_any():
    with ScriptedBoard(cores=1) as good, ScriptedBoard(cores=1) as dying:
        spec = f"serial:{good.port},{dying.port}"
        engine, said = _engine_on(spec)
        try:
            assert said[-1] == (f"info string {spec} has 2 core(s) on 2 boards: Accelerators "
                                f"is the boards', not ours")
            dying.busy_polls = None         # from now on it keeps its jobs
            _go(engine, ITALIAN)
            _wait_for(lambda: dying.started, "a job on the second board")
            dying.close()
            lines = _bestmove(engine, ITALIAN)
            said = [line for line in lines if line.startswith("info string board")]
            assert len(said) == 1, lines
            assert said[0].startswith(f"info string board serial:{dying.port} failed (")
            assert not [line for line in lines if line.startswith("info string error")], lines
            # the last board gone too: one error line, a legal move all the same
            good.busy_polls = None
            held = len(good.started)
            _go(engine, ENDGAME)
            _wait_for(lambda: len(good.started) > held, "a job held on the first board")
            good.close()
            lines = _bestmove(engine, ENDGAME)
            errors = [line for line in lines if line.startswith("info string error")]
            assert len(errors) == 1, lines
            assert errors[0].startswith(f"info string error: backend failed: board "
                                        f"serial:{good.port}: ")
            assert errors[0].endswith(f" (no board of {spec} is left)")
            assert "Traceback" not in engine.stderr
        finally:
            engine.close()


# --- bad specs -----------------------------------------------------------------------------

def _bad_specs(port, tmp_path):
    alias = tmp_path / "board-alias"
    alias.symlink_to(port)
    return [
        (f"serial:{port},", f"serial:{port},: an empty port in the list "
                            f"(serial:PORT1,PORT2,... with no empty name)"),
        (f"serial:,{port}", f"serial:,{port}: an empty port in the list "
                            f"(serial:PORT1,PORT2,... with no empty name)"),
        (f"serial:{port},{port}", f"serial:{port},{port}: {port} is named twice"),
        (f"serial:{port},{alias}", f"serial:{port},{alias}: {port} and {alias} are the same "
                                   f"port"),
        (f"serial:{port},/dev/pts/999999", "cannot open /dev/pts/999999: No such file or "
                                           "directory"),
        ("verilator:0", "verilator:0: the simulated boards are a number in 1..8, not '0'"),
        ("verilator:9", "verilator:9: the simulated boards are a number in 1..8, not '9'"),
        ("verilator:two", "verilator:two: the simulated boards are a number in 1..8, not "
                          "'two'"),
        ("verilator:", "verilator:: the simulated boards are a number in 1..8, not ''"),
    ]


def test_bad_specs_are_one_line_and_leave_no_port_open(tmp_path, capsys, monkeypatch):
    import chessaccel.sim.boardsim as boardsim
    monkeypatch.setattr(boardsim, "BUILD_ROOT", tmp_path / "build")
    with ScriptedBoard(cores=1) as peer:
        for spec, message in _bad_specs(peer.port, tmp_path):
            before = open_fds()
            with pytest.raises(BackendError) as error:
                get_backend(spec, accelerators=1)
            assert str(error.value) == message
            assert open_fds() == before, f"{spec} left a port open"
            assert cli.main(["search", "startpos", "--depth", "1", "--backend", spec]) == 2
            captured = capsys.readouterr()
            assert (captured.out, captured.err) == ("", f"chessaccel: error: {message}\n")
        # the first port was opened (INFO, ABORT) before the second failed, and closed again
        assert peer.commands()[:2] == [CMD["INFO"], CMD["ABORT"]]
    assert not (tmp_path / "build").exists(), "nothing may be built"


def test_bad_specs_are_one_uci_error_line_each(tmp_path):
    with ScriptedBoard(cores=1) as peer:
        engine = RawEngine()
        try:
            engine.send("uci")
            for spec, message in _bad_specs(peer.port, tmp_path)[:5]:
                engine.send(f"setoption name Backend value {spec}")
                lines = engine.sync(HANG)
                assert lines[-1:] == [f"info string error: backend {spec!r}: {message}"], lines
            engine.send("position startpos")
            engine.send("go depth 1")
            lines, _ = engine.read_until(lambda l: l.startswith("bestmove"), HANG)
            assert chess.Move.from_uci(lines[-1].split()[1]) in chess.Board().legal_moves
        finally:
            engine.close()


# --- several simulated boards --------------------------------------------------------------

@pytest.fixture(scope="module")
def one_simulated_board():
    executor = make_executor("verilator", 2)
    yield executor
    executor.close()


@needs_verilator
def test_two_simulated_boards_search_as_one(one_simulated_board):
    two = make_executor("verilator:2", 2)
    try:
        assert isinstance(two.backend, BoardSet)
        assert [b.name for b in two.backend.boards] == ["verilator#1", "verilator#2"]
        assert (two.slots, one_simulated_board.slots) == (4, 2)
        expected = _summary(_Search(one_simulated_board, ENDGAME, 3, 2).result())
        assert _summary(_Search(two, ENDGAME, 3, 2).result()) == expected
        assert expected[1] is not None and expected[4] is None
        per_board = two.jobs_per_board()
        assert all(per_board.values()), per_board
    finally:
        two.close()
    assert all(board.sim is None for board in two.backend.boards)


@needs_verilator
def test_a_simulated_board_killed_mid_search_is_survived(one_simulated_board):
    expected = _summary(_Search(one_simulated_board, ITALIAN, 2, 1).result())
    lines = []
    two = make_executor("verilator:2", 2, log=lines.append)
    try:
        search = _Search(two, ITALIAN, 2, 1)
        second = two.backend.boards[1]
        _wait_for(lambda: two.jobs_per_board()["verilator#2"] >= 2, "jobs on the second board")
        second.sim.process.kill()
        assert _summary(search.result()) == expected
        assert len(lines) == 1 and lines[0].startswith("board verilator#2 failed ("), lines
        assert lines[0].endswith(" running job(s) go to verilator#1")
        assert two.broken is None and two.stats["boards_lost"] == 1
    finally:
        two.close()


@needs_verilator
def test_board_sim_serves_several_boards_the_engine_drives_as_one(one_simulated_board):
    """``chessaccel board-sim --boards 2``: two simulators on two ptys, one line each, and the
    ``serial:`` spec that drives them, which searches as the simulated boards do in-process."""
    import select
    import signal
    import subprocess
    import sys
    expected = _summary(_Search(one_simulated_board, ITALIAN, 2, 1).result())
    process = subprocess.Popen([sys.executable, "-m", "chessaccel.host.cli", "board-sim",
                                "--boards", "2", "--cores", "2"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ports = []
    try:
        ready, _, _ = select.select([process.stdout], [], [], HANG)
        assert ready, "board-sim printed no pty"
        ports = [process.stdout.readline().strip() for _ in range(2)]   # printed together
        assert all(port.startswith("/dev/") for port in ports) and ports[0] != ports[1], ports
        two = make_executor("serial:" + ",".join(ports), 1)
        try:
            assert two.slots == 4
            assert _summary(_Search(two, ITALIAN, 2, 1).result()) == expected
            assert all(two.jobs_per_board().values()), two.jobs_per_board()
        finally:
            two.close()
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=HANG)
    assert process.returncode == 0, err
    assert f"the engine's Backend: serial:{ports[0]},{ports[1]}" in err and "Traceback" not in err


def test_board_sim_refuses_a_number_of_boards_out_of_range(capsys):
    assert cli.main(["board-sim", "--boards", "9"]) == 2
    assert cli.main(["board-sim", "--boards", "0"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["chessaccel board-sim: --boards must be in 1..8, not 9",
                   "chessaccel board-sim: --boards must be in 1..8, not 0"]
