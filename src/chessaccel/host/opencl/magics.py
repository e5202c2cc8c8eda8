"""Magic bitboards for the bulk perft kernels' sliders (build switch PERFT_MAGIC, perft.cl).

A slider's attacks from square s depend only on the occupied squares of its lines inside the
board's edge (the mask). ``((occupied & mask) * magic) >> (64 - bits)`` maps every such
occupancy to a slot of s's own table of 2^bits attack sets, two occupancies sharing a slot only
where their attacks are equal. The numbers below were found by ``python -m
chessaccel.host.opencl.magics`` (a seeded random search, about 100 s; it prints them): the
fewest bits (the mask's popcount) where the search found one within its trials, one more bit
on the 8 rook squares where it did not. They are not trusted: ``magic_tables`` builds every
table from a ray walk and refuses a magic that maps two occupancies with different attacks to
one slot.

Table layout (uint64 words after layout.line_tables and the between table in the lines buffer,
so starting at board.cl's LINES_MAGIC; the offsets in the entries count from the buffer's start): 64 rook
entries then 64 bishop entries of four words (mask, magic, the attack table's word offset,
64 - bits), then the attack tables, rook squares 0-63 then bishop squares 0-63.

PERFT_MAGIC 2 (``fixed_magic_tables``): every square's table as large as its kind's largest
(FIXED_BITS: rooks 12 bits, bishops 9), so that the kernel's shift is a constant and a table's
place follows from its square: an entry is two words (mask, magic), 64 rook entries then 64
bishop entries, then the rook tables (4,096 words a square) and the bishop tables (512). Every
number above works with more bits (a slot of more bits only splits a slot of fewer) except a1's
13-bit rook number: FIXED_ROOK_A1, a 12-bit one from a further search (``_search`` with 12 bits
on the generator of seed 12, 4 s).
"""

import numpy as np

from .layout import line_tables, ray_walk as ray_attacks

__all__ = ["ROOK_MAGICS", "BISHOP_MAGICS", "ENTRY_WORDS", "magic_tables", "between_table",
           "FIXED_BITS", "FIXED_ROOK_A1", "FIXED_ENTRY_WORDS", "fixed_magic_tables",
           "BETWEEN_WORDS", "lines_with_magic_tables", "find_magics",
           "slider_mask", "ray_attacks"]

#: (magic, bits) per square, a1 = 0 ... h8 = 63.
ROOK_MAGICS = (
    (0x0010005002890802, 13), (0x4040200010004000, 11), (0x0200800840041200, 12), (0x0200120004082040, 11),
    (0x5180080080022400, 11), (0x0380220104001080, 12), (0x8c00020150008804, 11), (0x0200004020820104, 12),
    (0x0000801020804001, 11), (0x4020804000200080, 10), (0x2001004020001100, 10), (0x3080800800801004, 10),
    (0x42c1000502100800, 10), (0x8290808042002400, 10), (0xa0c2000802000104, 10), (0x0001000080420100, 11),
    (0x0080014000200040, 11), (0x1008454000201000, 10), (0x0101010010200045, 10), (0x1010008010080080, 10),
    (0x0000808004000800, 10), (0x0205010008040101, 10), (0x0104440008010250, 10), (0x0094020000840041, 11),
    (0xc000382080004044, 12), (0x0120008080400020, 10), (0x0201001100200040, 10), (0x0030008080100800, 10),
    (0x0000080080800400, 10), (0x0021100801204004, 10), (0x200100510026000c, 10), (0x0810090600208044, 11),
    (0x1000400020800082, 11), (0xc000220102004080, 10), (0x0400801000802000, 10), (0x0000420012000822, 10),
    (0x004202a006000210, 11), (0x0004008004800200, 10), (0x0040410204000810, 10), (0x8081012442001084, 11),
    (0x0841804003228000, 11), (0x001000402000c005, 10), (0x0000804200220010, 10), (0xc0820040200a0011, 10),
    (0x0a24000500102002, 11), (0x2400020004008080, 10), (0x0080029011040038, 10), (0x0001007900820004, 11),
    (0x0c40208000400080, 11), (0x04e0008020400080, 10), (0x02a0002280100c80, 10), (0x0002100029002300, 10),
    (0x94400ab200203a00, 10), (0x2200401004200801, 10), (0x1000800200010080, 10), (0x21a220440508a600, 11),
    (0x0000401108208001, 12), (0x0051008040102202, 11), (0xa002001050040822, 12), (0x0090010004081021, 11),
    (0x1202000418880152, 12), (0x0001000804000201, 11), (0x004000900a380704, 11), (0x4021000080221041, 12),
)
BISHOP_MAGICS = (
    (0x10200a0408019110, 6), (0x0988084104003100, 5), (0x0028482841803800, 5), (0x0308204040000881, 5),
    (0x00042420201a2004, 5), (0x8201012110340021, 5), (0x1008480210108430, 5), (0x0000640406015010, 6),
    (0x0080049090010102, 5), (0xc020043082120020, 5), (0x40001000a0810002, 5), (0x21800c4100208000, 5),
    (0x0420020210422432, 5), (0x020440900c602024, 5), (0x08280c0168021080, 5), (0x0000202104100400, 5),
    (0x4020050509500101, 5), (0x00203c1889010200, 5), (0x0010002800421020, 7), (0x4008000104110089, 7),
    (0x22c5000820080003, 7), (0x0202010100424228, 7), (0x0038800114100210, 5), (0x2000201104020201, 5),
    (0xc0442001c1031400, 5), (0x030402000498080c, 5), (0x2244404114010200, 7), (0x0602018028028042, 9),
    (0x2480802032020044, 9), (0x0c19130202004102, 7), (0x0014040a20420202, 5), (0x0040810020804810, 5),
    (0x8001284809401001, 5), (0x2041082000020460, 5), (0x1000403000480040, 7), (0x0c20110800440040, 9),
    (0x0008020400001100, 9), (0x0230011200104a05, 7), (0x0007010110040c40, 5), (0x0524009824008400, 5),
    (0x0804100209005008, 5), (0x4d00880802000880, 5), (0x0004120101081001, 7), (0x0100004200800800, 7),
    (0x38d1408810401a00, 7), (0x0202601404220100, 7), (0x0010020081200400, 5), (0x4c84011210200200, 5),
    (0x8002020120080100, 5), (0x4201010802020000, 5), (0x0080020201040400, 5), (0x4040000084041020, 5),
    (0x04200a2184240000, 5), (0x0008080208220600, 5), (0xc388a00800810000, 5), (0x20020204010a0000, 5),
    (0x0002002401080800, 6), (0x810c048400c2100c, 5), (0x00208944a88c3000, 5), (0x0040402020208800, 5),
    (0x0042000811020208, 5), (0x1085004191020881, 5), (0x0030200822080050, 5), (0x0010040840440221, 6),
)
#: Words of one square's entry: mask, magic, offset of its attack table, shift.
ENTRY_WORDS = 4
#: PERFT_MAGIC 2: the bits of every rook's and every bishop's table, a1's rook number for 12
#: bits, and the words of an entry (mask, magic).
FIXED_BITS = (12, 9)
FIXED_ROOK_A1 = 0x2080001020c00b80
FIXED_ENTRY_WORDS = 2
_STRAIGHT = ((1, 0), (-1, 0), (0, 1), (0, -1))
_DIAGONAL = ((1, 1), (-1, -1), (1, -1), (-1, 1))
_M64 = (1 << 64) - 1


def slider_mask(square, steps):
    """The squares of ``square``'s lines that can block: its rays without their last square."""
    out = 0
    f0, r0 = square & 7, square >> 3
    for df, dr in steps:
        f, r = f0 + df, r0 + dr
        while 0 <= f + df < 8 and 0 <= r + dr < 8:
            out |= 1 << (r * 8 + f)
            f, r = f + df, r + dr
    return out


def _occupancies(mask):
    """Every subset of ``mask`` (carry-rippler), and the attacks of each."""
    out, x = [], 0
    while True:
        out.append(x)
        x = (x - mask) & mask
        if x == 0:
            return out


def _square_table(square, steps, magic, bits):
    mask = slider_mask(square, steps)
    occupancies = _occupancies(mask)
    attacks = np.array([ray_attacks(square, o, steps) for o in occupancies], dtype=np.uint64)
    slots = (np.array(occupancies, dtype=np.uint64) * np.uint64(magic)) >> np.uint64(64 - bits)
    table = np.zeros(1 << bits, dtype=np.uint64)
    table[slots] = attacks
    if np.any(table[slots] != attacks):
        raise AssertionError(f"magic 0x{magic:016x} ({bits} bits) of square {square} maps two "
                             "occupancies with different attacks to one slot")
    return mask, table


def magic_tables(base):
    """The entries and attack tables as one uint64 array, offsets counted from ``base`` (the
    word where the array starts in the lines buffer)."""
    entries = np.zeros(2 * 64 * ENTRY_WORDS, dtype=np.uint64)
    tables = []
    offset = base + len(entries)
    for kind, (steps, magics) in enumerate(((_STRAIGHT, ROOK_MAGICS), (_DIAGONAL, BISHOP_MAGICS))):
        for square, (magic, bits) in enumerate(magics):
            mask, table = _square_table(square, steps, magic, bits)
            entries[(kind * 64 + square) * ENTRY_WORDS:][:ENTRY_WORDS] = \
                (mask, magic, offset, 64 - bits)
            tables.append(table)
            offset += len(table)
    return np.concatenate([entries] + tables)


def fixed_magic_tables():
    """PERFT_MAGIC 2's entries and attack tables as one uint64 array (no offsets: each square's
    table is its kind's FIXED_BITS large, in square order)."""
    entries = np.zeros(2 * 64 * FIXED_ENTRY_WORDS, dtype=np.uint64)
    tables = []
    kinds = ((_STRAIGHT, ROOK_MAGICS), (_DIAGONAL, BISHOP_MAGICS))
    for kind, ((steps, magics), bits) in enumerate(zip(kinds, FIXED_BITS)):
        for square, (magic, _) in enumerate(magics):
            if kind == 0 and square == 0:
                magic = FIXED_ROOK_A1
            mask, table = _square_table(square, steps, magic, bits)
            entries[(kind * 64 + square) * FIXED_ENTRY_WORDS:][:FIXED_ENTRY_WORDS] = (mask, magic)
            tables.append(table)
    return np.concatenate([entries] + tables)


def between_table():
    """BETWEEN[a * 64 + b]: the squares strictly between a and b where they share a line (a rank,
    file or diagonal), else none (perft.cl's pin scan, PERFT_COUNT 16)."""
    table = np.zeros(64 * 64, dtype=np.uint64)
    for steps in (_STRAIGHT, _DIAGONAL):
        for a in range(64):
            for df, dr in steps:
                f, r, ray = (a & 7) + df, (a >> 3) + dr, 0
                while 0 <= f < 8 and 0 <= r < 8:
                    table[a * 64 + r * 8 + f] = ray
                    ray |= 1 << (r * 8 + f)
                    f, r = f + df, r + dr
    return table


#: Words of the between table, which comes after the line tables (board.cl's LINES_BETWEEN)
BETWEEN_WORDS = 64 * 64


def lines_with_magic_tables(fixed=False):
    """The lines buffer of a PERFT_MAGIC build: layout.line_tables, the between table, then the
    magic tables (board.cl's LINES_MAGIC): ``fixed_magic_tables`` where ``fixed`` (PERFT_MAGIC
    2), else ``magic_tables``."""
    lines = line_tables()
    between = between_table()
    magic = fixed_magic_tables() if fixed else magic_tables(len(lines) + len(between))
    return np.concatenate([lines, between, magic])


def find_magics(steps, rng, trials=400_000, batch=256):
    """(magic, bits) per square for the slider of ``steps``: random sparse numbers (three draws
    of the numpy Generator ``rng``, and-ed) tried in batches, the fewest bits first, one more
    where ``trials`` found none."""
    found = []
    for square in range(64):
        mask = slider_mask(square, steps)
        occupancies = np.array(_occupancies(mask), dtype=np.uint64)
        attacks = np.array([ray_attacks(square, int(o), steps) for o in occupancies],
                           dtype=np.uint64)
        fewest = bin(mask).count("1")
        for bits in (fewest, fewest + 1):
            magic = _search(mask, occupancies, attacks, bits, rng, trials, batch)
            if magic is not None:
                found.append((magic, bits))
                break
        else:
            raise RuntimeError(f"no magic for square {square} in {trials} trials")
    return tuple(found)


def _search(mask, occupancies, attacks, bits, rng, trials, batch):
    shift = np.uint64(64 - bits)
    for _ in range(0, trials, batch):
        draws = rng.integers(0, _M64, dtype=np.uint64, size=(3, batch), endpoint=True)
        magics = draws[0] & draws[1] & draws[2]
        # a magic spreading the mask's bits over the top byte: the rest rarely works
        top = (np.uint64(mask) * magics) >> np.uint64(56)
        magics = magics[np.array([bin(int(x)).count("1") >= 6 for x in top], dtype=bool)]
        if not len(magics):
            continue
        slots = (occupancies[None, :] * magics[:, None]) >> shift
        order = np.argsort(slots, axis=1, kind="stable")
        sorted_slots = np.take_along_axis(slots, order, 1)
        sorted_attacks = attacks[order]
        clash = np.any((sorted_slots[:, 1:] == sorted_slots[:, :-1])
                       & (sorted_attacks[:, 1:] != sorted_attacks[:, :-1]), axis=1)
        good = np.flatnonzero(~clash)
        if len(good):
            return int(magics[good[0]])
    return None


if __name__ == "__main__":
    # the bishops first, then the rooks on the same generator's stream, as the numbers above
    # were found
    rng = np.random.default_rng(2026)
    for name, steps in (("BISHOP_MAGICS", _DIAGONAL), ("ROOK_MAGICS", _STRAIGHT)):
        print(f"{name} = {find_magics(steps, rng)}", flush=True)
