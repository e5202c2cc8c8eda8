"""Shared fixtures: the position sets the model and hardware tests draw from (tests/suites.py)."""

import pytest

import suites

#: Seed and size of the random-play positions every move-generator test uses.
COVERAGE_SEED = 20261122
COVERAGE_COUNT = 5000


@pytest.fixture(scope="session")
def coverage_positions():
    """(fen, features) pairs from seeded random play, rich in checks, en passant, castling and
    promotions (``suites.coverage_positions``)."""
    return suites.coverage_positions(COVERAGE_SEED, COVERAGE_COUNT)


@pytest.fixture(scope="session")
def suite_positions():
    """Every distinct position of the perft, mate, stalemate and EPD suites, as FEN."""
    fens = [r.fen for r in suites.perft_records()]
    for name in suites.FEN_SUITES:
        fens += suites.fens(name)
    fens += suites.epd_positions()
    return list(dict.fromkeys(fens))
