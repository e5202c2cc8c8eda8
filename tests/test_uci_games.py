"""Whole games through python-chess's engine driver: against Debian's stockfish at its lowest
strength, and the draws the host must see because the accelerator cannot (threefold
repetition, the fifty-move rule)."""

import shutil

import chess
import chess.engine
import pytest

from uci_harness import ENGINE_COMMAND

STOCKFISH = shutil.which("stockfish") or (
    "/usr/games/stockfish" if shutil.which("/usr/games/stockfish") else None)
needs_stockfish = pytest.mark.skipif(STOCKFISH is None,
                                     reason="stockfish is not installed (apt-get install stockfish)")
#: A game that has not ended after this many plies is a bug in the test's set-up.
MAX_PLIES = 500


@pytest.fixture
def engine():
    e = chess.engine.SimpleEngine.popen_uci(ENGINE_COMMAND, timeout=60)
    yield e
    e.quit()


@needs_stockfish
def test_a_complete_game_against_stockfish_with_only_legal_moves(engine):
    """Low strength and tiny limits on both sides: a whole game in seconds. python-chess's
    driver refuses an illegal bestmove (EngineError), so every move played was legal."""
    opponent = chess.engine.SimpleEngine.popen_uci(STOCKFISH, timeout=60)
    try:
        opponent.configure({"UCI_LimitStrength": True, "UCI_Elo": 1350, "Threads": 1,
                            "Hash": 16})
        engine.configure({"HardwarePlies": 1, "Hash": 8})
        board = chess.Board()
        ours = chess.WHITE
        while not board.is_game_over(claim_draw=True) and board.ply() < MAX_PLIES:
            if board.turn == ours:
                result = engine.play(board, chess.engine.Limit(depth=2))
            else:
                result = opponent.play(board, chess.engine.Limit(depth=2, time=0.02))
            assert result.move in board.legal_moves
            board.push(result.move)
        outcome = board.outcome(claim_draw=True)
        assert outcome is not None, f"no result after {board.ply()} plies"
        assert board.ply() >= 10
    finally:
        opponent.quit()


#: Black to move, a queen and a rook up; white's only hope is to repeat. The knight and the
#: queen have each gone back and forth once, so Nf3 now brings the position about for a third
#: time.
REPETITION_START = "r2q2k1/8/8/8/8/5N2/8/7K b - - 0 1"
REPETITION_MOVES = ["d8d7", "f3g1", "d7d8", "g1f3", "d8d7", "f3g1", "d7d8"]


def test_the_losing_side_claims_a_threefold_repetition(engine):
    board = chess.Board(REPETITION_START)
    for uci in REPETITION_MOVES:
        board.push_uci(uci)
    result = engine.play(board, chess.engine.Limit(depth=4), info=chess.engine.INFO_SCORE)
    assert result.move == chess.Move.from_uci("g1f3")
    assert result.info["score"].relative == chess.engine.Cp(0)
    board.push(result.move)
    assert board.can_claim_threefold_repetition()
    assert board.outcome(claim_draw=True).termination == chess.Termination.THREEFOLD_REPETITION


def test_without_the_history_the_same_position_is_lost(engine):
    """The same position with no history: no draw to claim, the score says so."""
    board = chess.Board("r2q2k1/8/8/8/8/8/8/6NK w - - 8 5")
    info = engine.analyse(board, chess.engine.Limit(depth=4))
    assert info["score"].relative.score() < -1000


#: White a knight down against a queen and a rook, 99 plies without a capture or pawn move:
#: any move white makes ends the game by the fifty-move rule.
FIFTY_LOSING = "r2q2k1/8/8/8/8/5N2/8/7K w - - 99 80"
#: White a queen up, 99 plies: a queen move draws, only the pawn move (or a capture) keeps the
#: win alive.
FIFTY_WINNING = "6k1/8/8/8/8/8/P7/3Q2K1 w - - 99 80"


def test_the_losing_side_sees_the_fifty_move_draw(engine):
    """Lost on material, but every move draws: the engine's score is 0, not minus a queen."""
    board = chess.Board(FIFTY_LOSING)
    result = engine.play(board, chess.engine.Limit(depth=3), info=chess.engine.INFO_SCORE)
    assert result.info["score"].relative == chess.engine.Cp(0)
    board.push(result.move)
    assert board.is_fifty_moves()
    assert board.outcome(claim_draw=True).termination == chess.Termination.FIFTY_MOVES


def test_the_winning_side_resets_the_fifty_move_count(engine):
    board = chess.Board(FIFTY_WINNING)
    result = engine.play(board, chess.engine.Limit(depth=3), info=chess.engine.INFO_SCORE)
    assert board.is_zeroing(result.move), result.move
    assert result.info["score"].relative.score() > 500
