"""Reading positions (contract/position.py): what is accepted, what is rejected and why.

malformed-epd.epd is a published parser-breaking suite whose lines carry a free-text verdict.
Each line is classified by that verdict and fed to ``parse_position`` exactly as it stands in the
file (its trailing NUL byte included):

- "leave it ok ... else cull" (impossible piece counts): the engine's choice. The accelerator
  holds any 64 pieces, so the contract (docs/semantics.md, section 8) accepts them;
- "should be OK", "not a problem", "overridable": accepted (contradicted castling rights are
  cleaned, move numbers are not the accelerator's business);
- "cull", "garbage", "bad EPD": rejected with a PositionError;
- anything else is listed in ``EXCEPTIONS`` with the reason for its outcome.
"""

import chess
import pytest

from chessaccel.contract.defs import Color
from chessaccel.contract.geometry import CASTLE_BIT, parse_square
from chessaccel.model.position import (PositionError, board_from_chess, chess_from_board,
                                      parse_position)
from chessaccel.model.board import Board

import suites

ACCEPT, REJECT = "accepted", "rejected"

#: Verdict words, checked in this order (the "leave it ok ... else cull" lines name both).
VERDICTS = (
    ("leave", ACCEPT),
    ("should be ok", ACCEPT),
    ("not a problem", ACCEPT),
    ("overridable", ACCEPT),
    ("cull", REJECT),
    ("garbage", REJECT),
    ("bad epd", REJECT),
)

#: Lines whose comment gives no verdict, by line number: (outcome, reason).
EXCEPTIONS = {
    17: (REJECT, "a UCI 'position ... moves' line marked work in progress; its position has "
                 "black's king on d8 in check from the bishop on c7 with white to move"),
}

#: What the bad-EPD lines of the suite have in common: the side not to move is in check.
NOT_TO_MOVE_IN_CHECK = "the side not to move is in check"


def malformed_lines():
    """(line number, raw line, verdict) of malformed-epd.epd, raw = as in the file."""
    text = (suites.DATA_DIR / "malformed-epd.epd").read_bytes().decode("ascii")
    out = []
    for number, raw in enumerate(text.split("\n"), 1):
        if not raw.strip("\x00 "):
            continue
        comment = raw.partition(";")[2].lower()
        verdict = next((v for word, v in VERDICTS if word in comment), None)
        if number in EXCEPTIONS:
            verdict = EXCEPTIONS[number][0]
        out.append((number, raw, verdict))
    return out


MALFORMED = malformed_lines()


def test_every_malformed_line_has_a_verdict():
    assert len(MALFORMED) == 106
    assert [n for n, _, verdict in MALFORMED if verdict is None] == []


@pytest.mark.parametrize("number,raw,verdict", MALFORMED, ids=[f"line{n}" for n, _, _ in MALFORMED])
def test_malformed_suite_line(number, raw, verdict):
    if verdict == ACCEPT:
        board, _ = parse_position(raw)
        assert Board.from_bits(board.to_bits()).key() == board.key()
    else:
        with pytest.raises(PositionError) as caught:
            parse_position(raw)
        message = str(caught.value)
        assert message and "\n" not in message
        if "bad epd" in raw.lower():
            assert NOT_TO_MOVE_IN_CHECK in message


def test_glued_en_passant_dash_reads_as_dash_and_clock():
    """'w - -0 1' (a missing blank, in published EPD files) is the dash and a halfmove clock."""
    board, _ = parse_position("1R6/1brk2p1/4p2p/p1P1Pp2/P7/6P1/1P4P1/2R3K1 w - -0 1 bm b8b7;")
    assert board.ep is None and board.side == Color.WHITE.value


# --- positions the accelerator cannot hold ----------------------------------------------------

@pytest.mark.parametrize("fen,problem", [
    ("8/8/8/8/8/8/8/8 w - - 0 1", "empty"),
    ("4k3/8/8/8/8/8/8/8 w - - 0 1", "white has no king"),
    ("8/8/8/8/8/8/8/4K3 w - - 0 1", "black has no king"),
    ("4k3/8/8/8/8/8/8/4K2K w - - 0 1", "more than one king"),
    ("4k2k/8/8/8/8/8/8/4K3 b - - 0 1", "more than one king"),
    ("4k3/8/8/8/8/8/8/P3K3 w - - 0 1", "first or last rank"),
    ("p3k3/8/8/8/8/8/8/4K3 w - - 0 1", "first or last rank"),
    ("4k2R/8/8/8/8/8/8/4K3 w - - 0 1", NOT_TO_MOVE_IN_CHECK),
    ("4k3/4R3/8/8/8/8/8/4K3 w - - 0 1", NOT_TO_MOVE_IN_CHECK),
])
def test_unholdable_position_is_rejected_naming_the_problem(fen, problem):
    with pytest.raises(PositionError, match=problem):
        parse_position(fen)


@pytest.mark.parametrize("text", ["", "   ", "\x00", "hello", "rnbqkbnr/pppppppp w",
                                  "8/8/8/8/8/8/8/8/8 w - - 0 1", "4k3/8/8/8/8/8/8/4K3 x - - 0 1",
                                  "4k3/8/8/8/8/8/8/4K3 w - z9 0 1"])
def test_malformed_text_is_rejected(text):
    with pytest.raises(PositionError) as caught:
        parse_position(text)
    assert "\n" not in str(caught.value)


def test_non_text_is_rejected():
    with pytest.raises(PositionError):
        parse_position(None)


# --- unusual positions the accelerator can hold -----------------------------------------------

@pytest.mark.parametrize("fen", [
    "4k3/pppppppp/p7/8/8/8/PPPPPPPP/4K3 w - - 0 1",             # nine black pawns
    "rnbqkbnr/ppppNNpp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", # eighteen white men
    "4k3/8/8/8/8/8/8/r3K2r w - - 0 1",                        # two rooks check at once
    "4k3/8/8/8/1b6/8/8/r3K2r w - - 0 1",                      # triple check
])
def test_unusual_but_holdable_position_is_accepted(fen):
    board, _ = parse_position(fen)
    assert board_from_chess(chess.Board(fen)).key() == board.key()


def test_contradicted_castling_rights_are_cleaned():
    board, _ = parse_position("nrbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
    kept = CASTLE_BIT[0, True] | CASTLE_BIT[0, False] | CASTLE_BIT[1, True]
    assert board.castling == kept
    board, _ = parse_position("krr5/8/8/8/8/8/8/4K3 w kq - 0 1")
    assert board.castling == 0


def test_impossible_en_passant_square_is_dropped_and_a_possible_one_kept():
    start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
    assert parse_position(f"{start} w KQkq e3 0 1")[0].ep is None
    after_e4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"
    assert parse_position(after_e4)[0].ep == parse_square("e3")


# --- EPD operations and round trips -----------------------------------------------------------

def test_epd_operations_are_parsed():
    _, ops = parse_position(suites.suite_lines("wac.epd")[0][1])
    assert ops["id"] == "WAC.001"
    assert [m.uci() for m in ops["bm"]] == ["g3g6"]


def test_four_field_fen_and_move_numbers():
    four = parse_position("4k3/8/8/8/8/8/8/4K3 b - -")[0]
    six = parse_position("4k3/8/8/8/8/8/8/4K3 b - - 12 40")[0]
    assert four.key() == six.key() and four.side == Color.BLACK.value


#: Unpacking a Position through Amaranth's layouts takes ~50 ms: every n-th suite position only.
PACKED_ROUND_TRIP_STRIDE = 25


def test_every_suite_position_round_trips(suite_positions):
    """Parsed board -> python-chess, and (a sample) board -> packed Position -> board, lose
    nothing."""
    for i, fen in enumerate(suite_positions):
        board, _ = parse_position(fen)
        if i % PACKED_ROUND_TRIP_STRIDE == 0:
            assert Board.from_bits(board.to_bits()).key() == board.key(), fen
        cb = chess.Board(fen)
        back = chess_from_board(board)
        assert back.board_fen() == cb.board_fen() and back.turn == cb.turn, fen
        assert back.castling_rights == cb.clean_castling_rights(), fen
