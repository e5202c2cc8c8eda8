"""The 64-square cell array shared by GenVictim, GenAggressor, TestCheck and CastleStatus.

Every move-generation block works in the *relative frame* of one colour: square ``r`` of the
frame is ``geometry.relative(r, color)`` (ranks flipped for black). Permuting the 64 squares once
at the input costs one 2:1 multiplexer per square bit, and buys three things at once: pawns of the
frame's colour always move up the board, the en-passant square is always on rank 6, and the
comparator trees' "ties to the lowest relative square" becomes a plain "lowest index" priority
encoder. Outputs are mapped back to absolute squares with one XOR.

The helpers here build combinational logic only (Amaranth ``Value`` expressions and ``comb``
signals); the blocks decide what is registered.
"""

from amaranth.hdl import Cat, Const, Mux, Signal, Value

from chessaccel.contract.defs import PieceType
from chessaccel.contract.geometry import KING_TARGETS, KNIGHT_TARGETS, QUEEN_DIRS, square, step
from chessaccel.contract.relative import EP_RANK, MIRROR, PAWN_CAPTURE_STEPS

__all__ = ["SQUARES", "ROOK_DIR_INDICES", "BISHOP_DIR_INDICES",
           "RelativeBoard", "mirror_square", "to_relative", "to_absolute", "square_on",
           "permute_mask", "ray_fill",
           "ray_fill_prefix", "pattern_sources", "pawn_capture_targets",
           "enemy_pawn_capture_targets", "pawn_capturers",
           "lowest_set", "or_reduce", "two_or_more", "PriorityPick", "en_passant_square",
           "own_squares", "SuperPiece", "onehot", "PIECE_TYPES"]

SQUARES = 64
ROOK_DIR_INDICES = range(0, 4)     # QUEEN_DIRS[0:4] are the rook directions
BISHOP_DIR_INDICES = range(4, 8)   # QUEEN_DIRS[4:8] are the bishop directions
PIECE_TYPES = (PieceType.PAWN, PieceType.KNIGHT, PieceType.BISHOP, PieceType.ROOK,
              PieceType.QUEEN, PieceType.KING)


def mirror_square(sq, flip):
    """A square (a ``Square`` or a 6-bit Value) with its rank flipped when the 1-bit ``flip`` is
    set: the number XORed with MIRROR (the rank bits, each ``flip``), a 6-bit Value."""
    return Value.cast(sq) ^ Cat(Const(0, 3), flip.replicate(3))


def to_relative(sq, color_is_black):
    """Relative square (6-bit Value) of an absolute one."""
    return mirror_square(sq, color_is_black)


to_absolute = to_relative  # the mirror is its own inverse


def square_on(file, rank):
    """The 6-bit number of the square on ``file`` (a 3-bit Value) and the fixed ``rank``
    (``Square``'s layout: file low, rank high): wiring, no logic."""
    return Cat(file, Const(rank, 3))


def permute_mask(mask, color_is_black):
    """A 64-bit per-square word re-indexed by relative square."""
    mirrored = Cat(mask[r ^ MIRROR] for r in range(SQUARES))
    return Mux(color_is_black, mirrored, mask)


class RelativeBoard:
    """Per-square one-bit vectors of a board seen from ``color`` (index = relative square).

    ``own[t]`` (a 64-bit Signal per PieceType) holds the pieces of ``color``; ``enemy[t]`` those
    of the other colour; ``empty`` the empty squares. ``color_is_black`` is the 1-bit Value the
    frame was built for. All are ``comb`` signals of module ``m``, named with ``prefix``.
    """

    def __init__(self, m, squares, color_is_black, prefix):
        self.color_is_black = color_is_black
        self.empty = Signal(SQUARES, name=f"{prefix}_empty")
        self.own = {t: Signal(SQUARES, name=f"{prefix}_own_{t.name.lower()}") for t in PIECE_TYPES}
        self.enemy = {t: Signal(SQUARES, name=f"{prefix}_enemy_{t.name.lower()}")
                      for t in PIECE_TYPES}
        for r in range(SQUARES):
            piece = squares[r]
            mirrored = squares[r ^ MIRROR]
            kind = Mux(color_is_black, mirrored.type.as_value(), piece.type.as_value())
            color = Mux(color_is_black, mirrored.color.as_value(), piece.color.as_value())
            own_color = color == color_is_black
            m.d.comb += self.empty[r].eq(kind == PieceType.NONE.value)
            for t in PIECE_TYPES:
                m.d.comb += [
                    self.own[t][r].eq((kind == t.value) & own_color),
                    self.enemy[t][r].eq((kind == t.value) & ~own_color),
                ]


def ray_fill(sources, passable, direction):
    """Squares a ray reaches moving in ``direction`` (a (file, rank) step) from any source.

    ``reach[s]`` is set when the square before ``s`` on the ray is a source, or is passable and
    reached itself: the first blocker is reached, nothing beyond it. This is the transmitter /
    pass-through chain of the Belle array: at most seven cells deep.
    """
    df, dr = direction
    reach = {}

    def at(s):
        if s not in reach:
            before = step(s, -df, -dr)
            reach[s] = (Const(0, 1) if before is None
                        else sources[before] | (at(before) & passable[before]))
        return reach[s]

    return Cat(at(s) for s in range(SQUARES))


def ray_fill_prefix(sources, passable, direction):
    """``ray_fill`` as a parallel prefix (Kogge-Stone): three levels of (reach, pass) pairs
    combined over 1, 2 and 4 squares instead of a chain of seven cells."""
    df, dr = direction

    def back(s, n):
        for _ in range(n):
            if s is None:
                return None
            s = step(s, -df, -dr)
        return s
    # reach[s] over the k squares before s, and whether those k squares all pass
    reach = {s: (sources[b] if (b := back(s, 1)) is not None else Const(0, 1))
             for s in range(SQUARES)}
    passes = {s: (passable[b] if (b := back(s, 1)) is not None else Const(0, 1))
              for s in range(SQUARES)}
    span = 1
    while span < 8:
        new_reach, new_pass = {}, {}
        for s in range(SQUARES):
            before = back(s, span)
            if before is None:
                new_reach[s], new_pass[s] = reach[s], Const(0, 1)
            else:
                new_reach[s] = reach[s] | (passes[s] & reach[before])
                new_pass[s] = passes[s] & passes[before]
        reach, passes = new_reach, new_pass
        span *= 2
    return Cat(reach[s] for s in range(SQUARES))


def pattern_sources(vector, targets_of):
    """``out[s]`` = any bit of ``vector`` set on a square of ``targets_of[s]``.

    For symmetric patterns (knight, king) this is both "a piece on s reaches a marked square" and
    "a marked square's super piece reaches s".
    """
    return Cat(or_reduce([vector[t] for t in targets_of[s]]) if targets_of[s] else Const(0, 1)
               for s in range(SQUARES))


def pawn_capture_targets(s):
    """Squares a pawn of the frame's colour on relative square ``s`` captures on."""
    return tuple(t for t in (step(s, df, dr) for df, dr in PAWN_CAPTURE_STEPS) if t is not None)


def enemy_pawn_capture_targets(s):
    """Squares a pawn of the other colour on relative square ``s`` captures on (downwards)."""
    return tuple(t for t in (step(s, df, -dr) for df, dr in PAWN_CAPTURE_STEPS) if t is not None)


def pawn_capturers(t):
    """Relative squares from which a pawn of the frame's colour captures on ``t``."""
    return tuple(s for s in (step(t, -df, -dr) for df, dr in PAWN_CAPTURE_STEPS) if s is not None)


def lowest_set(bits, lo=0, width=SQUARES):
    """(any, index) of the lowest set bit of ``bits[lo:lo+width]``: a balanced mux tree.

    ``width`` is a power of two; depth is log2(width) two-input stages.
    """
    if width == 2:
        return bits[lo] | bits[lo + 1], ~bits[lo]
    half = width // 2
    any_lo, index_lo = lowest_set(bits, lo, half)
    any_hi, index_hi = lowest_set(bits, lo + half, half)
    return any_lo | any_hi, Cat(Mux(any_lo, index_lo, index_hi), ~any_lo)


def or_reduce(values):
    """OR of a list of equal-width Values (a balanced tree)."""
    values = list(values)
    while len(values) > 1:
        values = [values[i] | values[i + 1] if i + 1 < len(values) else values[i]
                  for i in range(0, len(values), 2)]
    return values[0]


def two_or_more(bits):
    """1 when at least two bits of the 64-bit ``bits`` are set: a balanced (any, many) tree."""
    level = [(bits[i], Const(0, 1)) for i in range(len(bits))]
    while len(level) > 1:
        paired = []
        for i in range(0, len(level) - 1, 2):
            (a_any, a_many), (b_any, b_many) = level[i], level[i + 1]
            paired.append((a_any | b_any, a_many | b_many | (a_any & b_any)))
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0][1]


class PriorityPick:
    """Comparator tree over squares ranked by level, then by lowest (relative) square.

    ``levels`` is a list of 64-bit Values in priority order (first = preferred); ``enables``
    (optional, one 1-bit Value per level, default 1) switches a whole level off *late*: it enters
    only at the final select, so a slow enable (e.g. quiescence decided by a TestCheck in the
    same cycle) does not lengthen the tree. Every level has its own lowest-set-bit encoder, all in
    parallel with the level's OR; the first present level is then chosen by a one-hot select.

    ``valid``: some enabled level holds a square; ``present``: which levels do (enabled and
    holding one); ``first``: one-hot over levels (the chosen one); ``square``: its lowest set
    square.
    """

    def __init__(self, m, levels, prefix, enables=None):
        count = len(levels)
        enables = enables or [Const(1, 1)] * count
        self.first = Signal(count, name=f"{prefix}_first")
        self.square = Signal(6, name=f"{prefix}_square")
        self.valid = Signal(name=f"{prefix}_valid")
        self.present = present = Signal(count, name=f"{prefix}_present")
        encoded = []
        for i, vector in enumerate(levels):
            level = Signal(SQUARES, name=f"{prefix}_level{i}")
            m.d.comb += level.eq(vector)
            any_set, index = lowest_set(level)
            index_signal = Signal(6, name=f"{prefix}_index{i}")
            m.d.comb += [present[i].eq(any_set & enables[i]), index_signal.eq(index)]
            encoded.append(index_signal)
        taken = Const(0, 1)
        for i in range(count):
            m.d.comb += self.first[i].eq(present[i] & ~taken)
            taken = taken | present[i]
        m.d.comb += [
            self.valid.eq(present.any()),
            self.square.eq(or_reduce([encoded[i] & self.first[i].replicate(6)
                                      for i in range(count)])),
        ]

    def select(self, values, width):
        """The entry of ``values`` (one constant per level) of the chosen level; 0 if none."""
        return or_reduce([Const(v, width) & self.first[i].replicate(width)
                          for i, v in enumerate(values)])


class SuperPiece:
    """The "super piece" radiated from one square (a one-hot 64-bit vector, relative frame).

    ``rays`` are the squares each of its eight rays reaches (first blocker included; QUEEN_DIRS
    order, rook directions first), ``rook``/``bishop`` their union by kind; ``knight``/``king``
    the squares its jumps and steps reach; ``pawn_capture`` the squares from which a pawn of the
    frame's colour would capture onto the radiating square.
    A piece on ``s`` of the frame's colour can move to (or attack) the radiating square when it
    receives the pattern of its own kind. ``prefix_rays`` builds the rays with
    ``ray_fill_prefix`` (three levels) instead of ``ray_fill``'s chain; the squares are the same.
    """

    def __init__(self, m, onehot, empty, prefix, prefix_rays=False):
        fill = ray_fill_prefix if prefix_rays else ray_fill
        self.rays = rays = [fill(onehot, empty, QUEEN_DIRS[d])
                            for d in range(len(QUEEN_DIRS))]
        self.rook = Signal(SQUARES, name=f"{prefix}_rook")
        self.bishop = Signal(SQUARES, name=f"{prefix}_bishop")
        self.knight = Signal(SQUARES, name=f"{prefix}_knight")
        self.king = Signal(SQUARES, name=f"{prefix}_king")
        self.pawn_capture = Signal(SQUARES, name=f"{prefix}_pawn_capture")
        m.d.comb += [
            self.rook.eq(or_reduce([rays[d] for d in ROOK_DIR_INDICES])),
            self.bishop.eq(or_reduce([rays[d] for d in BISHOP_DIR_INDICES])),
            self.knight.eq(pattern_sources(onehot, KNIGHT_TARGETS)),
            self.king.eq(pattern_sources(onehot, KING_TARGETS)),
            self.pawn_capture.eq(pattern_sources(
                onehot, tuple(pawn_capture_targets(s) for s in range(SQUARES)))),
        ]

    def attackers(self, pieces):
        """Squares of ``pieces`` (dict PieceType -> 64-bit vector) receiving their own pattern,
        pawns by their capture pattern: a dict PieceType -> 64-bit Value."""
        return {
            PieceType.PAWN:   pieces[PieceType.PAWN] & self.pawn_capture,
            PieceType.KNIGHT: pieces[PieceType.KNIGHT] & self.knight,
            PieceType.BISHOP: pieces[PieceType.BISHOP] & self.bishop,
            PieceType.ROOK:   pieces[PieceType.ROOK] & self.rook,
            PieceType.QUEEN:  pieces[PieceType.QUEEN] & (self.rook | self.bishop),
            PieceType.KING:   pieces[PieceType.KING] & self.king,
        }


def en_passant_square(m, ep, prefix):
    """One-hot 64-bit Signal of the en-passant square (relative frame of the side to move: always
    on EP_RANK), zero when ``ep`` (an ``EnPassant`` view) is not valid."""
    target = Signal(SQUARES, name=f"{prefix}_ep_square")
    for f in range(8):
        m.d.comb += target[square(f, EP_RANK)].eq(ep.valid & (ep.file == f))
    return target


def own_squares(m, position, name="own"):
    """64-bit Signal (absolute squares) of the squares holding a piece of the side to move: the
    own pieces a victim's exhaustion re-enables in the disable mask."""
    own = Signal(SQUARES, name=name)
    for s in range(SQUARES):
        piece = position.squares[s]
        m.d.comb += own[s].eq((piece.type != PieceType.NONE) & (piece.color == position.side))
    return own


def onehot(sq):
    """64-bit one-hot Value of a square (a ``Square`` or a 6-bit Value)."""
    return Const(1, SQUARES) << Value.cast(sq)
