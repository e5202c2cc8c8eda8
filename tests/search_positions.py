"""Positions for the search-core tests: the public suites in tests/data plus seeded random games.

Only tests/data is read (copies of /work/shared/suites, origins in tests/data/SOURCES.md).
"""

import random
from pathlib import Path

import chess

from chessaccel.host.position import board_from_chess, parse_position

DATA = Path(__file__).resolve().parent / "data"


def suite_fens(name, limit=None):
    """FEN/EPD position fields of a suite file (perft counts and opcodes dropped)."""
    out = []
    for line in (DATA / name).read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if name.endswith(".perft"):
            if line.startswith("epd "):
                fen = line[4:].strip()
                if not fen.split()[0].startswith("xfen") and "xfen" not in fen:
                    out.append(fen)
            continue
        out.append(" ".join(line.split(";")[0].split()[:4]))
    return out[:limit]


def suite_perft(name):
    """[(fen, {depth: nodes})] of a perft suite (tricky.perft or a ``;D1 n`` EPD file)."""
    out = []
    if name.endswith(".perft"):
        ident, fen, counts = None, None, {}
        for line in (DATA / name).read_text().splitlines() + ["id end"]:
            line = line.strip()
            if line.startswith("id "):
                if fen is not None and not ident.startswith("xfen"):
                    out.append((fen, counts))
                ident, fen, counts = line[3:], None, {}
            elif line.startswith("epd "):
                fen = line[4:]
            elif line.startswith("perft "):
                _, d, n = line.split()
                counts[int(d)] = int(n)
        return out
    for line in (DATA / name).read_text().splitlines():
        if not line.strip():
            continue
        fields = line.split(";")
        counts = {}
        for f in fields[1:]:
            f = f.strip()
            if f.startswith("D"):
                d, n = f[1:].split()
                counts[int(d)] = int(n)
        out.append((" ".join(fields[0].split()[:4]), counts))
    return out


def board_of(fen):
    return parse_position(fen)[0]


def random_boards(seed, count, max_plies=80):
    """Boards reached by seeded random legal games from the start position (game over skipped)."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        cb = chess.Board()
        for _ in range(rng.randrange(max_plies)):
            moves = list(cb.legal_moves)
            if not moves:
                break
            # captures and promotions are favoured so that endgames and promotions turn up
            good = [m for m in moves if cb.is_capture(m) or m.promotion]
            cb.push(rng.choice(good if good and rng.random() < 0.5 else moves))
        if cb.is_valid():
            out.append(board_from_chess(cb))
    return out
