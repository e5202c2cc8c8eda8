"""Openings for matches: short, well-known, roughly balanced lines (UCI moves from the start
position), each played twice with the colours swapped. Eight plies or fewer, so the engines
still have the middlegame to play."""

import chess

__all__ = ["OPENINGS", "opening_board", "read_openings"]

#: (name, moves) pairs. Each name is the Lichess opening table's (lichess-org/chess-openings,
#: ECO naming) for the deepest position along the line that the table names; tests/data/
#: openings-eco.tsv holds those rows and tests/test_match.py checks every name against them.
OPENINGS = (
    ("Italian Game: Giuoco Piano", "e2e4 e7e5 g1f3 b8c6 f1c4 f8c5"),
    ("Ruy Lopez: Morphy Defense", "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6"),
    ("Scotch Game", "e2e4 e7e5 g1f3 b8c6 d2d4 e5d4"),
    ("Russian Game", "e2e4 e7e5 g1f3 g8f6"),
    ("Sicilian Defense: Modern Variations, Main Line", "e2e4 c7c5 g1f3 d7d6 d2d4 c5d4 f3d4 g8f6"),
    ("Sicilian Defense: Alapin Variation", "e2e4 c7c5 c2c3 g8f6"),
    ("French Defense: Classical Variation", "e2e4 e7e6 d2d4 d7d5 b1c3 g8f6"),
    ("Caro-Kann Defense", "e2e4 c7c6 d2d4 d7d5 b1c3 d5e4"),
    ("Scandinavian Defense: Main Line", "e2e4 d7d5 e4d5 d8d5 b1c3 d5a5"),
    ("Pirc Defense", "e2e4 d7d6 d2d4 g8f6 b1c3 g7g6"),
    ("Queen's Gambit Declined: Normal Defense", "d2d4 d7d5 c2c4 e7e6 b1c3 g8f6"),
    ("Slav Defense: Modern Line", "d2d4 d7d5 c2c4 c7c6 g1f3 g8f6"),
    ("Queen's Gambit Accepted", "d2d4 d7d5 c2c4 d5c4 g1f3 g8f6"),
    ("Nimzo-Indian Defense", "d2d4 g8f6 c2c4 e7e6 b1c3 f8b4"),
    ("King's Indian Defense: Normal Variation", "d2d4 g8f6 c2c4 g7g6 b1c3 f8g7 e2e4 d7d6"),
    ("Grünfeld Defense", "d2d4 g8f6 c2c4 g7g6 b1c3 d7d5"),
    ("Dutch Defense: Fianchetto Attack", "d2d4 f7f5 g2g3 g8f6 f1g2 e7e6"),
    ("English Opening: Symmetrical Variation, Two Knights, Fianchetto Variation",
     "c2c4 c7c5 b1c3 b8c6 g2g3 g7g6"),
    ("English Opening: King's English Variation, Four Knights Variation",
     "c2c4 e7e5 b1c3 g8f6 g1f3 b8c6"),
    ("King's Indian Attack, with e6", "g1f3 d7d5 g2g3 g8f6 f1g2 e7e6"),
    ("Queen's Pawn Game: Accelerated London System", "d2d4 d7d5 c1f4 g8f6 e2e3 e7e6"),
    ("Vienna Game: Falkbeer Variation", "e2e4 e7e5 b1c3 g8f6"),
    ("Four Knights Game", "e2e4 e7e5 g1f3 b8c6 b1c3 g8f6"),
    ("Catalan Opening", "d2d4 g8f6 c2c4 e7e6 g2g3 d7d5"),
    ("Alekhine Defense", "e2e4 g8f6 e4e5 f6d5 d2d4 d7d6"),
)


def opening_board(moves):
    board = chess.Board()
    for uci in moves.split():
        board.push_uci(uci)
    return board


def read_openings(path):
    """(name, board) pairs from a file of FEN/EPD lines or of UCI move lists (one a line).
    ValueError naming the line on a bad one."""
    from chessaccel.model.position import PositionError, parse_position
    out = []
    with open(path) as f:
        for number, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            first = line.split()[0]
            if "/" in first:
                try:
                    parse_position(line)
                    board = chess.Board(" ".join(line.split(";")[0].split()[:6]))
                except (PositionError, ValueError) as error:
                    raise ValueError(f"{path}:{number}: {error}") from None
            else:
                try:
                    board = opening_board(line)
                except ValueError as error:
                    raise ValueError(f"{path}:{number}: {error}") from None
            out.append((f"{path}:{number}", board))
    if not out:
        raise ValueError(f"{path}: no openings")
    return out
