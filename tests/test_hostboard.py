"""The host's compiled positions (host/engine/hostboard.cpp) against python-chess, the oracle.

Over every position of the public suites and seeded random play biased to checks, en passant,
castling and promotions (tests/movegen_positions.py), and each of their children:

- the legal moves in the host's order equal ``order.ordered_moves`` (python-chess's legal moves
  in the accelerator's generation order) and the model's ``legal_moves``;
- with a hash move and killers, the order is the one the host search has always used (the hash
  move, captures, the legal killers, quiet moves), written out here over python-chess;
- each child's model Board (what a job carries) is python-chess's position after the move;
- keys are equal exactly where python-chess's transposition keys are; check, checkmate,
  captures, zeroing moves, the fifty-move rule and dead material agree;
- perft to depth 3 through ``push`` matches the suites' counts.
"""

import ctypes
import random

import chess
import pytest

from chessaccel.contract.geometry import move_uci
from chessaccel.host.engine import hostboard
from chessaccel.host.engine.hostboard import HostBoard, HostBoardError
from chessaccel.host.engine.order import order_key, ordered_moves
from chessaccel.model.position import board_from_chess
from chessaccel.model.movegen import legal_moves

from movegen_positions import movegen_fens
from suites import perft_records

SEED = 4242
_QUIET_CLASS_KEY = 6        # order_key's victim field for a quiet move


def _positions():
    return [chess.Board(fen) for fen in movegen_fens(random_count=150, seed=SEED)]


POSITIONS = _positions()


def _model_board(cb):
    b = board_from_chess(cb)
    return (b.sq, b.side, b.castling, b.ep, b.kings)


def _described(cb, got, expected):
    return f"{cb.fen()}: host board {[m.uci() for m in got]}, python-chess {[m.uci() for m in expected]}"


def test_moves_children_and_rules_agree_with_python_chess():
    """Every position and each of its children: moves and rules; at the positions themselves
    also the model's moves, the child boards, captures and zeroing moves."""
    checked = 0
    for root in POSITIONS:
        hb = HostBoard(root)
        for move in [None] + list(root.legal_moves):
            cb = root.copy(stack=False)
            if move is not None:
                cb.push(move)
                hb.push(move)
            expected = ordered_moves(cb)
            got = hb.ordered()
            assert got == expected, _described(cb, got, expected)
            assert hb.is_check() == cb.is_check(), cb.fen()
            assert hb.is_checkmate() == cb.is_checkmate(), cb.fen()
            assert hb.is_insufficient_material() == cb.is_insufficient_material(), cb.fen()
            assert hb.halfmove_clock == cb.halfmove_clock, cb.fen()
            checked += 1
            if move is not None:
                hb.pop()
                continue
            model = [move_uci(m) for m in legal_moves(board_from_chess(cb))]
            assert [m.uci() for m in got] == model, cb.fen()
            for child in expected:
                assert hb.is_capture(child) == cb.is_capture(child), (cb.fen(), child.uci())
                assert hb.is_zeroing(child) == cb.is_zeroing(child), (cb.fen(), child.uci())
                b = hb.child_board(child)
                cb.push(child)
                assert (b.sq, b.side, b.castling, b.ep, b.kings) == _model_board(cb), \
                    f"{cb.fen()}: the child board after {child.uci()} differs"
                cb.pop()
    assert checked > 20_000


def test_keys_are_equal_exactly_where_transposition_keys_are():
    by_key, by_transposition = {}, {}
    rng = random.Random(SEED)
    boards = []
    for root in POSITIONS[:400]:
        boards.append(root)
        for move in rng.sample(list(root.legal_moves), min(8, root.legal_moves.count())):
            child = root.copy(stack=False)
            child.push(move)
            boards.append(child)
    # en passant: the same pieces with and without a capture there that is legal
    boards += [chess.Board("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2"),     # legal: part of the key
               chess.Board("4k3/8/8/3pP3/8/8/8/4K3 w - - 0 2"),
               chess.Board("4k3/8/8/r2pP2K/8/8/8/8 w - d6 0 2"),     # pinned: not part of it
               chess.Board("4k3/8/8/r2pP2K/8/8/8/8 w - - 0 2")]
    for cb in boards:
        key, transposition = HostBoard(cb).key(), cb._transposition_key()
        assert by_key.setdefault(key, transposition) == transposition, cb.fen()
        assert by_transposition.setdefault(transposition, key) == key, cb.fen()
    assert len(by_key) > 2000
    assert HostBoard(boards[-4]).key() != HostBoard(boards[-3]).key()
    assert HostBoard(boards[-2]).key() == HostBoard(boards[-1]).key()


def test_null_move_checks_and_pieces_agree_with_python_chess():
    """The selective search's helpers: a null move (python-chess's ``push(Move.null())``: the
    same key as that position, side and en passant flipped off), a move that gives check, and
    whether the side to move has a piece besides king and pawns."""
    checked = gives = 0
    for root in POSITIONS[:600]:
        hb = HostBoard(root)
        pieces = any(root.pieces(kind, root.turn) for kind in
                     (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN))
        assert hb.has_pieces() == pieces, root.fen()
        for move in root.legal_moves:
            assert hb.gives_check(move) == root.gives_check(move), f"{root.fen()} {move}"
            gives += root.gives_check(move)
        if root.is_check():
            continue
        passed = root.copy(stack=False)
        passed.push(chess.Move.null())
        key = hb.push_null()
        assert key == HostBoard(passed).key(), root.fen()
        assert hb.board().sq == board_from_chess(passed).sq
        assert (hb.board().side, hb.board().ep) == (int(not passed.turn), None)
        assert hb.halfmove_clock == root.halfmove_clock + 1
        hb.pop()
        assert hb.key() == HostBoard(root).key()
        checked += 1
    assert checked > 250 and gives > 100


def _host_order(cb, tt_move, tt_front, killers):
    """The order HostSearch._ordered has always given, over python-chess."""
    moves = ordered_moves(cb)
    killers = [k for k in killers if k != tt_move and k in moves]
    if killers:
        for k in killers:
            moves.remove(k)
        at = next((i for i, m in enumerate(moves) if order_key(cb, m) >> 20 >= _QUIET_CLASS_KEY),
                  len(moves))
        moves[at:at] = killers
    if tt_move is not None and tt_front and tt_move in moves:
        moves.remove(tt_move)
        moves.insert(0, tt_move)
    return moves


def test_hash_move_and_killers_take_their_places():
    rng = random.Random(SEED)
    anywhere = [chess.Move(f, t) for f in range(64) for t in range(64) if f != t]
    for cb in POSITIONS:
        legal = list(cb.legal_moves)
        hb = HostBoard(cb)
        for _ in range(4):
            # killers come from siblings: legal here or not, quiet here or captures
            pool = legal + rng.sample(anywhere, 4)
            killers = rng.sample(pool, min(len(pool), rng.choice((1, 2))))
            tt_move = rng.choice(legal + [None]) if legal else None
            tt_front = rng.random() < 0.8
            expected = _host_order(cb, tt_move, tt_front, killers)
            got = hb.ordered(tt_move, tt_front, killers)
            assert got == expected, _described(cb, got, expected)


_EXCHANGE_VALUE = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5,
                   chess.QUEEN: 9, chess.KING: 0}


def _losing(cb, move):
    """A piece takes a cheaper one on a square the opponent defends (no promotion), over
    python-chess."""
    victim = cb.piece_at(move.to_square)
    if move.promotion or victim is None or victim.color == cb.turn:
        return False
    return (_EXCHANGE_VALUE[cb.piece_type_at(move.from_square)] > _EXCHANGE_VALUE[victim.piece_type]
            and cb.is_attacked_by(not cb.turn, move.to_square))


@pytest.mark.parametrize("fen, uci, losing", [
    ("4k3/8/3p4/4p3/8/8/8/4QK2 w - - 0 1", "e1e5", True),      # the queen takes a defended pawn
    ("4k3/8/8/4p3/8/8/8/4QK2 w - - 0 1", "e1e5", False),       # ... an undefended one
    ("4k3/8/3p4/4q3/3P4/8/8/5K2 w - - 0 1", "d4e5", False),    # a pawn takes a queen
    ("4k3/8/3p4/4b3/8/5N2/8/5K2 w - - 0 1", "f3e5", False),    # a knight takes a bishop
    ("1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7b8q", False),      # a capture that promotes
])
def test_a_losing_capture_by_hand(fen, uci, losing):
    cb = chess.Board(fen)
    assert _losing(cb, chess.Move.from_uci(uci)) == losing
    assert HostBoard(cb).is_losing_capture(chess.Move.from_uci(uci)) == losing


def test_losing_captures_go_after_the_quiet_moves():
    """With ``bad_last`` the host's order is the same with the losing captures, but the first
    move, moved to its end in their order; the first move stays first."""
    moved = 0
    for cb in POSITIONS:
        hb = HostBoard(cb)
        for tt_move in [None] + list(cb.legal_moves)[:3]:
            plain = hb.ordered(tt_move, True, ())
            bad = [m for m in plain[1:] if _losing(cb, m)]
            expected = plain[:1] + [m for m in plain[1:] if m not in bad] + bad
            got = hb.ordered(tt_move, True, (), bad_last=True)
            assert got == expected, _described(cb, got, expected)
            assert [hb.is_losing_capture(m) for m in plain] == [_losing(cb, m) for m in plain]
            moved += bool(bad) and expected != plain
    assert moved > 20, moved


def _perft(hb, depth):
    moves = hb.ordered()
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        hb.push(move)
        total += _perft(hb, depth - 1)
        hb.pop()
    return total


def test_perft_through_push_matches_the_suites():
    records = [r for r in perft_records() if 3 in r.counts and r.counts[3] <= 60_000]
    assert len(records) > 150
    for record in records:
        got = _perft(HostBoard(chess.Board(record.fen)), 3)
        assert got == record.counts[3], f"{record.fen}: perft 3 {got}, suite {record.counts[3]}"


def test_fifty_moves_and_dead_material():
    # the clock reaches 100 with a quiet move: a draw, unless that move mates
    cb = chess.Board("7k/8/6K1/8/8/8/8/R7 w - - 99 80")
    hb = HostBoard(cb)
    quiet, mate = chess.Move.from_uci("a1b1"), chess.Move.from_uci("a1a8")
    assert not hb.is_fifty_moves()
    hb.push(quiet)
    assert hb.halfmove_clock == 100 and hb.is_fifty_moves() and hb.is_drawn()
    hb.pop()
    hb.push(mate)
    assert hb.is_checkmate() and not hb.is_fifty_moves() and not hb.is_drawn()
    for fen in ("8/8/4k3/8/8/3NK3/8/8 w - - 0 1", "8/8/4k3/8/8/3BK3/8/8 w - - 0 1",
                "8/2b5/4k3/8/8/3BK3/8/8 w - - 0 1", "8/3b4/4k3/8/8/3BK3/8/8 w - - 0 1",
                "8/8/4k3/8/8/2NNK3/8/8 w - - 0 1", "8/8/4kq2/8/8/3NK3/8/8 w - - 0 1",
                "8/8/4kn2/8/8/3NK3/8/8 w - - 0 1", "8/8/4k3/8/8/4K3/8/8 w - - 0 1"):
        cb = chess.Board(fen)
        hb = HostBoard(cb)
        assert hb.is_insufficient_material() == cb.is_insufficient_material(), fen
        assert hb.is_drawn() == cb.is_insufficient_material(), fen


def test_a_missing_compiler_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(hostboard, "_CXX", "no-such-compiler-here")
    monkeypatch.setattr(hostboard, "BUILD_ROOT", tmp_path)
    with pytest.raises(HostBoardError) as error:
        hostboard._build()
    assert "no-such-compiler-here is not installed" in str(error.value)
    assert "\n" not in str(error.value)


def _edited_sources(folder, comment):
    """Copies of the library's sources in ``folder``, the search's edited (any one would do)."""
    copies = []
    for path in hostboard._SOURCES:
        copy = folder / path.name
        text = path.read_text()
        copy.write_text(text + f"\n{comment}\n" if path.name == "hostsearch.cpp" else text)
        copies.append(copy)
    return tuple(copies)


def _unoptimised(monkeypatch):
    """The library compiled at -O0: what these tests check (the cache's key, the digest the
    library carries) does not depend on it, and the compiles cost a third of -O2's."""
    monkeypatch.setattr(hostboard, "_FLAGS", ["-O0" if f == "-O2" else f for f in hostboard._FLAGS])


def test_the_build_is_cached_by_its_source(monkeypatch, tmp_path):
    _unoptimised(monkeypatch)
    monkeypatch.setattr(hostboard, "BUILD_ROOT", tmp_path)
    first = hostboard._build()
    assert first.exists() and hostboard._build() == first
    monkeypatch.setattr(hostboard, "_SOURCES", _edited_sources(tmp_path, "// edited"))
    assert hostboard._build() != first


def test_order_key_sorts_the_moves_into_the_generation_order():
    """``order_key`` is the sort key that ``ordered_moves`` inlines: the legal moves sorted by
    it are ``ordered_moves``' list, for either side to move (every position of the set)."""
    sides = set()
    for cb in POSITIONS:
        assert sorted(cb.legal_moves, key=lambda m: order_key(cb, m)) == ordered_moves(cb), cb.fen()
        sides.add(cb.turn)
    assert sides == {chess.WHITE, chess.BLACK}


def test_the_install_builds_the_library_and_a_stale_one_is_not_loaded(monkeypatch, tmp_path):
    """setup.py compiles hostboard.cpp at install time (here: the editable install of `make
    setup`); the library carries its source's digest, so an edit after the install is noticed."""
    installed = hostboard._installed()
    assert installed is not None, "no library built by the install beside hostboard.py"
    installed.hb_source_digest.restype = ctypes.c_char_p
    assert installed.hb_source_digest().decode() == hostboard._source_digest()
    monkeypatch.setattr(hostboard, "_SOURCES",
                        _edited_sources(tmp_path, "// edited after the install"))
    assert hostboard._installed() is None
    _unoptimised(monkeypatch)
    monkeypatch.setattr(hostboard, "BUILD_ROOT", tmp_path)
    built = ctypes.PyDLL(str(hostboard._build()))
    built.hb_source_digest.restype = ctypes.c_char_p
    assert built.hb_source_digest().decode() == hostboard._source_digest()
