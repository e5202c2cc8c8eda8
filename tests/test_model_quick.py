"""The model's quick check: a handful of perft and search jobs with strong answers, in seconds.

The first tests a mutant of sim/model/ or chessaccel/ meets in ``make mutation`` (tools/mutation.py)
and a fast smoke check of the fast tier: perft at depth 2-3 on positions with castling, en
passant, promotions and checks against the published counts; searches against the independent
recursive alpha-beta of tests/oracle.py (score, best move and node count), in full and narrow
windows, at depths 0-2, and quiescence.
"""

import dataclasses

import chess
import pytest

from chessaccel.contract.defs import INF, MATE, MAX_DEPTH, MAX_PLY, PieceType
from chessaccel.contract.geometry import CODE, EMPTY, move_uci
from chessaccel.model.board import Board
from chessaccel.model.movegen import legal_moves
from chessaccel.model.movegen import MovePicker
from chessaccel.model.search import (SearchError, job_problem, mate_distance, perft,
                                         perft_divide, search)

import suites
from oracle import alphabeta, expected_order

#: (FEN, depth, published count): castling both ways, en passant, promotions, checks, pins.
PERFT_JOBS = (
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", 2, 568),
    ("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", 2, 568),
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 2, 2039),
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 3, 2812),
    ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 2, 264),
    ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 2, 1486),
    ("8/8/8/1k6/3Pp3/8/8/4KQ2 b - d3 0 1", 3, 711),
    ("1b1k4/8/8/1rPpK3/8/8/8/8 w - d6 0 1", 3, 555),
    ("8/ppp3p1/8/8/3p4/5Q2/1ppp2K1/brk4n w - - 0 1", 2, 390),
)
#: Positions searched against the oracle: tactics, an ending, a mate, a stalemate trap.
#: (FEN, deepest depth searched): depths 0 up to it.
SEARCH_FENS = (
    ("r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4", 2),
    ("2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1", 1),
    ("8/8/4k3/8/2p5/8/B2P2K1/8 w - - 0 1", 2),
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 0),
    ("1k1r4/pp1b1R2/3q2pp/4p3/2B5/4Q3/PPP2B2/2K5 b - - 0 1", 2),
    ("7k/5Q2/6K1/8/8/8/8/8 w - - 0 1", 2),
    ("rnbqkbnr/pppp1ppp/8/4p3/3P4/8/PPP1PPPP/RNBQKBNR w KQkq e6 0 2", 2),
)
WINDOWS = ((-INF, INF), (-50, 50), (0, 1), (200, 400))


@pytest.mark.parametrize("fen,depth,count", PERFT_JOBS)
def test_quick_perft(fen, depth, count):
    board = suites.board_of(fen)
    before = board.key()
    assert perft(board, depth) == count, fen
    assert board.key() == before
    assert [move_uci(m) for m in legal_moves(board)] == expected_order(chess.Board(fen))


@pytest.mark.parametrize("fen,deepest", SEARCH_FENS)
def test_quick_search_equals_the_oracle(fen, deepest):
    for depth in range(deepest + 1):
        for alpha, beta in WINDOWS:
            board = suites.board_of(fen)
            before = board.key()
            got = search(board, depth, alpha, beta)
            assert board.key() == before, f"{fen}: search did not restore the board"
            score, best, nodes = alphabeta(chess.Board(fen), depth, alpha, beta)
            mine = (got.score, move_uci(got.best_move) if got.best_move else None, got.nodes)
            assert mine == (score, best, nodes), \
                f"{fen} depth {depth} ({alpha}, {beta}): model {mine}, contract {(score, best, nodes)}"
            if got.pv:
                assert got.pv[0] == got.best_move


# --- the model board's conversions (sim/model/board.py) --------------------------------------

#: En-passant squares for each side to move, castling rights, promotions about to happen.
ROUND_TRIP_FENS = tuple(fen for fen, _, _ in PERFT_JOBS) + (
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "rnbqkbnr/pppp1ppp/8/8/3Pp3/8/PPP1PPPP/RNBQKBNR b KQkq d3 0 3",
    "4k3/8/8/8/Pp6/8/8/4K3 b - a3 0 1",
    "4k3/8/8/6pP/8/8/8/4K3 w - g6 0 1",
)


@pytest.mark.parametrize("fen", ROUND_TRIP_FENS)
def test_a_packed_position_unpacks_to_the_same_board(fen):
    """What a job carries (Position bits) is the board it was packed from: squares, side,
    castling, the en-passant square (rank 6 with white to move, rank 3 with black) and kings."""
    board = suites.board_of(fen)
    back = Board.from_bits(board.to_bits())
    assert (back.key(), back.kings) == (board.key(), board.kings), fen
    assert back.ep == chess.Board(fen).ep_square, fen


def test_a_copy_is_equal_and_independent():
    board = suites.board_of(ROUND_TRIP_FENS[2])
    copy = board.copy()
    assert (copy.key(), copy.kings) == (board.key(), board.kings)
    move = legal_moves(copy)[0]
    copy.make(move)
    copy.kings[0] = None
    assert (board.key(), board.kings) == (suites.board_of(ROUND_TRIP_FENS[2]).key(),
                                          suites.board_of(ROUND_TRIP_FENS[2]).kings)


def test_an_undo_record_cannot_be_changed():
    """The SearchStack keeps the records make returns: they are values, not shared state."""
    board = suites.board_of(ROUND_TRIP_FENS[0])
    undo = board.make(legal_moves(board)[0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        undo.captured = 0


@pytest.mark.parametrize("placement,problem", [
    ("4k3/8/8/8/8/8/8/K3K3", "2 white kings"),
    ("4k2k/8/8/8/8/8/8/8", "0 white kings"),
    ("4k2k/8/8/8/8/8/8/4K3", "2 black kings"),
    ("8/8/8/8/8/8/8/4K3", "0 black kings"),
])
def test_a_refused_job_names_the_side_whose_kings_are_wrong(placement, problem):
    """The core needs one king a side (job_problem): the refusal counts each colour's own."""
    board = Board([EMPTY] * 64, 0, 0, None)
    for square, piece in chess.Board(placement + " w - - 0 1").piece_map().items():
        board.sq[square] = CODE[0 if piece.color == chess.WHITE else 1][PieceType.KING.value]
    kings, name = problem.split(" ", 1)
    assert job_problem(board, 1) == \
        f"the position has {kings} {name} (the accelerator needs exactly one)"


@pytest.mark.parametrize("fen,uci,ep", [
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "e2e4", chess.E3),
    ("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", "d7d5", chess.D6),
])
def test_a_double_push_sets_the_en_passant_square_it_passed(fen, uci, ep):
    """make: the square a double push passes becomes the en-passant square, a square index
    like any other (it is packed for the link and compared with move targets)."""
    board = suites.board_of(fen)
    move = next(m for m in legal_moves(board) if move_uci(m) == uci)
    board.make(move)
    assert board.ep == ep and type(board.ep) is int
    assert Board.from_bits(board.to_bits()).key() == board.key()


def test_job_problems_are_named_exactly():
    """What the core refuses (its BAD_JOB), as the host's link client names it: depths 0 to
    MAX_DEPTH are taken, the window only for a search (perft has none)."""
    board = suites.board_of("4k3/8/8/8/8/8/8/4K3 w - - 0 1")
    assert job_problem(board, 0) is None and job_problem(board, MAX_DEPTH) is None
    assert job_problem(board, MAX_DEPTH + 1) == f"depth {MAX_DEPTH + 1} out of range 0..{MAX_DEPTH}"
    assert job_problem(board, -1) == f"depth -1 out of range 0..{MAX_DEPTH}"
    window = f"window (5, 5) must satisfy {-INF} <= alpha < beta <= {INF}"
    assert job_problem(board, 2, 5, 5) == window
    assert job_problem(board, 2, 5, 5, perft=True) is None


@pytest.mark.parametrize("plies", [0, 1, 2, 3, 4, MAX_PLY - 1, MAX_PLY])
def test_mate_distance_counts_moves_from_the_plies(plies):
    """A mate found ``plies`` plies below the root scores MATE - plies for the side that mates
    (plies odd: it moves first) and -(MATE - plies) for the side mated (plies even): moves to
    mate are the mating side's moves, (plies + 1) // 2, negative for the side mated."""
    moves = mate_distance(MATE - plies if plies % 2 else -(MATE - plies))
    assert moves == ((plies + 1) // 2 if plies % 2 else -(plies // 2)) and type(moves) is int


@pytest.mark.parametrize("score", [0, 1, -1, 900, -900, MATE - MAX_PLY - 1, -(MATE - MAX_PLY - 1)])
def test_a_score_short_of_the_mate_range_is_no_mate(score):
    assert mate_distance(score) is None


def test_a_traced_picker_records_each_move_as_the_blocks_made_it():
    """The transactions a traced MovePicker records (what the RTL block tests replay): each
    pseudo-legal move comes from a GenAggressor answer for its victim, in order, and the node
    ends with both castling questions (full width) after the victim tree runs dry."""
    board = suites.board_of("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    picker = MovePicker(board, False, trace=True)
    moves = []
    while (move := picker.next()) is not None:
        moves.append(move)
    answered = [(step[3], step[1]) for step in picker.steps
                if step[0] == "aggressor" and step[3] is not None]
    castles = [step for step in picker.steps if step[0] == "castle"]
    assert [(a, v) for a, v, _ in moves[:len(answered)]] == answered   # no promotions here
    assert len(moves) == len(answered) + sum(ok for _, _, ok in castles) == 48  # Kiwipete's 48
    assert [step[0] for step in picker.steps[-3:]] == ["victim", "castle", "castle"]
    assert picker.steps[-3][2] is None
    assert MovePicker(board).steps is None


@pytest.mark.parametrize("depth", [1, 2])
def test_quick_divide_against_python_chess(depth):
    """perft_divide: each root move's leaf count below it, python-chess's (the divide of Kiwipete,
    whose root has castling, captures and promotions-to-be)."""
    fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
    divide = perft_divide(suites.board_of(fen), depth)
    assert {move_uci(m): n for m, n in divide.items()} == suites.chess_divide(chess.Board(fen), depth)


@pytest.mark.parametrize("depth", [0, -1, MAX_DEPTH + 1, "2", 2.0])
def test_divide_refuses_a_depth_outside_1_to_max_depth(depth):
    with pytest.raises(SearchError, match=rf"^divide needs a depth in 1\.\.{MAX_DEPTH}, got {depth}$"):
        perft_divide(suites.board_of(chess.STARTING_FEN), depth)
