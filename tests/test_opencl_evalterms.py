"""The OpenCL kernels' "terms" evaluation (board.cl, eval_terms, built with EVAL_TERMS = 1)
against the model's, node for node on PoCL: the same score, best move and node count on every
job, over positions of the existing suites (tests/suites.py, tests/data). A mismatch names the
first differing job and position. The "pst" program is left as it is (test_opencl.py)."""

import pytest

from chessaccel.contract.defs import INF
from chessaccel.contract.geometry import move_uci
from chessaccel.host.backends import BackendError, get_backend
from chessaccel.host.opencl import OpenCLBackend
from chessaccel.host.opencl.layout import evaluation_overrides, kernel_prelude
from chessaccel.model.position import chess_from_board
from chessaccel.model.search import search as model_search

import seeds
import suites

#: Random-play positions per run, drawn with the run's seed, beside the fixed suites.
RANDOM_COUNT = 60


@pytest.fixture(scope="module")
def backend():
    b = OpenCLBackend("pocl", evaluation="terms")
    yield b
    b.close()


def _uci(move):
    return move_uci(move) if move else None


def assert_jobs_equal(backend, jobs):
    """Every (board, depth, alpha, beta) job: the kernels' result is the model's."""
    results = backend.search_many(jobs)
    for i, ((board, depth, alpha, beta), got) in enumerate(zip(jobs, results)):
        want = model_search(board, depth, alpha, beta, evaluation="terms")
        if (got.score, got.best_move, got.nodes) != (want.score, want.best_move, want.nodes):
            raise AssertionError(
                f"job {i} of {len(jobs)} differs: {chess_from_board(board).fen()} depth {depth} "
                f"window ({alpha}, {beta}): opencl score {got.score} move {_uci(got.best_move)} "
                f"nodes {got.nodes}; model score {want.score} move {_uci(want.best_move)} "
                f"nodes {want.nodes}")


def test_the_prelude_builds_terms_only_when_asked():
    assert "#define EVAL_TERMS 0" in kernel_prelude()
    assert "#define EVAL_TERMS 1" in kernel_prelude(evaluation_overrides("terms"))
    assert "#define BISHOP_PAIR_MG" in kernel_prelude()      # the weights, from the JSON


def test_suite_jobs_depth_0_and_1(backend):
    """Quiescence alone and one ply above it: every evaluation point of the suites."""
    boards = suites.evaluation_boards()
    assert len(boards) >= 150
    assert_jobs_equal(backend, [(b, d, -INF, INF) for b in boards for d in (0, 1)])


def test_suite_jobs_depth_2_with_windows(backend):
    boards = suites.evaluation_boards()[:80]
    jobs = [(b, 2, -INF, INF) for b in boards]
    jobs += [(b, 2, -30, 30) for b in boards[:40]] + [(b, 1, 50, 51) for b in boards[:40]]
    assert_jobs_equal(backend, jobs)


def test_random_positions(backend):
    seed = seeds.run_seed()
    boards = [suites.board_of(f) for f in suites.random_play_positions(seed, RANDOM_COUNT)]
    try:
        assert_jobs_equal(backend, [(b, 1, -INF, INF) for b in boards])
    except AssertionError as error:
        raise AssertionError(f"{error} ({seeds.describe()})") from None


def test_terms_differ_from_pst_on_the_device(backend):
    """The two programs really evaluate differently (the define reached the kernels)."""
    board = suites.board_of("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    pst = OpenCLBackend("pocl")
    try:
        a = pst.search(board, 0, -INF, -INF + 1)
    finally:
        pst.close()
    b = backend.search(board, 0, -INF, -INF + 1)
    assert (a.score, b.score) == (model_search(board, 0, -INF, -INF + 1).score,
                                  model_search(board, 0, -INF, -INF + 1, evaluation="terms").score)
    assert a.score != b.score


def test_backends_without_terms_are_refused_in_one_line():
    with pytest.raises(BackendError, match="backend 'serial:/dev/ttyUSB0' cannot evaluate with "
                                           "'terms'"):
        get_backend("serial:/dev/ttyUSB0", evaluation="terms")
    assert get_backend("rtl", evaluation="terms").evaluation == "terms"
    with pytest.raises(BackendError, match="unknown evaluation 'nope'"):
        get_backend("model", evaluation="nope")
    assert get_backend("model", evaluation="terms").evaluation == "terms"


def test_opencls_own_builtins_evaluate_the_terms_the_same():
    """The terms (popcounts of every kind) with OpenCL's own popcount and clz, as a GPU builds
    them (CPU_BUILTINS = 0; PoCL builds Clang's builtins): the model's results too."""
    plain = OpenCLBackend("pocl", evaluation="terms", overrides={"CPU_BUILTINS": 0})
    try:
        assert plain.device.overrides["CPU_BUILTINS"] == 0
        boards = suites.evaluation_boards()[::4]
        assert_jobs_equal(plain, [(board, 1, -INF, INF) for board in boards])
    finally:
        plain.close()
