"""The frontier is wired right: the host's search above HardwarePlies, with the accelerator's
jobs below, computes what one accelerator search of the whole depth computes.

With the host's table, PVS, aspiration, killers and draws off (``SearchOptions.exact``):

- jobs in turn (``parallel=False``, each sibling's job waits for the one before): the same score,
  best move, PV and node count (host nodes + job nodes) as ``sim.model.search`` at depth D;
- young brothers wait (``parallel=True``, the engine's way): the same score and best move.

This checks the mate-score ply offsets across the boundary, in-check nodes at the top, the
windows handed to jobs, and that the host's move order equals the accelerator's generation order.
The fast tier runs 120 positions spread over six (D, H) pairs on an in-process executor (the
job interface without processes); ``make test-long`` runs up to 300 positions at each of nine
pairs on the model's process pool (300 at depths 1 and 2, fewer deeper).
"""

import random

import chess
import pytest

from chessaccel.contract.defs import INF, MATE
from chessaccel.contract.geometry import move_uci
from chessaccel.host.backends.model import ModelBackend
from chessaccel.host.engine.executors import BatchExecutor, make_executor
from chessaccel.host.engine.order import ordered_moves, to_model
from chessaccel.host.engine.search import HostSearch, SearchOptions
from chessaccel.model import search as model
from chessaccel.model.movegen import legal_moves

import suites

#: (depth, hardware plies) pairs: frontier at the root's children, deeper, and at the root.
PAIRS = ((1, 0), (2, 0), (2, 1), (3, 0), (3, 1), (3, 2))
LONG_PAIRS = PAIRS + ((4, 1), (4, 2), (4, 3))
SEED = 909


def _positions():
    """Small trees with every kind of trouble: mates in one and two (mate-score offsets),
    stalemates, checks at the root, tablebase endgames, sparse random middlegames."""
    rng = random.Random(SEED)
    out = []
    out += rng.sample(suites.fens("mate1.fen"), 6)
    out += rng.sample(suites.fens("mate2.fen"), 18)
    out += rng.sample(suites.fens("stalemate2.fen"), 10)
    out += [" ".join(line.split()[:4]) for _, line in suites.suite_lines("endgame-dm-4.epd")][:16]
    checks = [fen for fen, features in suites.coverage_positions(SEED, 400)
              if "check" in features and "checkmate" not in features]
    out += checks[:20]
    out += [suites.sparse_position(SEED + i, pieces=rng.randrange(3, 8), plies=6)
            for i in range(50)]
    return list(dict.fromkeys(out))


POSITIONS = _positions()


def _host(executor, fen, depth, plies, parallel):
    search = HostSearch(executor, options=SearchOptions.exact(plies, parallel=parallel))
    return search.search_depth(chess.Board(fen), depth)


def _describe(fen, depth, plies, what, host, accel):
    return f"{fen} depth {depth} frontier {plies}: {what} host {host} accelerator {accel}"


def check_position(executor, fen, depth, plies, full_pv=True):
    """``full_pv``: the backend returns whole PVs (the model); hardware returns the best move
    only, so the host's PV is then a prefix of the accelerator's."""
    board = suites.board_of(fen)
    reference = model.search(board, depth)
    expected_move = move_uci(reference.best_move) if reference.best_move else None
    in_turn = _host(executor, fen, depth, plies, parallel=False)
    got_move = in_turn.best_move.uci() if in_turn.best_move else None
    assert (in_turn.score, got_move) == (reference.score, expected_move), \
        _describe(fen, depth, plies, "score/move", (in_turn.score, got_move),
                  (reference.score, expected_move))
    got_pv, expected_pv = [m.uci() for m in in_turn.pv], [move_uci(m) for m in reference.pv]
    if not full_pv:
        expected_pv = expected_pv[:len(got_pv)]
    assert got_pv == expected_pv, _describe(fen, depth, plies, "pv", got_pv, expected_pv)
    assert in_turn.nodes == reference.nodes, \
        _describe(fen, depth, plies, "nodes", in_turn.nodes, reference.nodes)
    batched = _host(executor, fen, depth, plies, parallel=True)
    got_move = batched.best_move.uci() if batched.best_move else None
    assert (batched.score, got_move) == (reference.score, expected_move), \
        _describe(fen, depth, plies, "young brothers wait", (batched.score, got_move),
                  (reference.score, expected_move))
    return reference


@pytest.fixture(scope="module")
def inline_executor():
    executor = BatchExecutor(ModelBackend())
    yield executor
    executor.close()


def test_position_set_is_large_and_varied():
    assert len(POSITIONS) >= 100
    boards = [chess.Board(fen) for fen in POSITIONS]
    assert sum(b.is_check() for b in boards) >= 15
    assert sum(b.is_stalemate() for b in boards) >= 1


@pytest.mark.parametrize("pair", range(len(PAIRS)), ids=[f"D{d}H{h}" for d, h in PAIRS])
def test_host_search_equals_the_accelerators_search(inline_executor, pair):
    """Each position at one (D, H) pair, the pairs taken in turn: 120 positions, six pairs."""
    depth, plies = PAIRS[pair]
    mates = 0
    for fen in POSITIONS[pair::len(PAIRS)]:
        reference = check_position(inline_executor, fen, depth, plies)
        mates += abs(reference.score) >= MATE - 32
    if depth >= 2:
        assert mates >= 1, "the slice must hold a mate found below the frontier"


def test_mate_found_inside_a_job_keeps_its_distance(inline_executor):
    """A mate in two seen by a depth-1 job under two host plies scores MATE - 3 at the root."""
    fen = min(suites.fens("mate2.fen"), key=lambda f: len(chess.Board(f).piece_map()))
    result = _host(inline_executor, fen, 3, 1, parallel=True)
    assert result.score == MATE - 3 and result.mate == 2


def test_host_order_is_the_generation_order(coverage_positions):
    for fen, _ in coverage_positions[:300]:
        cb = chess.Board(fen)
        assert [to_model(m) for m in ordered_moves(cb)] == list(legal_moves(suites.board_of(fen)))


def test_window_is_passed_through_to_the_jobs(inline_executor):
    """A host search in a narrow window fails soft exactly as the accelerator does."""
    fen = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"
    full = model.search(suites.board_of(fen), 2)
    for alpha, beta in ((full.score - 1, full.score + 1), (full.score + 5, full.score + 50),
                        (-INF, full.score - 20)):
        reference = model.search(suites.board_of(fen), 2, alpha, beta)
        search = HostSearch(inline_executor, options=SearchOptions.exact(0, parallel=False))
        got = search.search_depth(chess.Board(fen), 2, alpha, beta)
        assert (got.score, got.nodes) == (reference.score, reference.nodes), (alpha, beta)


#: Positions the long sweep checks at each depth (the model's cost grows about five-fold a ply).
LONG_COUNTS = {1: 300, 2: 300, 3: 150, 4: 60}


@pytest.mark.long
@pytest.mark.parametrize("depth, plies", LONG_PAIRS)
def test_host_search_equals_the_accelerators_search_long(depth, plies):
    """The fast set plus random-play middlegames, 300 positions at depths 1 and 2, 150 at
    depth 3, 60 at depth 4, on the model's process pool with two workers."""
    positions = POSITIONS + suites.random_play_positions(SEED, 300 - len(POSITIONS), plies=40)
    positions = positions[:LONG_COUNTS[depth]]
    executor = make_executor("model", 2)
    try:
        for fen in positions:
            check_position(executor, fen, depth, plies)
    finally:
        executor.close()
