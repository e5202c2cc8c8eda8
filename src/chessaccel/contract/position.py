"""Reading positions: FEN and EPD text -> a checked position the accelerator can hold.

python-chess parses the text (it is the project's oracle for the rules); this module adds the
accelerator's own limits and turns every problem into a ``PositionError`` with a one-line reason.
"""

import re

import chess


__all__ = ["PositionError", "read_position"]


class PositionError(ValueError):
    """A FEN/EPD line that is malformed or describes a position the accelerator cannot hold."""


#: Characters some published suites leave in a line (NUL padding, the CR of CR LF): blanks here.
_BLANKS = str.maketrans({"\x00": " ", "\r": " "})
#: An en-passant dash glued to the halfmove clock ("w - -0 1"), as in published EPD files.
_GLUED_EP_DASH = re.compile(r"-(\d+)")
_EP_FIELD = 3


def read_position(text):
    """Parse one FEN or EPD line; returns ``(chess_board, operations)``, the python-chess board
    checked against the accelerator's limits (``chessaccel.model.position.parse_position`` turns it
    into the model's Board).

    The first four fields are the position; two move numbers may follow (FEN); the rest are EPD
    operations (``bm Qg6; id "WAC.001";``), returned as python-chess parses them, or as
    ``{"comment": text}`` when they are free text. Raises PositionError naming the problem.
    """
    if not isinstance(text, str) or not text.translate(_BLANKS).strip():
        raise PositionError("empty position")
    fields = text.translate(_BLANKS).replace(";", " ; ").split()
    if len(fields) > _EP_FIELD and (glued := _GLUED_EP_DASH.fullmatch(fields[_EP_FIELD])):
        fields[_EP_FIELD:_EP_FIELD + 1] = ["-", glued.group(1)]
    head = []
    for token in fields[:4]:
        if token == ";":
            break
        head.append(token)
    rest = fields[len(head):]
    if len(head) < 2:
        raise PositionError(f"malformed FEN/EPD: expected at least placement and side, got {text.strip()!r}")
    if len(rest) >= 2 and rest[0].isdigit() and rest[1].isdigit():
        head += rest[:2]
        rest = rest[2:]
    elif len(rest) == 1 and rest[0].isdigit():
        head += rest        # a halfmove clock without the move number
        rest = []
    if rest and ";" not in rest:
        # EPD operations end with ';' (free text may follow one): words with none are junk,
        # not an operation (``... w KQkq - 0 1 garbage``)
        raise PositionError(f"malformed FEN/EPD: trailing text {' '.join(rest)!r} "
                            "(EPD operations end with ';')")
    ops = {}
    if rest and rest != [";"]:
        text_ops = " ".join(rest).replace(" ; ", "; ").replace(" ;", ";")
        try:
            ops = chess.Board(None).set_epd(" ".join((head + ["-", "-"])[:4]) + " " + text_ops)
        except ValueError:
            ops = {"comment": text_ops.strip("; ")}
    try:
        cb = chess.Board(" ".join(head))
    except ValueError as e:
        raise PositionError(f"malformed FEN/EPD: {e}") from None
    status = cb.status()
    problems = [
        (chess.STATUS_EMPTY, "the board is empty"),
        (chess.STATUS_NO_WHITE_KING, "white has no king"),
        (chess.STATUS_NO_BLACK_KING, "black has no king"),
        (chess.STATUS_TOO_MANY_KINGS, "more than one king of a colour"),
        (chess.STATUS_PAWNS_ON_BACKRANK, "a pawn stands on the first or last rank"),
        (chess.STATUS_OPPOSITE_CHECK, "the side not to move is in check"),
    ]
    for flag, reason in problems:
        if status & flag:
            raise PositionError(f"illegal position: {reason}")
    return cb, ops
