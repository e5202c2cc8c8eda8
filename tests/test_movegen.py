"""hdl/movegen.py (MoveWalker) against sim/model/movegen.py and python-chess.

For every position, full width and quiescence: the RTL's legal move sequence must equal the
model's ``legal_moves`` exactly, in order; the full-width set must equal python-chess's legal
moves (quiescence: its captures, en passant included, promotions with or without capture).
"""

import chess
import pytest

from chessaccel.contract.geometry import move_uci
from chessaccel.model.position import chess_from_board
from chessaccel.model.movegen import legal_moves
from chessaccel.sim.rtl_movegen import rtl_moves, walk_nodes
from movegen_positions import (LONG_RANDOM, SEED, board_of, movegen_fens, requires_simulator)
from suites import features

pytestmark = requires_simulator

#: Positions walked by the default suite (Icarus takes a few ms per clock of the whole walker):
#: every position showing a rare feature first, then an even spread of the others. The long
#: sweeps walk all of them.
DEFAULT_WALKS = 120
#: Positions taken first for each rare feature (tests/suites.py's names).
PER_RARE_FEATURE = 10
#: The full-width walk of the default suite is cut to this many of them (the rare features first,
#: FULL_WIDTH_PER_RARE_FEATURE each; some 250 moves): it costs about 2 CPU s a position (some 3
#: clocks a move, 2,600 moves in the 120), the quiescence walk a tenth of that. The walker's parts (Board,
#: GenAggressor, GenVictim, TestCheck, CastleStatus) have tests of their own and the walker runs
#: node for node in the search core (test_search.py, hundreds of full-width nodes a job);
#: test_walker_every_suite_position (long) walks every position.
FULL_WIDTH_WALKS = 16
FULL_WIDTH_PER_RARE_FEATURE = 2
RARE_FEATURES = ("en_passant", "promotion", "capture_promotion", "castling", "double_check",
                 "checkmate", "stalemate")


def walker_fens(limit=DEFAULT_WALKS, per_rare_feature=PER_RARE_FEATURE):
    """A spread of ``limit`` positions, both colours to move, rich in the rare cases."""
    found = {fen: features(chess_from_board(board_of(fen))) for fen in movegen_fens()}
    picked = []
    for feature in RARE_FEATURES:
        having = [fen for fen, f in found.items() if feature in f and fen not in picked]
        picked += having[:per_rare_feature]
    rest = [fen for fen in found if fen not in picked]
    return picked + rest[::max(1, len(rest) // (limit - len(picked)))][:limit - len(picked)]


def _first_difference(want, got):
    for i, (a, b) in enumerate(zip(want, got)):
        if a != b:
            return i
    return min(len(want), len(got))


def check_walker(fen_list, captures_only):
    boards = [board_of(fen) for fen in fen_list]
    walks = walk_nodes(boards, captures_only)
    assert len(walks) == len(boards)
    for fen, board, walk in zip(fen_list, boards, walks):
        want = legal_moves(board, captures_only)
        if walk.moves != want:
            i = _first_difference(want, walk.moves)
            pytest.fail(
                f"MoveWalker (captures_only={captures_only}) differs from the model\n"
                f"  position: {fen}\n  first difference at move {i}\n"
                f"  model: {' '.join(move_uci(m) for m in want[i:i + 6])}\n"
                f"  RTL:   {' '.join(move_uci(m) for m in walk.moves[i:i + 6])}", pytrace=False)
        cb = chess_from_board(board)
        legal = {m.uci() for m in cb.legal_moves
                 if not captures_only or cb.is_capture(m)}
        got = {move_uci(m) for m in walk.moves}
        assert got == legal, (f"{fen}: RTL moves differ from python-chess: "
                              f"missing {sorted(legal - got)}, extra {sorted(got - legal)}")
    return walks


def test_walker_matches_model_full_width():
    walks = check_walker(walker_fens(FULL_WIDTH_WALKS, FULL_WIDTH_PER_RARE_FEATURE),
                         captures_only=False)
    assert len(walks) == FULL_WIDTH_WALKS and sum(len(w.moves) for w in walks) > 200


def test_walker_matches_model_quiescence():
    check_walker(walker_fens(), captures_only=True)


def test_rtl_moves_one_position():
    board = board_of(chess.STARTING_FEN)
    assert rtl_moves(board) == legal_moves(board)


@pytest.mark.long
def test_walker_every_suite_position():
    check_walker(movegen_fens(), captures_only=False)
    check_walker(movegen_fens(), captures_only=True)


@pytest.mark.long
def test_walker_random_sweep():
    fens = movegen_fens(LONG_RANDOM, SEED + 1)[-LONG_RANDOM:]
    check_walker(fens, captures_only=False)
    check_walker(fens, captures_only=True)


def test_fsm_table_in_docs_matches_code():
    """docs/movegen.md's state table lists exactly the walker's states, with their comments."""
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    code = (root / "src" / "chessaccel" / "hdl" / "movegen.py").read_text()
    states = re.findall(r'with m\.State\("(\w+)"\):\n\s*# (.+)\n', code)
    table = re.findall(r"^\| ([A-Z_]+) \| (.+) \|$", (root / "docs" / "movegen.md").read_text(),
                       re.M)
    assert states and table == states
