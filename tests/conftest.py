"""Shared fixtures: the position sets the model and hardware tests draw from (tests/suites.py),
and the run's random seed (tests/seeds.py)."""

import os
import random

import pytest
from hypothesis import settings

import seeds
import suites
from chessaccel.host.backends.model import ModelBackend
from chessaccel.host.engine.executors import BatchExecutor

@pytest.fixture(scope="module")
def inline():
    """The engine's executor that runs each batch at once on the model (the engine tests')."""
    executor = BatchExecutor(ModelBackend())
    yield executor
    executor.close()


@pytest.fixture
def help_lines(capsys, monkeypatch):
    """A command's ``--help`` at 200 columns (one option a line), as stripped lines: call it with
    the command's ``main``."""
    def lines(main):
        monkeypatch.setenv("COLUMNS", "200")
        with pytest.raises(SystemExit):
            main(["--help"])
        return [line.strip() for line in capsys.readouterr().out.splitlines()]
    return lines


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


#: ``--hypothesis-profile=mutation`` (tools/mutation.py): fewer examples for each of thousands of
#: mutants; tests that want more set max_examples themselves.
settings.register_profile("mutation", max_examples=25)


# --- the run's random seed (tests/seeds.py) ---------------------------------------------------

def pytest_addoption(parser):
    parser.addoption("--seed", default=None,
                     help=f"seed of the position sets drawn fresh each run (default: "
                          f"${seeds.SEED_ENV}, else a new random seed)")


def pytest_configure(config):
    if hasattr(config, "workerinput"):
        return      # an xdist worker: the controller has put the seed in the environment
    text = config.getoption("--seed") or os.environ.get(seeds.SEED_ENV)
    if text is None:
        seed = random.SystemRandom().randrange(1 << 32)
    else:
        try:
            seed = int(text)
        except ValueError:
            raise pytest.UsageError(f"seed must be an integer, got {text!r}") from None
    os.environ[seeds.SEED_ENV] = str(seed)


def pytest_report_header(config):
    return seeds.describe()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.sections.append(("random seed", seeds.describe()))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if exitstatus not in (0, 5):
        terminalreporter.write_line(seeds.describe())
