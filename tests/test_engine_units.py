"""The host engine's parts one function at a time, each value worked out by hand: the table's
slots and replacement, the time plan's numbers at its edges, scores at the mate bounds, the
executors' counts and error lines, and the search driver's stopping rules. Fast (the model's
searches here are depth 1-3 on small positions), so that any changed operator, constant or
dropped assignment in these functions changes a value asserted here."""

import os
import signal
import threading
import time

import chess
import pytest

from chessaccel.contract.defs import INF, MATE, MAX_PLY
from chessaccel.host.engine import scores
from chessaccel.host.engine.executors import ExecutorError, Job, LinkExecutor, PoolExecutor
from chessaccel.host.engine.search import HostSearch, Limits, SearchOptions
from chessaccel.host.engine.timeman import (HORIZON, MIN_THINK, Budget, GoLimits, LagMeter,
                                            plan)
from chessaccel.host.engine.tt import ENTRY_BYTES, MAX_HASH_MB, Bound, TranspositionTable
from suites import board_of as board

SCHOLAR = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"
#: Black's king on a8 has a7 and nothing else (the rook holds the b-file, the king b7).
ONE_LEGAL_MOVE = "k7/8/2K5/8/8/8/8/1R6 b - - 0 1"


# --- the transposition table ------------------------------------------------------------------

def test_a_new_or_cleared_table_is_empty_at_generation_0():
    table = TranspositionTable(1)
    assert (table.megabytes, table.slots, table.generation, table.used) == (1, 8738, 0, 0)
    assert table.hashfull() == 0 and all(table.probe(key) is None for key in (0, 1, 8737, 8738))
    table.store(5, 2, Bound.LOWER, 7, None)
    table.new_search()
    table.new_search()
    assert table.generation == 2
    table.clear()
    assert (table.generation, table.used, table.probe(5)) == (0, 0, None)
    table.store(8738 + 5, 1, Bound.EXACT, 3, None)      # slot 5 again: the table is whole
    assert table.probe(8738 + 5).generation == 0 and table.used == 1


def test_the_default_table_and_its_entries():
    """16 MiB as UCI's Hash option's default; entries without a __dict__ (ENTRY_BYTES was
    measured with slots: a dict per entry would double it); three distinct bound codes."""
    table = TranspositionTable()
    assert (table.megabytes, table.slots) == (16, 16 * (1 << 20) // 120)
    table.store(1, 1, Bound.EXACT, 0, None)
    assert not hasattr(table.probe(1), "__dict__")
    assert (Bound.EXACT, Bound.LOWER, Bound.UPPER) == (0, 1, 2)


def test_the_hash_option_bounds_are_inclusive(monkeypatch):
    from chessaccel.host.engine import tt
    assert TranspositionTable(1).slots == (1 << 20) // ENTRY_BYTES == 8738
    table = TranspositionTable(2)
    assert table.slots == 17476 and table.megabytes == 2
    # the largest size is accepted; entries this big leave it one slot (never none), so that
    # the bound is tried without building a 4 GiB table
    monkeypatch.setattr(tt, "ENTRY_BYTES", MAX_HASH_MB << 21)
    table.resize(MAX_HASH_MB)
    assert (table.megabytes, table.slots) == (4096, 1)
    for megabytes, text in ((0, "hash size 0 MiB out of range 1..4096"),
                            (4097, "hash size 4097 MiB out of range 1..4096")):
        with pytest.raises(ValueError) as error:
            table.resize(megabytes)
        assert str(error.value) == text


def test_a_slot_answers_only_for_its_own_key():
    table = TranspositionTable(1)
    slots = table.slots
    table.store(3, 4, Bound.EXACT, 11, None)
    assert table.probe(3 + slots) is None and table.probe(3).score == 11
    assert table.probe(4) is None and table.probe(2) is None


def test_replacement_by_depth_and_generation_at_the_edges():
    e4, d4 = chess.Move.from_uci("e2e4"), chess.Move.from_uci("d2d4")
    table = TranspositionTable(1)
    key, rival = 100, 100 + table.slots
    table.store(key, 4, Bound.EXACT, 1, e4)
    table.store(rival, 3, Bound.EXACT, 2, d4)       # shallower rival, same search: refused
    assert table.probe(key).score == 1 and table.used == 1
    table.store(rival, 4, Bound.EXACT, 2, d4)       # as deep: taken
    assert table.probe(rival).score == 2 and table.probe(key) is None and table.used == 1
    table.store(rival, 0, Bound.UPPER, -9, None)    # its own key, shallower: always replaced
    entry = table.probe(rival)
    assert (entry.depth, entry.bound, entry.score, entry.move, entry.generation) == \
        (0, Bound.UPPER, -9, d4, 0)
    table.store(rival, 0, Bound.LOWER, 5, e4)       # a new move replaces the kept one
    assert table.probe(rival).move == e4
    table.store(rival, 9, Bound.EXACT, 0, None)
    table.new_search()
    table.store(key, 1, Bound.LOWER, 6, None)       # a deeper entry of an older search gives way
    entry = table.probe(key)
    assert (entry.depth, entry.score, entry.move, entry.generation) == (1, 6, None, 1)
    assert table.used == 1


def test_hashfull_is_permille_rounded_down_and_capped():
    table = TranspositionTable(1)       # 8738 slots
    for key in range(9):
        table.store(key, 1, Bound.EXACT, 0, None)
    assert table.hashfull() == 1        # 9000 // 8738
    table.store(8, 2, Bound.EXACT, 0, None)     # the same slot again: not counted twice
    assert table.used == 9
    table.used = 8000                   # 8,000,000 // 8738
    assert table.hashfull() == 915
    table.used = table.slots * 2        # more than the slots (cannot happen): still 1000
    assert table.hashfull() == 1000


# --- scores at the mate bounds ---------------------------------------------------------------

def test_the_mate_bounds_and_their_edges():
    assert scores.HOST_MAX_PLY == 96 and scores.MATE_BOUND == MATE - 96 - MAX_PLY
    bound = scores.MATE_BOUND
    assert scores.is_mate(bound) and scores.is_mate(-bound)
    assert not scores.is_mate(bound - 1) and not scores.is_mate(-bound + 1)
    assert scores.mate_moves(bound) == (MATE - bound + 1) // 2
    assert scores.mate_moves(-bound) == -((MATE - bound) // 2)
    assert scores.mate_moves(bound - 1) is None and scores.mate_moves(-bound + 1) is None
    assert scores.mate_moves(MATE - 2) == 1 and scores.mate_moves(-(MATE - 3)) == -1
    assert scores.uci_score(0) == "cp 0" and scores.uci_score(MATE - 2) == "mate 1"
    assert scores.to_tt(bound, 3) == bound + 3 and scores.to_tt(-bound, 3) == -bound - 3
    assert scores.to_tt(bound - 1, 3) == bound - 1 and scores.to_tt(-bound + 1, 3) == -bound + 1
    assert scores.from_tt(bound, 3) == bound - 3 and scores.from_tt(-bound, 3) == -bound + 3
    assert scores.from_tt(bound - 1, 3) == bound - 1 and scores.from_tt(-bound + 1, 3) == -bound + 1


def test_job_scores_at_the_jobs_mate_edge():
    edge = MATE - MAX_PLY
    assert scores.from_job(edge, 4) == edge - 4 and scores.from_job(-edge, 4) == -edge + 4
    assert scores.from_job(edge - 1, 4) == edge - 1 and scores.from_job(-edge + 1, 4) == -edge + 1
    # a host bound exactly at the image of the job's mate range shifts; one below does not
    assert scores.job_window(edge - 4, INF, 4) == (edge, INF)
    assert scores.job_window(edge - 5, INF, 4) == (edge - 5, INF)
    assert scores.job_window(-INF, -(edge - 4), 4) == (-INF, -edge)
    assert scores.job_window(-INF, -(edge - 5), 4) == (-INF, -(edge - 5))
    assert scores.job_window(INF - 1, INF, 4) == (INF - 1, INF)
    assert scores.job_window(INF - 3, INF - 1, 4) == (INF - 1, INF)    # both clamp: one point
    assert scores.job_window(-INF, -INF, 0) == (-INF, -INF + 1)
    assert scores.job_window(7, 7, 2) == (7, 8)


# --- time ---------------------------------------------------------------------------------------

def test_fifty_move_scaling_and_its_windows():
    """Scores shrink toward 0 with the fifty-move counter, by hand: 400 at 0, 40, 100 and past
    the rule; mates and big scores stay. A window widened for a job's unscaled result keeps its
    bounds: at or below a fails low, at or above b fails high, between them exact, for every
    counter and window, the mate range and the edges included."""
    assert [scores.fifty_scaled(400, h) for h in (0, 40, 100, 130)] == [400, 320, 200, 200]
    assert scores.fifty_scaled(-401, 40) == -320 and scores.fifty_scaled(-1, 90) == 0
    assert scores.fifty_scaled(MATE - 3, 90) == MATE - 3
    assert scores.fifty_scaled(scores.FIFTY_LIMIT, 90) == scores.FIFTY_LIMIT
    assert scores.fifty_window(-50, 51, 0) == (-50, 51)
    assert scores.fifty_window(99, 100, 100) == (199, 200)
    edges = [-INF, -INF + 1, -MATE + 3, -scores.FIFTY_LIMIT, -901, -1, 0, 1, 333, 9999, MATE - 5,
             INF - 1, INF]
    for halfmoves in (0, 1, 37, 99, 100):
        for alpha in edges:
            for beta in (alpha + 1, alpha + 2, alpha + 250, INF):
                if beta > INF or beta <= alpha:
                    continue
                a, b = scores.fifty_window(alpha, beta, halfmoves)
                assert a < b
                for x in (a - 3, a):
                    assert x < -INF or scores.fifty_scaled(x, halfmoves) <= alpha
                if a < INF:
                    assert scores.fifty_scaled(a + 1, halfmoves) > alpha
                assert scores.fifty_scaled(b, halfmoves) >= beta
                if b > -INF:
                    assert scores.fifty_scaled(b - 1, halfmoves) < beta


def test_budget_deadlines_add_to_the_start():
    assert Budget(0.5, 2.0).deadlines(100.0) == (100.5, 102.0)
    assert Budget().deadlines(100.0) == (None, None)
    assert Budget(soft=1.0).deadlines(10.0) == (11.0, None)
    assert Budget(hard=1.0).deadlines(10.0) == (None, 11.0)


def test_fields_a_go_leaves_out_are_none_and_plan_nothing():
    assert GoLimits() == GoLimits(wtime=None, btime=None, winc=None, binc=None, movestogo=None,
                                  movetime=None, infinite=False)
    assert plan(GoLimits(), True) == Budget() == plan(GoLimits(), False)
    assert plan(GoLimits(wtime=5000), False) == Budget()    # black's clock not given
    assert plan(GoLimits(btime=5000), False) == plan(GoLimits(btime=5000, binc=0, movestogo=30), False)
    # no increment given is none at all: 60 s over 30 moves, no overhead: target 2 s, hard the
    # least of 5 x target and a tenth of the clock, 6 s; soft the target
    budget = plan(GoLimits(wtime=60000), True, overhead_ms=0)
    assert budget.hard == pytest.approx(6.0) and budget.soft == pytest.approx(2.0)


def test_movetime_plans_less_the_overhead_and_never_below_the_least():
    assert plan(GoLimits(movetime=250), False, overhead_ms=50) == Budget(0.2, 0.2)
    assert plan(GoLimits(movetime=40), True, overhead_ms=50) == Budget(MIN_THINK, MIN_THINK)
    assert plan(GoLimits(movetime=55), True, overhead_ms=50).hard == pytest.approx(MIN_THINK)
    assert plan(GoLimits(movetime=56), True, overhead_ms=50).hard == pytest.approx(0.006)
    assert plan(GoLimits(movetime=100), True).hard == pytest.approx(0.05)   # default overhead


def test_a_clock_plan_worked_by_hand():
    """60 s, 1 s increment, 50 ms overhead, sudden death: usable 59.95 s over 30 moves plus
    0.75 s of the increment less the overhead: target 1.998333 + 0.7 = 2.698333 s; hard is the
    least of 5 x target = 13.491667 and a tenth of usable = 5.995: 5.995; soft the target."""
    budget = plan(GoLimits(wtime=60000, btime=1, winc=1000, binc=0), True, overhead_ms=50)
    assert budget.hard == pytest.approx(5.995) and budget.soft == pytest.approx(2.6983333)
    # black's side of the same go reads btime and binc
    budget = plan(GoLimits(wtime=1, btime=60000, winc=0, binc=1000), False, overhead_ms=50)
    assert budget.hard == pytest.approx(5.995)
    # movestogo 10: usable / 10 + 0.7 = 6.695; hard min(33.475, 5.995); soft at most hard
    budget = plan(GoLimits(wtime=60000, winc=1000, movestogo=10), True, overhead_ms=50)
    assert budget.hard == pytest.approx(5.995) and budget.soft == pytest.approx(5.995)
    # movestogo above the horizon counts as the horizon; 0 counts as one move
    assert plan(GoLimits(wtime=60000, movestogo=HORIZON + 10), True) == \
        plan(GoLimits(wtime=60000), True)
    one = plan(GoLimits(wtime=10000, movestogo=1), True, overhead_ms=0)
    assert one.hard == pytest.approx(9.0) and one.soft == pytest.approx(9.0)
    assert plan(GoLimits(wtime=10000, movestogo=0), True, overhead_ms=0) == \
        plan(GoLimits(wtime=10000, movestogo=HORIZON), True, overhead_ms=0)


def test_two_moves_to_go_use_the_share_not_nine_tenths():
    # 10 s, no increment, no overhead, 2 moves: target 5, hard min(25, 1.0) = 1.0, soft at most it
    budget = plan(GoLimits(wtime=10000, movestogo=2), True, overhead_ms=0)
    assert budget.hard == pytest.approx(1.0) and budget.soft == pytest.approx(1.0)


def test_the_reserve_when_the_overhead_exceeds_the_increment():
    # overhead 200 ms, increment 100 ms: 0.1 s x 30 moves kept: usable 10 - 0.2 - 3 = 6.8;
    # target 6.8 / 30 + 0.075 - 0.2 = 0.101667; hard min(0.508333, 0.68)
    budget = plan(GoLimits(wtime=10000, winc=100), True, overhead_ms=200)
    assert budget.hard == pytest.approx(0.5083333) and budget.soft == pytest.approx(0.1016667)
    # an increment equal to the overhead keeps nothing back: usable 9.9, target 0.305, hard
    # min(1.525, 0.99)
    budget = plan(GoLimits(wtime=10000, winc=100), True, overhead_ms=100)
    assert budget.hard == pytest.approx(0.99) and budget.soft == pytest.approx(9.9 / 30 + 0.075 - 0.1)
    # no time left at all: the least think time, both deadlines
    assert plan(GoLimits(wtime=0), True) == Budget(MIN_THINK, MIN_THINK)
    assert plan(GoLimits(wtime=0), True, overhead_ms=0) == Budget(MIN_THINK, MIN_THINK)


def test_the_lag_meter_edges():
    meter = LagMeter()
    assert meter.expected_ms(50) == 50
    meter.after_move(4, None, 100, 10)          # no clock: nothing remembered
    meter.before_go(6, 5000)
    assert meter.lag_ms == 0
    meter.after_move(6, 5000, None, 100)        # no increment counts as 0
    meter.before_go(8, 4900)                    # charged 100, thought 100: lag 0
    assert meter.lag_ms == 0
    meter.after_move(8, 4900, 0, 100)
    meter.before_go(10, 4790)                   # lag 10
    assert meter.lag_ms == 10.0 and meter.expected_ms(5) == 12
    meter.after_move(10, 4790, 0, 0)
    meter.before_go(12, 4790 - 10_000)          # lag exactly the sane limit: learnt
    assert meter.lag_ms == 10_000
    meter.after_move(12, 10_000, 0, 0)
    meter.before_go(14, 10_000 - 10_001)        # above it: a paused clock, ignored
    assert meter.lag_ms == 10_000
    meter.after_move(14, 5000, 0, 0)
    meter.before_go(16, None)                   # no clock this time: forgotten, not learnt
    meter.before_go(16, 4000)
    assert meter.lag_ms == 10_000
    meter.after_move(16, 5000, 0, 0)
    meter.before_go(18, 5000)                   # lag 0: the old one decays
    assert meter.lag_ms == 7500.0 and meter.expected_ms(0) == 9375
    meter.after_move(18, 5000, 100, 50)
    meter.before_go(20, 4900)                   # charged 5000 - 4900 + 100 = 200: lag 150
    assert meter.lag_ms == 5625.0               # the decayed 7500 still above it


# --- the search driver's stopping rules -------------------------------------------------------

def test_a_mate_limit_stops_at_the_first_iteration_that_finds_it(inline):
    cb = chess.Board(SCHOLAR)
    found = HostSearch(inline, None, SearchOptions(hardware_plies=1)).search(
        cb, Limits(depth=4, mate=1))
    assert (found.depth, found.mate, found.best_move.uci()) == (1, 1, "h5f7")
    # a longer mate limit stops there too; without one the search goes on to its depth
    assert HostSearch(inline, None, SearchOptions(hardware_plies=1)).search(
        cb, Limits(depth=3, mate=2)).depth == 1
    assert HostSearch(inline, None, SearchOptions(hardware_plies=1)).search(
        cb, Limits(depth=2)).depth == 2


def test_a_mate_limit_is_not_met_by_an_ordinary_score(inline):
    ordinary = HostSearch(inline, None, SearchOptions(hardware_plies=1)).search(
        chess.Board(), Limits(depth=2, mate=3))
    assert ordinary.depth == 2 and ordinary.mate is None


def test_one_legal_move_is_played_at_once_only_under_a_clock(inline):
    cb = chess.Board(ONE_LEGAL_MOVE)
    timed = HostSearch(inline, None, SearchOptions(hardware_plies=1)).search(
        cb, Limits(depth=3, deadline=time.monotonic() + 60))
    assert (timed.depth, timed.best_move.uci()) == (1, "a8a7")
    untimed = HostSearch(inline, None, SearchOptions(hardware_plies=1)).search(cb, Limits(depth=3))
    assert (untimed.depth, untimed.best_move.uci()) == (3, "a8a7")
    three = chess.Board("k7/8/8/8/8/8/8/2R4K b - - 0 1")     # a7, b7 and b8
    assert HostSearch(inline, None, SearchOptions(hardware_plies=1)).search(
        three, Limits(depth=2, deadline=time.monotonic() + 60)).depth == 2


def test_a_root_without_moves_is_one_host_node_and_nothing_else(inline):
    mated = chess.Board("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")
    stalemate = chess.Board("k7/8/1Q6/8/8/8/8/7K b - - 0 1")
    table = TranspositionTable(1)
    for cb, score in ((mated, -MATE), (stalemate, 0)):
        result = HostSearch(inline, table).search(cb, Limits(depth=3))
        assert (result.best_move, result.ponder_move, result.score, result.depth, result.pv,
                result.host_nodes, result.accelerator_nodes, result.speculative_nodes,
                result.jobs, result.seconds, result.seldepth, result.span_nodes) == \
            (None, None, score, 0, [], 1, 0, 0, 0, 0.0, 0, 0)
        assert (result.iterations, result.aborted, result.error, result.nodes) == ([], False, None, 1)
    assert result.mate is None
    assert table.generation == 2        # each search is a new generation, even these
    HostSearch(inline, table, SearchOptions(tt=False)).search(stalemate, Limits(depth=1))
    assert table.generation == 2        # the table switched off is left alone


def test_a_search_stopped_before_it_starts_plays_the_first_legal_move(inline):
    stop = threading.Event()
    stop.set()
    result = HostSearch(inline, None, SearchOptions(hardware_plies=1), stop=stop).search(
        chess.Board(SCHOLAR), Limits(depth=3))
    assert result.aborted and (result.depth, result.score, result.iterations) == (0, 0, [])
    assert result.best_move == result.pv[0] and result.best_move in chess.Board(SCHOLAR).legal_moves


def test_the_root_best_is_noted_only_at_the_root_and_only_above_alpha(inline):
    search = HostSearch(inline, None, SearchOptions(hardware_plies=1))
    search.search(chess.Board(SCHOLAR), Limits(depth=1))
    e4 = chess.Move.from_uci("e2e4")
    search._root_best, search._root_alpha = None, 10
    search._note_root(0, 10, e4, [e4])          # not above alpha
    search._note_root(1, 50, e4, [e4])          # not the root
    assert search._root_best is None
    search._note_root(0, 11, e4, [e4])
    assert search._root_best == (11, e4, [e4])


def test_a_search_depth_counts_only_its_own_speculative_nodes(inline):
    """search_depth's speculative count starts from the executor's count when it begins, not
    from zero: a second search on the same executor reports what the first did."""
    search = HostSearch(inline, None, SearchOptions.exact(1))
    first = search.search_depth(chess.Board(SCHOLAR), 2)
    second = search.search_depth(chess.Board(SCHOLAR), 2)
    assert (first.nodes, first.speculative_nodes) == (second.nodes, second.speculative_nodes)
    assert second.speculative_nodes == 0 and second.depth == 2


# --- executors --------------------------------------------------------------------------------

def test_a_dead_worker_is_replaced_and_the_pool_goes_on():
    executor = PoolExecutor("model", 1)
    try:
        slow = executor.submit([Job(board("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/"
                                          "RNBQK2R w KQkq - 4 4"), 6, -INF, INF)])
        time.sleep(0.2)
        dead = executor._workers[0].process
        os.kill(dead.pid, signal.SIGKILL)
        start = time.monotonic()
        with pytest.raises(ExecutorError) as error:
            while True:
                slow.wait(1)
                assert time.monotonic() - start < 20, "the death never came back"
        assert str(error.value) == "a model worker process died (exit status -9)"
        quick = executor.submit([Job(board(SCHOLAR), 1, -INF, INF)])
        while not quick.done():
            quick.wait(1)
            assert time.monotonic() - start < 20, "no worker replaced the dead one"
        assert quick.results[0]["score"] == MATE - 1
        assert len(executor._workers) == 1 and executor._workers[0].process.pid != dead.pid
    finally:
        executor.close()


def _Outcome(score, best_move, nodes, cycles):
    from chessaccel.host.backends.board.client import JobOutcome
    return JobOutcome(score, best_move, nodes, cycles, core=0)


class _FakeBoardClient:
    """The board client's calls as LinkExecutor makes them: one core, each job done at its
    first poll, or a BoardError from ``submit`` when told to fail."""

    def __init__(self, fail=None):
        self.fail, self.next_id, self.aborted, self.submitted = fail, 0, [], []

    def new_job_id(self):
        self.next_id += 1
        return self.next_id

    def submit(self, job_id, board, depth, alpha, beta):
        if self.fail:
            from chessaccel.host.backends.board.client import BoardError
            raise BoardError(self.fail)
        self.submitted.append((job_id, depth, alpha, beta))
        return 0

    def poll(self, job_id, core):
        return _Outcome(40 + job_id, (12, 28, 0) if job_id == 1 else None, 100 * job_id, 7)

    def abort(self, job_id=None):
        self.aborted.append(job_id)


class _FakeBoardBackend:
    """The board backend as LinkExecutor uses it: its name, client, core count and log, alone
    in its ``boards``."""
    name = "fakeboard"
    log = None

    def __init__(self, client):
        self.client = client
        self.info = type("Info", (), {"cores": 1})()
        self.boards = (self,)
        self.closed = False

    def close(self):
        self.closed = True


def test_an_executor_of_its_own_delivers_through_the_public_batch_api():
    """What a Ray or MPI executor would do: submit hands jobs out, another thread delivers
    results (Batch.deliver, deliver_all) or a failure (Batch.fail), the waiter sees them as it
    sees any executor's; cancel reaches cancel_batch."""
    import threading
    from chessaccel.host.backends import JobResult
    from chessaccel.host.engine.executors import Batch, Executor

    class Threaded(Executor):
        name = "threaded"

        def __init__(self):
            super().__init__()
            self.cancelled = []

        def submit(self, jobs):
            batch = Batch(self, jobs)

            def answer():
                if jobs[0].depth < 0:
                    batch.fail(RuntimeError("the cluster is gone"))
                    return
                for index in reversed(range(len(jobs))):
                    result = JobResult(jobs[index].depth, None, [], 1)
                    self.count(result)
                    batch.deliver(index, result)
            threading.Thread(target=answer).start()
            return batch

        def cancel_batch(self, batch):
            self.cancelled.append(batch)

    executor = Threaded()
    batch = executor.submit([Job(None, 3, -INF, INF), Job(None, 4, -INF, INF)])
    seen = []
    for _ in range(100):
        seen += batch.wait(0.1)
        if len(seen) == 2:
            break
    assert sorted(seen) == [0, 1] and batch.done() and [r.score for r in batch.results] == [3, 4]
    assert (executor.stats["jobs"], executor.stats["nodes"]) == (2, 2)
    failed = executor.submit([Job(None, -1, -INF, INF)])
    with pytest.raises(ExecutorError, match="^the cluster is gone$"):
        for _ in range(100):
            failed.wait(0.1)
    failed.cancel()
    failed.cancel()
    assert executor.cancelled == [failed]
    whole = Batch(executor, [Job(None, 1, -INF, INF)] * 2, inline=True)
    whole.deliver_all([JobResult(1, None, [], 5)] * 2)
    assert whole.done() and whole.wait(0) == [0, 1] and whole.wait(0) == []


def _finish(batch):
    start = time.monotonic()
    while not batch.done():
        batch.wait(1)
        assert time.monotonic() - start < 10


def test_a_link_executor_makes_each_outcome_a_job_result():
    backend = _FakeBoardBackend(_FakeBoardClient())
    executor = LinkExecutor(backend)
    try:
        assert (executor.name, executor.slots, executor.parallel) == ("fakeboard", 1, False)
        batch = executor.submit([Job(None, 2, -5, 5), Job(None, 1, -INF, INF)])
        _finish(batch)
        assert batch.results == [
            {"score": 41, "best_move": (12, 28, 0), "pv": [(12, 28, 0)], "nodes": 100, "cycles": 7},
            {"score": 42, "best_move": None, "pv": [], "nodes": 200, "cycles": 7}]
        assert backend.client.submitted == [(1, 2, -5, 5), (2, 1, -INF, INF)]
        assert (executor.stats["jobs"], executor.stats["nodes"], executor.stats["batches"]) == \
            (2, 300, 1)
    finally:
        executor.close()
    assert backend.closed


def test_a_broken_link_fails_its_batches_naming_the_board_in_one_line():
    backend = _FakeBoardBackend(_FakeBoardClient(fail="no answer from the board\n(details)"))
    executor = LinkExecutor(backend)
    try:
        batch = executor.submit([Job(None, 1, -INF, INF)])
        with pytest.raises(ExecutorError) as error:
            _finish(batch)
        assert str(error.value) == "board fakeboard: no answer from the board"
        with pytest.raises(ExecutorError, match="^board fakeboard: no answer from the board$"):
            executor.submit([Job(None, 1, -INF, INF)])
    finally:
        executor.close()


# --- the interface benchmark ------------------------------------------------------------------

def test_the_interface_benchmark_times_a_known_number_of_batches(monkeypatch):
    """jobs_total // size batches of each size, a batch of 1 an eighth as many (each costs
    about what a bigger one does), at least one: 1600 jobs -> 200, 50 and 1 batches."""
    from chessaccel.lab import dispatch
    submitted = []

    class Counting(dispatch.BatchExecutor):
        def submit(self, jobs):
            submitted.append(len(jobs))
            assert {(job.depth, job.alpha, job.beta) for job in jobs} == {(0, -INF, INF)}
            return super().submit(jobs)

    monkeypatch.setattr(dispatch, "BatchExecutor", Counting)
    rates = dispatch.measure_interface(jobs_total=1600, sizes=(1, 32, 5000))
    assert submitted == ([1] * 200 + [32] * 50 + [5000]) * 2
    assert list(rates) == ["inline", "threaded"]
    assert all(list(rates[label]) == [1, 32, 5000] for label in rates)
