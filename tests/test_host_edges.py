"""Edge cases of the host's input handling (contract/position.py, host/cli.py), as docs/semantics.md
section 8 states them, with hypothesis drawing the cases:

- the FEN python-chess writes for a random legal position parses to that very position, with no
  EPD operation;
- EPD operations written by python-chess come back as python-chess reads them;
- every window bound at and beyond the limits: -INF..INF accepted, one more rejected as out of
  range, an empty window rejected as such (exit 2, one line);
- the en-passant dash glued to a halfmove clock of any width (``w - -12 30``).
"""

import contextlib
import io
import random

import chess
import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from chessaccel.contract.defs import INF
from chessaccel.host.cli import main
from chessaccel.model.position import PositionError, chess_from_board, parse_position

import suites

#: Start positions of the random games: the standard one and the perft suites' (castling rights,
#: en passant and promotions are common there).
STARTS = [chess.STARTING_FEN] + [r.fen for r in suites.perft_records(("standard.perft",
                                                                         "tricky.perft"))]

_PROPERTY = settings(deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])


def random_game(start, seed, plies):
    """python-chess board after up to ``plies`` random legal moves from ``start``."""
    rng = random.Random(seed)
    cb = chess.Board(start)
    for _ in range(plies):
        moves = list(cb.legal_moves)
        if not moves:
            break
        cb.push(rng.choice(moves))
    return chess.Board(cb.fen(en_passant="fen"))    # forget the move stack


games = st.builds(random_game, st.sampled_from(STARTS), st.integers(0, 2**32 - 1),
                  st.integers(0, 60))


def assert_same_position(board, cb, text):
    back = chess_from_board(board)
    assert back.board_fen() == cb.board_fen(), text
    assert back.turn == cb.turn, text
    assert back.castling_rights == cb.clean_castling_rights(), text
    assert board.ep == cb.ep_square, text
    assert back.ep_square == cb.ep_square, text


@_PROPERTY
@given(games, st.sampled_from(["fen", "legal", "xfen"]))
def test_fen_of_a_random_legal_position_parses_to_it(cb, en_passant):
    text = cb.fen(en_passant=en_passant)
    board, ops = parse_position(text)
    assert ops == {}, f"{text!r}: a plain FEN got EPD operations {ops}"
    if text.split()[3] == "-":
        cb.ep_square = None     # python-chess did not write it ("legal", "xfen")
    assert_same_position(board, cb, text)
    # the four-field form (EPD without operations) is the same position
    four, ops = parse_position(cb.epd(en_passant=en_passant))
    assert ops == {} and four.key() == board.key()


#: Words for EPD strings: python-chess writes a string operand between quotes; the host reads
#: whitespace-separated fields, so runs of blanks inside a string come back as one.
_WORD = st.text(alphabet=st.characters(codec="ascii", categories=("L", "N"),
                                       include_characters="-_.+=!?#"), min_size=1, max_size=8)
_STRING = st.lists(_WORD, min_size=1, max_size=4).map(" ".join)


@st.composite
def epd_cases(draw):
    cb = draw(games)
    moves = list(cb.legal_moves)
    ops = {}
    if draw(st.booleans()):
        ops["id"] = draw(_STRING)
    if moves and draw(st.booleans()):
        ops["bm"] = draw(st.lists(st.sampled_from(moves), min_size=1, max_size=3, unique=True))
    if moves and draw(st.booleans()):
        ops["am"] = [draw(st.sampled_from(moves))]
    if draw(st.booleans()):
        ops["acd"] = draw(st.integers(0, 99))
    if draw(st.booleans()):
        ops["ce"] = draw(st.integers(-32767, 32767))
    if draw(st.booleans()):
        ops["c0"] = draw(_STRING)
    if moves and draw(st.booleans()):
        ops["pv"] = [moves[0]]
    return cb, ops


@_PROPERTY
@given(epd_cases())
def test_epd_operations_round_trip(case):
    cb, ops = case
    text = cb.epd(en_passant="fen", **ops)
    board, parsed = parse_position(text)
    assert_same_position(board, cb, text)
    assert _normal(parsed) == _normal(ops), f"{text!r}: wrote {ops}, read {parsed}"


def _normal(ops):
    """Operations with bm/am as sets (python-chess writes their moves sorted)."""
    return {key: (sorted(m.uci() for m in value) if key in ("bm", "am") else value)
            for key, value in ops.items()}


def test_plain_fens_of_every_suite_get_no_operations(suite_positions):
    for fen in suite_positions:
        assert parse_position(fen)[1] == {}, fen
    assert parse_position(chess.STARTING_FEN)[1] == {}
    assert parse_position("4k3/8/8/8/8/8/8/4K3 w - - 0 40")[1] == {}


@pytest.mark.parametrize("clock", ["0", "7", "12", "49", "100", "1234"])
def test_glued_dash_takes_a_halfmove_clock_of_any_width(clock):
    """'w - -12 30': the dash and a halfmove clock of any width, no en passant, no operation."""
    text = f"4k3/8/8/8/8/8/4P3/4K3 w - -{clock} 30"
    board, ops = parse_position(text)
    assert board.ep is None and ops == {}
    assert board.key() == parse_position("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")[0].key()
    board, ops = parse_position(f"4k3/8/8/8/8/8/4P3/4K3 b - -{clock} 30 bm Kd7; id \"x\";")
    assert ops["id"] == "x" and [m.uci() for m in ops["bm"]] == ["e8d7"]


# --- the window bounds ------------------------------------------------------------------------

def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def _expect_window(alpha, beta):
    """What section 8 says of a window: None (accepted) or the words of the one-line error."""
    for value in (alpha, beta):
        if not -INF <= value <= INF:
            return "out of range"
    if alpha >= beta:
        return "empty window"
    return None


BOUNDS = (-INF - 2, -INF - 1, -INF, -INF + 1, -1, 0, 1, INF - 1, INF, INF + 1, INF + 2)


@pytest.mark.parametrize("option", ["--alpha", "--beta"])
@pytest.mark.parametrize("value", BOUNDS)
def test_each_bound_at_and_beyond_the_limits(option, value):
    alpha, beta = (value, INF) if option == "--alpha" else (-INF, value)
    check_window(alpha, beta, [option, str(value)])


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(alpha=st.integers(-INF - 3, INF + 3), beta=st.integers(-INF - 3, INF + 3))
@example(alpha=-INF, beta=INF)
@example(alpha=INF - 1, beta=INF)
@example(alpha=-INF, beta=-INF + 1)
def test_any_window(alpha, beta):
    check_window(alpha, beta, ["--alpha", str(alpha), "--beta", str(beta)])


def check_window(alpha, beta, options):
    status, out, err = _run(["search", "startpos", "--depth", "0", "--json", *options])
    problem = _expect_window(alpha, beta)
    if problem is None:
        assert status == 0 and err == "", f"({alpha}, {beta}) refused: {err.strip()}"
        assert out.count("\n") == 1
    else:
        assert status == 2 and out == "", f"({alpha}, {beta}) accepted, section 8 rejects it"
        lines = err.strip().splitlines()
        assert len(lines) == 1 and problem in lines[0], f"({alpha}, {beta}): {err.strip()}"


@pytest.mark.parametrize("junk", ["\x00", "\r", "\x00\x00", "\r\x00", " \x00 "])
def test_nul_and_cr_are_blanks(junk):
    """Section 8: NUL and CR count as blanks (published suites end lines in them): the position
    and its operations are those of the clean line, and nothing is left over as an operation."""
    clean = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
    board, ops = parse_position(clean + junk)
    assert ops == {} and board.key() == parse_position(clean)[0].key()
    board, ops = parse_position(f"4k3/8/8/8/8/8/4P3/4K3 w - -{junk}bm e4;{junk}id \"a b\";{junk}")
    assert ops["id"] == "a b" and [m.uci() for m in ops["bm"]] == ["e2e4"]
    assert board.key() == parse_position(clean)[0].key()


# --- what the host says, word for word (the one line a user reads) ----------------------------

@pytest.mark.parametrize("text,message", [
    ("", "empty position"),
    ("8/8/8/8/8/8/8/8 w - - 0 1", "illegal position: the board is empty"),
    ("4k3/8/8/8/8/8/8/8 w - - 0 1", "illegal position: white has no king"),
    ("8/8/8/8/8/8/8/4K3 w - - 0 1", "illegal position: black has no king"),
    ("4k3/8/8/8/8/8/8/4K2K w - - 0 1", "illegal position: more than one king of a colour"),
    ("4k3/8/8/8/8/8/8/P3K3 w - - 0 1", "illegal position: a pawn stands on the first or last rank"),
    ("4k2R/8/8/8/8/8/8/4K3 w - - 0 1", "illegal position: the side not to move is in check"),
    ("4k3/8/8/8/8/8/8/4K3", "malformed FEN/EPD: expected at least placement and side, "
                            "got '4k3/8/8/8/8/8/8/4K3'"),
])
def test_position_errors_name_the_problem_exactly(text, message):
    with pytest.raises(PositionError) as caught:
        parse_position(text)
    assert str(caught.value) == message


def test_malformed_fen_message_quotes_python_chess():
    with pytest.raises(PositionError) as caught:
        parse_position("4k3/8/8/8/8/8/8/4K3 x - - 0 1")
    assert str(caught.value).startswith("malformed FEN/EPD: ") and "x" in str(caught.value)
    assert not str(caught.value).endswith("XX")


def test_placement_and_side_alone_are_a_position():
    """Section 8 needs only the placement and the side; the rest defaults to '-'."""
    board, ops = parse_position("4k3/8/8/8/8/8/4P3/4K3 b")
    assert ops == {} and board.side == 1 and board.castling == 0 and board.ep is None


def test_free_text_after_the_position_is_a_comment():
    """Operations python-chess cannot read are kept whole as one comment (the malformed suite's
    verdicts are such text), ';' and blanks trimmed at its ends only."""
    _, ops = parse_position("4k3/8/8/8/8/8/4P3/4K3 w - - ; leave it ok, by player X")
    assert ops == {"comment": "leave it ok, by player X"}
    _, ops = parse_position("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1 ;; 4 moves, X ;")
    assert ops == {"comment": "4 moves, X"}
    _, ops = parse_position("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1 ; 4 moves ;X ;")
    assert ops == {"comment": "4 moves; X"}


@pytest.mark.parametrize("text,side,ops", [
    ("4k3/8/8/8/8/8/4P3/4K3 w -", 0, {}),
    ("4k3/8/8/8/8/8/4P3/4K3 w -;", 0, {}),
    ('4k3/8/8/8/8/8/4P3/4K3 w; id "x";', 0, {"id": "x"}),
    ("4k3/8/8/8/8/8/4P3/4K3 b - ; id \"y\";", 1, {"id": "y"}),
])
def test_short_epd_lines_end_their_position_at_a_semicolon(text, side, ops):
    """Fewer than four position fields, with or without operations after a ';': the missing
    fields are '-' and the operations still parse (no stray token taken as a field)."""
    board, got = parse_position(text)
    assert board.side == side and got == ops and board.castling == 0 and board.ep is None
