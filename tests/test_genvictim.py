"""hdl/genvictim.py against sim/model/genvictim.py, transaction by transaction (cocotb + Icarus).

Each position's MovePicker is walked with ``trace=True`` (full width and quiescence); every
GenVictim transaction it records (disable mask -> victim) is replayed through the RTL, which
must answer the same victim square and class.
"""

import pytest

from chessaccel.hdl.genvictim import GenVictim
from chessaccel.sim.cocotb_runner import run_testbench
from chessaccel.sim.rtl_movegen import pack_position
from chessaccel.sim.model.genvictim import receivers
from chessaccel.sim.model.movegen import MovePicker
from movegen_positions import (LONG_RANDOM, SEED, board_of, movegen_fens, report_first_mismatch,
                               requires_simulator)

pytestmark = requires_simulator


#: Default-suite cap on transactions replayed per node (the first ones, plus the final "no
#: victim left" one); the long sweep replays them all.
DEFAULT_STEPS_PER_NODE = 8


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
                rows.append([bits, mask, int(captures_only)])
                expected.append([0, None, 0] if victim is None
                                else [1, victim, classes[victim]])
                context.append((fen, f"captures_only={captures_only} mask={mask:#018x}"))
    return rows, expected, context


def check_genvictim(fen_list, steps_per_node=None):
    rows, expected, context = victim_transactions(fen_list, steps_per_node)
    observed = run_testbench(GenVictim, "genvictim", "chessaccel.sim.cocotb.tb_genvictim", {
        "inputs": ["position", "mask", "captures_only"],
        "outputs": ["valid", "victim", "victim_class"],
        "rows": rows,
    })
    observed = [[v, s if v else None, c] for v, s, c in observed]
    report_first_mismatch("GenVictim", context, expected, observed)
    return len(rows)


def test_genvictim_matches_model():
    assert check_genvictim(movegen_fens(), DEFAULT_STEPS_PER_NODE) > 10_000


@pytest.mark.long
def test_genvictim_matches_model_every_step():
    check_genvictim(movegen_fens())


@pytest.mark.long
def test_genvictim_matches_model_random_sweep():
    check_genvictim(movegen_fens(LONG_RANDOM, SEED + 1)[-LONG_RANDOM:])
