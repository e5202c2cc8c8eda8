"""The host's selective search (null move, late-move reductions, reverse futility, the check
extension, mate-distance pruning, the internal iterative reduction, futility and late-move
pruning) and Lazy SMP (``Threads``):
what each must and must not do. Whether each is worth keeping is a match's question
(docs/engine.md, "Selective search"), not a test's."""

import threading
from dataclasses import replace

import chess
import pytest

from chessaccel.host.backends import Backend, Capabilities, JobResult
from chessaccel.host.backends.model import ModelBackend
from chessaccel.host.engine.executors import BatchExecutor
from chessaccel.host.engine.search import MAX_THREADS, HostSearch, Limits, SearchOptions
from chessaccel.host.engine.tt import TranspositionTable
from chessaccel.host.engine.uci import DEFAULT_SELECTIVE, SELECTIVE_OPTIONS
from chessaccel.lab.dispatch import InstantBackend



def run_engine(lines):
    """``chessaccel uci`` fed ``lines`` then the end of input: its output."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-P", "-m", "chessaccel.host.cli", "uci"],
                          input="\n".join(lines) + "\n", capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout

ITALIAN = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
MATE_IN_2 = "3rrk2/2p2pR1/p4n2/1p1PpP2/2p2q1P/3P1BQ1/PPP5/6RK w - - 1 0"     # mate2.fen
PAWN_ENDING = "8/5pk1/6p1/4P3/5P2/6K1/8/8 w - - 0 1"
ALL_ON = {field: True for field in SearchOptions.SELECTIVE}


@pytest.fixture(scope="module")
def instant():
    executor = BatchExecutor(InstantBackend())
    yield executor
    executor.close()


def _search(executor, fen, depth, plies=1, table=True, **options):
    search = HostSearch(executor, TranspositionTable(4) if table else None,
                        SearchOptions(hardware_plies=plies, **options))
    return search, search.search(chess.Board(fen), Limits(depth=depth))


def test_exact_mode_and_the_default_search_are_not_selective():
    assert not SearchOptions.exact(2).selective
    assert SearchOptions(**ALL_ON).selective
    assert set(SELECTIVE_OPTIONS.values()) == set(SearchOptions.SELECTIVE)


@pytest.mark.parametrize("fen", [ITALIAN, KIWIPETE])
def test_selective_search_visits_fewer_nodes_to_the_same_depth(instant, fen):
    _, plain = _search(instant, fen, 6)
    _, selective = _search(instant, fen, 6, **ALL_ON)
    assert selective.depth == plain.depth == 6
    assert selective.best_move in chess.Board(fen).legal_moves
    assert selective.nodes < 0.7 * plain.nodes, (selective.nodes, plain.nodes)


@pytest.mark.parametrize("field", [f for f in SearchOptions.SELECTIVE
                                   if f not in ("history", "job_reductions", "counter_moves",
                                                "null_move_eval", "fifty_move_scaling",
                                                "twofold_draws", "time_stability",
                                                "deep_futility", "non_pv_reductions",
                                                "singular_extension")])
def test_each_switch_changes_the_tree_alone(instant, field):
    """Each switch on its own does something at depth 6 (no dead switch): on Kiwipete, and
    mate-distance pruning where a mate is found (a mate in 2 of the suite), the internal
    iterative reduction without a table (no hash moves) at depth 7. (History and the jobs' reductions
    have tests of their own below: the instant backend's jobs cost one node at any depth; counter
    moves too, and in tests/test_hostsearch.py: the instant backend's material alone is refuted by
    captures, not quiet moves; fifty-move scaling there too, near the rule's end; twofold draws
    in tests/test_engine.py, with a game's history.)"""
    fen = MATE_IN_2 if field == "mate_distance" else KIWIPETE
    table, depth = (False, 7) if field == "iir" else (True, 6)
    _, plain = _search(instant, fen, depth, plies=2, table=table)
    _, one = _search(instant, fen, depth, plies=2, table=table, **{field: True})
    assert (one.nodes, one.jobs) != (plain.nodes, plain.jobs)


@pytest.mark.parametrize("field, step", [("deep_futility", "futility"),
                                         ("non_pv_reductions", "reductions")])
def test_each_widening_switch_prunes_more_of_its_steps_tree(instant, field, step):
    """Deep futility and the null-window nodes' extra reduction widen a step: on their own they
    change nothing; on top of their step they visit fewer nodes to the same depth (Kiwipete,
    depth 7 with one-ply jobs: reverse futility then reaches depths 5 to 7, beyond the three
    plies above the frontier that it acts at without it; depth 8 showed it too, at five times
    the cost: 1.6 M nodes of the plain Python search)."""
    _, plain = _search(instant, KIWIPETE, 7)
    _, alone = _search(instant, KIWIPETE, 7, **{field: True})
    assert (alone.nodes, alone.jobs, alone.score) == (plain.nodes, plain.jobs, plain.score)
    _, base = _search(instant, KIWIPETE, 7, **{step: True})
    _, wider = _search(instant, KIWIPETE, 7, **{step: True, field: True})
    assert wider.depth == base.depth == 7
    assert wider.nodes < base.nodes, (wider.nodes, base.nodes)


def test_singular_extensions_test_the_hash_move_and_extend_it(instant, monkeypatch):
    """The singular test runs only below the root, at nodes whose first move is their table
    entry's and whose verification's children are host nodes (depth // 2 - 1 > HardwarePlies);
    on Kiwipete to depth 7 with one-ply jobs some hash moves are extended (no other move came
    near) and others not, and the tree is not the one without the switch."""
    calls = []
    original = HostSearch._singular

    def spy(self, ply, depth, beta, moves, reducible, entry):
        result = original(self, ply, depth, beta, moves, reducible, entry)
        calls.append((ply, depth, moves[0] == entry.move, result))
        return result

    monkeypatch.setattr(HostSearch, "_singular", spy)
    _, plain = _search(instant, KIWIPETE, 7)
    _, singular = _search(instant, KIWIPETE, 7, singular_extension=True)
    assert calls and all(ply > 0 and depth // 2 - 1 > 1 and first for ply, depth, first, _ in calls)
    results = [result for *_, result in calls]
    assert 1 in results and 0 in results, results
    assert singular.depth == plain.depth == 7
    assert (singular.nodes, singular.jobs) != (plain.nodes, plain.jobs)
    assert singular.best_move in chess.Board(KIWIPETE).legal_moves


def test_an_extended_hash_move_is_searched_a_ply_deeper(instant, monkeypatch):
    """Where the test extends, the node's first child is searched at the node's own depth (a
    ply deeper than its brothers), the rest as before."""
    events = []
    expand, node = HostSearch._expand, HostSearch._node

    def spy_expand(self, ply, depth, alpha, beta, moves, reducible=False, extension=0):
        events.append(("expand", ply, depth, extension))
        return expand(self, ply, depth, alpha, beta, moves, reducible, extension)

    def spy_node(self, ply, depth, alpha, beta, null_ok=True):
        events.append(("node", ply, depth, None))
        return node(self, ply, depth, alpha, beta, null_ok)

    monkeypatch.setattr(HostSearch, "_expand", spy_expand)
    monkeypatch.setattr(HostSearch, "_node", spy_node)
    _search(instant, KIWIPETE, 7, singular_extension=True)
    extended = [i for i, (kind, *_, extension) in enumerate(events)
                if kind == "expand" and extension == 1]
    assert extended
    for i in extended:
        _, ply, depth, _ = events[i]
        child = next(e for e in events[i + 1:] if e[0] == "node")
        assert child[1:3] == (ply + 1, depth), (events[i], child)


def test_the_counter_move_comes_first_of_the_quiet_moves_after_the_killers(instant):
    """The quiet move that last refuted the opponent's move stands right after the captures
    and killers, the other moves in their order; not at the root, not after a null move."""
    search, _ = _search(instant, ITALIAN, 3, counter_moves=True)
    search.killers[1] = [chess.Move.from_uci("d7d6")]
    search._setup(chess.Board(ITALIAN))
    castle = chess.Move.from_uci("e1g1")
    search._push(castle)                            # ply 1: black to move
    search.moved[1] = castle
    moves = search._ordered(1, None)
    quiet = [m for m in moves[1:] if not search.hb.is_capture(m) and m.uci() != "d7d6"]
    counter = quiet[-1]
    search._remember_killer(1, counter)             # refutes e1g1 (and is now a killer too)
    search.killers[1] = [chess.Move.from_uci("d7d6")]
    ordered = search._by_history(1, list(moves))
    first_quiet = next(i for i, m in enumerate(ordered) if m in quiet)
    assert ordered[first_quiet] == counter
    assert ordered[first_quiet + 1:] == [m for m in quiet if m != counter]
    assert ordered[:first_quiet] == [m for m in moves if m not in quiet]
    search.moved[1] = None                          # after a null move: no counter move
    assert search._by_history(1, list(moves)) == moves
    search.moved[1] = chess.Move.from_uci("e1f1")   # another move of the opponent: none kept
    assert search._by_history(1, list(moves)) == moves
    search.moved[1] = castle
    search.options.counter_moves = False
    assert search._by_history(1, list(moves)) == moves


def test_history_orders_the_quiet_moves_after_the_killers(instant):
    search, _ = _search(instant, ITALIAN, 3, history=True)
    search.killers[1] = [chess.Move.from_uci("d7d6")]
    search._setup(chess.Board(ITALIAN))
    search._push(chess.Move.from_uci("e1g1"))       # ply 1: black to move
    moves = search._ordered(1, None)
    quiet = [m for m in moves[1:] if not search.hb.is_capture(m) and m.uci() != "d7d6"]
    favourite = quiet[-1]
    search.history[search._history_index(1, favourite)] = 500
    search.history[search._history_index(1, quiet[-2])] = 20
    ordered = search._by_history(1, list(moves))
    first_quiet = next(i for i, m in enumerate(ordered) if m in quiet)
    assert ordered[first_quiet:first_quiet + 2] == [favourite, quiet[-2]]
    assert ordered[:first_quiet] == [m for m in moves if m not in quiet]     # captures, killer
    assert sorted(map(str, ordered)) == sorted(map(str, moves))
    search.options.history = False
    assert search._by_history(1, list(moves)) == moves


def test_null_move_is_never_tried_in_check_or_with_pawns_alone(instant, monkeypatch):
    tried = []
    original = HostSearch._null

    def spy(self, ply, depth, beta, static):
        tried.append((self.hb.is_check(), self.hb.has_pieces()))
        return original(self, ply, depth, beta, static)

    monkeypatch.setattr(HostSearch, "_null", spy)
    _search(instant, PAWN_ENDING, 7, null_move=True)
    assert tried == []
    _search(instant, KIWIPETE, 6, null_move=True)
    assert tried and all(not check and pieces for check, pieces in tried)


@pytest.mark.parametrize("least", [1, 2, 3])
def test_the_null_move_is_tried_from_its_least_depth_on(instant, least, monkeypatch):
    """``null_move_depth`` (UCI ``NullMoveDepth``): no node of fewer plies left tries the null
    move, and nodes of that many do; each least depth grows its own tree."""
    depths = []
    original = HostSearch._null

    def spy(self, ply, depth, beta, static):
        depths.append(depth)
        return original(self, ply, depth, beta, static)

    monkeypatch.setattr(HostSearch, "_null", spy)
    _, result = _search(instant, KIWIPETE, 6, null_move=True, reductions=True,
                        null_move_depth=least)
    monkeypatch.undo()
    assert depths and min(depths) == least
    _, other = _search(instant, KIWIPETE, 6, null_move=True, reductions=True,
                       null_move_depth=least + 1)
    assert (result.nodes, result.jobs) != (other.nodes, other.jobs)


def test_null_move_depths_out_of_range_are_refused():
    for bad in (0, 9):
        with pytest.raises(ValueError, match="null move depth"):
            SearchOptions(null_move_depth=bad).check()
    out = run_engine(["uci", "setoption name NullMoveDepth value 0", "isready"])
    assert "option name NullMoveDepth type spin default" in out
    assert "info string error: option NullMoveDepth value 0 out of range 1..8" in out


PRUNING = ("futility_pruning", "late_move_pruning")
#: positions with captures, promotions and checks at hand (Kiwipete, the Italian, a promotion
#: race, a mate in 2 of the suite)
PROMOTIONS = "8/1P4k1/8/3r4/5n2/8/2p3P1/4K2R w K - 0 1"


@pytest.mark.parametrize("field", PRUNING)
@pytest.mark.parametrize("fen", [ITALIAN, KIWIPETE])
def test_forward_pruning_visits_fewer_nodes_to_the_same_depth(instant, field, fen):
    """Each pruning switch alone, and with the engine's other switches on, searches fewer nodes
    and hands out fewer jobs to the same depth (the instant backend's jobs cost one node)."""
    _, plain = _search(instant, fen, 6, plies=2)
    _, one = _search(instant, fen, 6, plies=2, **{field: True})
    assert one.depth == plain.depth == 6
    assert one.nodes < plain.nodes and one.jobs < plain.jobs, (one.nodes, plain.nodes)
    engine = {SELECTIVE_OPTIONS[name]: True for name in DEFAULT_SELECTIVE}
    _, without = _search(instant, fen, 6, plies=2, **engine)
    _, with_it = _search(instant, fen, 6, plies=2, **engine, **{field: True})
    assert with_it.nodes < without.nodes and with_it.jobs < without.jobs


def test_forward_pruning_spares_checks_captures_promotions_killers_and_the_first_move(
        instant, monkeypatch):
    """Every node that prunes is a null-window node not in check, at most 2 (futility) or 3
    (late moves) plies above its frontier; every move it prunes is quiet (no capture, no
    promotion), gives no check, is not a killer and is not its first (the hash move)."""
    from chessaccel.host.engine import search as search_module
    spied = []
    selective, prune = HostSearch._selective, HostSearch._prune

    def spy_selective(self, ply, depth, alpha, beta, tt_move, null_ok):
        out = selective(self, ply, depth, alpha, beta, tt_move, null_ok)
        if out[3] is not None:
            above = out[0] - self.options.hardware_plies
            late, futile = out[3][:2]
            assert alpha + 1 == beta and not self.hb.is_check()
            assert futile is None or (self.options.futility_pruning and futile <= alpha
                                      and above <= search_module.FUTILITY_PRUNING_PLIES)
            assert late is None or (self.options.late_move_pruning
                                    and above <= search_module.LATE_MOVE_PLIES)
        return out

    def spy_prune(self, ply, moves, how):
        before = list(moves)
        prune(self, ply, moves, how)
        hb = self.hb
        killers = self.killers[ply]
        for index, (move, after) in enumerate(zip(before, moves)):
            if after is None:
                spied.append(move)
                assert index > 0 and move not in killers and not move.promotion
                assert not hb.is_capture(move) and not hb.gives_check(move)
                assert not hb.is_check()
            else:
                assert after == move

    monkeypatch.setattr(HostSearch, "_selective", spy_selective)
    monkeypatch.setattr(HostSearch, "_prune", spy_prune)
    for field in PRUNING:
        for fen in (KIWIPETE, ITALIAN, PROMOTIONS, MATE_IN_2):
            before = len(spied)
            _search(instant, fen, 6, plies=2, **{field: True})
            _search(instant, fen, 5, plies=1, **ALL_ON)
            assert len(spied) > before, (field, fen)


class _ShallowLies(Backend):
    """Jobs shallower than ``full`` say their mover is lost (the parent's move looks winning);
    full ones say it is winning (the parent's move fails low). Every reduced job is a false
    alarm that a search at full depth must correct."""

    name = "shallow-lies"
    capabilities = Capabilities(batch=True, inline_batches=True)

    def __init__(self, full=2):
        self.FULL = full
        self.jobs = []

    def search(self, board, depth, alpha, beta):
        return self.search_many([(board, depth, alpha, beta)])[0]

    def search_many(self, jobs):
        self.jobs += jobs
        return [JobResult(alpha - 1 if depth < self.FULL else beta, None, [], 1)
                for board, depth, alpha, beta in jobs]


@pytest.mark.parametrize("plies, most", [(2, 1), (3, 1), (3, 2)])
def test_a_reduced_job_that_fails_high_is_searched_again_at_full_depth(plies, most):
    """Late quiet moves of a frontier parent go out up to ``JobReductionPlies`` shallower (by
    the late-move formula: two plies from about the 8th move of a frontier parent at
    HardwarePlies 3); each whose result beats alpha is searched again as a job of the full
    depth, whose result stands."""
    backend = _ShallowLies(plies)
    executor = BatchExecutor(backend)
    options = SearchOptions(hardware_plies=plies, job_reductions=True, job_reduction_plies=most,
                            aspiration=False)
    search = HostSearch(executor, None, options)
    search.search_depth(chess.Board(ITALIAN), plies + 2, -100, -99)  # null-window frontier parents
    jobs = backend.jobs
    reduced = [k for k, job in enumerate(jobs) if job.depth < plies]
    assert len(reduced) > 10
    assert {jobs[k].depth for k in reduced} == set(range(plies - most, plies))
    for k in reduced:
        assert any(_same(jobs[k], later) and later.depth == plies
                   for later in jobs[k + 1:]), k
    plain = _ShallowLies(plies)
    result = HostSearch(BatchExecutor(plain), None,
                        SearchOptions(hardware_plies=plies)).search_depth(
        chess.Board(ITALIAN), plies + 2, -100, -99)
    assert result.score == search.search_depth(chess.Board(ITALIAN), plies + 2, -100, -99).score


@pytest.mark.parametrize("by_eval", [False, True])
def test_the_null_move_is_reduced_by_the_static_score(instant, by_eval, monkeypatch):
    """R = 3 + depth / 6 plies, and with NullMoveEval one more for each 200 cp by which the
    static score beats beta (at most 3 more): the opponent's reply searched at
    max(depth - 4 - depth / 6 - min((static - beta) / 200, 3), 0) plies; and the switch grows
    another tree than the null move alone."""
    from chessaccel.host.engine.search import NULL_EVAL_MOST, NULL_EVAL_STEP
    seen = []
    original = HostSearch._null

    def spy_null(self, ply, depth, beta, static):
        reached = []
        job, node = self._job, self._node
        self._job = lambda child_ply, d, *rest, **kw: (reached.append(d),
                                                         job(child_ply, d, *rest, **kw))[1]
        self._node = lambda child_ply, d, *rest, **kw: (reached.append(d),
                                                          node(child_ply, d, *rest, **kw))[1]
        try:
            return original(self, ply, depth, beta, static)
        finally:
            del self._job, self._node
            seen.append((depth, beta, static, reached[0]))

    monkeypatch.setattr(HostSearch, "_null", spy_null)
    _search(instant, KIWIPETE, 7, plies=0, null_move=True, null_move_eval=by_eval)
    monkeypatch.undo()
    assert seen
    bonus = [min((static - beta) // NULL_EVAL_STEP, NULL_EVAL_MOST) if by_eval else 0
             for depth, beta, static, _ in seen]
    assert [reduced for *_, reduced in seen] == \
        [max(depth - 4 - depth // 6 - more, 0) for (depth, *_), more in zip(seen, bonus)]
    if by_eval:
        assert any(more and depth - 4 - depth // 6 > 0 for (depth, *_), more in zip(seen, bonus))
        _, alone = _search(instant, KIWIPETE, 7, plies=0, null_move=True)
        _, with_eval = _search(instant, KIWIPETE, 7, plies=0, null_move=True, null_move_eval=True)
        assert (alone.nodes, alone.jobs) != (with_eval.nodes, with_eval.jobs)


def test_job_reduction_plies_out_of_range_are_refused():
    for bad in (0, 9):
        with pytest.raises(ValueError, match="job reduction plies"):
            SearchOptions(job_reduction_plies=bad).check()


def _same(job, other):
    return (job.board.sq, job.board.side, job.alpha, job.beta) == \
        (other.board.sq, other.board.side, other.alpha, other.beta)


@pytest.mark.parametrize("line", ["mate1.fen", "mate2.fen"])
def test_selective_search_still_finds_the_mates(inline, line):
    """Null move, futility, reductions and forward pruning must not hide a forced mate: mates
    in 1 and 2 of the public suites, on the model's real jobs (HardwarePlies 1), at depths 3
    and 5 (every switch on)."""
    from pathlib import Path
    fens = [text.split(";")[0].strip() for text in
            (Path(__file__).parent / "data" / line).read_text().splitlines()
            if text.strip() and not text.startswith("#")][:6]
    moves = 1 if line == "mate1.fen" else 2
    for fen in fens:
        _, result = _search(inline, fen, 2 * moves + 1, **ALL_ON)
        assert result.mate == moves, (fen, result.score, result.pv)


def test_threads_share_the_table_and_stop_with_the_main_search(instant):
    before = {t.name for t in threading.enumerate()}
    search, result = _search(instant, KIWIPETE, 6, threads=4, **ALL_ON)
    assert result.best_move in chess.Board(KIWIPETE).legal_moves
    assert result.error is None and result.depth == 6
    helpers = search._helpers
    assert len(helpers) == 3 and all(h.host_nodes for h in helpers)
    assert result.host_nodes == search.host_nodes + sum(h.host_nodes for h in helpers)
    alive = {t.name for t in threading.enumerate() if t.name.startswith("search-helper")}
    assert not alive - before


def test_one_thread_is_the_search_it_always_was(instant):
    _, one = _search(instant, ITALIAN, 5, threads=1)
    _, again = _search(instant, ITALIAN, 5)
    assert (one.score, one.best_move, one.nodes) == (again.score, again.best_move, again.nodes)


def test_threads_out_of_range_are_refused():
    with pytest.raises(ValueError, match="threads 0 out of range"):
        SearchOptions(threads=0).check()


def test_the_switches_and_threads_are_uci_options():
    out = run_engine(["uci", "setoption name NullMove value maybe", "setoption name Threads value 0",
                      "setoption name Threads value 3", "setoption name Reductions value true",
                      "isready", "position startpos", "go depth 2"])
    for name in SELECTIVE_OPTIONS:
        default = "true" if name in DEFAULT_SELECTIVE else "false"
        assert f"option name {name} type check default {default}" in out
    assert f"option name Threads type spin default 1 min 1 max {MAX_THREADS}" in out
    assert "info string error: option NullMove needs true or false, got 'maybe'" in out
    assert f"info string error: option Threads value 0 out of range 1..{MAX_THREADS}" in out
    assert any(line.startswith("bestmove ") for line in out.splitlines())


class _WideModel(ModelBackend):
    """The model declaring a device whose launch holds 64 jobs side by side."""
    capabilities = replace(ModelBackend.capabilities, launch_jobs=64)


def test_a_device_of_many_lanes_gets_the_root_moves_not_one_lone_job():
    """An iteration no deeper than HardwarePlies is one job for one accelerator, but on a
    device that runs many jobs side by side (a GPU) one job would hold one lane: the root's
    moves go out as jobs instead."""
    jobs = {}
    for backend in (ModelBackend(), _WideModel()):
        executor = BatchExecutor(backend)
        try:
            result = HostSearch(executor, None, SearchOptions(hardware_plies=2)).search(
                chess.Board(), Limits(depth=2))
        finally:
            executor.close()
        counts = [i.jobs for i in result.iterations]
        jobs[type(backend)] = [b - a for a, b in zip([0] + counts, counts)]
    assert jobs[ModelBackend] == [1, 1]
    assert all(n >= 20 for n in jobs[_WideModel])     # at least one job per root move
