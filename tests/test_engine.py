"""The host engine's parts: scores across the frontier, the table, time planning, move order
with hash move and killers, draws, limits, and the executors (process pool, batch), with the
exact values each must give."""

import re
import threading
import time
from dataclasses import replace

import chess
import pytest
from hypothesis import given, settings, strategies as st

from chessaccel.contract.defs import INF, MATE, MAX_PLY
from chessaccel.host.backends import Backend, BackendError, Capabilities, JobResult
from chessaccel.host.backends.rtl import RtlBackend
from chessaccel.lab.dispatch import InstantBackend, ThreadedInstantBackend
from chessaccel.host.engine import scores
from chessaccel.host.engine.hostboard import position_key
from chessaccel.host.engine.executors import (BatchExecutor, ExecutorError, Job, PoolExecutor,
                                         make_executor)
from chessaccel.host.engine.order import ordered_moves
from chessaccel.host.engine.search import (HostSearch, Limits, SearchOptions, makespan)
from chessaccel.host.engine.timeman import GoLimits, LagMeter, plan
from chessaccel.host.engine.tt import ENTRY_BYTES, Bound, TranspositionTable
from chessaccel.model.position import chess_from_board, parse_position
from chessaccel.model import search as model

ITALIAN = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"
CPW3 = "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"
SCHOLAR = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"


def board(fen):
    return parse_position(fen)[0]


# --- scores across the frontier ---------------------------------------------------------------

def test_job_scores_shift_by_the_job_roots_ply():
    assert scores.from_job(MATE - 3, 2) == MATE - 5
    assert scores.from_job(-(MATE - 2), 4) == -(MATE - 6)
    assert scores.from_job(MATE - MAX_PLY, 1) == MATE - MAX_PLY - 1
    assert scores.from_job(MATE - MAX_PLY - 1, 5) == MATE - MAX_PLY - 1   # not a mate score
    assert scores.from_job(150, 7) == 150 and scores.from_job(-20000, 3) == -20000


def test_job_windows_shift_the_other_way_and_clamp():
    assert scores.job_window(-INF, INF, 5) == (-INF, INF)
    assert scores.job_window(-30, 40, 9) == (-30, 40)
    assert scores.job_window(MATE - 40, MATE - 10, 5) == (MATE - 40, MATE - 5)
    assert scores.job_window(-(MATE - 10), -(MATE - 40), 5) == (-(MATE - 5), -(MATE - 40))
    assert scores.job_window(INF - 2, INF, 5) == (INF - 1, INF)      # wholly above every score
    assert scores.job_window(-INF, -INF + 1, 5) == (-INF, -INF + 1)


_job_scores = st.one_of(st.integers(-20000, 20000), st.integers(1, MAX_PLY).map(lambda q: MATE - q),
                        st.integers(0, MAX_PLY).map(lambda q: -(MATE - q)))
_host_bounds = st.one_of(st.integers(-INF, INF), st.integers(0, 200).map(lambda d: MATE - d),
                         st.integers(0, 200).map(lambda d: -(MATE - d)))


@settings(max_examples=400, deadline=None)
@given(score=_job_scores, bound=_host_bounds, ply=st.integers(0, 40))
def test_comparisons_agree_on_both_sides_of_the_frontier(score, bound, ply):
    """score > bound in the host's frame exactly when it is in the job's frame."""
    low, high = scores.job_window(bound, min(bound + 1, INF) if bound < INF else INF, ply)
    if bound < INF:
        assert (scores.from_job(score, ply) > bound) == (score > low)


def test_mate_distances_and_uci_text():
    assert scores.mate_moves(MATE - 1) == 1 and scores.mate_moves(MATE - 4) == 2
    assert scores.mate_moves(-(MATE - 2)) == -1 and scores.mate_moves(-MATE) == 0
    assert scores.mate_moves(MATE - 101) == 51 and scores.mate_moves(19999) is None
    assert scores.uci_score(MATE - 3) == "mate 2" and scores.uci_score(-(MATE - 4)) == "mate -2"
    assert scores.uci_score(-35) == "cp -35"


def test_table_scores_are_stored_from_the_node():
    assert scores.to_tt(MATE - 7, 4) == MATE - 3 and scores.from_tt(MATE - 3, 4) == MATE - 7
    assert scores.to_tt(-(MATE - 7), 4) == -(MATE - 3)
    assert scores.from_tt(-(MATE - 3), 6) == -(MATE - 9)
    assert scores.to_tt(321, 9) == 321 == scores.from_tt(321, 9)


# --- the transposition table --------------------------------------------------------------------

def test_table_size_follows_the_hash_option():
    table = TranspositionTable(2)
    assert table.slots == 2 * (1 << 20) // ENTRY_BYTES
    table.resize(1)
    assert table.slots == (1 << 20) // ENTRY_BYTES and table.hashfull() == 0
    for megabytes in (0, 5000):
        with pytest.raises(ValueError, match="out of range"):
            table.resize(megabytes)


def test_table_store_probe_and_replacement():
    table = TranspositionTable(1)
    e4, d4 = chess.Move.from_uci("e2e4"), chess.Move.from_uci("d2d4")
    key, rival = 12345, 12345 + table.slots         # the same slot
    table.store(key, 5, Bound.EXACT, 40, e4)
    entry = table.probe(key)
    assert (entry.depth, entry.bound, entry.score, entry.move) == (5, Bound.EXACT, 40, e4)
    assert table.probe(rival) is None
    table.store(rival, 3, Bound.LOWER, 10, d4)      # shallower, same search: the deeper stays
    assert table.probe(key).depth == 5 and table.probe(rival) is None
    table.store(key, 2, Bound.UPPER, -5, None)      # same position: replaced, its move kept
    assert (table.probe(key).depth, table.probe(key).move) == (2, e4)
    table.store(rival, 2, Bound.LOWER, 10, d4)      # as deep, same search: the newer wins
    assert table.probe(rival).move == d4 and table.probe(key) is None
    table.store(key, 2, Bound.UPPER, -5, e4)
    table.new_search()
    table.store(rival, 1, Bound.LOWER, 10, None)    # an older search's entry gives way, and
    assert table.probe(rival).move is None          # its move is not the new position's
    table.store(rival, 1, Bound.LOWER, 10, d4)
    assert table.probe(rival).move == d4 and table.probe(key) is None
    assert table.used == 1 and table.hashfull() == 1000 // table.slots
    table.clear()
    assert table.probe(rival) is None and table.used == 0


def test_hashfull_counts_permille_of_slots():
    table = TranspositionTable(1)
    for key in range(table.slots // 4):
        table.store(key, 1, Bound.EXACT, 0, None)
    assert table.hashfull() == 249


# --- time -------------------------------------------------------------------------------------

def test_time_plans():
    budget = plan(GoLimits(movetime=1000), True, overhead_ms=50)
    assert (budget.soft, budget.hard) == (0.95, 0.95)
    budget = plan(GoLimits(wtime=10000, btime=10000, winc=100, binc=100), True, overhead_ms=50)
    assert budget.hard == pytest.approx(0.995) and budget.soft == pytest.approx(0.3566667)
    budget = plan(GoLimits(wtime=500, btime=9000, winc=100, binc=100), True, overhead_ms=50)
    assert budget.hard == pytest.approx(0.045) and budget.soft == pytest.approx(0.04)
    budget = plan(GoLimits(wtime=500, btime=9000, winc=100, binc=100), False, overhead_ms=100)
    assert budget.hard == pytest.approx(0.89) and budget.soft == pytest.approx(0.2716667)
    budget = plan(GoLimits(wtime=60000, btime=3000, movestogo=1), False, overhead_ms=100)
    assert budget.hard == pytest.approx(2.52) and budget.soft == pytest.approx(2.52)
    budget = plan(GoLimits(wtime=10000, btime=10000, winc=100, binc=100), True, overhead_ms=150)
    assert budget.hard == pytest.approx(0.835) and budget.soft == pytest.approx(0.2033333)
    assert plan(GoLimits(wtime=1, btime=1), True, overhead_ms=50).hard == 0.005
    assert plan(GoLimits(infinite=True, wtime=5000), True).hard is None
    assert plan(GoLimits(), True).hard is None
    assert plan(GoLimits(btime=5000), True).hard is None     # white's clock not given


def test_a_lagging_machine_is_planned_for():
    """When a move costs 150 ms more than the increment brings back, the plan keeps 60 moves'
    worth in hand: even using every hard limit the clock lasts 88 moves."""
    left, moves = 10.0, 0
    while left > 0 and moves < 300:
        budget = plan(GoLimits(wtime=int(left * 1000), btime=10000, winc=100, binc=100), True,
                      overhead_ms=150)
        left += 0.1 - budget.hard - 0.15
        moves += 1
    assert moves == 89


def test_the_lag_meter_learns_what_the_gui_charges():
    meter = LagMeter()
    meter.before_go(10, 9000)                   # nothing to compare with yet
    assert meter.lag_ms == 0 and meter.expected_ms(50) == 50
    meter.after_move(10, 9000, 100, 300)        # thought 300 ms
    meter.before_go(12, 8600)                   # charged 9000 - 8600 + 100 = 500 ms
    assert meter.lag_ms == 200 and meter.expected_ms(50) == 250
    meter.after_move(12, 8600, 100, 100)
    meter.before_go(14, 8550)                   # lag 50: the old 200 decays to 150
    assert meter.lag_ms == 150
    meter.after_move(14, 8550, 100, 100)
    meter.before_go(18, 1000)                   # not the next move of the same game
    assert meter.lag_ms == 150
    meter.after_move(18, 1000, 0, 500)
    meter.before_go(20, 900)                    # less than it thought: no lag to learn
    assert meter.lag_ms == 150 and meter.expected_ms(400) == 400


def test_sudden_death_at_ten_seconds_never_plans_past_the_clock():
    """Play 150 moves on a 10 s + 0.1 s clock, each move using its whole hard limit plus the
    overhead (the worst case): the clock never runs out, and settles at 0.45 s in hand."""
    left, inc, overhead = 10.0, 0.1, 0.05
    for _ in range(150):
        budget = plan(GoLimits(wtime=int(left * 1000), btime=10000, winc=100, binc=100), True,
                      overhead_ms=int(overhead * 1000))
        left -= budget.hard + overhead
        assert left > 0
        left += inc
    assert left == pytest.approx(0.551, abs=0.002)


def test_slow_mover_scales_the_plan_within_the_hard_limits():
    """Slow Mover 160 plans 1.6 times the time on a full clock (the soft deadline with it, the
    hard one up to its share of the clock), nothing under movetime; and a whole game of worst
    cases (every move its hard limit plus the overhead) still never runs the clock out."""
    clock = GoLimits(wtime=10000, btime=10000, winc=100, binc=100)
    plain, slow = plan(clock, True, 50), plan(clock, True, 50, slow_mover=160)
    assert slow.soft == pytest.approx(1.6 * plain.soft)
    assert slow.hard == plain.hard == pytest.approx(0.1 * (10 - 0.05))   # HARD_SHARE of it
    assert plan(GoLimits(movetime=1000), True, 50, slow_mover=300).hard == 0.95
    left = 10.0
    for _ in range(150):
        budget = plan(GoLimits(wtime=int(left * 1000), btime=10000, winc=100, binc=100), True,
                      overhead_ms=50, slow_mover=300)
        left -= budget.hard + 0.05
        assert left > 0
        left += 0.1


def test_the_soft_deadline_follows_how_settled_the_search_is():
    """TimeStability's share of the planned span after an iteration, by hand."""
    from chessaccel.host.engine.timeman import soft_percent
    assert soft_percent(changed=True, settled=0, fall=0) == 150
    assert soft_percent(changed=False, settled=1, fall=-50) == 100
    assert soft_percent(changed=False, settled=2, fall=29) == 100
    assert soft_percent(changed=False, settled=3, fall=0) == 70
    assert soft_percent(changed=False, settled=3, fall=30) == 91      # 70 * 130 // 100
    assert soft_percent(changed=True, settled=0, fall=100) == 195


# --- move order and draws at the top ---------------------------------------------------------

def test_hash_move_first_then_captures_killers_then_quiet(inline):
    cb = chess.Board(ITALIAN)
    search = HostSearch(inline, TranspositionTable(1), SearchOptions())
    search._limits = Limits()
    search._setup(cb)
    plain = ordered_moves(cb)
    killer, hashed = chess.Move.from_uci("d2d3"), chess.Move.from_uci("b1c3")
    search.killers[2] = [killer]
    got = search._ordered(2, hashed)
    captures = [m for m in plain if cb.is_capture(m)]
    quiet = [m for m in plain if not cb.is_capture(m) and m not in (killer, hashed)]
    assert got == [hashed] + captures + [killer] + quiet
    assert search._ordered(1, None) == plain


def test_killers_keep_the_two_latest_quiet_cutoff_moves(inline):
    search = HostSearch(inline, None, SearchOptions())
    search._limits = Limits()
    search._setup(chess.Board(ITALIAN))
    for uci in ("d2d3", "b1c3", "d2d3", "e1g1", "f3e5"):    # f3e5 takes: never a killer
        search._remember_killer(3, chess.Move.from_uci(uci))
    assert [m.uci() for m in search.killers[3]] == ["e1g1", "d2d3"]


def test_repetition_looks_back_an_even_number_of_plies_within_the_clock(inline):
    search = HostSearch(inline, None, SearchOptions())
    keys = [1, 2, 3, 4, 5, 6]       # the root's key first: every other one the search's own
    assert search._repeats(3, 10, keys, 0)          # 4 plies back
    assert not search._repeats(4, 10, keys, 0)      # 3 plies back: the other side to move
    assert not search._repeats(6, 10, keys, 0)      # 1 ply back
    assert not search._repeats(5, 10, keys, 0)      # 2 plies back: not a repetition yet
    assert not search._repeats(3, 3, keys, 0)       # beyond the clock (a pawn moved since)


def test_a_repetition_is_a_draw_after_the_root_or_the_third_time(inline):
    """As Stockfish and Ethereal count it: a position seen once before the root is not a draw
    (the opponent may turn aside; if it repeats too, the search sees that a move later), once
    after it, or twice anywhere, is; ``twofold_draws`` counts any repetition."""
    search = HostSearch(inline, None, SearchOptions())
    keys = [1, 2, 3, 4, 5, 6]
    assert not search._repeats(1, 10, keys, 0)      # the root itself, once: play goes on
    assert search._repeats(3, 10, keys, 1)          # index 2, after the root at 1
    assert not search._repeats(3, 10, keys, 2)      # the root's own position, seen once
    assert not search._repeats(3, 10, keys, 5)      # the game's history, once
    twice = [7, 2, 3, 4, 7, 6, 5, 4]                # 7 eight and four plies back
    assert search._repeats(7, 10, twice, 7)         # a threefold repetition
    assert not search._repeats(7, 7, twice, 7)      # the clock reaches back to the second only
    lenient = HostSearch(inline, None, SearchOptions(twofold_draws=True))
    assert lenient._repeats(1, 10, keys, 0) and lenient._repeats(3, 10, keys, 5)
    assert not lenient._repeats(4, 10, keys, 0)     # still an even number of plies back


#: Black to move, a queen and a rook up against a knight: white can only hope to repeat.
LOST_FOR_WHITE = "r2q2k1/8/8/8/8/5N2/8/7K b - - 0 1"


def _plies_back(cb, n):
    """The position n plies before ``cb``'s (EPD: no clocks)."""
    earlier = cb.copy()
    for _ in range(n):
        earlier.pop()
    return earlier.epd()


@pytest.mark.parametrize("cycle, plies_back", [
    (["d8d7", "h1g1", "d7d8"], 4),                          # back and forth
    (["d8d7", "h1h2", "d7e8", "h2g1", "e8d8"], 6),          # a triangle each
])
@pytest.mark.parametrize("hardware_plies", [1, 2])
def test_the_losing_side_draws_by_a_third_repetition_not_by_a_second(inline, cycle, plies_back,
                                                                     hardware_plies):
    """The game's history reaches the search: the one move that brings the start position back
    (python-chess's is_repetition is the oracle) scores a draw where it is the third time
    (found by the host's nodes at the root), not where it is the second: then the winning side
    turns aside. With ``twofold_draws`` the second time is a draw too; the same position
    without its history is lost."""
    options = SearchOptions(hardware_plies=hardware_plies)
    for times, draw in ((1, False), (2, True)):
        cb = chess.Board(LOST_FOR_WHITE)
        for uci in (cycle + ["g1h1"]) * (times - 1) + cycle:
            cb.push_uci(uci)
        repeating = []
        for move in cb.legal_moves:
            cb.push(move)
            if cb.is_repetition(times + 1):
                repeating.append(move.uci())
                assert _plies_back(cb, plies_back) == cb.epd()
                assert all(_plies_back(cb, n) != cb.epd() for n in range(1, plies_back))
            cb.pop()
        assert repeating == ["g1h1"]
        result = HostSearch(inline, TranspositionTable(1), options).search(cb, Limits(depth=4))
        if draw:
            assert (result.best_move.uci(), result.score) == ("g1h1", 0)
        else:
            assert result.score < -1000, (times, result.best_move, result.score)
            lenient = HostSearch(inline, TranspositionTable(1),
                                 replace(options, twofold_draws=True)).search(cb, Limits(depth=4))
            assert (lenient.best_move.uci(), lenient.score) == ("g1h1", 0)
    without_history = chess.Board(cb.fen())
    lost = HostSearch(inline, TranspositionTable(1), options).search(without_history,
                                                                      Limits(depth=4))
    assert lost.score < -1000


def test_no_legal_move_at_the_root(inline):
    mated = HostSearch(inline).search(chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"),
                                      Limits(depth=3))
    assert (mated.best_move, mated.score, mated.depth) == (None, 0, 0)   # stalemate
    mated = HostSearch(inline).search(chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1"),
                                      Limits(depth=3))
    assert (mated.best_move, mated.score) == (None, -MATE)


# --- the search's refinements keep the value --------------------------------------------------

@pytest.mark.parametrize("fen", [ITALIAN, CPW3, SCHOLAR,
                                 "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"])
def test_pvs_aspiration_and_killers_find_the_plain_alpha_beta_value(inline, fen):
    """Without the table (whose deeper entries may legitimately improve a value) the refined
    search must find exactly the value of plain alpha-beta at every depth."""
    refined = HostSearch(inline, None, SearchOptions(hardware_plies=1, tt=False, draws=False))
    result = refined.search(chess.Board(fen), Limits(depth=3))
    plain = [HostSearch(inline, None, SearchOptions.exact(1)).search_depth(chess.Board(fen), d)
             for d in (1, 2, 3)]
    assert [i.score for i in result.iterations] == [p.score for p in plain]


def test_iterations_are_reported_in_order_with_growing_counts(inline):
    seen = []
    result = HostSearch(inline, TranspositionTable(1), SearchOptions(hardware_plies=1),
                        on_info=seen.append).search(chess.Board(ITALIAN), Limits(depth=3))
    exact = [i for i in seen if i.bound == "exact"]
    assert [i.depth for i in exact] == [1, 2, 3] == [i.depth for i in result.iterations]
    assert all(a.nodes < b.nodes for a, b in zip(exact, exact[1:]))
    assert result.nodes == exact[-1].nodes and result.depth == 3
    assert result.pv[0] == result.best_move and result.ponder_move == result.pv[1]


def test_the_table_remembers_the_root(inline):
    table = TranspositionTable(1)
    search = HostSearch(inline, table, SearchOptions(hardware_plies=1))
    first = search.search(chess.Board(ITALIAN), Limits(depth=3))
    entry = table.probe(position_key(chess.Board(ITALIAN)))
    assert (entry.depth, entry.bound, entry.score, entry.move) == \
        (3, Bound.EXACT, first.score, first.best_move)
    again = HostSearch(inline, table, SearchOptions(hardware_plies=1)).search(
        chess.Board(ITALIAN), Limits(depth=3))
    assert again.best_move == first.best_move and again.nodes < first.nodes


def test_node_limit_stops_deterministically(inline):
    runs = [HostSearch(inline, TranspositionTable(1), SearchOptions(hardware_plies=1)).search(
        chess.Board(ITALIAN), Limits(nodes=3000)) for _ in range(2)]
    assert runs[0].aborted and 3000 <= runs[0].nodes < 3000 + 400
    assert (runs[0].best_move, runs[0].nodes, runs[0].depth) == \
        (runs[1].best_move, runs[1].nodes, runs[1].depth)


def test_searchmoves_restricts_the_root(inline):
    only = [chess.Move.from_uci("a2a3"), chess.Move.from_uci("h2h3")]
    result = HostSearch(inline).search(chess.Board(SCHOLAR), Limits(depth=2, root_moves=only))
    assert result.best_move in only


def test_a_mate_ends_a_timed_search_early(inline):
    start = time.monotonic()
    result = HostSearch(inline).search(chess.Board(SCHOLAR),
                                       Limits(deadline=start + 60, soft_deadline=start + 60))
    assert result.best_move == chess.Move.from_uci("h5f7") and result.mate == 1
    assert result.depth == 3 and not result.aborted


def test_stop_from_another_thread_keeps_the_last_best_move(inline):
    stop = threading.Event()
    search = HostSearch(inline, TranspositionTable(1), SearchOptions(hardware_plies=1),
                        stop=stop, on_info=lambda i: i.depth >= 2 and stop.set())
    result = search.search(chess.Board(ITALIAN))
    assert result.aborted and result.depth == 2
    assert result.best_move == result.iterations[-1].pv[0]


def test_makespan_spreads_jobs_over_slots():
    assert makespan([5, 3, 3, 1], 1) == 12
    assert makespan([5, 3, 3, 1], 2) == 6
    assert makespan([5, 3, 3, 1], None) == 5 == makespan([5, 3, 3, 1], 8)
    assert makespan([], 3) == 0


# --- executors ----------------------------------------------------------------------------------

def test_pool_results_are_the_models_own():
    jobs = [Job(board(fen), depth, -INF, INF) for fen, depth in
            ((ITALIAN, 2), (CPW3, 3), (SCHOLAR, 1), (ITALIAN, 1))]
    executor = PoolExecutor("model", 2)
    try:
        batch = executor.submit(jobs)
        seen = set()
        while len(seen) < len(jobs):
            seen.update(batch.wait(5))
        for job, got in zip(jobs, batch.results):
            expected = model.search(job.board, job.depth)
            assert (got["score"], got["best_move"], got["pv"], got["nodes"]) == \
                (expected.score, expected.best_move, expected.pv, expected.nodes)
        assert executor.stats["jobs"] == 4 and executor.stats["batches"] == 1
        assert executor.stats["nodes"] == sum(r["nodes"] for r in batch.results)
        second = executor.submit(jobs[2:3])
        while not second.done():
            second.wait(5)
        assert executor.stats["jobs"] == 5 and executor.stats["batches"] == 2
    finally:
        executor.close()


@pytest.mark.parametrize("cores", [1, 2])
def test_a_link_executor_runs_side_by_side_only_with_several_cores(cores):
    """The board link's executor (here on the scripted board of tests/linkpeer.py): one slot
    per core; parallel and speculative only with more than one core (docs: a single
    accelerator would only get extra work); its jobs come back as the board answers them."""
    from chessaccel.host.engine.executors import LinkExecutor
    from linkpeer import ScriptedBoard
    with ScriptedBoard(cores=cores) as peer:
        executor = make_executor(f"serial:{peer.port}")
        try:
            assert isinstance(executor, LinkExecutor) and executor.slots == cores
            assert executor.parallel is executor.speculate is (cores > 1)
            batch = executor.submit([Job(board(SCHOLAR), 1, -INF, INF)])
            while not batch.done():
                batch.wait(5)
            assert batch.results[0]["score"] == MATE - 1
            assert (executor.stats["jobs"], executor.stats["batches"]) == (1, 1)
            batch = executor.submit([Job(board(SCHOLAR), 0, -INF, INF)] * 2)
            while not batch.done():
                batch.wait(5)
            assert (executor.stats["jobs"], executor.stats["batches"]) == (3, 2)
        finally:
            executor.close()


def test_a_job_the_worker_cannot_search_fails_its_batch_with_the_workers_words():
    """The model in a worker process refuses a job (an empty window): the batch fails at once
    with one ExecutorError line carrying the model's own message, and the worker goes on."""
    executor = PoolExecutor("model", 1)
    try:
        batch = executor.submit([Job(board(SCHOLAR), 1, 10, 5)])
        start = time.monotonic()
        with pytest.raises(ExecutorError,
                           match=r"^model backend failed: window \(10, 5\) must satisfy "):
            while not batch.done():
                batch.wait(1)
                assert time.monotonic() - start < 30, "the failure never came back"
        good = executor.submit([Job(board(SCHOLAR), 1, -INF, INF)])
        while not good.done():
            good.wait(5)
        assert good.results[0]["score"] == MATE - 1
    finally:
        executor.close()


def test_a_cancelled_job_frees_its_worker_at_once():
    executor = PoolExecutor("model", 1)
    try:
        slow = executor.submit([Job(board(ITALIAN), 6, -INF, INF)])    # minutes on the model
        time.sleep(0.3)
        slow.cancel()
        start = time.monotonic()
        quick = executor.submit([Job(board(SCHOLAR), 1, -INF, INF)])
        while quick.results[0] is None:    # the slow job alone would take minutes
            quick.wait(5)
            assert time.monotonic() - start < 30
        assert quick.results[0]["score"] == MATE - 1 and slow.results[0] is None
    finally:
        executor.close()


def test_executor_start_up_errors_are_one_line():
    with pytest.raises(ExecutorError, match="unknown backend 'quantum'"):
        PoolExecutor("quantum", 1)
    with pytest.raises(ExecutorError, match="positive integer"):
        make_executor("model", 0)
    with pytest.raises(BackendError, match="unknown backend"):
        make_executor("quantum", 1)


def test_a_failing_batch_backend_fails_the_batch(monkeypatch):
    monkeypatch.setenv("CHESSACCEL_RTL_SIM", "abacus")
    executor = BatchExecutor(RtlBackend())
    try:
        batch = executor.submit([Job(board(SCHOLAR), 1, -INF, INF)])
        with pytest.raises(ExecutorError, match="rtl backend failed: .*abacus"):
            for _ in range(100):
                batch.wait(0.1)
        assert executor.parallel is False and executor.slots is None
    finally:
        executor.close()


class _InlineBackend(Backend):
    """A backend whose batches run in the submitting thread; it answers ``answer(jobs)``."""
    name = "inline"
    capabilities = Capabilities(batch=True, inline_batches=True)

    def __init__(self, answer):
        self.answer = answer

    def search_many(self, jobs):
        return self.answer(jobs)


def _no_abacus(jobs):
    raise RuntimeError("no abacus here\nsecond line")


@pytest.mark.parametrize("answer,message", [
    (_no_abacus, "inline backend failed: no abacus here$"),
    (lambda jobs: [], "inline answered 0 results for 1 job"),
], ids=["raises", "no-result"])
def test_a_failing_inline_backend_is_one_line_on_the_fast_path(answer, message):
    """The eldest brother's job skips the batch on an inline executor (run_inline): a backend
    failure there is the same one-line ExecutorError, and a search reports it, not a traceback."""
    executor = BatchExecutor(_InlineBackend(answer))
    try:
        with pytest.raises(ExecutorError, match=message):
            executor.run_inline(Job(board(SCHOLAR), 1, -INF, INF))
        result = HostSearch(executor, None, SearchOptions(hardware_plies=1)).search(
            chess.Board(SCHOLAR), Limits(depth=3))
        assert re.search(message, result.error) and result.best_move in chess.Board(SCHOLAR).legal_moves
        assert executor.stats["jobs"] == 0
    finally:
        executor.close()


def test_the_inline_fast_path_counts_what_a_batch_counts():
    results = []
    for inline in (True, False):
        backend = InstantBackend() if inline else ThreadedInstantBackend()
        executor = BatchExecutor(backend)
        try:
            result = HostSearch(executor, TranspositionTable(1),
                                SearchOptions(hardware_plies=1)).search(
                chess.Board(SCHOLAR), Limits(depth=4))
            results.append((result.score, result.best_move, result.jobs, result.host_nodes,
                            executor.stats["jobs"], executor.stats["nodes"]))
        finally:
            executor.close()
    assert results[0] == results[1]


# --- several accelerators ------------------------------------------------------------------------

class _ScriptedParallel(Backend):
    """A parallel batch backend whose answer for a job is set by its position (the child's
    placement of pieces): ``scores`` from the child's side, 0 for any other; it records every
    job it is given as (placement, job alpha, job beta)."""
    name = "scripted"
    capabilities = Capabilities(batch=True, parallel_batches=True, inline_batches=True)

    def __init__(self, scores=None):
        self.scores = scores or {}
        self.seen = []

    def search_many(self, jobs):
        out = []
        for job in jobs:
            key = chess_from_board(job.board).board_fen()
            self.seen.append((key, job.alpha, job.beta))
            out.append(JobResult(self.scores.get(key, 0), None, [], 1))
        return out


def test_a_null_window_result_exactly_at_alpha_is_not_searched_again():
    """Parallel PVS at a frontier root: after the eldest (score 0 sets alpha to 0) the brothers
    go out in one null-window batch; one of them (the first) fails high with 50 and the host
    then searches again, in one batch, every brother whose null-window result lies strictly
    between alpha and beta. A brother that scores exactly alpha (0) failed low: it is a bound
    from above, and searching it again is only extra work (same move and score). Scripted
    answers make that exact tie for every brother after the one that fails high."""
    fen = "4k3/8/8/8/8/8/3PPP2/4K3 w - - 0 1"
    options = SearchOptions(hardware_plies=1, tt=False, aspiration=False, killers=False)
    probe = _ScriptedParallel()
    executor = BatchExecutor(probe)
    try:
        HostSearch(executor, None, options).search(chess.Board(fen), Limits(depth=1))
    finally:
        executor.close()
    order = [key for key, _, _ in probe.seen]           # eldest, then the brothers in order
    assert len(order) == len(set(order)) == chess.Board(fen).legal_moves.count() >= 4
    eldest, riser, ties = order[0], order[1], order[2:]
    backend = _ScriptedParallel({riser: -50})
    executor = BatchExecutor(backend)
    try:
        result = HostSearch(executor, None, options).search(chess.Board(fen), Limits(depth=1))
    finally:
        executor.close()
    child = chess.Board(fen)
    child.push(result.best_move)
    assert result.score == 50 and child.board_fen() == riser
    searched = [key for key, _, _ in backend.seen]
    assert searched.count(eldest) == 1 and searched.count(riser) == 2     # null window, again
    assert [searched.count(key) for key in ties] == [1] * len(ties)
    assert len(backend.seen) == len(order) + 1 == executor.stats["jobs"]


def _fixed(executor, fen, depth, plies, tt):
    table = TranspositionTable(4) if tt else None
    return HostSearch(executor, table, SearchOptions(hardware_plies=plies, tt=tt)).search(
        chess.Board(fen), Limits(depth=depth))


@pytest.mark.parametrize("tt", [False, True], ids=["tt-off", "tt-on"])
def test_more_accelerators_same_result_shorter_critical_path(tt):
    """Score, best move and PV do not depend on the number of accelerators; with two or more
    the jobs of the search's critical path hold fewer nodes (the speed-up when accelerators
    set the pace). Two and three accelerators do exactly the same work."""
    results = {}
    for count in (1, 2, 3):
        executor = make_executor("model", count)
        try:
            results[count] = _fixed(executor, CPW3, 5, 2, tt)
        finally:
            executor.close()
    one, two, three = results[1], results[2], results[3]
    for other in (two, three):
        assert (other.score, other.best_move, other.pv) == (one.score, one.best_move, one.pv)
    assert (two.nodes, two.jobs, two.span_nodes > three.span_nodes) == \
        (three.nodes, three.jobs, True)
    assert one.span_nodes == one.accelerator_nodes
    assert two.span_nodes < 0.85 * one.span_nodes


def test_two_model_accelerators_search_at_the_same_time():
    """Both worker processes hold a job at the same moment: the structure behind the speed-up
    that `chessaccel bench --host` measures on a machine with two free cores (a benchmark, not a
    timed test). With one worker the peak is one."""
    for count in (1, 2):
        executor = make_executor("model", count)
        try:
            _fixed(executor, ITALIAN, 4, 2, True)
            assert executor.stats["peak_busy"] == count, executor.stats
        finally:
            executor.close()


class _ScriptedByDepth(_ScriptedParallel):
    """_ScriptedParallel with answers set by (placement, job depth); records the job depth too."""

    def search_many(self, jobs):
        out = []
        for job in jobs:
            key = chess_from_board(job.board).board_fen()
            self.seen.append((key, job.depth, job.alpha, job.beta))
            out.append(JobResult(self.scores.get((key, job.depth), 0), None, [], 1))
        return out


def _depth_2_job_order(fen, options):
    """The keys of the depth-2 jobs a depth-3 search of ``fen`` hands out, in order (every job
    answered 0 by a scripted backend)."""
    probe = _ScriptedByDepth()
    executor = BatchExecutor(probe)
    try:
        HostSearch(executor, None, options).search(chess.Board(fen), Limits(depth=3))
    finally:
        executor.close()
    return [key for key, depth, _, _ in probe.seen if depth == 2]


def test_a_null_window_result_exactly_at_beta_cuts_off_without_a_re_search():
    """Parallel PVS at a frontier root inside an aspiration window: iterations 1 and 2 score 0,
    so iteration 3 searches with the window (-35, 35). A brother whose null-window result is
    exactly beta (35) is a fail high: the root cuts off there (no re-search in the window: a
    result at beta is already a lower bound beyond it), the aspiration fails high (info
    ``lower`` 35), and the search with the widened window (-35, 105) then re-searches that
    brother in the window (null-window 35 lies strictly inside) and takes it at 35."""
    fen = "4k3/8/8/8/8/8/3PPP2/4K3 w - - 0 1"
    options = SearchOptions(hardware_plies=3, tt=False, killers=False)
    order = _depth_2_job_order(fen, options)
    assert len(order) == chess.Board(fen).legal_moves.count() >= 4
    riser = order[1]
    backend = _ScriptedByDepth({(riser, 2): -35})
    executor = BatchExecutor(backend)
    infos = []
    try:
        result = HostSearch(executor, None, options, on_info=infos.append).search(
            chess.Board(fen), Limits(depth=3))
    finally:
        executor.close()
    assert [(i.depth, i.score, i.bound) for i in infos] == [(1, 0, "exact"), (2, 0, "exact"),
                                                            (3, 35, "lower"), (3, 35, "exact")]
    child = chess.Board(fen)
    child.push(result.best_move)
    assert result.score == 35 and child.board_fen() == riser
    riser_jobs = [(alpha, beta) for key, depth, alpha, beta in backend.seen
                  if depth == 2 and key == riser]
    # from the child's side: null window (-1, 0) twice, then the widened window (-105, 0)
    assert riser_jobs == [(-1, 0), (-1, 0), (-105, 0)]
    third = [s for s in backend.seen if s[1] == 2]
    assert len(third) == 2 * len(order) + 1


def test_with_the_table_off_hashfull_is_0():
    """``hashfull`` (UCI info) is the table's permille when the table is in use; a table that is
    there but switched off (option tt false), and no table, report 0, however full it is."""
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
    table = TranspositionTable(1)
    for tt, given in ((True, table), (False, table), (False, None)):
        infos = []
        executor = BatchExecutor(InstantBackend())
        try:
            HostSearch(executor, given, SearchOptions(hardware_plies=1, tt=tt),
                       on_info=infos.append).search(chess.Board(fen), Limits(depth=3))
        finally:
            executor.close()
        if tt:
            assert table.hashfull() > 0 and infos[-1].hashfull == table.hashfull()
        else:
            assert [i.hashfull for i in infos] == [0] * len(infos) and infos


class _SerialByDepth(_ScriptedByDepth):
    capabilities = Capabilities(batch=True, inline_batches=True)


def test_one_accelerator_does_not_search_a_result_at_beta_again():
    """One accelerator, iteration 3 inside the aspiration window (-35, 35): the root's eldest
    move (Kd1) is a frontier parent with that window; its eldest child scores 0, and a brother
    whose null-window result is exactly beta (35 for the side to move there) cuts off: that
    brother is never searched again (PVS re-searches only results strictly inside)."""
    fen = "4k3/8/8/8/8/8/3PPP2/4K3 w - - 0 1"
    options = SearchOptions(hardware_plies=1, tt=False, killers=False)
    probe = _SerialByDepth()
    executor = BatchExecutor(probe)
    try:
        HostSearch(executor, None, options).search(chess.Board(fen), Limits(depth=3))
    finally:
        executor.close()
    assert not executor.parallel
    inner = [i for i, (_, _, alpha, beta) in enumerate(probe.seen) if (alpha, beta) == (-35, 35)]
    eldest = inner[0]
    brother = probe.seen[eldest + 1]
    assert brother[2:] == (-1, 0)          # the first brother, null window from the job's side
    backend = _SerialByDepth({brother[:2]: -35})
    executor = BatchExecutor(backend)
    try:
        HostSearch(executor, None, options).search(
            chess.Board(fen), Limits(depth=3))
    finally:
        executor.close()
    assert backend.seen[:eldest + 2] == probe.seen[:eldest + 2]
    assert [job for job in backend.seen if job[0] == brother[0]] == [brother]


def test_a_re_search_batch_leaves_out_a_brother_at_beta():
    """Parallel PVS, iteration 3 in the window (-35, 35): the first brother's null-window result
    (10) lies inside, so the host waits for the batch and searches again every brother whose
    result lies strictly inside; the second brother's result is exactly beta (35): a fail
    high, not searched again, and the root cuts off on it."""
    fen = "4k3/8/8/8/8/8/3PPP2/4K3 w - - 0 1"
    options = SearchOptions(hardware_plies=3, tt=False, killers=False)
    order = _depth_2_job_order(fen, options)
    inside, at_beta = order[1], order[2]
    backend = _ScriptedByDepth({(inside, 2): -10, (at_beta, 2): -35})
    executor = BatchExecutor(backend)
    infos = []
    try:
        result = HostSearch(executor, None, options, on_info=infos.append).search(
            chess.Board(fen), Limits(depth=3))
    finally:
        executor.close()
    first_pass = [s for s in backend.seen if s[1] == 2][:len(order) + 1]
    assert first_pass[:len(order)] == [(key, 2, -35, 35) if i == 0 else (key, 2, -1, 0)
                                       for i, key in enumerate(order)]
    assert first_pass[len(order)] == (inside, 2, -35, 0)     # the one re-search: (0, 35) ours
    assert (at_beta, 2, -35, 0) not in backend.seen
    assert (infos[2].depth, infos[2].score, infos[2].bound) == (3, 35, "lower")
    assert result.score == 35


class _StoppedClock:
    """time.monotonic() that always answers the same instant."""

    def __init__(self, now):
        self.now = now

    def monotonic(self):
        return self.now


@pytest.mark.parametrize("soft_deadline, depth", [(500.0, 1), (500.001, 4), (499.999, 1)])
def test_no_iteration_starts_at_or_after_the_soft_deadline(monkeypatch, soft_deadline, depth):
    """The soft deadline (UCI time management): the first iteration always runs; a later one
    starts only while the clock is before the deadline (at the deadline itself: none)."""
    from chessaccel.host.engine import search as search_module
    monkeypatch.setattr(search_module, "time", _StoppedClock(500.0))
    executor = BatchExecutor(InstantBackend())
    try:
        result = HostSearch(executor, None, SearchOptions(hardware_plies=1, tt=False)).search(
            chess.Board(), Limits(depth=4, soft_deadline=soft_deadline))
    finally:
        executor.close()
    assert result.depth == depth and [i.depth for i in result.iterations] == list(range(1, depth + 1))


@pytest.mark.parametrize("parallel_backend, parallel, depth", [
    (True, True, 1), (False, True, 1), (False, False, 1), (True, True, 3), (False, False, 3)],
    ids=["brothers-batch", "one-accelerator", "in-turn", "host-node-batch", "host-node-in-turn"])
def test_each_drawn_child_is_one_host_node_and_no_job(parallel_backend, parallel, depth):
    """Halfmove clock 99 and no capture or pawn move to play: every child is a draw by the
    fifty-move rule. Each is scored 0 by the host as one host node, never a job, whichever
    path reaches it (a frontier's eldest and its brothers, in a batch or in turn; a host
    node's children): each iteration adds the root and its N children."""
    fen = "4k3/8/8/8/8/8/8/R3K3 w - - 99 80"
    n = chess.Board(fen).legal_moves.count()
    backend = _ScriptedByDepth() if parallel_backend else _SerialByDepth()
    executor = BatchExecutor(backend)
    try:
        result = HostSearch(executor, None, SearchOptions(hardware_plies=1, tt=False,
                                                          parallel=parallel)).search(
            chess.Board(fen), Limits(depth=depth))
    finally:
        executor.close()
    assert (result.score, result.jobs, result.accelerator_nodes, backend.seen) == (0, 0, 0, [])
    assert [i.host_nodes for i in result.iterations] == [(1 + n) * d for d in range(1, depth + 1)]
