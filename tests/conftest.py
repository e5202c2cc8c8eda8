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


# --- the order tests are handed to the pytest-xdist workers ----------------------------------

#: Run first, in this order: one test per simulation build that several tests share (the
#: Verilator cores and boards of sim/rtl_search.py and sim/boardsim.py, the gate-mapped MoveWalker
#: of sim/cocotb_runner.py), longest build first, then the longest runs on those builds. A build
#: is made once (a lock file per cache entry), but a worker that asks for a build another worker
#: is making waits idle on the lock; and a build first needed by a test near the end of the
#: collection (the 6-ply cores of test_search.py's last test) made the run's last minutes one
#: worker building while the other had nothing left. Started at once, each by its own test, the
#: builds keep both workers busy and the short tests fill the end. The order only changes when a
#: test runs, never what it checks; test_testsuite.py checks that each entry names a test.
#: Entries are ``file::name`` or ``file::name[parameters]``; a bare name takes every parameter.
RUN_FIRST = (
    "test_evalcli.py::test_rtl_reports_the_same_total",                     # the terms core
    "test_board_backend.py::test_the_verilator_backend_starts_its_own_board",  # boards 0c, 2c
    # the 6-ply cores (long tier)
    "test_search.py::test_a_full_stack_evaluates_its_leaf_node_for_node[1-thread]",
    "test_search.py::test_a_full_stack_evaluates_its_leaf_node_for_node[2-threads]",
    "test_backends.py::test_the_rtl_backend_on_the_verilator_core",          # the search core
    "test_search.py::test_search_matches_model[2-threads]",                  # the 2-thread core
    "test_boardsim.py::test_jobs_over_the_pty_equal_the_model[1-core-2-threads]",  # 1c2t (long)
    "test_movegen.py::test_walker_matches_model_full_width",                 # gate-mapped walker
    # then the longest runs on those builds, each well after its builds' first test
    "test_search.py::test_search_with_terms_matches_model",
    "test_boards.py::test_two_simulated_boards_search_as_one",
    "test_cycle_budget.py::test_two_threads_take_each_job_exactly_twice_the_cycles",
    # not the walker's quiescence walk: the walker's build is the last one started, and this
    # entry so soon after it had the other worker wait on the build's lock for a minute and a
    # half (a clean clone, 2026-11-29); in the collection's order it comes minutes later
)


def _run_first_rank(nodeid):
    """Place of ``nodeid`` in RUN_FIRST (len(RUN_FIRST) when it is not there)."""
    name = nodeid.rpartition("/")[2]
    for key in (name, name.partition("[")[0]):
        if key in _RUN_FIRST_RANK:
            return _RUN_FIRST_RANK[key]
    return len(RUN_FIRST)


_RUN_FIRST_RANK = {name: i for i, name in enumerate(RUN_FIRST)}


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """RUN_FIRST's tests to the front (after pytest's own ordering by fixture parameters; the
    rest keep their order). Every xdist worker sorts its identical collection the same way."""
    items.sort(key=lambda item: _run_first_rank(item.nodeid))


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
