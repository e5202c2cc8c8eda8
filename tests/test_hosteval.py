"""The compiled host search's static evaluation (hostsearch.cpp's static_eval, the terms in
hosteval.hpp) against the model's, the definition (docs/semantics.md, section 6).

- Every position of the suites in tests/data (perft, mate, stalemate and EPD suites) and 3,000
  positions reached by random play from them, each with either side to move: the "pst" score
  equals model/evaluate.py's ``evaluate``, the "terms" score ``evaluate_terms``, and each term
  ``term_values``'s, to the centipawn. A mismatch names the FEN and the model's breakdown
  (``chessaccel eval``'s) beside the compiled terms.
- The weights reach the C++ from contract/evalweights.py: other weights give other terms.
- An unknown evaluation is refused in one line.

The compiled search with ``Evaluation terms`` against HostSearch, node for node, is in
tests/test_hostsearch.py.
"""

import chess
import pytest

from chessaccel.contract import evalweights
from chessaccel.contract.evalweights import EvaluationError
from chessaccel.host.engine import hostsearch
from chessaccel.host.engine.hostboard import HostBoard
from chessaccel.host.engine.hostsearch import CompiledSearch, eval_terms, static_eval
from chessaccel.host.engine.search import SearchOptions
from chessaccel.host.evalcli import breakdown
from chessaccel.model.evalterms import evaluate_terms, term_values
from chessaccel.model.evaluate import evaluate
from chessaccel.model.position import board_from_chess

import suites

RANDOM_POSITIONS = 3000


def _suite_fens():
    fens = [r.fen for r in suites.perft_records()]
    for name in suites.FEN_SUITES:
        fens += suites.fens(name)
    fens += suites.epd_positions()
    return fens


@pytest.fixture(scope="module")
def positions():
    """(FEN, model board) of every suite position and the random-play ones, each with white and
    with black to move (the turned one without its en-passant square); each FEN once."""
    fens = _suite_fens()
    fens += suites.random_play_positions(11, RANDOM_POSITIONS, starts=fens[:])
    out = {}
    for fen in fens:
        cb = chess.Board(fen)
        out.setdefault(cb.fen(), board_from_chess(cb))
        cb.turn = not cb.turn
        cb.ep_square = None
        out.setdefault(cb.fen(), board_from_chess(cb))
    return list(out.items())


def _mismatch(fen, board, evaluation, compiled_score, compiled_terms):
    model = breakdown(board, evaluation)
    return (f"{fen} ({evaluation}): compiled {compiled_score}, model {model['score']} "
            f"(phase {model['phase']}, weight {model['weight']})\n"
            + "\n".join(f"  {name:16} model {row['mg']:6} {row['eg']:6}   compiled "
                        f"{compiled_terms[name][0]:6} {compiled_terms[name][1]:6}"
                        + ("" if (row["mg"], row["eg"]) == compiled_terms[name] else "   <--")
                        for name, row in model["terms"].items()))


def test_the_positions_cover_the_suites(positions):
    assert len(positions) > 2 * RANDOM_POSITIONS + len(_suite_fens())
    assert {board.side for _, board in positions} == {0, 1}


@pytest.mark.parametrize("evaluation", ["pst", "terms"])
def test_the_compiled_evaluation_is_the_models(positions, evaluation):
    model = evaluate if evaluation == "pst" else evaluate_terms
    hb = HostBoard(chess.Board())
    failures = []
    for fen, board in positions:
        hb.set_root(board)
        score = static_eval(hb, evaluation)
        if score != model(board):
            failures.append(_mismatch(fen, board, evaluation, score, eval_terms(hb)))
    assert not failures, f"{len(failures)} of {len(positions)} differ; the first:\n" + \
        "\n".join(failures[:3])


def test_each_compiled_term_is_the_models(positions):
    hb = HostBoard(chess.Board())
    failures = []
    for fen, board in positions:
        hb.set_root(board)
        terms = eval_terms(hb)
        if terms != term_values(board):
            failures.append(_mismatch(fen, board, "terms", static_eval(hb, "terms"), terms))
    assert not failures, f"{len(failures)} of {len(positions)} differ; the first:\n" + \
        "\n".join(failures[:3])


def test_the_weights_come_from_the_weights_file():
    """hs_configure's array carries evalweights.json's weights: the same array with another
    tempo gives another tempo term (and nothing in C++ holds a weight of its own)."""
    lib = hostsearch.library()
    values = hostsearch._contract()
    weights = hostsearch._term_weights()
    tables = 2 * 8 * 64                  # then the terms evaluation's mg and eg tables by type
    assert values[-tables - len(weights):-tables] == weights
    square_mg, square_eg = evalweights.square_tables("terms")
    assert values[-tables:] == [v for table in (square_mg, square_eg) for t in range(8)
                                for v in (table[t] if t in table else [0] * 64)]
    tempo = len(values) - tables - len(weights) + 16 + 2 * 14   # passed tables, 14 pairs before it
    assert values[tempo:tempo + 2] == list(hostsearch.WEIGHTS["tempo"])
    hb = HostBoard(chess.Board())
    changed = list(values)
    changed[tempo] += 7
    try:
        assert lib.hs_configure((hostsearch.ctypes.c_int32 * len(changed))(*changed),
                                len(changed)) == 0
        assert eval_terms(hb)["tempo"][0] == hostsearch.WEIGHTS["tempo"][0] + 7
    finally:
        lib.hs_configure((hostsearch.ctypes.c_int32 * len(values))(*values), len(values))
    assert eval_terms(hb)["tempo"] == tuple(hostsearch.WEIGHTS["tempo"])


def test_each_evaluation_reads_its_own_tables():
    """The contract's last 1,024 numbers are the terms evaluation's tables: a change to the
    white knight's value on its square moves the terms evaluation by it (before the taper) and
    leaves the pst evaluation alone."""
    lib = hostsearch.library()
    values = hostsearch._contract()
    # white's knight on b1, black's on c6 (b8's mirror, b1, is then white's alone); phase 24
    hb = HostBoard(chess.Board("r1bqkbnr/pppppppp/2n5/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 2 2"))
    pst, terms = static_eval(hb, "pst"), static_eval(hb, "terms")
    knight = evalweights.SQUARE_PIECES["knight"]
    changed = list(values)
    changed[len(values) - 2 * 8 * 64 + knight * 64 + chess.B1] += 40     # mg of a knight on b1
    try:
        assert lib.hs_configure((hostsearch.ctypes.c_int32 * len(changed))(*changed),
                                len(changed)) == 0
        assert static_eval(hb, "pst") == pst
        assert static_eval(hb, "terms") == terms + 40
    finally:
        lib.hs_configure((hostsearch.ctypes.c_int32 * len(values))(*values), len(values))
    assert static_eval(hb, "terms") == terms


def test_an_unknown_evaluation_is_refused_in_one_line():
    hb = HostBoard(chess.Board())
    with pytest.raises(EvaluationError, match="unknown evaluation 'nnue'"):
        static_eval(hb, "nnue")
    with pytest.raises(EvaluationError, match="unknown evaluation 'nnue'"):
        CompiledSearch(None, 1, SearchOptions(evaluation="nnue"))
