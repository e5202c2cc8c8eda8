"""Evaluate: the static evaluation as a pipelined adder tree over the 64 squares.

Bit-exact with ``sim/model/evaluate.py``: material plus piece-square values summed as
(middlegame, endgame) from white's view, turned to the side to move's view, tapered by the game
phase (``PHASE_WEIGHT``) with a floor shift by ``TAPER_SHIFT`` and clamped to +-EVAL_MAX.

Why an adder tree and not an incremental update on make/unmake: each square's contribution is a
function of its 4-bit piece code alone (the square is fixed), so every output bit of a square's
table is one 4-input LUT; the tree needs no coupling to the Board's make/unmake, no per-ply copy
of the running sums in the SearchStack and no second table read port for the (piece, square)
pairs a move touches (up to four per make). The pipeline runs every cycle on the board as it
stands, so a score is ready ``LATENCY`` cycles after the board last changed, which the search
overlaps with the legality test of the move just made. docs/fsm.md gives the cost figures.

Three stages, each ending in a register when the pipeline is ``latency`` = 3 cycles deep (Hydra
spent 3); with ``latency`` 2 the second stage's register is left out, with 1 the first's too, so
the whole evaluation is one combinational path into the result register:

1. per square table look-up; partial sums over each rank;
2. final sums, phase capped at PHASE_MAX, sums negated when black is to move;
3. taper ``(mg * w + eg * (2**TAPER_SHIFT - w)) >> TAPER_SHIFT``, clamp, result register.
"""

from amaranth.hdl import Module, Signal, Const, signed, unsigned, Array
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from chessaccel.defs import Position, Score, Color, PieceType, EVAL_MAX
from chessaccel.evaltables import (SQUARE_MG, SQUARE_EG, PHASE_INC, PHASE_MAX, PHASE_WEIGHT,
                                   TAPER_SHIFT)
from chessaccel.geometry import CODE

from .squarearray import MIRROR

__all__ = ["Evaluate", "LATENCY", "square_terms"]

#: Cycles from a change of ``position`` to the matching ``score``, at most (the default).
LATENCY = 3
#: Stages whose register can be left out, by latency: the first stage's, the second's.
_STAGE_REGISTERED = {1: (False, False), 2: (True, False), 3: (True, True)}

_SQUARES_PER_RANK = 8
_RANKS = 8
#: Partial and total sums of material + piece-square values fit this width with room to spare
#: (16 pieces of a side at most, each worth less than 1,100 cp).
_SUM_SHAPE = signed(18)
#: Phase increments summed over the board before the cap (at most 64 * 4).
_PHASE_SHAPE = unsigned(9)
#: The taper's products: |sum| < 2**17 times a weight of at most 2**TAPER_SHIFT.
_TAPER_SHAPE = signed(18 + TAPER_SHIFT + 2)


def square_terms(sq, code):
    """(mg, eg, phase) a square holding ``code`` adds, from white's view (the elaboration table)."""
    for color in (Color.WHITE.value, Color.BLACK.value):
        for kind in range(PieceType.PAWN.value, PieceType.KING.value + 1):
            if CODE[color][kind] == code:
                if color == Color.WHITE.value:
                    return SQUARE_MG[kind][sq], SQUARE_EG[kind][sq], PHASE_INC[kind]
                return -SQUARE_MG[kind][sq ^ MIRROR], -SQUARE_EG[kind][sq ^ MIRROR], PHASE_INC[kind]
    return 0, 0, 0


class Evaluate(wiring.Component):
    """Static evaluation of ``position`` from the side to move's view.

    ``score`` follows ``position`` with a fixed latency of ``latency`` cycles (1 to ``LATENCY``;
    a free-running pipeline: no handshake). ``start`` is carried down the pipeline beside the data and comes out
    as ``done`` in the cycle the matching ``score`` is valid, for users that want a strobe.
    """

    position: In(Position)
    start: In(1)
    score: Out(Score)
    done: Out(1)

    def __init__(self, latency=LATENCY):
        if latency not in _STAGE_REGISTERED:
            raise ValueError(f"latency must be one of {sorted(_STAGE_REGISTERED)}, got {latency}")
        self.latency = latency
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        pos = self.position
        stage1, stage2 = (m.d.sync if registered else m.d.comb
                          for registered in _STAGE_REGISTERED[self.latency])

        # --- stage 1: per-square tables, rank partial sums ---
        rank_mg = [Signal(_SUM_SHAPE, name=f"rank{r}_mg") for r in range(_RANKS)]
        rank_eg = [Signal(_SUM_SHAPE, name=f"rank{r}_eg") for r in range(_RANKS)]
        rank_phase = [Signal(_PHASE_SHAPE, name=f"rank{r}_phase") for r in range(_RANKS)]
        side_1 = Signal(Color)
        for r in range(_RANKS):
            sq_mg, sq_eg, sq_phase = [], [], []
            for f in range(_SQUARES_PER_RANK):
                sq = r * _SQUARES_PER_RANK + f
                mg = Signal(_SUM_SHAPE, name=f"sq{sq}_mg")
                eg = Signal(_SUM_SHAPE, name=f"sq{sq}_eg")
                ph = Signal(range(max(PHASE_INC.values()) + 1), name=f"sq{sq}_phase")
                with m.Switch(pos.squares[sq].as_value()):
                    for code in range(16):
                        v_mg, v_eg, v_ph = square_terms(sq, code)
                        if (v_mg, v_eg, v_ph) != (0, 0, 0):
                            with m.Case(code):
                                m.d.comb += [mg.eq(v_mg), eg.eq(v_eg), ph.eq(v_ph)]
                sq_mg.append(mg)
                sq_eg.append(eg)
                sq_phase.append(ph)
            stage1 += [rank_mg[r].eq(sum(sq_mg)), rank_eg[r].eq(sum(sq_eg)),
                       rank_phase[r].eq(sum(sq_phase))]
        stage1 += side_1.eq(pos.side)

        # --- stage 2: totals from the side to move's view, capped phase weight ---
        total_mg = Signal(_SUM_SHAPE)
        total_eg = Signal(_SUM_SHAPE)
        weight = Signal(range((1 << TAPER_SHIFT) + 1))
        phase_sum = Signal(_PHASE_SHAPE)
        m.d.comb += phase_sum.eq(sum(rank_phase))
        weights = Array(Const(w, weight.shape()) for w in PHASE_WEIGHT)
        with m.If(phase_sum >= PHASE_MAX):
            stage2 += weight.eq(PHASE_WEIGHT[PHASE_MAX])
        with m.Else():
            stage2 += weight.eq(weights[phase_sum])
        with m.If(side_1 == Color.BLACK):
            stage2 += [total_mg.eq(-sum(rank_mg)), total_eg.eq(-sum(rank_eg))]
        with m.Else():
            stage2 += [total_mg.eq(sum(rank_mg)), total_eg.eq(sum(rank_eg))]

        # --- stage 3: taper, floor shift, clamp ---
        tapered = Signal(_TAPER_SHAPE)
        m.d.comb += tapered.eq((total_mg * weight + total_eg * ((1 << TAPER_SHIFT) - weight))
                               >> TAPER_SHIFT)
        with m.If(tapered > EVAL_MAX):
            m.d.sync += self.score.eq(EVAL_MAX)
        with m.Elif(tapered < -EVAL_MAX):
            m.d.sync += self.score.eq(-EVAL_MAX)
        with m.Else():
            m.d.sync += self.score.eq(tapered)

        strobe = self.start
        for stage in range(self.latency):
            delayed = Signal(name=f"start_{stage + 1}")
            m.d.sync += delayed.eq(strobe)
            strobe = delayed
        m.d.comb += self.done.eq(strobe)
        return m
