"""The model's search against the contract (docs/semantics.md, section 5).

- mate in 1 (mate1.fen) is found at depth 1 and mate in 2 (mate2.fen) at depth 3, with the exact
  mate score, a principal variation python-chess confirms as mate, and no shorter mate; on the
  tablebase endgames (endgame-dm-*.epd) no mate score is ever shorter than the true distance;
- a stalemated root scores 0 with no move; the other stalemate-suite positions (draw puzzles)
  get exactly the contract's score, best move and node count (``oracle.alphabeta``);
- a position and its colour-mirrored twin search identically (score, nodes, mirrored moves);
- alpha-beta returns the plain minimax value (hypothesis draws the positions);
- the model counts nodes, and picks best moves, exactly as an independent recursive alpha-beta
  over python-chess moves in the contract's order;
- windows: a window around the true value v returns v, and fail-soft bounds hold outside it.
"""

import chess
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from chessaccel.contract.defs import INF, MATE, MAX_DEPTH
from chessaccel.contract.geometry import move_uci
from chessaccel.model.search import SearchError, mate_distance, search

import seeds
import suites
from oracle import alphabeta, minimax, static_eval

MATE_IN_ONE = suites.fens("mate1.fen")
MATE_IN_TWO = suites.fens("mate2.fen")
#: Every n-th mate-in-2 position runs by default (each takes ~0.5-5 s); all of them under long.
MATE_IN_TWO_STRIDE = 10
STALEMATE_SUITES = ("stalemate0.fen", "stalemate1.fen", "stalemate2.fen")
STALEMATE_POSITIONS = [fen for name in STALEMATE_SUITES for fen in suites.fens(name)]
ROOT_STALEMATES = [fen for fen in STALEMATE_POSITIONS if chess.Board(fen).is_stalemate()]
DRAW_PUZZLES = [fen for fen in STALEMATE_POSITIONS if not chess.Board(fen).is_stalemate()]

#: Random-play positions for the node-count, mirror and window tests.
SEARCH_SEED = 4242
SEARCH_POSITIONS = suites.random_play_positions(SEARCH_SEED, 60, plies=60)


def _mirror_uci(uci):
    move = chess.Move.from_uci(uci)
    return chess.Move(chess.square_mirror(move.from_square), chess.square_mirror(move.to_square),
                      move.promotion).uci()


def model_search(fen, depth, alpha=-INF, beta=INF):
    board = suites.board_of(fen)
    before = board.key()
    result = search(board, depth, alpha, beta)
    assert board.key() == before, f"{fen}: search did not restore the board"
    return result


def assert_mates(fen, pv, moves):
    cb = chess.Board(fen)
    for uci in pv:
        move = chess.Move.from_uci(uci)
        assert move in cb.legal_moves, f"{fen}: PV {pv} plays an illegal {uci}"
        cb.push(move)
    assert len(pv) == 2 * moves - 1 and cb.is_checkmate(), \
        f"{fen}: PV {pv} is not a mate in {moves}"


# --- mates ------------------------------------------------------------------------------------

@pytest.mark.parametrize("fen", MATE_IN_ONE)
def test_mate_in_one_at_depth_one(fen):
    result = model_search(fen, 1)
    assert result.score == MATE - 1, f"{fen}: score {result.score}"
    assert mate_distance(result.score) == 1
    assert move_uci(result.best_move) == move_uci(result.pv[0])
    assert_mates(fen, [move_uci(m) for m in result.pv], 1)


def _check_mate_in_two(fen):
    shallow = model_search(fen, 1)
    assert shallow.score < MATE - 1, f"{fen}: a mate in 1 where the suite has none"
    result = model_search(fen, 3)
    assert result.score == MATE - 3, f"{fen}: depth 3 scores {result.score}, not mate in 2"
    assert mate_distance(result.score) == 2
    assert_mates(fen, [move_uci(m) for m in result.pv], 2)


@pytest.mark.parametrize("fen", MATE_IN_TWO[::MATE_IN_TWO_STRIDE])
def test_mate_in_two_at_depth_three(fen):
    _check_mate_in_two(fen)


@pytest.mark.long
@pytest.mark.parametrize("fen", [f for i, f in enumerate(MATE_IN_TWO) if i % MATE_IN_TWO_STRIDE])
def test_mate_in_two_at_depth_three_all(fen):
    _check_mate_in_two(fen)


def test_mated_side_scores_minus_mate():
    """The mated side at the root: no move, -MATE (mated now, ply 0), mate distance 0."""
    fen = "R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1"
    for depth in (0, 1, 2):
        result = model_search(fen, depth)
        assert (result.score, result.best_move, result.nodes) == (-MATE, None, 1)
        assert mate_distance(result.score) == 0


def _tablebase_positions():
    """(fen, dm) of the 3-5 man endgame suites: dm = moves to mate by perfect play (negative:
    the side to move is mated; 0: a draw)."""
    out = []
    for name in ("endgame-dm-4.epd", "endgame-dm-5.epd"):
        for _, line in suites.suite_lines(name):
            fen, _, ops = line.partition(" dm ")
            out.append((fen.strip(), int(ops.strip(" ;"))))
    return out


TABLEBASE = _tablebase_positions()
#: Depth of the soundness sweep over the tablebase positions.
TABLEBASE_DEPTH = 3


@pytest.mark.parametrize("fen,dm", TABLEBASE, ids=[f"{f.split()[0]}-dm{d}" for f, d in TABLEBASE])
def test_mate_scores_agree_with_tablebase_distances(fen, dm):
    """A mate score is a real forced mate, so the search can never claim a mate shorter than
    the tablebase's (nor be mated sooner, nor see a mate in a drawn position); a mate within
    the depth's reach (2 |dm| - 1 plies <= depth) is found exactly."""
    score = model_search(fen, TABLEBASE_DEPTH).score
    if dm > 0:
        plies = 2 * dm - 1
        assert score <= MATE - plies, f"{fen}: {score} claims a mate faster than in {dm}"
        if plies <= TABLEBASE_DEPTH:
            assert score == MATE - plies, f"{fen}: mate in {dm} not found, score {score}"
    elif dm < 0:
        assert score >= -(MATE + 2 * dm), f"{fen}: {score} claims being mated sooner than {dm}"
    else:
        assert mate_distance(score) is None, f"{fen}: a draw scored as mate ({score})"


# --- stalemates -------------------------------------------------------------------------------

def test_the_stalemate_suites_hold_root_stalemates():
    assert len(ROOT_STALEMATES) >= 5


@pytest.mark.parametrize("fen", ROOT_STALEMATES)
def test_root_stalemate_scores_zero(fen):
    for depth in (1, 2, 3):
        result = model_search(fen, depth)
        assert (result.score, result.best_move, result.pv, result.nodes) == (0, None, [], 1)
    # depth 0 without check is quiescence: it stands pat and never looks for stalemate
    assert model_search(fen, 0).score == static_eval(chess.Board(fen))


@pytest.mark.parametrize("fen", DRAW_PUZZLES)
def test_draw_puzzles_follow_the_contract(fen):
    """Not stalemated at the root: the contract fixes the score, best move and node count."""
    result = model_search(fen, 2)
    score, best, nodes = alphabeta(chess.Board(fen), 2)
    assert (result.score, move_uci(result.best_move) if result.best_move else None,
            result.nodes) == (score, best, nodes), fen


# --- colour mirror ----------------------------------------------------------------------------

MIRROR_CASES = ([(fen, depth) for fen in SEARCH_POSITIONS[:30] for depth in (1, 2)]
                + [(fen, 3) for fen in SEARCH_POSITIONS[:4]]
                + [(fen, 2) for fen in MATE_IN_ONE + ROOT_STALEMATES])


@pytest.mark.parametrize("fen,depth", MIRROR_CASES)
def test_colour_mirrored_twin_searches_the_same(fen, depth):
    twin = chess.Board(fen).mirror().fen(en_passant="fen")
    a, b = model_search(fen, depth), model_search(twin, depth)
    assert (a.score, a.nodes) == (b.score, b.nodes), f"{fen} vs {twin} at depth {depth}"
    assert [_mirror_uci(move_uci(m)) for m in a.pv] == [move_uci(m) for m in b.pv]


# --- against independent references ----------------------------------------------------------

@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), pieces=st.integers(0, 5), plies=st.integers(0, 6),
       depth=st.integers(1, 2))
def test_alphabeta_equals_plain_minimax(seed, pieces, plies, depth):
    fen = suites.sparse_position(seed, pieces, plies)
    expected = minimax(chess.Board(fen), depth)
    assert model_search(fen, depth).score == expected, f"{fen} at depth {depth}"


@pytest.mark.long
@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), pieces=st.integers(0, 5), plies=st.integers(0, 8),
       depth=st.integers(1, 3))
def test_alphabeta_equals_plain_minimax_deeper(seed, pieces, plies, depth):
    fen = suites.sparse_position(seed, pieces, plies)
    expected = minimax(chess.Board(fen), depth)
    assert model_search(fen, depth).score == expected, f"{fen} at depth {depth}"


#: Random-play positions drawn with the run's seed (tests/seeds.py), beside the fixed ones.
FRESH_POSITIONS = suites.random_play_positions(seeds.run_seed(), 8, plies=60)
NODE_CASES = ([(fen, depth) for fen in SEARCH_POSITIONS[:40] for depth in (1, 2)]
              + [(fen, 3) for fen in SEARCH_POSITIONS[40:46]]
              + [(fen, depth) for fen in FRESH_POSITIONS for depth in (1, 2)])


@pytest.mark.parametrize("fen,depth", NODE_CASES)
def test_nodes_and_best_move_match_an_independent_alphabeta(fen, depth):
    result = model_search(fen, depth)
    score, best, nodes = alphabeta(chess.Board(fen), depth)
    got = (result.score, move_uci(result.best_move) if result.best_move else None, result.nodes)
    assert got == (score, best, nodes), f"{fen} at depth {depth}: model {got}, contract " \
        f"{(score, best, nodes)} ({seeds.describe()})"


#: A small stack (the parameter the SearchCore shares): quiescence fills it in a few captures.
SMALL_MAX_PLY = 6
FULL_STACK_POSITIONS = [fen for fen in suites.epd_positions(("wac.epd",))[:60]]


def test_a_full_stack_evaluates_its_leaf():
    """``max_ply``: a node at that ply is counted and evaluated, never expanded. The model equals
    the independent alpha-beta with the same stack size in score, best move and nodes, on
    positions whose walk does reach that ply (at least 10 of them, or the test proves nothing),
    and the small stack changes the result of at least one (the rule is not a no-op)."""
    reached = changed = 0
    for fen in FULL_STACK_POSITIONS:
        board = suites.board_of(fen)
        result = search(board, 1, trace=True, max_ply=SMALL_MAX_PLY)
        if max(ply for ply, _ in result.trace) < SMALL_MAX_PLY:
            continue
        reached += 1
        score, best, nodes = alphabeta(chess.Board(fen), 1, max_ply=SMALL_MAX_PLY)
        got = (result.score, move_uci(result.best_move) if result.best_move else None,
               result.nodes)
        assert got == (score, best, nodes), f"{fen}: model {got}, contract {(score, best, nodes)}"
        full = search(board, 1)
        changed += (full.score, full.nodes) != (result.score, result.nodes)
    assert reached >= 10, f"only {reached} positions reach ply {SMALL_MAX_PLY}"
    assert changed >= 1


@pytest.mark.parametrize("fen", [chess.STARTING_FEN, FULL_STACK_POSITIONS[0]])
def test_the_smallest_stack_evaluates_every_child_of_the_root(fen):
    """max_ply 1, the bound of the range that is still accepted: the root expands and each of its
    children is evaluated at once (one node per legal root move, plus the root), as the
    independent alpha-beta with the same stack says."""
    cb = chess.Board(fen)
    result = search(suites.board_of(fen), 3, max_ply=1)
    assert result.nodes == 1 + cb.legal_moves.count()
    score, best, nodes = alphabeta(cb, 3, max_ply=1)
    assert (result.score, move_uci(result.best_move), result.nodes) == (score, best, nodes)


@pytest.mark.parametrize("max_ply", [0, -1, 33, "6"])
def test_search_rejects_a_stack_size_out_of_range(max_ply):
    with pytest.raises(SearchError, match="max_ply"):
        search(suites.board_of(chess.STARTING_FEN), 1, max_ply=max_ply)


# --- windows ----------------------------------------------------------------------------------

WINDOW_CASES = [(fen, depth) for fen in SEARCH_POSITIONS[:20] for depth in (1, 2)]
#: Offsets of the windows tried around the true value v.
WINDOW_STEPS = (1, 25, 200)


@pytest.mark.parametrize("fen,depth", WINDOW_CASES)
def test_windows_agree_with_the_full_window(fen, depth):
    full = model_search(fen, depth)
    v = full.score
    narrow = model_search(fen, depth, v - 1, v + 1)
    assert narrow.score == v, f"{fen}: ({v - 1}, {v + 1}) returns {narrow.score}, not {v}"
    assert narrow.best_move == full.best_move
    for step in WINDOW_STEPS:
        around = model_search(fen, depth, max(-INF, v - step), min(INF, v + step))
        assert (around.score, around.best_move) == (v, full.best_move)
        alpha = v + step - 1       # window above v: fail low with an upper bound >= v
        if alpha + 1 <= INF:
            low = model_search(fen, depth, alpha, min(INF, alpha + step))
            assert v <= low.score <= alpha, f"{fen}: fail-low {low.score} for v={v}, alpha={alpha}"
        beta = v - step + 1        # window below v: fail high with a lower bound <= v
        if beta - 1 >= -INF:
            high = model_search(fen, depth, max(-INF, beta - step), beta)
            assert beta <= high.score <= v, f"{fen}: fail-high {high.score} for v={v}, beta={beta}"


# --- the job's limits and determinism ---------------------------------------------------------

@pytest.mark.parametrize("depth,alpha,beta", [
    (-1, -INF, INF), (MAX_DEPTH + 1, -INF, INF), (2, 5, 5), (2, 6, 5),
    (2, -INF - 1, INF), (2, -INF, INF + 1),
])
def test_search_rejects_jobs_outside_the_contract(depth, alpha, beta):
    with pytest.raises(SearchError):
        search(suites.board_of(chess.STARTING_FEN), depth, alpha, beta)


def test_search_is_deterministic():
    fen = SEARCH_POSITIONS[0]
    first, second = model_search(fen, 3), model_search(fen, 3)
    assert (first.score, first.best_move, first.pv, first.nodes) == \
        (second.score, second.best_move, second.pv, second.nodes)
