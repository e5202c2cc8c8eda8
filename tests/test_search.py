"""SearchCore (hdl/search.py) against the model (sim/model/search.py), job by job, node by node.

Search jobs: score, best move and node count must be identical; on a mismatch the job is run
again with the node trace on both sides and the first node where the walks differ is printed.
Perft jobs: the leaf count must equal the published count (and python-chess's).
Every job of a test runs in one simulator run (sim/rtl_search.py). The tests marked with the
``threads`` parameter run on the one-thread core and on the core interleaving two jobs
(``SearchCore(threads=2)``, hdl/interleave.py), whose harness keeps both threads busy.
"""

import random

import chess
import pytest

from chessaccel.contract.defs import INF, MATE, MAX_DEPTH, Mode, Status
from chessaccel.contract.geometry import move_uci
from chessaccel.model.position import chess_from_board
from chessaccel.model.search import search, perft
from chessaccel.sim.rtl_search import RtlJob, icarus_missing, run_jobs, toolchain_missing

import seeds
import suites

pytestmark = pytest.mark.skipif(toolchain_missing() is not None,
                                reason=f"RTL simulation unavailable: {toolchain_missing()}")

#: Jobs whose model search enters more nodes than this are left to the long sweep.
DEFAULT_NODE_LIMIT = 5000
LONG_NODE_LIMIT = 20000
SEED = 4
#: Narrow windows: alpha drawn from +-WINDOW_SPREAD, width 1..WINDOW_WIDTH_MAX.
WINDOW_SPREAD = 300
WINDOW_WIDTH_MAX = 60
#: Cycles after start at which the abort test raises abort, and the most it may take to stop.
ABORT_AFTER = 200
ABORT_LATENCY_MAX = 1

#: Both cores: one thread, and two interleaved jobs.
both_cores = pytest.mark.parametrize("threads", (1, 2), ids=("1-thread", "2-threads"))


def _uci(move):
    return move_uci(move) if move else "none"


def _first_divergence(model_trace, rtl_trace):
    for i, (want, got) in enumerate(zip(model_trace, rtl_trace)):
        if want != got:
            return i, want, got
    if len(model_trace) != len(rtl_trace):
        i = min(len(model_trace), len(rtl_trace))
        return (i, model_trace[i] if i < len(model_trace) else None,
                rtl_trace[i] if i < len(rtl_trace) else None)
    return None


def _describe(node):
    if node is None:
        return "(walk ended)"
    ply, move = node
    return f"ply {ply} via {_uci(move)}"


def _search_jobs(fens, depths, windows, rng, node_limit, evaluation="pst"):
    """(RtlJob, model result) for each position x depth x window whose model walk is small."""
    out = []
    for fen in fens:
        board = suites.board_of(fen)
        for depth in depths:
            for window in windows:
                alpha, beta = window(rng)
                want = search(board, depth, alpha, beta, evaluation=evaluation)
                if want.nodes <= node_limit:
                    out.append((RtlJob(board, depth, alpha, beta), want))
    return out


def _full(rng):
    return -INF, INF


def _narrow(rng):
    alpha = rng.randint(-WINDOW_SPREAD, WINDOW_SPREAD)
    return alpha, alpha + rng.randint(1, WINDOW_WIDTH_MAX)


def _check_search(jobs, threads=1, evaluation="pst"):
    results = run_jobs([job for job, _ in jobs], threads=threads, evaluation=evaluation)
    failures = []
    for (job, want), got in zip(jobs, results):
        same = (got.status == Status.DONE and got.score == want.score
                and got.best_move == want.best_move and got.nodes == want.nodes)
        if not same:
            failures.append((job, want, got))
    if failures:
        job, want, got = failures[0]
        fen = chess_from_board(job.board).fen()
        retrace = run_jobs([RtlJob(job.board, job.depth, job.alpha, job.beta, trace=True)],
                           threads=threads, evaluation=evaluation)[0]
        model = search(job.board, job.depth, job.alpha, job.beta, trace=True,
                       evaluation=evaluation)
        where = _first_divergence(model.trace, retrace.trace)
        detail = ("walks identical" if where is None else
                  f"first differing node #{where[0]}: model {_describe(where[1])}, "
                  f"rtl {_describe(where[2])}")
        pytest.fail(f"{len(failures)} of {len(jobs)} jobs differ on the {threads}-thread core "
                    f"(evaluation {evaluation}) "
                    f"({seeds.describe()}); "
                    f"first: {fen} depth {job.depth} "
                    f"window ({job.alpha}, {job.beta}): model score {want.score} "
                    f"move {_uci(want.best_move)} nodes {want.nodes}; rtl {got.status.name} "
                    f"score {got.score} move {_uci(got.best_move)} nodes {got.nodes}; {detail}")
    return results


def _positions(count, seed):
    fens = [r.fen for r in suites.perft_records(("tricky.perft", "perftsuite.epd"))]
    fens += suites.fens("mate2.fen")[:20] + suites.fens("stalemate2.fen")[:10]
    fens += suites.epd_positions(("wac.epd", "bratko-kopec.epd"))
    fens += suites.random_play_positions(seed, count)
    return list(dict.fromkeys(fens))


@both_cores
def test_search_matches_model(threads):
    """>= 300 jobs: depths 0 (quiescence) to 3, full and narrow windows, suites + random play.
    Which 155 positions run, the random-play ones and the windows are drawn with the run's seed
    (tests/seeds.py): a different draw on every run, repeatable from the seed it prints."""
    seed = seeds.run_seed()
    rng = random.Random(seed)
    fens = _positions(120, seed)
    rng.shuffle(fens)
    jobs = _search_jobs(fens[:100], (0, 1), (_full, _narrow), rng, DEFAULT_NODE_LIMIT)
    jobs += _search_jobs(fens[100:140], (2,), (_full, _narrow), rng, DEFAULT_NODE_LIMIT)
    jobs += _search_jobs(fens[140:155], (3,), (_full, _narrow), rng, DEFAULT_NODE_LIMIT)
    assert len(jobs) >= 300
    assert {job.depth for job, _ in jobs} == {0, 1, 2, 3}
    _check_search(jobs, threads)


@pytest.mark.long
@both_cores
def test_search_matches_model_long(threads):
    rng = random.Random(SEED + 1)
    fens = _positions(200, SEED + 1)
    jobs = _search_jobs(fens, (1, 2, 3), (_full, _narrow), rng, LONG_NODE_LIMIT)
    _check_search(jobs, threads)


# --- the core built with the "terms" evaluation (SearchCore(evaluation="terms")) --------------

#: Positions of the fast tier's terms sample (drawn with the run's seed) and its job count floor.
TERMS_POSITIONS = 60
TERMS_JOBS_MIN = 100


def test_search_with_terms_matches_model():
    """The one-thread core built with the terms evaluation (hdl/evalterms.py) against the
    model's search with it: a sample of TERMS_POSITIONS positions drawn with the run's seed,
    depths 0 to 2, full and narrow windows; score, best move and nodes equal (on a mismatch the
    first differing node). The two-thread terms core, the full draw and depth 3 are the long
    tier's (`test_search_with_terms_matches_model_long`): each terms core is a Verilator build
    of its own, several minutes."""
    seed = seeds.run_seed()
    rng = random.Random(seed)
    fens = _positions(60, seed)
    rng.shuffle(fens)
    fens = fens[:TERMS_POSITIONS]
    jobs = _search_jobs(fens[:40], (0, 1), (_full, _narrow), rng, DEFAULT_NODE_LIMIT,
                        evaluation="terms")
    jobs += _search_jobs(fens[40:], (2,), (_full, _narrow), rng, DEFAULT_NODE_LIMIT,
                         evaluation="terms")
    assert len(jobs) >= TERMS_JOBS_MIN
    _check_search(jobs, evaluation="terms")


@pytest.mark.long
@both_cores
def test_search_with_terms_matches_model_long(threads):
    """Every position of the fast draw's sets (fixed seed), depths 0 to 3, both cores."""
    rng = random.Random(SEED + 2)
    fens = _positions(120, SEED + 2)
    jobs = _search_jobs(fens, (0, 1, 2), (_full, _narrow), rng, DEFAULT_NODE_LIMIT,
                        evaluation="terms")
    jobs += _search_jobs(fens[:40], (3,), (_full,), rng, DEFAULT_NODE_LIMIT, evaluation="terms")
    _check_search(jobs, threads, evaluation="terms")


def test_mates_and_stalemates_score_as_the_contract_says():
    """Mate in 1 found at depth 1 scores MATE - 1; stalemate at the root scores 0; a mated root
    scores -MATE; and the model agrees (node counts included)."""
    mate1 = [f for f in suites.fens("mate1.fen")]
    stalemated = [f for name in ("stalemate0.fen", "stalemate1.fen")
                  for f in suites.fens(name) if not any(chess.Board(f).legal_moves)]
    mated = []
    for fen in mate1:
        cb = chess.Board(fen)
        for move in cb.legal_moves:
            cb.push(move)
            if cb.is_checkmate():
                mated.append(cb.fen())
                cb.pop()
                break
            cb.pop()
    jobs = [(RtlJob(suites.board_of(f), 1), MATE - 1) for f in mate1]
    jobs += [(RtlJob(suites.board_of(f), 1), 0) for f in stalemated]
    jobs += [(RtlJob(suites.board_of(f), 2), -MATE) for f in mated]
    assert stalemated and mated
    results = _check_search([(job, search(job.board, job.depth)) for job, _ in jobs])
    for (job, score), got in zip(jobs, results):
        assert got.score == score, f"{chess_from_board(job.board).fen()}: {got.score} != {score}"


def _perft_jobs(records, depths):
    jobs = []
    for record in records:
        for depth in depths:
            if depth in record.counts:
                jobs.append((RtlJob(suites.board_of(record.fen), depth, mode=Mode.PERFT),
                             record.counts[depth], record))
    return jobs


def _check_perft(jobs, threads=1):
    results = run_jobs([job for job, _, _ in jobs], threads=threads)
    for (job, count, record), got in zip(jobs, results):
        assert got.status == Status.DONE and got.nodes == count, (
            f"perft {job.depth} of {record.id} ({record.fen}), {threads}-thread core: rtl "
            f"{got.status.name} "
            f"{got.nodes}, published {count}, model {perft(job.board, job.depth)}")


def _cpw():
    return {r.name: r for r in suites.perft_records(("tricky.perft",))}


@both_cores
def test_perft_matches_published_counts(threads):
    """>= 50 positions: the perft suites at depth 1-2, chessprogramming positions 3 and 4 at
    depth 3, Kiwipete and positions 5 and 6 at depth 2 (depth 3 in the long sweep)."""
    records = suites.perft_records(("perftsuite.epd", "perft-stress.epd"))[:60]
    for record in records[:5]:
        assert suites.chess_perft(chess.Board(record.fen), 2) == record.counts[2]
    jobs = _perft_jobs(records, (2,))
    cpw = _cpw()
    jobs += _perft_jobs([cpw["pos-3"], cpw["pos-4"]], (1, 2, 3))
    jobs += _perft_jobs([cpw["pos-2"], cpw["pos-5"], cpw["pos-6"]], (1, 2))
    jobs.append((RtlJob(suites.board_of(chess.STARTING_FEN), 0, mode=Mode.PERFT), 1,
                 records[0]))
    assert len({id(r) for _, _, r in jobs}) >= 50
    _check_perft(jobs, threads)


@pytest.mark.long
def test_perft_depth_3_long():
    cpw = _cpw()
    records = [cpw[n] for n in ("pos-2", "pos-3", "pos-4", "pos-5", "pos-6")]
    records += suites.perft_records(("perftsuite.epd",))[:40]
    _check_perft(_perft_jobs(records, (3,)))


@both_cores
def test_abort_and_bad_jobs(threads):
    """A running job stops within ABORT_LATENCY_MAX turns of its thread after abort, ABORTED; a job
    deeper than MAX_DEPTH or with an empty window is BAD_JOB; the core then searches normally."""
    board = suites.board_of(_cpw()["pos-2"].fen)
    want = search(board, 1)
    results = run_jobs([
        RtlJob(board, 3, abort_after=ABORT_AFTER),
        RtlJob(board, MAX_DEPTH + 1),
        RtlJob(board, 2, 10, 10),
        RtlJob(board, 1),
    ], threads=threads)
    aborted, too_deep, empty_window, normal = results
    assert aborted.status == Status.ABORTED
    # a thread of the two-thread core sees abort from a register loaded before its turn:
    # within three clock cycles
    assert aborted.abort_latency <= (ABORT_LATENCY_MAX if threads == 1 else 3)
    assert too_deep.status == Status.BAD_JOB
    assert empty_window.status == Status.BAD_JOB
    assert (normal.status, normal.score, normal.best_move, normal.nodes) == (
        Status.DONE, want.score, want.best_move, want.nodes)


def _board_from_pieces(pieces, side=0):
    """A model Board from {square: FEN letter}; no castling, no en passant."""
    from chessaccel.contract.defs import Color, PieceType
    from chessaccel.contract.geometry import CODE
    letters = {"p": PieceType.PAWN, "n": PieceType.KNIGHT, "b": PieceType.BISHOP,
               "r": PieceType.ROOK, "q": PieceType.QUEEN, "k": PieceType.KING}
    squares = [0] * 64
    for square, letter in pieces.items():
        color = Color.WHITE if letter.isupper() else Color.BLACK
        squares[square] = CODE[color.value][letters[letter.lower()].value]
    from chessaccel.model.board import Board
    return Board(squares, side, 0, None)


#: {name: (pieces, side to move)}: the core must answer BAD_JOB, search and perft alike.
BAD_KING_POSITIONS = {
    "no white king": ({60: "k", 0: "R", 9: "P"}, 0),
    "no black king": ({4: "K", 63: "r"}, 1),
    "no king at all": ({4: "Q", 60: "q"}, 0),
    "two white kings": ({4: "K", 7: "K", 60: "k"}, 0),
    "two black kings": ({4: "K", 56: "k", 60: "k"}, 1),
}


@both_cores
def test_positions_without_one_king_a_side_are_bad_jobs(threads):
    """The core's king-square registers would keep the previous job's king: a position without
    exactly one king of each colour is refused (BAD_JOB), after a normal job has loaded kings, in
    search and perft mode, and the model refuses the same jobs (job_problem)."""
    from chessaccel.model.search import SearchError, job_problem
    normal = suites.board_of(_cpw()["pos-2"].fen)
    want = search(normal, 1)
    jobs = []
    for name, (pieces, side) in BAD_KING_POSITIONS.items():
        board = _board_from_pieces(pieces, side)
        assert job_problem(board, 1) and "king" in job_problem(board, 1), name
        with pytest.raises(SearchError, match="king"):
            search(board, 1)
        with pytest.raises(SearchError, match="king"):
            perft(board, 1)
        jobs += [RtlJob(normal, 1), RtlJob(board, 1), RtlJob(board, 1, mode=Mode.PERFT)]
    results = run_jobs(jobs, threads=threads)
    for i, name in enumerate(BAD_KING_POSITIONS):
        first, bad_search, bad_perft = results[3 * i: 3 * i + 3]
        assert (first.status, first.score, first.nodes) == (Status.DONE, want.score, want.nodes)
        assert bad_search.status == Status.BAD_JOB, name
        assert bad_perft.status == Status.BAD_JOB, name


#: A small stack: quiescence reaches it in a few captures, so the stack-full rule runs.
SMALL_MAX_PLY = 6


#: The small-stack cores are the long tier's: each is a Verilator build of its own (about 1.5 CPU
#: min, and over 2 min of the fast tier's wall with its lock waits) for 12 jobs. The fast tier
#: checks the stack-full rule in the model (test_model_search.py) and the OpenCL kernels
#: (test_opencl.py, a small MAX_PLY), and the cores node for node at MAX_PLY
#: (test_search_matches_model).
@pytest.mark.long
@both_cores
def test_a_full_stack_evaluates_its_leaf_node_for_node(threads):
    """With ``max_ply`` = SMALL_MAX_PLY on both sides, the core equals the model node by node
    (walks compared) on jobs chosen because their walk reaches ply SMALL_MAX_PLY, where the
    documented rule holds: the node is counted and evaluated, never expanded."""
    rng = random.Random(SEED)
    fens = [r.fen for r in suites.perft_records(("perftsuite.epd",))] + suites.epd_positions(
        ("wac.epd",))
    rng.shuffle(fens)
    jobs = []
    for fen in fens:
        board = suites.board_of(fen)
        want = search(board, 2, trace=True, max_ply=SMALL_MAX_PLY)
        if want.nodes <= DEFAULT_NODE_LIMIT and max(p for p, _ in want.trace) == SMALL_MAX_PLY:
            jobs.append((RtlJob(board, 2, trace=True), want))
        if len(jobs) == 12:
            break
    assert len(jobs) == 12, "too few positions reach the small stack's last ply"
    results = run_jobs([job for job, _ in jobs], max_ply=SMALL_MAX_PLY, threads=threads)
    for (job, want), got in zip(jobs, results):
        fen = chess_from_board(job.board).fen()
        assert got.trace == want.trace, (
            f"{fen}: walks differ at node {_first_divergence(want.trace, got.trace)}")
        assert (got.status, got.score, got.best_move, got.nodes) == (
            Status.DONE, want.score, want.best_move, want.nodes), fen


@pytest.mark.long
@pytest.mark.skipif(icarus_missing() is not None, reason=f"cocotb + Icarus: {icarus_missing()}")
def test_small_jobs_on_cocotb_icarus():
    """The same Verilog under cocotb on Icarus (sim/cocotb/tb_search.py), on jobs small enough
    for Icarus's speed on this design (a few cycles per second: ~4 minutes, hence long): a perft, a quiescence search,
    a mate in one, with the node trace, and a bad job."""
    rook_ending = suites.board_of("4k3/8/8/8/8/8/8/4K2R w K - 0 1")
    mate_in_one = suites.board_of("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")
    jobs = [RtlJob(rook_ending, 1, mode=Mode.PERFT), RtlJob(rook_ending, 0, trace=True),
            RtlJob(mate_in_one, 1, trace=True), RtlJob(mate_in_one, MAX_DEPTH + 1)]
    results = run_jobs(jobs, simulator="icarus")
    assert (results[0].status, results[0].nodes) == (Status.DONE, perft(rook_ending, 1))
    for job, got in zip(jobs[1:3], results[1:3]):
        want = search(job.board, job.depth, trace=True)
        assert (got.status, got.score, got.best_move, got.nodes, got.trace) == (
            Status.DONE, want.score, want.best_move, want.nodes, want.trace)
    assert results[2].score == MATE - 1
    assert results[3].status == Status.BAD_JOB
