"""Perft at depth 3 and more in the fast tier, where the default run (test_model_perft.py, capped
at 12,000 leaves a position) stops at depth 1-2: positions that still hold castling rights while
rooks can be taken on their home squares, and en-passant captures that uncover a king.

Each case names its suite record, the depth and what it exercises; the count is the suite's
published one (python-chess confirms those under ``-m long``) or python-chess's own where the
suite gives none at that depth. ``test_deep_set_covers_its_features`` checks, with python-chess,
that the set really holds what it claims. The long tier goes one ply deeper on every case.

Also here: random-play positions drawn with the run's seed (tests/seeds.py), still holding
castling rights, at depth 3 against python-chess.
"""

import chess
import pytest

from chessaccel.contract.geometry import move_uci
from chessaccel.model.search import perft, perft_divide

import seeds
import suites

#: (suite, record id, fast-tier depth, why). ~300,000 leaves in all: ~8 s of model time.
DEEP_CASES = (
    ("standard.perft", "kiwipete", 3, "all four rights; bishops and queen reach a8/h8 squares"),
    ("standard.perft", "position-5", 3, "white holds K; the f2 knight takes the h1 rook"),
    ("standard.perft", "position-4", 3, "black holds kq; pawn captures promote on b1/a1"),
    ("perftsuite.epd", "line13", 3, "R3K2R v r3k2r, all rights: rooks take rooks on a1/h1/a8/h8"),
    ("perftsuite.epd", "line30", 3, "the same with black to move"),
    ("perftsuite.epd", "line17", 3, "rights held on one wing only (KQk)"),
    ("standard.perft", "position-3", 4, "b5xc6 / e2-e4 f4xe3 en passant pinned along the 5th/4th rank"),
    ("perftsuite.epd", "line127", 5, "f5xg6? en passant next to the king"),
    ("perft-stress.epd", "line6", 4, "c4xd3 en passant uncovers the bishop's check line"),
    ("tricky.perft", "align-ep-pinned", 4, "d5xd6? en passant pinned on the rank"),
    ("tricky.perft", "ep-unrelated-check", 3, "en passant while in check from another piece"),
)
#: Random-play positions with castling rights, drawn with the run's seed, at RANDOM_DEPTH.
RANDOM_COUNT = 3
RANDOM_DEPTH = 3
_ROOK_HOMES = (chess.A1, chess.H1, chess.A8, chess.H8)


def _records():
    by_id = {}
    for record in suites.perft_records():
        by_id[(record.suite, record.name)] = record
    return by_id


RECORDS = _records()


def find(suite, name):
    if (suite, name) in RECORDS:
        return RECORDS[(suite, name)]
    raise KeyError(f"{suite}: no record {name!r} (have: "
                   f"{sorted(n for s, n in RECORDS if s == suite)[:20]})")


def expected_count(record, depth):
    if depth in record.counts:
        return record.counts[depth], "the published count"
    return suites.chess_perft(chess.Board(record.fen), depth), "python-chess"


def check(fen, depth, want, source, note=""):
    board = suites.board_of(fen)
    got = perft(board, depth)
    if got != want:
        model = {move_uci(m): n for m, n in perft_divide(board, depth).items()}
        oracle = suites.chess_divide(chess.Board(fen), depth)
        diff = [f"  {uci}: model {model.get(uci, '-')}, python-chess {oracle.get(uci, '-')}"
                for uci in sorted(set(model) | set(oracle)) if model.get(uci) != oracle.get(uci)]
        pytest.fail(f"{fen} perft({depth}) = {got}, {source} says {want}{note}\n"
                    + "\n".join(diff))


@pytest.mark.parametrize("suite,name,depth,why", DEEP_CASES,
                         ids=[f"{s}:{n}:d{d}" for s, n, d, _ in DEEP_CASES])
def test_deep_perft(suite, name, depth, why):
    record = find(suite, name)
    want, source = expected_count(record, depth)
    check(record.fen, depth, want, source)


@pytest.mark.long
@pytest.mark.parametrize("suite,name,depth,why", DEEP_CASES,
                         ids=[f"{s}:{n}:d{d + 1}" for s, n, d, _ in DEEP_CASES])
def test_deep_perft_one_ply_deeper(suite, name, depth, why):
    record = find(suite, name)
    want, source = expected_count(record, depth + 1)
    check(record.fen, depth + 1, want, source)


def _walk(cb, plies, visit):
    """Call ``visit(cb, move)`` on every legal and pseudo-legal move of the first ``plies``."""
    if plies == 0:
        return
    for move in cb.pseudo_legal_moves:
        visit(cb, move)
        if cb.is_legal(move):
            cb.push(move)
            _walk(cb, plies - 1, visit)
            cb.pop()


def features_within(fen, plies):
    """Which of the deep set's features occur in the first ``plies`` plies of the tree."""
    found = set()
    cb = chess.Board(fen)
    if cb.castling_rights:
        found.add("castling rights")

    def visit(board, move):
        if (move.to_square in _ROOK_HOMES and board.piece_type_at(move.to_square) == chess.ROOK
                and board.castling_rights & chess.BB_SQUARES[move.to_square]):
            found.add("rook taken on its home square while its right is held")
        if board.is_en_passant(move):
            if not board.is_legal(move):
                found.add("en passant illegal: it uncovers the mover's king")
            elif board.gives_check(move) and not board.attacks_mask(move.to_square) & \
                    board.pieces_mask(chess.KING, not board.turn):
                found.add("en passant gives a discovered check")
            else:
                found.add("en passant")
    _walk(cb, plies, visit)
    return found


def test_deep_set_covers_its_features():
    """The features are met before the last ply, so a child position's count depends on them."""
    found = {}
    for suite, name, depth, _ in DEEP_CASES:
        for feature in features_within(find(suite, name).fen, depth - 1):
            found.setdefault(feature, []).append(f"{suite}:{name}")
    assert len(found.get("castling rights", [])) >= 6
    assert len(found.get("rook taken on its home square while its right is held", [])) >= 4
    assert found.get("en passant illegal: it uncovers the mover's king")
    assert found.get("en passant gives a discovered check")


def test_fresh_random_positions_with_castling_rights():
    """Random-play positions drawn with the run's seed, the first RANDOM_COUNT that still hold a
    castling right, at depth 3 against python-chess."""
    seed = seeds.run_seed()
    pool = suites.random_play_positions(seed, 200, plies=24)
    chosen = [fen for fen in pool if chess.Board(fen).castling_rights][-RANDOM_COUNT:]
    assert len(chosen) == RANDOM_COUNT, f"too few positions with castling rights ({seeds.describe()})"
    for fen in chosen:
        want = suites.chess_perft(chess.Board(fen), RANDOM_DEPTH)
        check(fen, RANDOM_DEPTH, want, "python-chess", f" ({seeds.describe()})")
