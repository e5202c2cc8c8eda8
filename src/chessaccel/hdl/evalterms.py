"""EvaluateTerms: the terms of the "terms" evaluation over the 64 squares, combinational.

The hardware counterpart of ``model/evalterms.py`` (docs/semantics.md, section 6.1): pawn
structure, king safety, mobility, bishop pair, rook files, threats and the tempo, each an (mg, eg)
pair from white's view; material and piece-square values are not here (the SearchCore keeps them
incrementally, ``IncrementalEvaluate``, which adds ``total`` into its taper).

Every term is a count times a weight: the block counts each feature for white and for black
(``side_features``: the features of one side in its own frame, where black's frame is the board
with its ranks flipped, which is wiring), takes white's count less black's and multiplies that
difference by the weight, a constant of the elaboration (``contract/evalweights.json``) written
as shifts and adds (canonical signed digits), so no multiplier and no table is spent on it.

Attacks come from one network shared by the mobility, king-zone and threat terms: for every
square and each of the eight directions, the first piece met looking out from the square
(``first``, one-hot: a white or black slider of that direction's kind, or a white or black
queen), a chain of 2:1 multiplexers as in the move generator's square array; a knight's and a
king's attacks are wiring. Each square's attackers are counted once per colour and type (a count
of 0 to 8), and those counts are summed over the squares where the square is free (mobility) and
over a king's zone (king attacks): the two sums share the per-square counts, and no piece's
attack set is formed. The threats need no count of attackers, only whether there is one: per
square and colour a few OR-ed bits (attacked by a pawn, by a knight or bishop, by a rook, by
anything), ANDed with the piece planes and counted over the board.

The block assumes what the search core's positions satisfy (docs/semantics.md section 8): one
king a side and no pawn on the first or last rank (such a pawn would be counted by the model and
is not here).

``groups`` (a subset of ``GROUPS``) leaves the other terms out (their outputs read 0): the
synthesis registry builds one block per group to measure each group's cost.
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from chessaccel.contract.defs import Color, PieceType, Position
from chessaccel.contract.evalweights import (
    BACKWARD_PAWN, BISHOP_PAIR, CONNECTED_PAWN, DOUBLED_PAWN, ISOLATED_PAWN, KING_HALF_OPEN_FILE,
    KING_OPEN_FILE, KING_SHIELD_FAR, KING_SHIELD_NEAR, KING_ZONE_ATTACK, MOBILITY_CENTRE,
    MOBILITY_PER_SQUARE, PASSED_PAWN_BLOCKED, PASSED_PAWN_EG, PASSED_PAWN_FREE_PATH,
    PASSED_PAWN_MG, ROOK_HALF_OPEN_FILE, ROOK_OPEN_FILE, ROOK_SEVENTH, TEMPO, TERMS,
    HANGING_PIECE, THREAT_BY_MINOR, THREAT_BY_PAWN, THREAT_BY_ROOK)
from chessaccel.contract.geometry import BISHOP_DIRS, KING_TARGETS, KNIGHT_TARGETS, ROOK_DIRS
from chessaccel.contract.relative import MIRROR

from .evaluate import EvalTerms

__all__ = ["EvaluateTerms", "TermPair", "TERM_NAMES", "GROUPS", "TERM_GROUP", "csd_digits"]

P, N, B, R, Q, K = (PieceType[n].value for n in ("PAWN", "KNIGHT", "BISHOP", "ROOK", "QUEEN", "KING"))
_SQUARES = 64
_FILES = 8

#: The terms this block computes, in contract/evalweights.py's TERMS order (material and
#: piece-square values are the incremental Evaluate's).
TERM_NAMES = TERMS[1:]

#: The term groups (what the synthesis table measures one by one) and their terms.
GROUPS = {
    "pawns": ("passed_pawns", "isolated_pawns", "doubled_pawns", "backward_pawns",
              "connected_pawns"),
    "king": ("king_shield", "king_files", "king_attacks"),
    "mobility": ("mobility",),
    "pieces": ("bishop_pair", "rook_files", "rook_seventh", "tempo"),
    "threats": ("threats",),
}
TERM_GROUP = {term: group for group, terms in GROUPS.items() for term in terms}
assert set(TERM_GROUP) == set(TERM_NAMES)


#: One term's (or the total's) middlegame and endgame centipawns from white's view: as wide as
#: the evaluation's sums (``SUM_BITS``), which the weights are checked to fit.
TermPair = EvalTerms


# --- arithmetic helpers (combinational) --------------------------------------------------------

def csd_digits(c):
    """The canonical signed-digit form of the integer ``c``: [(shift, +1 or -1)], with
    sum(sign << shift) == c and no two digits adjacent (the fewest adds for ``x * c``)."""
    digits, shift = [], 0
    while c:
        if c & 1:
            d = 2 - (c & 3)      # +1 when c = 1 mod 4, -1 when c = 3 mod 4
            digits.append((shift, d))
            c -= d
        c >>= 1
        shift += 1
    return digits


def _tree_sum(values):
    """The sum of ``values`` (Amaranth values) as a balanced tree of adders (None: empty)."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    while len(values) > 1:
        values = [values[i] + values[i + 1] if i + 1 < len(values) else values[i]
                  for i in range(0, len(values), 2)]
    return values[0]


_COUNT4 = [bin(i).count("1") for i in range(16)]


def _count(bits):
    """How many of ``bits`` (1-bit values) are set: four bits at a time through a 16-entry
    table (three LUT4s), then a tree of adders."""
    bits = list(bits)
    if not bits:
        return Const(0, 1)
    chunks = []
    for i in range(0, len(bits), 4):
        chunk = bits[i:i + 4]
        if len(chunk) == 1:
            chunks.append(chunk[0])
        else:
            table = Array(Const(_COUNT4[v], 3) for v in range(1 << len(chunk)))
            chunks.append(table[Cat(*chunk)])
    return _tree_sum(chunks)


def _held(m, bits, name):
    """``bits`` (1-bit values) held in one Signal, as its bits. Why: Amaranth 0.5 computes an
    expression's shape afresh at each read (no cache), and a count's tree reads every bit's
    expression many times over. Held, the terms core's export (``rtlil.convert``) takes 38-42
    CPU s instead of 46 (2026-11-29); the logic is the same."""
    held = Signal(len(bits), name=name)
    m.d.comb += held.eq(Cat(*bits))
    return list(held)


def _difference(m, white_bits, black_bits, name):
    """popcount(white_bits) - popcount(black_bits), a signed Signal."""
    width = max(len(white_bits), len(black_bits), 1).bit_length() + 1
    diff = Signal(signed(width), name=name)
    white = _held(m, white_bits, f"{name}_white") if white_bits else []
    black = _held(m, black_bits, f"{name}_black") if black_bits else []
    m.d.comb += diff.eq(_count(white) - _count(black))
    return diff


def _times(value, c):
    """``value * c`` for a constant ``c``, as shifts and adds (None when c is 0)."""
    if c == 0:
        return None
    out = None
    for shift, sign in csd_digits(c):
        term = value.as_signed() << shift
        if out is None:
            out = term if sign > 0 else -term
        else:
            out = out + term if sign > 0 else out - term
    return out


def _any(bits):
    out = Const(0, 1)
    for b in bits:
        out = out | b
    return out


def _two_or_more(bits):
    """Whether two or more of ``bits`` are set: a tree of (any, two) pairs."""
    pairs = [(b, Const(0, 1)) for b in bits]
    while len(pairs) > 1:
        nxt = []
        for i in range(0, len(pairs), 2):
            if i + 1 == len(pairs):
                nxt.append(pairs[i])
                continue
            (a1, t1), (a2, t2) = pairs[i], pairs[i + 1]
            nxt.append((a1 | a2, t1 | t2 | (a1 & a2)))
        pairs = nxt
    return pairs[0][1] if pairs else Const(0, 1)


def _on(f, r):
    return 0 <= f < 8 and 0 <= r < 8


def _sq(f, r):
    return 8 * r + f


# --- one side's pawn, king and rook features in its own frame ---------------------------------

def side_features(own, enemy, occupied, groups):
    """Bits to be counted for one side, by feature; ``own`` and ``enemy`` map a PieceType value
    to 64 one-bit values (square s of the side's own frame: it plays up the board),
    ``occupied`` is 64 bits. Each feature's value for the side is the number of its bits set
    (model/evalterms.py ``side_features``)."""
    pawns, enemy_pawns = own[P], enemy[P]
    file_pawns = [_any(pawns[_sq(f, r)] for r in range(1, 7)) for f in range(_FILES)]
    file_enemy_pawns = [_any(enemy_pawns[_sq(f, r)] for r in range(1, 7)) for f in range(_FILES)]
    # squares the enemy's pawns take on (they move down the board)
    enemy_pawn_attacks = []
    for s in range(_SQUARES):
        f, r = s % 8, s // 8
        hits = [enemy_pawns[_sq(f + df, r + 1)] for df in (-1, 1) if _on(f + df, r + 1)]
        enemy_pawn_attacks.append(_any(hits))
    out = {}
    if "pawns" in groups:
        passed_by_rank = {r: [] for r in range(1, 7)}
        free, blocked, isolated, doubled, backward, connected = [], [], [], [], [], []
        for r in range(1, 7):
            for f in range(_FILES):
                s = _sq(f, r)
                pawn = pawns[s]
                span = [enemy_pawns[_sq(g, t)] for t in range(r + 1, 7) for g in (f - 1, f, f + 1)
                        if _on(g, t)]
                passed = pawn & ~_any(span)
                passed_by_rank[r].append(passed)
                front_occupied = _any(occupied[_sq(f, t)] for t in range(r + 1, 8))
                free.append(passed & ~front_occupied)
                blocked.append(passed & front_occupied & occupied[_sq(f, r + 1)])
                neighbours = _any(file_pawns[g] for g in (f - 1, f + 1) if 0 <= g < 8)
                isolated.append(pawn & ~neighbours)
                doubled.append(pawn & _any(pawns[_sq(f, t)] for t in range(r + 1, 7)))
                behind = _any(pawns[_sq(g, t)] for g in (f - 1, f + 1) if 0 <= g < 8
                              for t in range(1, r + 1))
                backward.append(pawn & neighbours & ~behind & enemy_pawn_attacks[_sq(f, r + 1)])
                beside = _any(pawns[_sq(g, t)] for g in (f - 1, f + 1) for t in (r, r - 1)
                              if _on(g, t) and 1 <= t <= 6)
                connected.append(pawn & beside)
        for r, bits in passed_by_rank.items():
            out[f"passed_rank{r}"] = bits
        out.update(passed_free=free, passed_blocked=blocked, isolated=isolated,
                   doubled=doubled, backward=backward, connected=connected)
    if "king" in groups:
        king = own[K]
        near, far = [], []
        for r in range(1, 7):
            for f in range(_FILES):
                # an own pawn on s is in the shield of a king one (two) ranks behind it, on
                # its file or the next
                kings_one = [king[_sq(g, r - 1)] for g in (f - 1, f, f + 1) if _on(g, r - 1)]
                kings_two = [king[_sq(g, r - 2)] for g in (f - 1, f, f + 1) if _on(g, r - 2)]
                near.append(pawns[_sq(f, r)] & _any(kings_one))
                far.append(pawns[_sq(f, r)] & _any(kings_two))
        king_file = [_any(king[_sq(f, r)] for r in range(8)) for f in range(_FILES)]
        open_files, half_open_files = [], []
        for f in range(_FILES):
            at_king = _any(king_file[g] for g in (f - 1, f, f + 1) if 0 <= g < 8)
            no_own = at_king & ~file_pawns[f]
            half_open_files.append(no_own & file_enemy_pawns[f])
            open_files.append(no_own & ~file_enemy_pawns[f])
        out.update(shield_near=near, shield_far=far, king_open_files=open_files,
                   king_half_open_files=half_open_files)
    if "pieces" in groups:
        rooks = own[R]
        enemy_on_back = (_any(enemy[K][_sq(f, 7)] for f in range(_FILES))
                         | _any(enemy_pawns[_sq(f, 6)] for f in range(_FILES)))
        rook_open, rook_half, seventh = [], [], []
        for s in range(_SQUARES):
            f = s % 8
            no_own = rooks[s] & ~file_pawns[f]
            rook_half.append(no_own & file_enemy_pawns[f])
            rook_open.append(no_own & ~file_enemy_pawns[f])
        seventh = [rooks[_sq(f, 6)] & enemy_on_back for f in range(_FILES)]
        out.update(rook_open_files=rook_open, rook_half_open_files=rook_half,
                   rooks_seventh=seventh)
    return out


# --- the attack network (absolute squares) ----------------------------------------------------

class _AttackNetwork:
    """Who attacks each square, for the groups that need attacks (king, mobility, threats): built
    once in a block whichever of them are on, so the groups built together share its
    multiplexer chains and, through ``pawn_attacked``, the pawn-attack bits."""

    def __init__(self, m, white, black, occupied):
        self.m = m
        self.planes = (white, black)
        # the first piece met from each square in each direction, one-hot by what it is:
        # first[kind, d, s][colour][0] a slider of the direction's kind (not a queen),
        # [colour][1] a queen; each a 2:1 multiplexer per square, so a count reads them as
        # they are (no gate between the chain and the count)
        self.first = first = {}
        for kind, dirs, slider in (("rook", ROOK_DIRS, R), ("bishop", BISHOP_DIRS, B)):
            for d, (df, dr) in enumerate(dirs):
                # squares from the far edge inwards, so a square's neighbour is built first
                order = sorted(range(_SQUARES), key=lambda s: -((s % 8) * df + (s // 8) * dr))
                for s in order:
                    f, r = s % 8, s // 8
                    here = [[Signal(name=f"first_{kind}{d}_{s}_{colour}_{what}")
                             for what in (kind, "queen")] for colour in ("white", "black")]
                    first[kind, d, s] = here
                    if not _on(f + df, r + dr):
                        continue    # the edge: nothing (the signals stay 0)
                    n = _sq(f + df, r + dr)
                    beyond = first[kind, d, n]
                    for c, planes in enumerate((white, black)):
                        for i, t in enumerate((slider, Q)):
                            m.d.comb += here[c][i].eq(Mux(occupied[n], planes[t][n],
                                                          beyond[c][i]))
        self._pawn_attacked = {}

    def attackers(self, color, t, s):
        """Bits: each a piece of ``color`` and type ``t`` (knight to king) attacking ``s``."""
        planes = self.planes[color]
        if t == N:
            return [planes[N][j] for j in KNIGHT_TARGETS[s]]
        if t == K:
            return [planes[K][j] for j in KING_TARGETS[s]]
        bits = []
        for kind, dirs, slider in (("rook", ROOK_DIRS, R), ("bishop", BISHOP_DIRS, B)):
            if t not in (slider, Q):
                continue
            for d in range(len(dirs)):
                bits.append(self.first[kind, d, s][color][1 if t == Q else 0])
        return bits

    def pawn_attackers(self, color, s):
        """Bits: the pawns of ``color`` attacking ``s`` (white's move up, black's down)."""
        f, r = s % 8, s // 8
        dr = -1 if color == 0 else 1
        planes = self.planes[color]
        return [planes[P][_sq(f + df, r + dr)] for df in (-1, 1) if _on(f + df, r + dr)]

    def pawn_attacked(self, color):
        """64 bits: whether a pawn of ``color`` attacks the square (one Signal each, made on
        the first call: mobility's free squares and the pawn threats read the same bits)."""
        if color not in self._pawn_attacked:
            name = ("white", "black")[color]
            bits = [Signal(name=f"attacked_{name}_pawn_{s}") for s in range(_SQUARES)]
            for s in range(_SQUARES):
                self.m.d.comb += bits[s].eq(_any(self.pawn_attackers(color, s)))
            self._pawn_attacked[color] = bits
        return self._pawn_attacked[color]


class EvaluateTerms(wiring.Component):
    """The terms of the "terms" evaluation of ``position`` (combinational).

    ``terms[i]`` is the (mg, eg) of ``TERM_NAMES[i]`` from white's view, as
    ``model/evalterms.py``'s ``term_values`` gives it (the tempo by ``position.side``);
    ``total`` is their sum: the "terms" evaluation's sums less material and piece-square
    values. Terms of a group left out of ``groups`` read 0.
    """

    def __init__(self, groups=tuple(GROUPS)):
        unknown = set(groups) - set(GROUPS)
        if unknown:
            raise ValueError(f"unknown term groups {sorted(unknown)} (choose from {list(GROUPS)})")
        self.groups = tuple(g for g in GROUPS if g in groups)
        super().__init__({
            "position": In(Position),
            "terms":    Out(data.ArrayLayout(TermPair, len(TERM_NAMES))),
            "total":    Out(TermPair),
        })

    def elaborate(self, platform):
        m = Module()
        groups = self.groups
        squares = self.position.squares
        # one-hot piece planes, absolute squares: planes[color][type][s]
        planes = [{t: [Signal(name=f"{color.name.lower()}_{PieceType(t).name.lower()}_{s}")
                       for s in range(_SQUARES)] for t in (P, N, B, R, Q, K)} for color in Color]
        occupied = [Signal(name=f"occupied_{s}") for s in range(_SQUARES)]
        for s in range(_SQUARES):
            piece = squares[s]
            for color in Color:
                for t in (P, N, B, R, Q, K):
                    m.d.comb += planes[color.value][t][s].eq(
                        (piece.type == PieceType(t)) & (piece.color == color))
            m.d.comb += occupied[s].eq(piece.type != PieceType.NONE)
        white, black = planes
        # black's own frame: ranks flipped (square s of the frame is s ^ MIRROR)
        def flipped(plane):
            return {t: [plane[t][s ^ MIRROR] for s in range(_SQUARES)] for t in plane}
        occupied_flipped = [occupied[s ^ MIRROR] for s in range(_SQUARES)]

        features_white = side_features(white, black, occupied, groups)
        features_black = side_features(flipped(black), flipped(white), occupied_flipped, groups)

        counts = {}   # feature -> white's count less black's (a signed Signal)
        for name in features_white:
            counts[name] = _difference(m, features_white[name], features_black[name],
                                       f"count_{name}")
        if {"king", "mobility", "threats"} & set(groups):
            network = _AttackNetwork(m, white, black, occupied)
            if "king" in groups or "mobility" in groups:
                counts.update(self._attack_counts(m, network, groups))
            if "threats" in groups:
                counts.update(self._threat_counts(m, network))

        values = {term: ([], []) for term in TERM_NAMES}   # term -> (mg parts, eg parts)

        def add(term, count, weight):
            for i in (0, 1):
                values[term][i].append(_times(count, weight[i]))

        if "pawns" in groups:
            for r in range(1, 7):
                add("passed_pawns", counts[f"passed_rank{r}"], (PASSED_PAWN_MG[r], PASSED_PAWN_EG[r]))
            add("passed_pawns", counts["passed_free"], PASSED_PAWN_FREE_PATH)
            add("passed_pawns", counts["passed_blocked"], PASSED_PAWN_BLOCKED)
            add("isolated_pawns", counts["isolated"], ISOLATED_PAWN)
            add("doubled_pawns", counts["doubled"], DOUBLED_PAWN)
            add("backward_pawns", counts["backward"], BACKWARD_PAWN)
            add("connected_pawns", counts["connected"], CONNECTED_PAWN)
        if "king" in groups:
            add("king_shield", counts["shield_near"], KING_SHIELD_NEAR)
            add("king_shield", counts["shield_far"], KING_SHIELD_FAR)
            add("king_files", counts["king_open_files"], KING_OPEN_FILE)
            add("king_files", counts["king_half_open_files"], KING_HALF_OPEN_FILE)
            for t in (P, N, B, R, Q):
                add("king_attacks", counts[f"zone_attacks_{t}"], KING_ZONE_ATTACK[t])
        if "mobility" in groups:
            for t in (N, B, R, Q):
                # sum over the pieces of (targets - centre): targets less centre x pieces
                centred = Signal(signed(12), name=f"mobility_centred_{t}")
                pieces = _times(counts[f"pieces_{t}"], MOBILITY_CENTRE[t])
                m.d.comb += centred.eq(counts[f"mobility_{t}"]
                                       - (pieces if pieces is not None else 0))
                add("mobility", centred, MOBILITY_PER_SQUARE[t])
        if "pieces" in groups:
            bishops_white = _two_or_more(white[B])
            bishops_black = _two_or_more(black[B])
            pair = Signal(signed(2), name="count_bishop_pair")
            m.d.comb += pair.eq(bishops_white - bishops_black)
            add("bishop_pair", pair, BISHOP_PAIR)
            add("rook_files", counts["rook_open_files"], ROOK_OPEN_FILE)
            add("rook_files", counts["rook_half_open_files"], ROOK_HALF_OPEN_FILE)
            add("rook_seventh", counts["rooks_seventh"], ROOK_SEVENTH)
            tempo = Signal(signed(2), name="tempo_sign")
            m.d.comb += tempo.eq(Mux(self.position.side == Color.WHITE, 1, -1))
            add("tempo", tempo, TEMPO)
        if "threats" in groups:
            add("threats", counts["threat_by_pawn"], THREAT_BY_PAWN)
            add("threats", counts["threat_by_minor"], THREAT_BY_MINOR)
            add("threats", counts["threat_by_rook"], THREAT_BY_ROOK)
            add("threats", counts["hanging"], HANGING_PIECE)

        for i, term in enumerate(TERM_NAMES):
            for j, half in enumerate(("mg", "eg")):
                total = _tree_sum(values[term][j])
                if total is not None:
                    m.d.comb += getattr(self.terms[i], half).eq(total)
        for j, half in enumerate(("mg", "eg")):
            used = [getattr(self.terms[i], half) for i, term in enumerate(TERM_NAMES)
                    if any(v is not None for v in values[term][j])]
            if used:
                m.d.comb += getattr(self.total, half).eq(_tree_sum(used))
        return m

    def _attack_counts(self, m, network, groups):
        """White's count less black's of each mobility and king-zone feature, from the attack
        network (absolute squares; the counts are sums over the board, alike in any frame)."""
        white, black = network.planes
        attackers, pawn_attackers = network.attackers, network.pawn_attackers

        # per square, colour and type: how many of the colour's pieces of the type attack it
        # (0 to 8, a few bits), counted once and shared by the mobility sums (masked by the
        # squares the colour's pieces may go to) and the king-zone sums (masked by the other
        # king's zone): the board-wide sums add small counts, not single bits
        types = (P, N, B, R, Q) if "king" in groups else (N, B, R, Q)
        per_square = [{} for _ in (0, 1)]    # [colour][type] -> [64 counts or None]
        for c, colour in enumerate(("white", "black")):
            for t in types:
                counts = []
                for s in range(_SQUARES):
                    bits = pawn_attackers(c, s) if t == P else attackers(c, t, s)
                    if not bits:
                        counts.append(None)
                        continue
                    n = _count(_held(m, bits, f"attacks_{colour}_{PieceType(t).name.lower()}_{s}"))
                    count = Signal(range(len(bits) + 1),
                                   name=f"attackers_{colour}_{PieceType(t).name.lower()}_{s}")
                    m.d.comb += count.eq(n)
                    counts.append(count)
                per_square[c][t] = counts

        def masked_sum(counts, mask):
            """The sum of the counts on the squares where ``mask`` is set."""
            return _tree_sum([Mux(mask[s], counts[s], 0) for s in range(_SQUARES)
                              if counts[s] is not None])

        def difference(white_sum, black_sum, name):
            diff = Signal(signed(12), name=name)
            m.d.comb += diff.eq(white_sum - black_sum)
            return diff

        out = {}
        if "mobility" in groups:
            own_any = [[_any(planes[t][s] for t in (P, N, B, R, Q, K)) for s in range(_SQUARES)]
                       for planes in (white, black)]
            free = [[Signal(name=f"mobility_free_{s}_{c}") for s in range(_SQUARES)]
                    for c in ("white", "black")]
            for c in (0, 1):
                for s in range(_SQUARES):
                    m.d.comb += free[c][s].eq(~own_any[c][s]
                                              & ~network.pawn_attacked(1 - c)[s])
            for t in (N, B, R, Q):
                sums = [masked_sum(per_square[c][t], free[c]) for c in (0, 1)]
                out[f"mobility_{t}"] = difference(*sums, f"count_mobility_{t}")
                out[f"pieces_{t}"] = _difference(m, white[t], black[t], f"count_pieces_{t}")
        if "king" in groups:
            zone = [[Signal(name=f"zone_{s}_{c}") for s in range(_SQUARES)]
                    for c in ("white", "black")]
            for c, planes in enumerate((white, black)):
                for s in range(_SQUARES):
                    m.d.comb += zone[c][s].eq(
                        _any([planes[K][s]] + [planes[K][n] for n in KING_TARGETS[s]]))
            for t in (P, N, B, R, Q):
                # white's king attacked by black's pieces, less black's by white's
                sums = [masked_sum(per_square[1 - c][t], zone[c]) for c in (0, 1)]
                out[f"zone_attacks_{t}"] = difference(*sums, f"count_zone_attacks_{t}")
        return out

    def _threat_counts(self, m, network):
        """White's count less black's of each threat feature (absolute squares, as
        ``_attack_counts``). A threat asks whether a square is attacked, not how often, so each
        square gets OR-ed bits per colour rather than the per-square counts of the king and
        mobility groups: ORs of the same network bits, no per-square adder."""
        attacked = [{} for _ in (0, 1)]   # [colour][what] -> 64 one-bit Signals
        for c, colour in enumerate(("white", "black")):
            by = {what: [Signal(name=f"attacked_{colour}_{what}_{s}") for s in range(_SQUARES)]
                  for what in ("minor", "rook", "any")}
            pawn = network.pawn_attacked(c)
            for s in range(_SQUARES):
                knight, bishop, rook, queen, king = (
                    _any(network.attackers(c, t, s)) for t in (N, B, R, Q, K))
                m.d.comb += [
                    by["minor"][s].eq(knight | bishop),
                    by["rook"][s].eq(rook),
                    by["any"][s].eq(pawn[s] | by["minor"][s] | rook | queen | king),
                ]
            attacked[c] = dict(by, pawn=pawn)

        bits = {name: ([], []) for name in ("threat_by_pawn", "threat_by_minor",
                                            "threat_by_rook", "hanging")}
        for c, planes in enumerate(network.planes):
            enemy = attacked[1 - c]
            # "any" of the own colour is also its defence: a slider's ray stops on (and so
            # includes) the first piece it meets, an own piece among them
            defended = attacked[c]["any"]
            for s in range(_SQUARES):
                heavy = planes[R][s] | planes[Q][s]
                piece = planes[N][s] | planes[B][s] | heavy
                bits["threat_by_pawn"][c].append(piece & enemy["pawn"][s])
                bits["threat_by_minor"][c].append(heavy & enemy["minor"][s])
                bits["threat_by_rook"][c].append(planes[Q][s] & enemy["rook"][s])
                bits["hanging"][c].append(piece & enemy["any"][s] & ~defended[s])
        return {name: _difference(m, white_bits, black_bits, f"count_{name}")
                for name, (white_bits, black_bits) in bits.items()}
