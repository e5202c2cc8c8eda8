"""The run's random seed, for the position sets drawn fresh on every run.

The fixed sets keep their own seeds (they are the regression baseline and the published figures);
beside them, some tests draw positions with this seed, which changes on every run unless it is
given: ``pytest --seed N`` or ``CHESSACCEL_SEED=N``. conftest.py picks it once per run (before
pytest-xdist starts its workers, which inherit it through the environment), prints it in the
header, beside every failure and in the closing summary, so a failing draw can be repeated.
"""

import os

__all__ = ["SEED_ENV", "run_seed", "describe"]

SEED_ENV = "CHESSACCEL_SEED"


def run_seed():
    """The seed of this run (conftest.py has set it; 0 when imported outside pytest)."""
    return int(os.environ.get(SEED_ENV, "0"))


def describe():
    """Text to put in a failure message: the seed and how to repeat the run."""
    seed = run_seed()
    return f"random seed {seed}; repeat with {SEED_ENV}={seed} or pytest --seed {seed}"
