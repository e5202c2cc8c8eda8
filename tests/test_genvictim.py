"""hdl/genvictim.py against sim/model/genvictim.py, transaction by transaction (cocotb + Icarus).

Each position's MovePicker is walked with ``trace=True`` (full width and quiescence); every
GenVictim transaction it records (disable mask -> victim) is replayed through the RTL, which
must answer the same victim square and class. Then, as the search core's TEST_LEGAL uses it, on
the board right after pseudo-legal moves (legal and illegal ones): ``king_attacked`` must be the
model's "the mover's king is attacked" and the victim the child's first one.
"""

import pytest

from chessaccel.hdl.genvictim import GenVictim
from chessaccel.sim.cocotb_runner import run_testbench
from chessaccel.sim.rtl_movegen import pack_position
from chessaccel.contract.defs import VictimClass
from chessaccel.model.genaggressor import candidates
from chessaccel.model.genvictim import CAPTURE_MIN, QUIET, receivers, select_victim, victim_ranking
from chessaccel.model.movegen import MovePicker, pseudo_moves
from chessaccel.model.testcheck import in_check
from movegen_positions import (LONG_RANDOM, SEED, board_of, fast_fens, movegen_fens,
                               report_first_mismatch, requires_simulator)

pytestmark = requires_simulator


#: Default-suite cap on transactions replayed per node (the first ones, plus the final "no
#: victim left" one); the long sweep replays them all.
DEFAULT_STEPS_PER_NODE = 8
#: Default-suite cap on pseudo-legal moves made per position for the legality transactions (the
#: illegal ones first); the long sweep makes them all.
DEFAULT_MOVES_PER_POSITION = 3
KING_CLASS = VictimClass.KING.value


def _row(bits, mask, captures_only, classes, victim, side):
    """Inputs and expected outputs of one transaction (classes: the model's receivers)."""
    king_attacked = int(KING_CLASS in classes)
    capture = int(select_victim(classes, mask, side, CAPTURE_MIN) is not None)
    expected = ([0, None, 0, king_attacked, capture] if victim is None
                else [1, victim, classes[victim], king_attacked, capture])
    return [bits, mask, int(captures_only)], expected


def victim_transactions(fen_list, steps_per_node=None):
    """(rows for the bench, expected outputs, context) of the traced GenVictim steps."""
    rows, expected, context = [], [], []
    for fen in fen_list:
        board = board_of(fen)
        bits = pack_position(board)
        classes = receivers(board)
        for captures_only in (False, True):
            picker = MovePicker(board, captures_only, trace=True)
            while picker.next() is not None:
                pass
            steps = [step for step in picker.steps if step[0] == "victim"]
            if steps_per_node is not None and len(steps) > steps_per_node:
                steps = steps[:steps_per_node] + steps[-1:]
            for step in steps:
                _, mask, victim = step
                row, want = _row(bits, mask, captures_only, classes, victim, board.side)
                rows.append(row)
                expected.append(want)
                context.append((fen, f"captures_only={captures_only} mask={mask:#018x}"))
    return rows, expected, context


def legality_transactions(fen_list, moves_per_position=None):
    """GenVictim on the board after each pseudo-legal move: king_attacked == the move is illegal,
    and the child's first victim (nothing disabled, full width and quiescence)."""
    rows, expected, context = [], [], []
    illegal = 0
    for fen in fen_list:
        board = board_of(fen)
        made = []
        for move in pseudo_moves(board):
            mover = board.side
            undo = board.make(move)
            made.append((not in_check(board, mover), move, pack_position(board),
                         receivers(board), board.side))
            board.unmake(move, undo)
        made.sort(key=lambda entry: entry[0])   # illegal moves first
        if moves_per_position is not None:
            made = made[:moves_per_position]
        for legal, move, bits, classes, side in made:
            assert (KING_CLASS in classes) != legal
            illegal += not legal
            for captures_only in (False, True):
                victim = select_victim(classes, 0, side, 2 if captures_only else 1)
                row, want = _row(bits, 0, captures_only, classes, victim, side)
                rows.append(row)
                expected.append(want)
                context.append((fen, f"after {move} (legal={legal}) captures_only={captures_only}"))
    return rows, expected, context, illegal


def check_genvictim(fen_list, steps_per_node=None, moves_per_position=None):
    """Replays both kinds of transaction; returns (rows, illegal moves among them)."""
    rows, expected, context = victim_transactions(fen_list, steps_per_node)
    more_rows, more_expected, more_context, illegal = legality_transactions(
        fen_list, moves_per_position)
    rows, expected, context = rows + more_rows, expected + more_expected, context + more_context
    observed = run_testbench(GenVictim, "genvictim", "chessaccel.sim.cocotb.tb_genvictim", {
        "inputs": ["position", "mask", "captures_only"],
        "outputs": ["valid", "victim", "victim_class", "king_attacked", "capture_valid"],
        "rows": rows,
    })
    observed = [[v, s if v else None, c, k, capture] for v, s, c, k, capture in observed]
    report_first_mismatch("GenVictim", context, expected, observed)
    return len(rows), illegal


def test_genvictim_matches_model():
    rows, illegal = check_genvictim(fast_fens(), DEFAULT_STEPS_PER_NODE,
                                    DEFAULT_MOVES_PER_POSITION)
    assert rows > 10_000 and illegal > 500


@pytest.mark.long
def test_genvictim_matches_model_every_step():
    check_genvictim(movegen_fens())


@pytest.mark.long
def test_genvictim_matches_model_random_sweep():
    check_genvictim(movegen_fens(LONG_RANDOM, SEED + 1)[-LONG_RANDOM:])


def test_every_victim_has_an_aggressor():
    """A receiver raised with no transmitter behind it (say a double push through a blocker) would
    not change a single result, only waste a cycle in the core: its victim would be found, have
    no aggressor and be disabled. So every victim the model's GenVictim raises, full width and
    quiescence, must have at least one GenAggressor candidate (model only: the RTL equals it)."""
    victims = 0
    for fen in movegen_fens():
        board = board_of(fen)
        classes = receivers(board)
        for captures_only in (False, True):
            floor = CAPTURE_MIN if captures_only else QUIET
            for victim in victim_ranking(classes, board.side, floor):
                victims += 1
                assert candidates(board, victim, captures_only), (
                    f"{fen}: victim {victim} (captures_only={captures_only}) has no aggressor")
    assert victims > 20_000
