"""Positions and comparison helpers shared by the move-generation hardware tests.

The position set is every standard-chess position of the public suites (tests/data, loaded by
tests/suites.py) plus seeded random-play positions biased towards checks, en passant, castling
and promotions. ``DEFAULT_RANDOM`` random positions run in the default suite; the long sweeps
(``@pytest.mark.long``) take ``LONG_RANDOM`` more.
"""

import pytest

from chessaccel.sim.cocotb_runner import toolchain_missing
from seeds import run_seed
from suites import (EPD_SUITES, FEN_SUITES, board_of, epd_positions, fens, perft_records,
                    random_play_positions)

__all__ = ["suite_fens", "movegen_fens", "fast_fens", "DEFAULT_RANDOM", "LONG_RANDOM", "SEED",
           "requires_simulator", "report_first_mismatch", "board_of"]

SEED = 20260303
DEFAULT_RANDOM = 200
LONG_RANDOM = 3000
#: The fast tier's blocks take every FAST_STRIDE-th suite position (1,129 in all), from an offset
#: the run's seed picks: each run checks a third of them, successive runs all of them, and the
#: long tier every one in each run. The blocks also run inside the search core, whose tests
#: compare it with the model node for node.
FAST_STRIDE = 3

#: Skip marker for every test that runs the RTL under cocotb + Icarus.
requires_simulator = pytest.mark.skipif(toolchain_missing() is not None,
                                        reason=f"RTL simulation unavailable: {toolchain_missing()}")


def suite_fens():
    """Distinct positions of all public suites, in a fixed order."""
    out, seen = [], set()
    candidates = [r.fen for r in perft_records()]
    for name in FEN_SUITES:
        candidates += fens(name)
    candidates += epd_positions(EPD_SUITES)
    for fen in candidates:
        key = " ".join(fen.split()[:4])
        if key not in seen:
            seen.add(key)
            out.append(fen)
    return out


def movegen_fens(random_count=DEFAULT_RANDOM, seed=SEED):
    """Suite positions followed by ``random_count`` seeded random-play positions."""
    return suite_fens() + random_play_positions(seed, random_count)


def fast_fens(random_count=DEFAULT_RANDOM, seed=SEED):
    """The fast tier's share of ``movegen_fens``: a third of the suite positions, which third
    chosen by the run's seed (tests/seeds.py, printed with every failure), then the same
    ``random_count`` random-play positions."""
    return suite_fens()[run_seed() % FAST_STRIDE::FAST_STRIDE] + random_play_positions(
        seed, random_count)


def report_first_mismatch(block, rows_context, expected, observed):
    """Fail with the first transaction where the RTL and the model differ.

    ``rows_context[i]`` is a (fen, description of the transaction) pair.
    """
    assert len(observed) == len(expected), (
        f"{block}: the RTL answered {len(observed)} transactions of {len(expected)}")
    for i, (want, got) in enumerate(zip(expected, observed)):
        if want != got:
            fen, what = rows_context[i]
            pytest.fail(f"{block} differs from the model at transaction {i}\n"
                        f"  position: {fen}\n  step:     {what}\n"
                        f"  model:    {want}\n  RTL:      {got}", pytrace=False)
