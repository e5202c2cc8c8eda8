"""The ``ray:SPEC[@ADDRESS]`` backend and its RayExecutor on a local Ray cluster of this machine's
two cores (one Ray started for the module; the UCI test's engine starts its own):

- two model actors, and two PoCL actors, give the search the same score, best move and PV as
  the in-process executor at a fixed depth in deterministic mode (``SearchOptions.exact``);
- a cancelled batch's running jobs stop in their actors at once;
- an actor killed mid-search is survived: its job runs again on the other, a replacement starts,
  the search ends with the same result, and the executor says so in one event line; a job that
  kills every actor it meets is given up after three; with no replacement possible, the batch
  fails with one ExecutorError line; nothing hangs;
- bad specs, an address nobody answers at, and Ray missing are one line each;
- ``chessaccel uci`` with ``Backend ray:model``: a legal bestmove, nothing of Ray's on stdout,
  an actor killed mid-search reported as one ``info string``, and no process left after quit.

Skipped where Ray is not installed (``pip install -e '.[ray]'``; ``make test`` installs it).
"""

import os
import re
import signal
import subprocess
import sys
import threading
import time

import chess
import pytest

from chessaccel.contract.defs import INF
from chessaccel.host.backends import BackendError, get_backend
from chessaccel.host.engine.executors import ExecutorError, Job, RayExecutor, make_executor
from chessaccel.host.engine.search import HostSearch, SearchOptions
from chessaccel.model.position import board_from_chess

from uci_harness import RawEngine

ray = pytest.importorskip("ray")

#: every test here shares the module's Ray: under xdist they stay on one worker (--dist loadgroup)
pytestmark = pytest.mark.xdist_group("ray")

ITALIAN = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"
#: (FEN, depth, hardware plies): an opening, a middlegame with checks and captures, a tactic,
#: an endgame
POSITIONS = (
    (ITALIAN, 3, 2),
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 2, 1),
    ("2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1", 2, 1),
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 4, 2),
)
#: Seconds any one search here may take before the test calls it a hang.
HANG = 120


@pytest.fixture(scope="module")
def local_ray():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level="ERROR")
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def executor(local_ray):
    lines = []
    executor = make_executor("ray:model", 2, log=lines.append)
    executor.logged = lines
    yield executor
    executor.close()


def _search(executor, fen, depth, plies):
    """HostSearch at ``depth`` in deterministic mode, in a thread given HANG seconds."""
    out = {}

    def run():
        search = HostSearch(executor, options=SearchOptions.exact(plies))
        out["result"] = search.search_depth(chess.Board(fen), depth)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG)
    assert not thread.is_alive(), f"search of {fen} at depth {depth} still running after {HANG} s"
    return out["result"]


def _summary(result):
    return result.score, result.best_move, [m.uci() for m in result.pv], result.error


def test_two_model_actors_search_as_the_in_process_executor(executor, inline):
    assert isinstance(executor, RayExecutor)
    assert (executor.slots, executor.parallel, executor.speculate) == (2, True, True)
    assert len({pid for pid, _ in executor.actor_pids()}) == 2
    for fen, depth, plies in POSITIONS:
        expected = _summary(_search(inline, fen, depth, plies))
        got = _summary(_search(executor, fen, depth, plies))
        assert got == expected, f"{fen} depth {depth} frontier {plies}"
        assert expected[1] is not None and expected[3] is None
    assert executor.stats["peak_busy"] == 2       # both actors held jobs at once
    assert executor.events == [] and executor.stats["actors_lost"] == 0


def test_two_pocl_actors_search_as_the_in_process_opencl_executor(local_ray):
    """The same on OpenCL (PoCL on this machine's CPU): each actor holds its own device."""
    local = make_executor("opencl:pocl", 1)
    remote = make_executor("ray:opencl:pocl", 2)
    try:
        assert remote.slots == 2 and len({pid for pid, _ in remote.actor_pids()}) == 2
        for fen, depth, plies in POSITIONS:
            expected = _summary(_search(local, fen, depth, plies))
            assert _summary(_search(remote, fen, depth, plies)) == expected, fen
            assert len(expected[2]) >= 1 and expected[3] is None
        assert remote.events == []
    finally:
        remote.close()
        local.close()


def _kill_a_busy_actor(executor, after_jobs, killed):
    """Once ``after_jobs`` jobs have finished, SIGKILL an actor that is running a job."""
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline:
        busy = executor.actor_pids(busy_only=True)
        if executor.stats["jobs"] >= after_jobs and busy:
            pid, _ = busy[0]
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            return
        time.sleep(0.002)


def test_an_actor_killed_mid_search_is_survived(executor, inline):
    fen, depth, plies = POSITIONS[0]
    expected = _summary(_search(inline, fen, depth, plies))
    before = executor.stats["actors_lost"], len(executor.events), len(executor.logged)
    killed = []
    killer = threading.Thread(target=_kill_a_busy_actor, args=(executor, executor.stats["jobs"]
                                                               + 5, killed), daemon=True)
    killer.start()
    got = _summary(_search(executor, fen, depth, plies))
    killer.join(HANG)
    assert killed, "no actor was busy to kill"
    assert got == expected
    assert executor.stats["actors_lost"] == before[0] + 1
    [event] = executor.events[before[1]:]
    assert executor.logged[before[2]:] == [event]
    assert re.fullmatch(rf"ray: actor \d \(pid {killed[0]} on [\d.]+\) died mid-job "
                        r"\(\w+\); (its job runs again on another actor|its job was no longer "
                        r"needed); replacement actor \d starting", event), event
    # the replacement joins: two live actors again, the killed one not among them
    deadline = time.monotonic() + HANG
    while len(executor.actor_pids()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = [pid for pid, _ in executor.actor_pids()]
    assert len(pids) == 2 and killed[0] not in pids
    assert _summary(_search(executor, fen, 2, 1)) == _summary(_search(inline, fen, 2, 1))


def test_a_cancelled_batch_frees_its_actors_at_once(executor):
    """Jobs of minutes, cancelled while both actors run them: both stop (interrupted in the
    actor, across Ray), and a new job is answered within seconds."""
    board = board_from_chess(chess.Board(ITALIAN))
    # the jobs an earlier test's search cancelled may still be finishing in the actors
    deadline = time.monotonic() + HANG
    while executor.actor_pids(busy_only=True) and time.monotonic() < deadline:
        time.sleep(0.01)
    before = dict(executor.stats)
    batch = executor.submit([Job(board, 6, -INF, INF), Job(board, 6, -INF, INF)])
    deadline = time.monotonic() + HANG
    while len(executor.actor_pids(busy_only=True)) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    cancelled = time.monotonic()
    batch.cancel()
    small = executor.submit([Job(board, 1, -INF, INF)])
    while small.results[0] is None and time.monotonic() - cancelled < 10:
        small.wait(0.1)
    assert small.results[0] is not None, "a cancelled job kept its actor"
    # the small job went to the first actor that stopped; the other's "aborted" answer may
    # still be on its way back: both must be idle and counted within the same seconds
    def settled():
        return (not executor.actor_pids(busy_only=True)
                and executor.stats["cancelled_jobs"] - before["cancelled_jobs"] >= 2)
    while not settled() and time.monotonic() - cancelled < 10:
        time.sleep(0.01)
    assert not executor.actor_pids(busy_only=True), "a cancelled job kept its actor"
    assert executor.stats["cancelled_jobs"] - before["cancelled_jobs"] == 2
    assert executor.stats["jobs"] - before["jobs"] == 1 and batch.results == [None, None]


class _Poison:
    """A job's board that kills the process unpickling it: every actor it is sent to dies."""

    def __reduce__(self):
        return os._exit, (3,)


def test_a_job_that_kills_every_actor_it_meets_is_given_up(executor, inline):
    before = len(executor.events)
    batch = executor.submit([Job(_Poison(), 1, -INF, INF)])
    deadline = time.monotonic() + HANG
    with pytest.raises(ExecutorError) as error:
        while time.monotonic() < deadline:
            batch.wait(0.5)
    assert re.fullmatch(r"a model job killed 3 Ray actors in a row \(\w+\)", str(error.value))
    events = executor.events[before:]
    assert [e.split("; ")[1] for e in events] == ["its job runs again on another actor"] * 2 + \
        ["its job killed 3 actors and is given up"]
    assert executor.broken is None      # the executor goes on with the replacements
    deadline = time.monotonic() + HANG
    while len(executor.actor_pids()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(executor.actor_pids()) == 2
    fen, depth, plies = POSITIONS[1]
    assert _summary(_search(executor, fen, depth, plies)) == \
        _summary(_search(inline, fen, depth, plies))


def test_the_last_actor_lost_with_no_replacement_fails_the_batch_in_one_line(local_ray):
    executor = make_executor("ray:model", 1)
    try:
        def no_room():
            raise BackendError("cannot start a Ray actor: no room (test)")
        executor.backend.start_actor = no_room
        board = board_from_chess(chess.Board(ITALIAN))
        batch = executor.submit([Job(board, 6, -INF, INF)])   # minutes on the model
        killed = []
        _kill_a_busy_actor(executor, 0, killed)
        assert killed
        deadline = time.monotonic() + HANG
        with pytest.raises(ExecutorError) as error:
            while time.monotonic() < deadline:
                batch.wait(0.5)
        assert str(error.value) == ("every Ray actor of model is dead: cannot start a Ray "
                                    "actor: no room (test)")
        assert executor.broken is error.value
        [event] = executor.events
        assert event.endswith("its job runs again on another actor; no replacement: cannot "
                              "start a Ray actor: no room (test)")
        with pytest.raises(ExecutorError):
            executor.submit([Job(board, 1, -INF, INF)])
    finally:
        executor.close()


@pytest.mark.parametrize("spec, line", [
    ("ray", "backend 'ray' needs the spec its actors run: ray:SPEC or ray:SPEC@ADDRESS, such "
            "as 'ray:model' or 'ray:model@auto'"),
    ("ray: ", "backend 'ray' needs the spec its actors run: ray:SPEC or ray:SPEC@ADDRESS, such "
              "as 'ray:model' or 'ray:model@auto'"),
    ("ray:fpga", "backend 'ray:fpga': unknown backend 'fpga' (choose from: model, rtl, "
                 "verilator[:BOARDS], serial:PORT[,PORT...], "
                 "opencl[:PLATFORM[:INDEX|I,J,...|all]], ray:SPEC[@ADDRESS])"),
    ("ray:ray:model", "backend 'ray:ray:model': a ray actor cannot run another ray backend"),
    ("ray:model@", "backend 'ray:model@': nothing after '@' (ray:SPEC or ray:SPEC@ADDRESS, such "
                   "as 'ray:model' or 'ray:model@auto')"),
    ("ray:model:x", "backend 'ray:model:x': backend 'model' takes no argument: 'model:x'"),
])
def test_bad_specs_are_one_line(local_ray, spec, line):
    with pytest.raises(BackendError) as error:
        make_executor(spec, 2)
    assert str(error.value) == line     # 'ray:model:x': found by the actor that cannot start


def test_an_address_nobody_answers_at_and_ray_missing_are_one_line(monkeypatch):
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "chessaccel.host.cli", "search", "startpos", "--depth", "1",
         "--backend", "ray:model@127.0.0.1:1"], capture_output=True, text=True, timeout=HANG)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "chessaccel: error: cannot reach the Ray cluster at '127.0.0.1:1': ConnectionError: "
        "nothing answers at 127.0.0.1:1 (Connection refused)"]
    assert time.monotonic() - started < 60
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(BackendError) as error:
        get_backend("ray:model")
    assert str(error.value) == "the ray backend needs Ray: pip install 'chessaccel[ray]'"


def _descendants(pid):
    out, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children") as f:
                    children = [int(p) for p in f.read().split()]
            except OSError:
                continue
            out += children
            todo += children
    return out


def _command_line(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


_UCI_LINE = re.compile(r"(id |option |uciok$|readyok$|info |bestmove )")


def test_the_uci_engine_on_ray_plays_survives_a_kill_and_leaves_nothing_behind():
    engine = RawEngine()
    processes = []
    try:
        engine.send("uci")
        engine.send("setoption name Accelerators value 2")
        engine.send("setoption name Backend value ray:model")
        engine.sync(HANG)
        processes = _descendants(engine.process.pid)
        actors = [pid for pid in processes if "_Accelerator" in _command_line(pid)]
        assert len(actors) == 2, [_command_line(pid) for pid in processes]
        engine.send(f"position fen {ITALIAN}")
        engine.send("go depth 2")
        lines, _ = engine.read_until(lambda l: l.startswith("bestmove"), HANG)
        assert chess.Move.from_uci(lines[-1].split()[1]) in chess.Board(ITALIAN).legal_moves
        engine.send("go depth 4")
        engine.read_until(lambda l: l.startswith("info depth 3"), HANG)
        os.kill(actors[0], signal.SIGKILL)
        lines, _ = engine.read_until(lambda l: l.startswith("bestmove"), HANG)
        said = [l for l in lines if "died mid-job" in l]
        assert len(said) == 1 and said[0].startswith("info string ray: actor "), lines
        assert not any(l.startswith("info string error") for l in lines), lines
        assert chess.Move.from_uci(lines[-1].split()[1]) in chess.Board(ITALIAN).legal_moves
        # a new executor on the same Ray (made before the old one is closed), then the old one's
        # address refused while it runs: each a clean step, the engine playing on
        engine.send("setoption name Accelerators value 1")
        engine.send("go depth 2")
        lines, _ = engine.read_until(lambda l: l.startswith("bestmove"), HANG)
        assert not any("error" in l for l in lines), lines
        engine.send("setoption name Backend value ray:model@127.0.0.1:1")
        lines = engine.sync(HANG)
        assert lines == ["info string error: backend 'ray:model@127.0.0.1:1': this process "
                         "already runs its actors on a local Ray: restart it to use "
                         "127.0.0.1:1"], lines
        engine.send("go depth 2")
        lines, _ = engine.read_until(lambda l: l.startswith("bestmove"), HANG)
        assert not any("error" in l for l in lines), lines
        assert all(_UCI_LINE.match(line) for line in engine.seen), \
            [line for line in engine.seen if not _UCI_LINE.match(line)]
        processes = _descendants(engine.process.pid)
        engine.send("quit")
        engine.process.wait(30)
        assert engine.process.returncode == 0
        deadline = time.monotonic() + 30
        while any(_alive(pid) for pid in processes) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [(pid, _command_line(pid)) for pid in processes if _alive(pid)]
        assert "Traceback" not in engine.stderr
    finally:
        for pid in processes:       # what a failed test left: never leak a Ray
            if _alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        engine.close()
