"""Evaluate (hdl/evaluate.py) against the model (sim/model/evaluate.py), one position per cycle."""

import json

import pytest

from chessaccel.hdl.evaluate import Evaluate, LATENCY, square_terms
from chessaccel.host.position import chess_from_board
from chessaccel.sim.model.evaluate import evaluate, material_pst, phase
from chessaccel.sim.rtl_search import run_cocotb, toolchain_missing
from chessaccel.evaltables import PHASE_MAX

from search_positions import suite_fens, board_of, random_boards

SUITES = ("perftsuite.epd", "tricky.perft", "perft-stress.epd", "wac.epd", "stalemate2.fen",
          "mate2.fen")
RANDOM_COUNT = 600


def _boards():
    boards = [board_of(f) for s in SUITES for f in suite_fens(s)]
    return boards + random_boards(seed=4, count=RANDOM_COUNT)


def test_square_table_sums_to_model_material():
    """The elaboration table, summed over the board, is the model's material + PST term."""
    for board in _boards()[:200]:
        mg = sum(square_terms(s, c)[0] for s, c in enumerate(board.sq))
        eg = sum(square_terms(s, c)[1] for s, c in enumerate(board.sq))
        ph = min(sum(square_terms(s, c)[2] for s, c in enumerate(board.sq)), PHASE_MAX)
        assert (mg, eg, ph) == (*material_pst(board), phase(board))


@pytest.mark.skipif(toolchain_missing() is not None, reason=f"{toolchain_missing()}")
def test_evaluate_rtl_matches_model(tmp_path):
    boards = _boards()
    assert len(boards) >= 1000
    jobs, results = tmp_path / "jobs.json", tmp_path / "results.json"
    jobs.write_text(json.dumps([b.to_bits() for b in boards]))
    run_cocotb(Evaluate, "evaluate", "chessaccel.sim.cocotb.tb_evaluate",
               {"CHESSACCEL_JOBS": jobs, "CHESSACCEL_RESULTS": results})
    scores = json.loads(results.read_text())
    assert len(scores) == len(boards)
    for board, got in zip(boards, scores):
        want = evaluate(board)
        assert got == want, (f"Evaluate mismatch on {chess_from_board(board).fen()}: "
                             f"rtl {got}, model {want} (latency {LATENCY})")
