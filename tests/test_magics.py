"""host/opencl/magics.py: the magic numbers of the bulk perft kernels' sliders, checked rather
than trusted: every slot of every square's table against a ray walk, and the lookup as perft.cl
does it (mask, multiply, shift, offset; or with PERFT_MAGIC 2, the fixed shift and the table's
place from the square) on random boards."""

import random

import numpy as np

from chessaccel.host.opencl import layout, magics

STRAIGHT = ((1, 0), (-1, 0), (0, 1), (0, -1))
DIAGONAL = ((1, 1), (-1, -1), (1, -1), (-1, 1))
BASE = layout._LINE_TABLE_SIZE + magics.BETWEEN_WORDS   # where the tables start in the lines buffer


def lookup(tables, kind, square, occupied):
    """board.cl's magic_attacks, in Python."""
    entry = (kind * 64 + square) * magics.ENTRY_WORDS
    mask, magic, offset, shift = (int(x) for x in tables[entry:entry + magics.ENTRY_WORDS])
    slot = (((occupied & mask) * magic) & ((1 << 64) - 1)) >> shift
    return int(tables[offset - BASE + slot])


def test_every_square_finds_its_attacks_on_random_boards():
    tables = magics.magic_tables(BASE)
    rng = random.Random(7)
    boards = [rng.getrandbits(64) & rng.getrandbits(64) for _ in range(300)] + [0, (1 << 64) - 1]
    for square in range(64):
        for occupied in boards:
            assert lookup(tables, 0, square, occupied) == \
                magics.ray_attacks(square, occupied, STRAIGHT), (square, hex(occupied))
            assert lookup(tables, 1, square, occupied) == \
                magics.ray_attacks(square, occupied, DIAGONAL), (square, hex(occupied))


def fixed_lookup(tables, kind, square, occupied):
    """board.cl's straight_from / diagonal_from with PERFT_MAGIC 2, in Python: the entry's mask and
    magic, a constant shift, the table's place from the square."""
    entry = (kind * 64 + square) * magics.FIXED_ENTRY_WORDS
    mask, magic = (int(x) for x in tables[entry:entry + magics.FIXED_ENTRY_WORDS])
    bits = magics.FIXED_BITS[kind]
    slot = (((occupied & mask) * magic) & ((1 << 64) - 1)) >> (64 - bits)
    first = 2 * 64 * magics.FIXED_ENTRY_WORDS + kind * 64 * (1 << magics.FIXED_BITS[0])
    return int(tables[first + (square << bits) + slot])


def test_the_fixed_size_tables_find_every_squares_attacks():
    """PERFT_MAGIC 2: every rook table 4,096 words, every bishop table 512 (the same numbers, a1's
    rook a 12-bit one), the attacks of every square on random boards."""
    tables = magics.fixed_magic_tables()
    assert len(tables) == 2 * 64 * magics.FIXED_ENTRY_WORDS + 64 * (4096 + 512)
    rng = random.Random(11)
    boards = [rng.getrandbits(64) & rng.getrandbits(64) for _ in range(300)] + [0, (1 << 64) - 1]
    for square in range(64):
        for occupied in boards:
            assert fixed_lookup(tables, 0, square, occupied) == \
                magics.ray_attacks(square, occupied, STRAIGHT), (square, hex(occupied))
            assert fixed_lookup(tables, 1, square, occupied) == \
                magics.ray_attacks(square, occupied, DIAGONAL), (square, hex(occupied))


def test_the_tables_are_as_small_as_their_bits():
    """Each square's table has 2^bits slots, bits the mask's size or one more."""
    tables = magics.magic_tables(BASE)
    sizes = sum(1 << bits for _, bits in magics.ROOK_MAGICS + magics.BISHOP_MAGICS)
    assert len(tables) == 2 * 64 * magics.ENTRY_WORDS + sizes
    for steps, numbers in ((STRAIGHT, magics.ROOK_MAGICS), (DIAGONAL, magics.BISHOP_MAGICS)):
        for square, (_, bits) in enumerate(numbers):
            assert bits - bin(magics.slider_mask(square, steps)).count("1") in (0, 1)


def test_a_wrong_magic_is_refused():
    """A magic that sends two occupancies with different attacks to one slot is named."""
    saved = magics.ROOK_MAGICS
    try:
        magics.ROOK_MAGICS = ((1, 12),) + saved[1:]
        try:
            magics.magic_tables(BASE)
        except AssertionError as e:
            assert "magic 0x0000000000000001 (12 bits) of square 0" in str(e)
        else:
            raise AssertionError("a magic of 1 was taken")
    finally:
        magics.ROOK_MAGICS = saved


def test_the_search_finds_magics_that_check():
    """find_magics on the bishops (seconds): every number it returns builds its table."""
    found = magics.find_magics(DIAGONAL, np.random.default_rng(5), trials=20_000)
    assert len(found) == 64
    saved = magics.BISHOP_MAGICS
    try:
        magics.BISHOP_MAGICS = found
        magics.magic_tables(BASE)
    finally:
        magics.BISHOP_MAGICS = saved


def test_the_between_table():
    """BETWEEN[a * 64 + b] is what a ray walk from a finds before b on their common line, in
    both directions, and nothing for squares on no common line (perft.cl's pin scan); the lines
    buffer holds it between the line tables and the magic tables."""
    between = magics.between_table()
    for a in range(64):
        for b in range(64):
            want = 0
            for steps in (STRAIGHT, DIAGONAL):
                for step in steps:
                    ray = magics.ray_attacks(a, 1 << b, (step,))
                    if ray >> b & 1:
                        want = ray & ~(1 << b)
            assert int(between[a * 64 + b]) == want, (a, b)
            assert between[a * 64 + b] == between[b * 64 + a]
    lines = magics.lines_with_magic_tables()
    assert np.array_equal(lines[layout._LINE_TABLE_SIZE:BASE], between)
    assert np.array_equal(lines[BASE:], magics.magic_tables(BASE))
