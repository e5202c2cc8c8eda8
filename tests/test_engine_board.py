"""The engine on the simulated board (``verilator``: BoardTop compiled by Verilator behind a pty
and the link protocol, exactly as a real board behind a serial port): the link executor's
jobs against the model, cancelling on the board, the frontier proof over the link, and a
whole UCI game at a slow time control. Long: the simulated board runs a few hundred nodes per
second, and its first build takes minutes."""

import shutil
import time

import chess
import chess.engine
import pytest

from chessaccel.contract.defs import INF
from chessaccel.host.engine.executors import Job, LinkExecutor, make_executor
from chessaccel.sim.boardsim import verilator_missing
from chessaccel.model import search as model

import suites
from test_engine_frontier import check_position
from uci_harness import ENGINE_COMMAND

pytestmark = [pytest.mark.long,
              pytest.mark.skipif(verilator_missing() is not None, reason=f"{verilator_missing()}")]

#: Cores of the simulated board (the build the board tests use too).
CORES = 2
STOCKFISH = shutil.which("stockfish") or (
    "/usr/games/stockfish" if shutil.which("/usr/games/stockfish") else None)


@pytest.fixture(scope="module")
def board_executor():
    executor = make_executor("verilator", CORES)
    yield executor
    executor.close()


def test_link_executor_jobs_are_the_models(board_executor):
    assert isinstance(board_executor, LinkExecutor)
    assert (board_executor.slots, board_executor.parallel) == (CORES, True)
    fens = [suites.sparse_position(70 + i, pieces=4, plies=4) for i in range(6)]
    jobs = [Job(suites.board_of(fen), 2, -INF, INF) for fen in fens]
    batch = board_executor.submit(jobs)
    while not batch.done():
        batch.wait(1)
    for job, got in zip(jobs, batch.results):
        expected = model.search(job.board, job.depth)
        assert (got["score"], got["best_move"], got["nodes"]) == \
            (expected.score, expected.best_move, expected.nodes)
        assert got["cycles"] > got["nodes"]


def test_a_cancelled_job_is_aborted_on_the_board(board_executor):
    slow = board_executor.submit([Job(suites.board_of(
        "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"), 6, -INF, INF)])
    time.sleep(1.0)
    slow.cancel()
    start = time.monotonic()
    quick = board_executor.submit([Job(suites.board_of("4k3/8/8/8/8/8/8/4K2R w K - 0 1"),
                                       1, -INF, INF)])
    while quick.results[0] is None:
        quick.wait(1)
        assert time.monotonic() - start < 60
    assert slow.results[0] is None and quick.results[0]["nodes"] > 1


def test_the_frontier_over_the_link(board_executor):
    """The frontier proof (tests/test_engine_frontier.py) with the jobs on the board."""
    fens = [suites.sparse_position(500 + i, pieces=3, plies=4) for i in range(8)]
    for index, fen in enumerate(fens):
        check_position(board_executor, fen, 2, index % 2, full_pv=False)


@pytest.mark.skipif(STOCKFISH is None, reason="stockfish is not installed")
def test_a_complete_uci_game_on_the_simulated_board():
    ours = chess.engine.SimpleEngine.popen_uci(ENGINE_COMMAND, timeout=900)
    theirs = chess.engine.SimpleEngine.popen_uci(STOCKFISH)
    try:
        ours.configure({"Backend": "verilator", "Accelerators": CORES, "HardwarePlies": 1})
        theirs.configure({"UCI_LimitStrength": True, "UCI_Elo": 1350})
        ours.ping()     # isready: the board is built and started here, before any clock runs
        board = chess.Board()
        while not board.is_game_over(claim_draw=True) and board.ply() < 300:
            if board.turn == chess.WHITE:
                started = time.monotonic()
                result = ours.play(board, chess.engine.Limit(time=1.5))
                assert time.monotonic() - started < 1.5 + 0.3
            else:
                result = theirs.play(board, chess.engine.Limit(depth=1))
            assert result.move in board.legal_moves
            board.push(result.move)
        assert board.outcome(claim_draw=True) is not None
    finally:
        ours.quit()
        theirs.quit()
