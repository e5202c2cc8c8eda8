"""Perft of the model against the published counts and against python-chess.

Positions: the standard ones (initial position, Kiwipete, Chessprogramming positions 3-6) and
the public suites tricky.perft (its Chess960 records left out: ``suites.needs_chess960``), perftsuite.epd, perft-stress.epd and
perft-double-checks.epd.

The default run takes, for each position, the deepest depth whose leaf count (by python-chess) is
at most ``DEFAULT_MAX_LEAVES``, and compares the model with python-chess there and with the
published count when the suite gives one for that depth. The long run (``-m long``) checks every
published depth up to ``CHESSACCEL_PERFT_MAX_LEAVES`` leaves per position (default
``LONG_MAX_LEAVES``; 0 means no limit, which is days of CPU for the model). A mismatch prints the
divide: the root moves whose counts differ between the model and python-chess.
"""

import os

import chess
import pytest

from chessaccel.contract.defs import MAX_DEPTH
from chessaccel.contract.geometry import move_uci
from chessaccel.model.movegen import legal_moves
from chessaccel.model.search import SearchError, perft, perft_divide

import suites
from oracle import expected_order

#: Leaf budget per position in the default run (the model counts ~15-25 k leaves/s).
DEFAULT_MAX_LEAVES = 4_000
#: Leaf budget per position in the long run unless CHESSACCEL_PERFT_MAX_LEAVES says otherwise.
LONG_MAX_LEAVES = 1_000_000
#: Deepest depth the default run tries (python-chess counts grow ~30x a ply).
DEFAULT_MAX_DEPTH = 6

RECORDS = suites.perft_records()


def _long_limit():
    text = os.environ.get("CHESSACCEL_PERFT_MAX_LEAVES", str(LONG_MAX_LEAVES))
    limit = int(text)
    return None if limit == 0 else limit


def divide_report(fen, depth):
    """The root moves whose subtree counts differ between the model and python-chess."""
    model = {move_uci(m): n for m, n in perft_divide(suites.board_of(fen), depth).items()}
    oracle = suites.chess_divide(chess.Board(fen), depth)
    lines = [f"  {uci}: model {model.get(uci, '-')}, python-chess {oracle.get(uci, '-')}"
             for uci in sorted(set(model) | set(oracle)) if model.get(uci) != oracle.get(uci)]
    return f"divide of {fen} at depth {depth}:\n" + ("\n".join(lines) or "  (no difference)")


def check_perft(record, depth, expected, source):
    board = suites.board_of(record.fen)
    before = board.key()
    got = perft(board, depth)
    assert board.key() == before, f"{record.fen}: perft({depth}) did not restore the board"
    if got != expected:
        pytest.fail(f"{record.id} perft({depth}) = {got}, {source} says {expected}\n"
                    + divide_report(record.fen, depth))


def default_depth(record):
    """Deepest depth with at most DEFAULT_MAX_LEAVES leaves (at least 1), and its count."""
    cb = chess.Board(record.fen)
    depth, count = 1, suites.chess_perft(cb, 1)
    while depth < DEFAULT_MAX_DEPTH:
        deeper = record.counts.get(depth + 1)
        if deeper is not None and deeper > DEFAULT_MAX_LEAVES:
            break   # the published count says it is too big: no need to count it
        deeper = suites.chess_perft(cb, depth + 1)
        if deeper > DEFAULT_MAX_LEAVES:
            break
        depth, count = depth + 1, deeper
    return depth, count


@pytest.mark.parametrize("record", RECORDS, ids=[r.id for r in RECORDS])
def test_perft_default(record):
    depth, oracle = default_depth(record)
    published = record.counts.get(depth)
    if published is not None:
        assert published == oracle, f"{record.id}: the suite and python-chess disagree at {depth}"
    check_perft(record, depth, oracle, "python-chess")


@pytest.mark.long
@pytest.mark.parametrize("record", RECORDS, ids=[r.id for r in RECORDS])
def test_perft_published_depths(record):
    limit = _long_limit()
    depths = [d for d, n in sorted(record.counts.items()) if limit is None or n <= limit]
    if not depths:
        pytest.skip(f"every published count is above {limit} leaves "
                    "(raise CHESSACCEL_PERFT_MAX_LEAVES)")
    for depth in depths:
        check_perft(record, depth, record.counts[depth], "the published count")
    deepest = depths[-1]
    oracle = suites.chess_perft(chess.Board(record.fen), deepest)
    assert oracle == record.counts[deepest], f"{record.id}: python-chess disagrees at {deepest}"


def test_published_counts_reach_the_default_run():
    """The default run checks a published count on most positions, not only python-chess's."""
    checked = [r for r in RECORDS if min(r.counts.values()) <= DEFAULT_MAX_LEAVES]
    assert len(RECORDS) > 490
    assert len(checked) > 250


@pytest.mark.parametrize("fen", [
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
])
def test_divide_is_perft_per_root_move_in_generation_order(fen):
    """Divide's keys are python-chess's legal moves in the contract's order (tests/oracle.py,
    written from docs/semantics.md section 2), not the model's own move list."""
    board = suites.board_of(fen)
    divide = perft_divide(board, 2)
    assert [move_uci(m) for m in divide] == expected_order(chess.Board(fen))
    assert list(divide) == legal_moves(board)
    assert sum(divide.values()) == perft(board, 2)
    oracle = suites.chess_divide(chess.Board(fen), 2)
    assert {move_uci(m): n for m, n in divide.items()} == oracle


def test_perft_depth_zero_is_one_leaf():
    assert perft(suites.board_of(chess.STARTING_FEN), 0) == 1


@pytest.mark.parametrize("depth", [-1, MAX_DEPTH + 1, 2.0])
def test_perft_rejects_depths_outside_the_contract(depth):
    with pytest.raises(SearchError, match="depth"):
        perft(suites.board_of(chess.STARTING_FEN), depth)
