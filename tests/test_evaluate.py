"""Evaluate (hdl/evaluate.py) against the model (sim/model/evaluate.py), one position per cycle,
and against the independent reference (tests/evalref.py) on its worked-out positions and on a
placement of every piece kind on every square (the same boards test_eval_reference.py gives the
model)."""

from functools import partial

import pytest

from chessaccel.hdl.evaluate import Evaluate, LATENCY, square_terms
from chessaccel.model.position import board_from_chess, chess_from_board
from chessaccel.model.evaluate import evaluate, material_pst, phase
from chessaccel.sim.cocotb_runner import run_testbench, toolchain_missing
from chessaccel.contract.evaltables import PHASE_MAX

import chess

import suites
from evalref import read_reference, reference_eval, single_piece_boards, with_full_phase

RANDOM_SEED = 4
RANDOM_COUNT = 600


def _boards():
    fens = [r.fen for r in suites.perft_records(("tricky.perft", "perftsuite.epd",
                                                 "perft-stress.epd"))]
    fens += suites.epd_positions(("wac.epd",))
    fens += suites.fens("stalemate2.fen") + suites.fens("mate2.fen")
    fens += suites.random_play_positions(RANDOM_SEED, RANDOM_COUNT)
    return [suites.board_of(f) for f in dict.fromkeys(fens)]


def _reference_boards():
    """(model Board, score by the document) for the reference positions and placements."""
    cbs = [chess.Board(r["fen"]) for r in read_reference()]
    for _, cb in single_piece_boards():
        cbs += [cb, with_full_phase(cb)]
    return [(board_from_chess(cb), reference_eval(cb)) for cb in cbs]


def test_square_table_sums_to_model_material():
    """The elaboration table, summed over the board, is the model's material + PST term."""
    for board in _boards()[:200]:
        mg = sum(square_terms(s, c)[0] for s, c in enumerate(board.sq))
        eg = sum(square_terms(s, c)[1] for s, c in enumerate(board.sq))
        ph = min(sum(square_terms(s, c)[2] for s, c in enumerate(board.sq)), PHASE_MAX)
        assert (mg, eg, ph) == (*material_pst(board), phase(board))


@pytest.mark.skipif(toolchain_missing() is not None, reason=f"{toolchain_missing()}")
@pytest.mark.parametrize("latency", [1, LATENCY])
def test_evaluate_rtl_matches_model(latency):
    """One position per cycle through the pipeline at its deepest and at its shortest (the
    SearchCore's setting): the done strobe marks each score, the model gives the value."""
    boards = _boards()
    assert len(boards) >= 1000
    # the reference boards (1,563) once, at the deepest latency: Icarus takes some 10 ms a
    # board there against 34 at the shortest, and both latencies are held to the model's value
    # on every board above
    reference = _reference_boards() if latency == LATENCY else []
    scores = run_testbench(partial(Evaluate, latency=latency), f"evaluate_l{latency}",
                           "chessaccel.sim.cocotb.tb_evaluate",
                           [b.to_bits() for b in boards] + [b.to_bits() for b, _ in reference])
    assert len(scores) == len(boards) + len(reference)
    for (board, want), got in zip(reference, scores[len(boards):]):
        assert got == want, (f"Evaluate differs from the document on {chess_from_board(board).fen()}: "
                             f"rtl {got}, reference {want} (latency {latency})")
    for board, got in zip(boards, scores):
        want = evaluate(board)
        assert got == want, (f"Evaluate mismatch on {chess_from_board(board).fen()}: "
                             f"rtl {got}, model {want} (latency {latency})")
