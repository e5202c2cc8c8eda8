"""Evaluate: the static evaluation, in two forms.

Both are bit-exact with ``sim/model/evaluate.py``: material plus piece-square values summed as
(middlegame, endgame) from white's view, turned to the side to move's view, tapered by the game
phase (``PHASE_WEIGHT``) with a floor shift by ``TAPER_SHIFT`` and clamped to +-EVAL_MAX.

``IncrementalEvaluate`` (the SearchCore's, below) keeps the sums per ply and updates them from
the table values of the squares each make changes; docs/fsm.md ("Evaluate") says why it replaced
the tree in the core: the tree cost about 4,600 LUT4 there and, at one register, a 59 LUT-level
path, and its score came a cycle after the legality test, where the incremental sums give the
child's score in the legality test's own cycle.

``Evaluate``, the pipelined adder tree over the 64 squares, stays as the reference block (its
unit test, the synthesis registry's ``evaluate``): each square's contribution is a function of
its 4-bit piece code alone (the square is fixed), so every output bit of a square's table is one
4-input LUT; the tree needs no coupling to the Board's make/unmake, no per-ply copy of the sums
and no table read port per square a move touches. It runs every cycle on the board as it
stands, so a score is ready ``LATENCY`` cycles after the board last changed.

Three stages, each ending in a register when the pipeline is ``latency`` = 3 cycles deep (Hydra
spent 3); with ``latency`` 2 the second stage's register is left out, with 1 the first's too, so
the whole evaluation is one combinational path into the result register:

1. per square table look-up; partial sums over each rank;
2. final sums, phase capped at PHASE_MAX, sums negated when black is to move;
3. taper ``(mg * w + eg * (2**TAPER_SHIFT - w)) >> TAPER_SHIFT``, clamp, result register.
"""

from amaranth.hdl import Module, Signal, Const, Value, signed, unsigned, Array, Cat, Mux
from amaranth.lib import data, enum, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from chessaccel.contract.defs import (EnPassant, Move, Piece, Position, Score, Square, Color, PieceType,
                             EVAL_MAX)
from chessaccel.contract.evaltables import (SQUARE_MG, SQUARE_EG, PHASE_INC, PHASE_MAX, PHASE_WEIGHT,
                                   TAPER_SHIFT, EvalSums, SquareValue)
from chessaccel.contract.geometry import CODE
from chessaccel.contract.evalweights import SUM_BITS, square_tables
from chessaccel.contract.relative import (CASTLE_KING_FILE, CASTLE_ROOK_SQUARES, EP_RANK, MIRROR,
                                          PAWN_STEP)

from .squarearray import square_on

__all__ = ["Evaluate", "LATENCY", "square_terms", "IncrementalEvaluate", "EvalOp",
           "square_value_table", "castle_rook_delta", "EvalTerms", "BOUND_BITS", "score_at_least"]

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
_WEIGHT_SHAPE = unsigned(TAPER_SHIFT + 1)
#: The taper's numerator, a weighted sum of two values |v| < 2**17 with weights summing to
#: 2**TAPER_SHIFT (|numerator| < 2**22), and room for a bound's term beside it.
_NUMERATOR_SHAPE = signed(18 + TAPER_SHIFT + 1)
_COMPARE_SHAPE = signed(18 + TAPER_SHIFT + 3)
#: ``IncrementalEvaluate.bound``: every bound the SearchCore gives (-best, -alpha, 1 - beta of
#: scores within +-INF) fits.
BOUND_BITS = 18


def phase_weight(m, game_phase, complement=False):
    """PHASE_WEIGHT[min(game_phase, PHASE_MAX)], or with ``complement`` 2**TAPER_SHIFT less
    that weight, from a table of its own (no subtraction after the look-up); combinational,
    ``game_phase`` a Value."""
    table = [(1 << TAPER_SHIFT) - w if complement else w for w in PHASE_WEIGHT]
    weight = Signal(_WEIGHT_SHAPE, name="weight_rest" if complement else "weight")
    weights = Array(Const(w, _WEIGHT_SHAPE) for w in table)
    with m.If(game_phase >= PHASE_MAX):
        m.d.comb += weight.eq(table[PHASE_MAX])
    with m.Else():
        m.d.comb += weight.eq(weights[game_phase])
    return weight


def tapered_score(m, mg, eg, weight):
    """``(mg * w + eg * (2**TAPER_SHIFT - w)) >> TAPER_SHIFT`` clamped to +-EVAL_MAX
    (combinational; the operands are Signals, each used more than once)."""
    numerator = Signal(_TAPER_SHAPE)
    m.d.comb += numerator.eq(mg * weight + eg * ((1 << TAPER_SHIFT) - weight))
    return clamped_score(m, numerator)


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
        weight = Signal(_WEIGHT_SHAPE)
        phase_sum = Signal(_PHASE_SHAPE)
        m.d.comb += phase_sum.eq(sum(rank_phase))
        stage2 += weight.eq(phase_weight(m, phase_sum))
        with m.If(side_1 == Color.BLACK):
            stage2 += [total_mg.eq(-sum(rank_mg)), total_eg.eq(-sum(rank_eg))]
        with m.Else():
            stage2 += [total_mg.eq(sum(rank_mg)), total_eg.eq(sum(rank_eg))]

        # --- stage 3: taper, floor shift, clamp ---
        m.d.sync += self.score.eq(tapered_score(m, total_mg, total_eg, weight))

        strobe = self.start
        for stage in range(self.latency):
            delayed = Signal(name=f"start_{stage + 1}")
            m.d.sync += delayed.eq(strobe)
            strobe = delayed
        m.d.comb += self.done.eq(strobe)
        return m


# --- the incremental form (the SearchCore's) ---------------------------------------------------

def castle_rook_delta(evaluation="pst"):
    """{kingside: (mg, eg)}: what a castling adds to the mover's sums under ``evaluation``, the
    rook's table value on its new square less its old one."""
    square_mg, square_eg = square_tables(evaluation)
    rook = PieceType.ROOK.value
    return {kingside: (square_mg[rook][to] - square_mg[rook][frm],
                       square_eg[rook][to] - square_eg[rook][frm])
            for kingside, (frm, to) in CASTLE_ROOK_SQUARES.items()}


class EvalTerms(data.Struct):
    """The terms evaluation's terms (``hdl/evalterms.py``'s total: everything but material and
    piece-square values) of a position, from its side to move's view."""
    mg: signed(SUM_BITS)
    eg: signed(SUM_BITS)


#: The table's address: square (6 bits) then piece type (3 bits).
_TABLE_DEPTH = 64 * 8


def square_value_table(evaluation="pst"):
    """The (piece type, square) table of ``evaluation`` (its ``square_tables``): entry
    ``type * 64 + square`` is (mg, eg) of a white piece; type NONE (and the unused code 7)
    reads (0, 0)."""
    square_mg, square_eg = square_tables(evaluation)
    rows = []
    for kind in range(8):
        for sq in range(64):
            if kind in square_mg:
                rows.append({"mg": square_mg[kind][sq], "eg": square_eg[kind][sq]})
            else:
                rows.append({"mg": 0, "eg": 0})
    return rows


class EvalOp(enum.Enum, shape=2):
    HOLD   = 0  # nothing changes: ``after`` shows ``sums``
    MAKE   = 1  # the move on the make ports is made this cycle
    SQUARE = 2  # add the term of ``piece`` on ``square`` (the pass over the root's squares)


class IncrementalEvaluate(wiring.Component):
    """Static evaluation kept as running sums (``EvalSums``) updated by each make; bit-exact
    with ``sim/model/evaluate.py`` (``evaluate`` = ``sums_score(side_sums(board))``, and
    ``sums_after_make`` is the update this block computes).

    The sums of a position are kept by the user (the SearchCore: in each ply's frame), from the
    side to move's view, on the normalised board (own pieces white, ``hdl/board.py``). Give an
    ``op`` in a cycle and, in the next cycle, the sums of the position the op started from on
    ``sums``: ``after`` then shows the sums of the position after the op, and ``score`` shows
    its score (taper and clamp of ``after``) on ``after_score`` in the same cycle and on
    ``score`` one cycle later, from a register.

    * ``MAKE``: the make's ports (the Board's, in the mover's frame: ``move``, ``moving``,
      ``castle``, the undo record's ``captured``, the board's ``ep`` before the move) address
      three reads of the (piece type, square) table: the piece landing on the to-square, the
      one leaving the from-square, the enemy piece taken (on the to-square, or behind it en
      passant; mirrored, the table being white's). ``after`` = -(sums + landing - leaving +
      taken + castling rook), the child's view; phase + promoted piece - piece taken.
    * ``SQUARE``: add the term of ``piece`` standing on ``square`` (own: + its value; enemy:
      - its value on the mirrored square; phase + its increment). From sums of zero, 64 of
      these give a position's sums (the SearchCore's pass over the root, once per job).
    * ``HOLD``: ``after`` = ``sums``.

    ``at_least[i]`` is ``after_score >= bound[i]`` in the same cycle as ``after_score``, for
    ``bounds`` bounds given by the user (any integers a ``signed(BOUND_BITS)`` holds). It does
    not wait for the clamp: it is decided on the taper's numerator, beside the shift and the
    clamp (``score_at_least`` gives the arithmetic and why it is exact).

    The table reads are registered (memory read ports: block RAM where the tools map it), so
    nothing of the make's path is added to the make's own cycle beyond the address.

    ``terms=True`` (the core of the "terms" evaluation) adds an input, ``terms``: the terms of
    the position after the op other than material and piece-square values (``EvaluateTerms``'s
    total, hdl/evalterms.py), from that position's side to move's view, given in the cycle
    ``after`` shows its sums. They are added into the taper (so into ``after_score``,
    ``at_least`` and ``score``), never into ``after``: the sums kept per ply stay material and
    piece-square values, which the makes update. Its table is the terms evaluation's
    (evalweights.json's "squares", where the file has them).

    ``split=True`` (the core of two interleaved threads, hdl/interleave.py) registers the
    mover's sums and the two products as well: ``after``, ``after_score`` and ``at_least`` then
    show the op's result one cycle later (two after the op), ``bound`` is read in that cycle,
    and ``score`` one cycle after it. The cycle of the table reads ends at the multipliers;
    the taper's add, the clamp and the compares go to the next.
    """

    def __init__(self, bounds=0, split=False, terms=False):
        self.bounds = bounds
        self.split = split
        self.with_terms = terms
        ports = {}
        if terms:
            ports["terms"] = In(EvalTerms)
        super().__init__({
            **ports,
            "op":          In(EvalOp),
            "move":        In(Move),
            "moving":      In(PieceType),
            "castle":      In(1),
            "captured":    In(Piece),
            "ep":          In(EnPassant),
            "square":      In(Square),
            "piece":       In(Piece),
            "sums":        In(EvalSums),
            "bound":       In(data.ArrayLayout(signed(BOUND_BITS), bounds)),
            "after":       Out(EvalSums),
            "after_score": Out(Score),
            "at_least":    Out(bounds),
            "score":       Out(Score),
        })

    def elaborate(self, platform):
        m = Module()
        evaluation = "terms" if self.with_terms else "pst"
        m.submodules.table = table = Memory(shape=SquareValue, depth=_TABLE_DEPTH,
                                            init=square_value_table(evaluation))
        castle_delta = castle_rook_delta(evaluation)
        landing, leaving, taken = (table.read_port() for _ in range(3))

        # a HOLD addresses type NONE on every read (the table's zero row): the sums then
        # pass through the same adders unchanged, and no op selects among results
        squaring = self.op == EvalOp.SQUARE
        making = self.op == EvalOp.MAKE
        frm, to = self.move.from_sq.as_value(), self.move.to_sq.as_value()
        own = self.piece.color == Color.WHITE
        own_kind = Signal(PieceType)
        enemy_kind = Signal(PieceType)
        placed = Signal(PieceType)
        en_passant = Signal()
        taken_sq = Signal(Square)
        m.d.comb += [
            own_kind.eq(Mux(squaring & own, self.piece.type, PieceType.NONE)),
            enemy_kind.eq(Mux(squaring & ~own, self.piece.type, PieceType.NONE)),
            placed.eq(Mux(self.move.promo != PieceType.NONE, self.move.promo, self.moving)),
            en_passant.eq((self.moving == PieceType.PAWN) & self.ep.valid
                          & (to == square_on(self.ep.file, EP_RANK))),
            taken_sq.eq(Mux(en_passant, to - PAWN_STEP, to)),
            landing.addr.eq(Mux(making, Cat(to, placed), Cat(self.square, own_kind))),
            leaving.addr.eq(Mux(making, Cat(frm, self.moving),
                                Cat(self.square.as_value() ^ MIRROR, enemy_kind))),
            taken.addr.eq(Cat(taken_sq.as_value() ^ MIRROR,
                              Mux(making, self.captured.type, PieceType.NONE))),
        ]

        # the op's other inputs, registered beside the table reads
        negate = Signal()              # MAKE: the sums turn to the child's view
        gained = Signal(PieceType)     # phase: the piece type whose increment is added
        lost = Signal(PieceType)       # and the one whose increment is taken off
        castled = Signal()
        kingside = Signal()
        m.d.sync += [
            negate.eq(making),
            gained.eq(Mux(squaring, self.piece.type,
                          Mux(making, self.move.promo, PieceType.NONE))),
            lost.eq(Mux(making, self.captured.type, PieceType.NONE)),
            castled.eq(making & self.castle),
            kingside.eq(self.move.to_sq.file == CASTLE_KING_FILE[True]),
        ]

        # the mover's new sums (``moved``: sums + landing - leaving + taken + rook), and their
        # negation (the child's view) beside them: the register terms (sums, rook) are added
        # first, the table reads last
        rook = {name: Mux(kingside, castle_delta[True][i], castle_delta[False][i])
                for i, name in enumerate(("mg", "eg"))}
        moved, turned = {}, {}
        after = Signal(EvalSums, name="after_now")   # the op's result, before the split register
        for name in ("mg", "eg"):
            early = Signal(_SUM_SHAPE, name=f"early_{name}")
            early_neg = Signal(_SUM_SHAPE, name=f"early_neg_{name}")
            reads = Signal(_SUM_SHAPE, name=f"reads_{name}")
            m.d.comb += [
                early.eq(getattr(self.sums, name) + Mux(castled, rook[name], 0)),
                early_neg.eq(-early),
                reads.eq(getattr(landing.data, name) - getattr(leaving.data, name)),
            ]
            moved[name] = Signal(_SUM_SHAPE, name=f"moved_{name}")
            turned[name] = Signal(_SUM_SHAPE, name=f"turned_{name}")
            m.d.comb += [
                moved[name].eq((early + getattr(taken.data, name)) + reads),
                turned[name].eq((early_neg - getattr(taken.data, name)) - reads),
                getattr(after, name).eq(Mux(negate, turned[name], moved[name])),
            ]
        increments = Array(Const(PHASE_INC.get(k, 0), 3) for k in range(8))
        d_phase = Signal(signed(5))
        m.d.comb += [d_phase.eq(increments[gained] - increments[lost]),
                     after.phase.eq(self.sums.phase + d_phase)]

        # the taper's numerator of the mover's sums: after's is that, negated after a MAKE
        # (with ``terms``: the mover's sums plus the terms of the position after the op, turned
        # to the mover's view; the sums kept, ``after``, stay material and piece-square values)
        scored = moved
        if self.with_terms:
            scored = {}
            for name in ("mg", "eg"):
                term = getattr(self.terms, name)
                scored[name] = Signal(_SUM_SHAPE, name=f"scored_{name}")
                m.d.comb += scored[name].eq(moved[name] + Mux(negate, -term, term))
        weight = phase_weight(m, after.phase)
        rest = phase_weight(m, after.phase, complement=True)
        product_mg = Signal(_NUMERATOR_SHAPE)
        product_eg = Signal(_NUMERATOR_SHAPE)
        m.d.comb += [product_mg.eq(scored["mg"] * weight), product_eg.eq(scored["eg"] * rest)]
        if self.split:
            # the pipeline register of the split form: the products, the sums and the sign
            products = [Signal(_NUMERATOR_SHAPE, name=f"{n}_product") for n in ("mg", "eg")]
            negated = Signal(name="negate_late")
            m.d.sync += [products[0].eq(product_mg), products[1].eq(product_eg),
                         self.after.eq(after), negated.eq(negate)]
            product_mg, product_eg = products
            negate = negated
        else:
            m.d.comb += self.after.eq(after)

        # after's numerator: (product_mg + product_eg), or its negation ~a + ~b + 2
        flip = Signal(_NUMERATOR_SHAPE)
        m.d.comb += flip.eq(Mux(negate, -1, 0))
        numerator = carry_save_sum(m, product_mg ^ flip, product_eg ^ flip, Mux(negate, 2, 0),
                                   _NUMERATOR_SHAPE, name="numerator")
        m.d.comb += self.after_score.eq(clamped_score(m, numerator))
        m.d.sync += self.score.eq(self.after_score)

        for i in range(self.bounds):
            m.d.comb += self.at_least[i].eq(score_at_least(
                m, product_mg, product_eg, negate, self.bound[i], name=f"bound{i}"))
        return m


def score_at_least(m, product_mg, product_eg, negate, bound, name):
    """``clamp((x) >> TAPER_SHIFT) >= bound`` for the numerator x = +-(product_mg + product_eg)
    (negated when ``negate``), without the shift and the clamp in series (combinational).

    With s = floor(x / 2**k) (k = TAPER_SHIFT, the floor of Python's ``>>``) and E = EVAL_MAX,
    for an integer bound c:

    * c <= -E: clamp(s) >= -E >= c, true;
    * c > E: clamp(s) <= E < c, false;
    * otherwise clamp(s) >= c exactly when s >= c (if s > E, clamp(s) = E >= c and s > c; if
      s < -E, clamp(s) = -E < c and s < c), and floor(x / 2**k) >= c exactly when
      x >= c * 2**k (c an integer).

    x >= c * 2**k is the sign of one three-operand sum: y - c * 2**k >= 0 for x = y; for
    x = -y, y + c * 2**k <= 0, that is y + c * 2**k - 1 < 0. The bound's term (from registers)
    is ready early, so after the products there is one carry-save level and one carry chain.
    """
    c = Value.cast(bound)
    low = Signal(name=f"{name}_below_range")     # c <= -E
    high = Signal(name=f"{name}_above_range")    # c > E
    term = Signal(_COMPARE_SHAPE, name=f"{name}_term")
    m.d.comb += [
        low.eq(c <= -EVAL_MAX),
        high.eq(c > EVAL_MAX),
        term.eq(Mux(negate, (c << TAPER_SHIFT) - 1, -(c << TAPER_SHIFT))),
    ]
    total = carry_save_sum(m, product_mg, product_eg, term, _COMPARE_SHAPE, name=f"{name}_total")
    negative = total[-1]
    return low | (~high & Mux(negate, negative, ~negative))


def carry_save_sum(m, a, b, c, shape, name):
    """a + b + c in ``shape`` (two's complement, exact when the sum fits): one carry-save level
    (a LUT per bit) and one carry chain, where two adders in a row would be two chains."""
    a_, b_, c_ = (Signal(shape, name=f"{name}_{i}") for i in "abc")
    total = Signal(shape, name=f"{name}_sum")
    m.d.comb += [a_.eq(a), b_.eq(b), c_.eq(c)]
    partial = a_ ^ b_ ^ c_
    carries = (a_ & b_) | (a_ & c_) | (b_ & c_)
    m.d.comb += total.eq(partial + (carries << 1))
    return total


def clamped_score(m, numerator):
    """``numerator >> TAPER_SHIFT`` (a floor) clamped to +-EVAL_MAX (combinational)."""
    tapered = Signal(signed(len(numerator) - TAPER_SHIFT))
    score = Signal(Score)
    m.d.comb += tapered.eq(numerator >> TAPER_SHIFT)
    with m.If(tapered > EVAL_MAX):
        m.d.comb += score.eq(EVAL_MAX)
    with m.Elif(tapered < -EVAL_MAX):
        m.d.comb += score.eq(-EVAL_MAX)
    with m.Else():
        m.d.comb += score.eq(tapered)
    return score
