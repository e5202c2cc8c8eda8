"""IncrementalEvaluate (hdl/evaluate.py) against the model's incremental form
(sim/model/evaluate.py: ``side_sums``, ``sums_after_make``, ``sums_score``), and that form against
the model's ``evaluate``.

The RTL test drives the block as the SearchCore does: a pass over a position's 64 squares from
sums of zero (the root), then a random walk of makes and unmakes in which the bench keeps a
stack of the sums the block gave (the SearchStack's per-ply copy): a make's ``after`` is pushed,
an unmake pops and shows the parent's sums again (a HOLD). Every transaction's ``after``,
``after_score`` (the same cycle; the core's stand-pat test), ``at_least`` (the same cycle: the
score against bounds the bench gives, around the score and the clamp's edges) and ``score``
(registered, a cycle later) are compared with the model's, in order; a mismatch names the
position, the moves that led there and each field that differs.
"""

import random
from functools import partial

import pytest

from chessaccel.contract.defs import EVAL_MAX, PieceType
from chessaccel.contract.geometry import TYPE_OF, COLOR_OF, EMPTY
from chessaccel.contract.relative import MIRROR
from chessaccel.hdl.evaluate import BOUND_BITS, IncrementalEvaluate, square_value_table
from chessaccel.model.position import chess_from_board
from chessaccel.sim.cocotb_runner import run_testbench, toolchain_missing
from chessaccel.model.evaluate import (evaluate, side_sums, sums_after_make, sums_score,
                                          SQUARE_MG, SQUARE_EG)
from chessaccel.model.movegen import legal_moves

import suites

RANDOM_SEED = 11
RANDOM_COUNT = 100
WALK_STEPS = 16
#: Bounds ``at_least`` is tested with at each transaction: the score's neighbours, and one of
#: these (the clamp's edges, the window's ends, the port's ends) or a random one.
BOUNDS = 4
_EDGE_BOUNDS = (-EVAL_MAX - 1, -EVAL_MAX, -EVAL_MAX + 1, EVAL_MAX - 1, EVAL_MAX, EVAL_MAX + 1,
                -32767, 32767, -(1 << (BOUND_BITS - 1)), (1 << (BOUND_BITS - 1)) - 1, 0)
KING = PieceType.KING.value


def _fens():
    fens = [r.fen for r in suites.perft_records(("tricky.perft", "perftsuite.epd"))]
    fens += suites.epd_positions(("wac.epd",))
    fens += suites.random_play_positions(RANDOM_SEED, RANDOM_COUNT)
    return list(dict.fromkeys(fens))


def _walk(board, rng, steps):
    """A random walk from ``board``: ("make", move) and ("unmake",) events, the board restored
    at the end. Makes are preferred while the walk is shallow; every legal move may come."""
    stack, events = [], []
    for _ in range(steps):
        moves = legal_moves(board)
        if moves and (not stack or rng.random() < 0.65):
            move = rng.choice(moves)
            stack.append((move, board.make(move)))
            events.append(("make", move))
        elif stack:
            move, undo = stack.pop()
            board.unmake(move, undo)
            events.append(("unmake",))
    while stack:
        move, undo = stack.pop()
        board.unmake(move, undo)
    return events


def test_model_sums_give_evaluate_and_follow_every_make():
    """side_sums + sums_score is evaluate, and sums_after_make is side_sums of the child, on
    every legal move of the suite positions (castling, en passant, promotions included)."""
    moves_seen = 0
    for fen in _fens():
        board = suites.board_of(fen)
        sums = side_sums(board)
        assert sums_score(*sums) == evaluate(board), fen
        for move in legal_moves(board):
            child_sums = sums_after_make(sums, board, move)
            undo = board.make(move)
            assert child_sums == side_sums(board), (fen, move)
            assert sums_score(*child_sums) == evaluate(board), (fen, move)
            board.unmake(move, undo)
            moves_seen += 1
    assert moves_seen > 10_000


def test_table_is_the_model_tables():
    rows = square_value_table()
    for kind in SQUARE_MG:
        for sq in range(64):
            assert rows[kind * 64 + sq] == {"mg": SQUARE_MG[kind][sq], "eg": SQUARE_EG[kind][sq]}
    assert all(rows[k * 64 + s] == {"mg": 0, "eg": 0} for k in (0, 7) for s in range(64))


# --- the RTL, transaction by transaction -------------------------------------------------------

def _relative_code(code, side):
    """A square's code on the normalised board (own pieces white) of ``side`` to move."""
    if code == EMPTY:
        return 0
    return TYPE_OF[code] | ((COLOR_OF[code] ^ side) << 3)


def _relative_square(sq, side):
    return sq ^ MIRROR if side else sq


def _root_event(board):
    """The pass over the root: the 64 squares of the normalised board, in order."""
    return {"op": "root", "pieces": [_relative_code(board.sq[_relative_square(r, board.side)],
                                                    board.side) for r in range(64)]}


def _make_event(board, move):
    """The make's ports as the core's Board shows them (mover's frame), before ``move``."""
    f, t, promo = move
    side = board.side
    moving = TYPE_OF[board.sq[f]]
    victim_sq = t
    if moving == PieceType.PAWN.value and t == board.ep:
        victim_sq = t - 8 if side == 0 else t + 8
    ep_file, ep_valid = (board.ep % 8, 1) if board.ep is not None else (0, 0)
    return {"op": "make", "from": _relative_square(f, side), "to": _relative_square(t, side),
            "promo": promo or 0, "moving": moving,
            "castle": int(moving == KING and abs(t - f) == 2),
            "captured": _relative_code(board.sq[victim_sq], side),
            "ep_file": ep_file, "ep_valid": ep_valid}


def _transactions(fens, seed):
    """(events for the bench, what the model expects of each, a label for each)."""
    rng = random.Random(seed)
    events, expected, labels = [], [], []
    for fen in fens:
        board = suites.board_of(fen)
        events.append(_root_event(board))
        sums = side_sums(board)
        expected.append((sums, evaluate(board)))
        labels.append(f"{fen}: the pass over the root")
        path, stack = [], [sums]
        for event in _walk(board.copy(), rng, WALK_STEPS):
            if event[0] == "make":
                move = event[1]
                events.append(_make_event(board, move))
                child = sums_after_make(stack[-1], board, move)
                undo = board.make(move)
                assert child == side_sums(board)
                path.append((move, undo))
                stack.append(child)
                labels.append(f"{fen}: make {_uci(move)} after {' '.join(_uci(m) for m, _ in path[:-1]) or '-'}")
            else:
                move, undo = path.pop()
                board.unmake(move, undo)
                stack.pop()
                events.append({"op": "unmake"})
                labels.append(f"{fen}: unmake {_uci(move)} after {' '.join(_uci(m) for m, _ in path) or '-'}")
            expected.append((stack[-1], evaluate(board)))
    for event, (_, score) in zip(events, expected):
        event["bounds"] = [score, score + 1, rng.choice(_EDGE_BOUNDS),
                           rng.randint(-(1 << (BOUND_BITS - 1)), (1 << (BOUND_BITS - 1)) - 1)]
    return events, expected, labels


def _uci(move):
    f, t, promo = move
    name = lambda s: "abcdefgh"[s % 8] + str(s // 8 + 1)
    return name(f) + name(t) + ("" if not promo else "?pnbrqk"[promo])


@pytest.mark.skipif(toolchain_missing() is not None, reason=f"{toolchain_missing()}")
def test_incremental_evaluate_rtl_matches_model():
    events, expected, labels = _transactions(_fens(), RANDOM_SEED)
    assert sum(e["op"] == "make" for e in events) > 3000
    assert any(e["op"] == "make" and e["castle"] for e in events)
    assert any(e["op"] == "make" and e["promo"] for e in events)
    got = run_testbench(partial(IncrementalEvaluate, bounds=BOUNDS), "incremental_evaluate",
                        "chessaccel.sim.cocotb.tb_incremental_evaluate", events)
    assert len(got) == len(events)
    for label, event, (want_sums, want_score), (mg, eg, phase, after_score, score, at_least) in zip(
            labels, events, expected, got):
        want_at_least = [int(want_score >= bound) for bound in event["bounds"]]
        differs = [f"{name}: rtl {g}, model {w}" for name, g, w in
                   (("mg", mg, want_sums[0]), ("eg", eg, want_sums[1]),
                    ("phase", phase, want_sums[2]), ("after_score", after_score, want_score),
                    ("score", score, want_score),
                    (f"at_least {event['bounds']}", at_least, want_at_least)) if g != w]
        assert not differs, f"IncrementalEvaluate differs on {label}: {'; '.join(differs)}"
