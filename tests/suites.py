"""Loaders for the public test suites in tests/data, shared by the model and hardware tests.

Every position a test uses comes from here: the perft suites with their published counts, the
bare-FEN mate and stalemate suites, the EPD suites, and positions reached by seeded random play.
Positions are handed out as FEN text so that any backend (model, RTL, host) can take them;
``board_of`` turns one into the model's Board through the host's parser.

The files are byte-for-byte copies of public suites (tests/data/SOURCES.md); some end their lines
in a NUL byte or CR LF, which the readers strip.
"""

import random
from dataclasses import dataclass, field
from pathlib import Path

import chess

from chessaccel.model.position import parse_position

__all__ = [
    "DATA_DIR", "PerftRecord", "PERFT_SUITES", "perft_records", "suite_lines", "fens",
    "epd_positions", "board_of", "features", "FEATURES", "random_play_positions",
    "chess_perft", "chess_divide", "coverage_positions", "sparse_position", "needs_chess960",
    "FEN_SUITES", "EPD_SUITES", "evaluation_boards",
]

DATA_DIR = Path(__file__).resolve().parent / "data"

#: Perft suites, in python-chess's format (``id`` / ``epd`` / ``perft d n``) or as EPD lines
#: with ``;Dd n`` operations.
PERFT_SUITES = ("standard.perft", "tricky.perft", "perftsuite.epd", "perft-stress.epd",
                "perft-double-checks.epd")

#: tricky.perft records that need Chess960 (X-FEN) castling, which the accelerator does not play:
#: the ``xfen-*`` records, and any record holding a castling right that standard chess cannot
#: have (tricky.perft's counts for those were made with Chess960 castling).
CHESS960_PREFIX = "xfen-"


def needs_chess960(fen):
    """True when the FEN grants a castling right that standard chess drops (king or rook away
    from its home square)."""
    rights = fen.split()[2]
    return rights != "-" and set(chess.Board(fen).castling_xfen()) != set(rights)

#: Bare-FEN suites of positions (mates, stalemates) and EPD suites of test positions.
FEN_SUITES = ("mate1.fen", "mate2.fen", "mate3.fen", "mate4.fen",
              "stalemate0.fen", "stalemate1.fen", "stalemate2.fen")
EPD_SUITES = ("wac.epd", "bratko-kopec.epd", "ccr-one-hour.epd",
              "endgame-dm-4.epd", "endgame-dm-5.epd")

_STRIPPED = "\x00\r\n"


def suite_lines(name):
    """Lines of a data file without line-end junk (NUL, CR), blank lines and ``#`` comments,
    as (line number, text) pairs."""
    text = (DATA_DIR / name).read_bytes().decode("ascii")
    out = []
    for number, line in enumerate(text.split("\n"), 1):
        line = line.strip(_STRIPPED + " \t")
        if line and not line.startswith("#"):
            out.append((number, line))
    return out


@dataclass(frozen=True)
class PerftRecord:
    """One position of a perft suite and its published leaf counts by depth."""
    suite: str
    name: str
    fen: str
    counts: dict = field(default_factory=dict)

    @property
    def id(self):
        return f"{self.suite}:{self.name}"


def _read_perft_format(name):
    records, ident, fen, counts = [], None, None, {}

    def flush():
        if fen is not None and not ident.startswith(CHESS960_PREFIX) and not needs_chess960(fen):
            records.append(PerftRecord(name, ident, fen, dict(counts)))

    for number, line in suite_lines(name):
        key, _, value = line.partition(" ")
        if key == "id":
            flush()
            ident, fen, counts = value.strip(), None, {}
        elif key == "epd":
            fen = value.strip()
        elif key == "perft":
            depth, nodes = value.split()
            counts[int(depth)] = int(nodes)
        else:
            raise ValueError(f"{name}:{number}: unknown record line {line!r}")
    flush()
    return records


def _read_perft_epd(name):
    records = []
    for number, line in suite_lines(name):
        fen, *ops = line.split(";")
        counts = {}
        for op in ops:
            if op.strip():
                depth, nodes = op.split()
                if not depth.startswith("D"):
                    raise ValueError(f"{name}:{number}: unknown operation {op!r}")
                counts[int(depth[1:])] = int(nodes)
        records.append(PerftRecord(name, f"line{number}", fen.strip(), counts))
    return records


def perft_records(suites=PERFT_SUITES):
    """All standard-chess perft records of the given suites."""
    out = []
    for name in suites:
        out += _read_perft_format(name) if name.endswith(".perft") else _read_perft_epd(name)
    return out


def fens(name):
    """The positions of a bare-FEN suite, in file order."""
    return [line for _, line in suite_lines(name)]


def epd_positions(names=EPD_SUITES):
    """The position part (first four fields) of every line of the EPD suites."""
    out = []
    for name in names:
        for _, line in suite_lines(name):
            out.append(" ".join(line.split()[:4]))
    return out


def board_of(fen):
    """The model Board of a FEN or EPD line (through the host's parser)."""
    return parse_position(fen)[0]


def evaluation_boards():
    """The positions an evaluation's jobs are compared on (tests/test_opencl_evalterms.py, and
    on a GPU docs/benchmarks/eval-squares-2026-11-29/gpu_identity.py): the perft suites' roots,
    60 WAC positions, 20 mates in two and 10 stalemates, each once, as model Boards."""
    out = [r.fen for r in perft_records(("standard.perft", "tricky.perft", "perftsuite.epd"))]
    out += epd_positions(("wac.epd",))[:60]
    out += fens("mate2.fen")[:20] + fens("stalemate2.fen")[:10]
    return [board_of(f) for f in dict.fromkeys(out)]


# --- python-chess as the oracle ---------------------------------------------------------------

def chess_perft(cb, depth):
    """Leaf count by python-chess (bulk-counted at the last ply)."""
    if depth == 0:
        return 1
    if depth == 1:
        return cb.legal_moves.count()
    count = 0
    for move in cb.legal_moves:
        cb.push(move)
        count += chess_perft(cb, depth - 1)
        cb.pop()
    return count


def chess_divide(cb, depth):
    """{uci: leaf count below it} by python-chess."""
    out = {}
    for move in cb.legal_moves:
        cb.push(move)
        out[move.uci()] = chess_perft(cb, depth - 1)
        cb.pop()
    return out


#: Situations the move generator must get right, as named by ``features``.
FEATURES = ("check", "double_check", "en_passant", "castling", "promotion",
            "capture_promotion", "checkmate", "stalemate")


def features(cb):
    """The set of FEATURES present in a python-chess position (moves counted only if legal)."""
    found = set()
    moves = list(cb.legal_moves)
    if cb.is_check():
        found.add("check")
        if len(cb.checkers()) > 1:
            found.add("double_check")
    if any(cb.is_en_passant(m) for m in moves):
        found.add("en_passant")
    if any(cb.is_castling(m) for m in moves):
        found.add("castling")
    if any(m.promotion for m in moves):
        found.add("promotion")
        if any(m.promotion and cb.is_capture(m) for m in moves):
            found.add("capture_promotion")
    if not moves:
        found.add("checkmate" if cb.is_check() else "stalemate")
    return found


# --- seeded random play -----------------------------------------------------------------------

#: Chance that a random-play step picks among the "interesting" moves (checks, captures,
#: promotions, castling, pawn moves) rather than among all moves.
_BIAS = 0.6
#: Chance that it promotes when a promotion is legal.
_PROMOTE = 0.5
#: Chance that it avoids a move that gives up a castling right without castling.
_KEEP_RIGHTS = 0.9
_GAME_PLIES = 160


def _offers_en_passant(cb, move):
    """A pawn double push landing beside an enemy pawn."""
    if (cb.piece_type_at(move.from_square) != chess.PAWN
            or abs(move.to_square - move.from_square) != 16):
        return False
    enemy_pawns = cb.pieces(chess.PAWN, not cb.turn)
    beside = chess.BB_RANK_MASKS[move.to_square] & chess.BB_KING_ATTACKS[move.to_square]
    return bool(beside & enemy_pawns.mask)


def _spends_castling(cb, move):
    """A move, other than castling, by or onto a king or rook that still may castle."""
    if cb.is_castling(move):
        return False
    touched = chess.BB_SQUARES[move.from_square] | chess.BB_SQUARES[move.to_square]
    return bool(cb.clean_castling_rights() & touched) or (
        cb.piece_type_at(move.from_square) == chess.KING and cb.has_castling_rights(cb.turn))


def _interesting(cb, move):
    if move.promotion or cb.is_capture(move) or cb.is_castling(move) or cb.gives_check(move):
        return True
    # pawns marching on make promotions and en-passant chances
    return cb.piece_type_at(move.from_square) == chess.PAWN


def random_play_positions(seed, count, starts=(chess.STARTING_FEN,), plies=_GAME_PLIES):
    """``count`` distinct positions (FEN, en-passant square shown after every double push)
    reached by seeded random games from ``starts``, biased so that checks, en passant, castling
    and promotions are common: the games prefer promotions, then checks, captures, castling and
    pawn moves, seldom move a king or a rook that still may castle, and the position
    after every double push that offers an en-passant capture is recorded as a side branch.

    Deterministic for a given seed; each game starts from the next start position in turn.
    """
    rng = random.Random(seed)
    seen, out = set(), []

    def record(cb):
        fen = cb.fen(en_passant="fen")
        key = " ".join(fen.split()[:4])
        if key not in seen and len(out) < count:
            seen.add(key)
            out.append(fen)
            return True
        return False

    game = stale_games = 0
    while len(out) < count:
        cb = chess.Board(starts[game % len(starts)])
        game += 1
        added = 0
        for _ in range(plies):
            moves = list(cb.legal_moves)
            if not moves:
                break
            for move in moves:
                if _offers_en_passant(cb, move):
                    cb.push(move)
                    added += record(cb)
                    cb.pop()
            keep_rights = [m for m in moves if not _spends_castling(cb, m)]
            if keep_rights and rng.random() < _KEEP_RIGHTS:
                moves = keep_rights
            pool = moves
            promotions = [m for m in moves if m.promotion]
            if promotions and rng.random() < _PROMOTE:
                pool = promotions
            elif rng.random() < _BIAS:
                pool = [m for m in moves if _interesting(cb, m)] or moves
            cb.push(rng.choice(pool))
            added += record(cb)
            if len(out) == count:
                break
        stale_games = 0 if added else stale_games + 1
        if stale_games > 100:
            raise ValueError("random play keeps repeating itself: too few start positions")
    return out


#: Features a position is kept for first when random-play positions are chosen for coverage.
_RARE_FEATURES = frozenset(FEATURES) - {"check"}
#: Random-play plies per game for coverage positions: short games keep castling rights alive.
_COVERAGE_PLIES = 40
#: How many random-play positions are drawn for each one kept.
_COVERAGE_POOL = 4


def coverage_positions(seed, count):
    """``count`` random-play positions chosen for coverage: from a pool four times larger, every
    position with en passant, castling, a promotion, double check, mate or stalemate first, then
    positions in check, then the rest, each group in pool order. Returns (fen, features) pairs.

    The games start from the standard position and from every perft-suite position in turn.
    """
    starts = [chess.STARTING_FEN] + [r.fen for r in perft_records()]
    pool = random_play_positions(seed, _COVERAGE_POOL * count, starts, _COVERAGE_PLIES)
    tagged = [(fen, frozenset(features(chess.Board(fen)))) for fen in pool]
    rare = [p for p in tagged if p[1] & _RARE_FEATURES]
    checks = [p for p in tagged if not p[1] & _RARE_FEATURES and "check" in p[1]]
    rest = [p for p in tagged if not p[1]]
    return (rare + checks + rest)[:count]


#: Piece kinds drawn for sparse positions, pawns twice as often as each other kind.
_SPARSE_KINDS = (chess.PAWN, chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN)
_BACK_RANKS = (0, 7)


def sparse_position(seed, pieces, plies=0):
    """A legal position with both kings and ``pieces`` other random men, then ``plies`` random
    moves (fewer if the game ends), as FEN. Deterministic for a given seed. Small trees: the
    positions the exhaustive search references can afford."""
    rng = random.Random(seed)
    while True:
        cb = chess.Board(None)
        squares = rng.sample(chess.SQUARES, pieces + 2)
        cb.set_piece_at(squares[0], chess.Piece(chess.KING, chess.WHITE))
        cb.set_piece_at(squares[1], chess.Piece(chess.KING, chess.BLACK))
        for s in squares[2:]:
            kind = rng.choice(_SPARSE_KINDS)
            if kind == chess.PAWN and chess.square_rank(s) in _BACK_RANKS:
                kind = chess.KNIGHT
            cb.set_piece_at(s, chess.Piece(kind, rng.choice(chess.COLORS)))
        cb.turn = rng.choice(chess.COLORS)
        if cb.is_valid():
            break
    for _ in range(plies):
        moves = list(cb.legal_moves)
        if not moves:
            break
        cb.push(rng.choice(moves))
    return cb.fen(en_passant="fen")
