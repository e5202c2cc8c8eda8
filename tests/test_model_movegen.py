"""The model's move generator against python-chess and against the move-order contract.

For every position the model's legal moves, in generation order, must equal python-chess's legal
moves sorted by the contract's order, which tests/oracle.py derives from the contract's text:

1. captures and quiet moves by victim: the highest victim class first (queen taken ... pawn
   taken, the en-passant square when an own pawn attacks it ranks as a pawn, then empty squares
   as QUIET), ties to the lowest victim square as the side to move sees it (ranks flipped for
   black); each victim's moves form one block;
2. inside a victim's block: aggressors least valuable first (pawn ... king), ties to the lowest
   relative from-square; a pawn reaching the last rank promotes to Q, R, B, N in turn;
3. then castling, kingside before queenside.

Quiescence generation (captures only) must give exactly python-chess's legal captures (en
passant included, quiet promotions excluded) in the same order.
"""

import collections
import random

import chess
import pytest

from chessaccel.contract.defs import VictimClass
from chessaccel.contract.geometry import move_uci
from chessaccel.model.genvictim import CAPTURE_MIN, receivers, select_victim, victim_ranking
from chessaccel.model.movegen import legal_moves, pseudo_moves
from chessaccel.model.testcheck import evasion_squares

import suites
from oracle import expected_order

#: The random-play positions are checked in this many slices (one test each).
SLICES = 10

#: Minimum number of positions with each feature over suites + random play: the generator must
#: be exercised on every special move, not only on quiet middlegames.
MIN_COVERAGE = {
    "check": 2500,
    "double_check": 150,
    "en_passant": 300,
    "castling": 350,
    "promotion": 350,
    "capture_promotion": 50,
    "checkmate": 15,
    "stalemate": 8,
}
MIN_POSITIONS = 5000


def compare_moves(fen, captures_only=False):
    """None when the model agrees with the oracle and the contract, else a report."""
    board = suites.board_of(fen)
    before = board.key()
    got = [move_uci(m) for m in legal_moves(board, captures_only)]
    kind = "captures-only" if captures_only else "legal"
    if board.key() != before:
        return f"{fen}: the board changed during {kind} generation"
    cb = chess.Board(fen)
    want = expected_order(cb, captures_only)
    duplicates = [m for m, n in collections.Counter(got).items() if n > 1]
    if duplicates:
        return f"{fen}: {kind} moves generated twice: {duplicates}"
    if set(got) != set(want):
        return (f"{fen}: {kind} move set differs from python-chess: "
                f"missing {sorted(set(want) - set(got))}, extra {sorted(set(got) - set(want))}")
    if got != want:
        step = next(i for i, (g, w) in enumerate(zip(got, want)) if g != w)
        return (f"{fen}: {kind} order differs at move {step}: model {got[step]}, contract "
                f"{want[step]}\n  model    {got}\n  contract {want}")
    return None


def check_positions(fens):
    failures = []
    for fen in fens:
        for captures_only in (False, True):
            report = compare_moves(fen, captures_only)
            if report:
                failures.append(report)
    assert not failures, f"{len(failures)} failures, first ones:\n" + "\n".join(failures[:5])


# --- tests ------------------------------------------------------------------------------------

def test_suite_positions(suite_positions):
    check_positions(suite_positions)


@pytest.mark.parametrize("part", range(SLICES))
def test_random_play_positions(coverage_positions, part):
    check_positions([fen for fen, _ in coverage_positions[part::SLICES]])


def test_coverage(suite_positions, coverage_positions):
    """Enough positions, and enough of each special situation, are checked above."""
    fens = suite_positions + [fen for fen, _ in coverage_positions]
    assert len(set(fens)) >= MIN_POSITIONS
    counts = collections.Counter()
    for fen in fens:
        counts.update(suites.features(chess.Board(fen)))
    short = {f: (counts[f], n) for f, n in MIN_COVERAGE.items() if counts[f] < n}
    assert not short, f"too few positions with (found, needed): {short}"


def test_pseudo_moves_are_a_superset_in_the_same_order(suite_positions):
    """Legality only filters: the legal list is the pseudo-legal list with the illegal moves
    (those that leave the mover's king attacked) taken out."""
    for fen in suite_positions[::5]:
        board = suites.board_of(fen)
        cb = chess.Board(fen)
        pseudo = [move_uci(m) for m in pseudo_moves(board)]
        legal = {m.uci() for m in cb.legal_moves}
        filtered = [m for m in pseudo if m in legal]
        assert filtered == [move_uci(m) for m in legal_moves(board)], fen
        for uci in pseudo:
            if uci not in legal:
                move = chess.Move.from_uci(uci)
                assert cb.is_pseudo_legal(move) and cb.is_into_check(move), \
                    f"{fen}: {uci} is neither legal nor a pseudo-legal move into check"


def test_evasion_squares_hold_every_legal_move_out_of_check(suite_positions, coverage_positions):
    """TestCheck's evasions (sim/model/testcheck.py), which the search core uses to skip moves
    of a node in check unmade: on every position in check they are python-chess's checkers and
    the squares between a slider and the king, and every legal move of a piece other than the
    king lands on one of them or on the en-passant square. Skipping the others loses no move."""
    fens = suite_positions + [fen for fen, _ in coverage_positions]
    checked = 0
    for fen in fens:
        cb = chess.Board(fen)
        if not cb.is_check():
            continue
        checked += 1
        board = suites.board_of(fen)
        king = board.kings[board.side]
        got = evasion_squares(board, king, board.side ^ 1)
        want = 0
        for checker in cb.checkers():
            want |= 1 << checker | int(chess.SquareSet(chess.between(king, checker)))
        assert got == want, (f"{fen}: evasions {chess.SquareSet(got)}, python-chess's checkers "
                             f"and lines {chess.SquareSet(want)}")
        allowed = got | (1 << cb.ep_square if cb.ep_square is not None else 0)
        for move in cb.legal_moves:
            if move.from_square != king:
                assert allowed >> move.to_square & 1, \
                    f"{fen}: legal {move.uci()} lands outside the evasions"
    assert checked >= MIN_COVERAGE["check"]


def test_contract_key_orders_the_start_position():
    """The contract key itself, on a position whose order is easy to write down by hand: no
    captures, so victims are empty squares from a3 upwards (relative order), each reached by a
    pawn before a knight."""
    cb = chess.Board()
    order = expected_order(cb)
    assert order[:3] == ["a2a3", "b1a3", "b2b3"]
    assert order[-1] == "h2h4"
    black = chess.Board()
    black.push_uci("e2e4")
    assert expected_order(black)[:3] == ["a7a6", "b8a6", "b7b6"]


# --- GenVictim's receivers --------------------------------------------------------------------

def expected_receivers(cb):
    """The 64 receivers of GenVictim as docs/semantics.md defines them, from python-chess: an
    enemy piece an own piece attacks raises its own class (VictimClass by piece name), an empty
    square an own piece can move to raises QUIET (pawns: their pushes; the en-passant square an
    own pawn attacks raises PAWN); castling is not GenVictim's. Square indices are python-chess's."""
    classes = [VictimClass.NONE.value] * 64

    def raise_to(square, victim_class):
        classes[square] = max(classes[square], victim_class.value)

    forward = 8 if cb.turn == chess.WHITE else -8
    home_rank = 1 if cb.turn == chess.WHITE else 6
    for square in cb.pieces(chess.PAWN, cb.turn):
        one = square + forward
        if cb.piece_at(one) is None:
            raise_to(one, VictimClass.QUIET)
            if chess.square_rank(square) == home_rank and cb.piece_at(one + forward) is None:
                raise_to(one + forward, VictimClass.QUIET)
        for target in chess.SquareSet(chess.BB_PAWN_ATTACKS[cb.turn][square]):
            piece = cb.piece_at(target)
            if piece is not None and piece.color != cb.turn:
                raise_to(target, VictimClass[chess.piece_name(piece.piece_type).upper()])
            elif target == cb.ep_square:
                raise_to(target, VictimClass.PAWN)
    for square, piece in cb.piece_map().items():
        if piece.color != cb.turn or piece.piece_type == chess.PAWN:
            continue
        for target in cb.attacks(square):
            other = cb.piece_at(target)
            if other is None:
                raise_to(target, VictimClass.QUIET)
            elif other.color != cb.turn:
                raise_to(target, VictimClass[chess.piece_name(other.piece_type).upper()])
    return classes


def test_receivers_match_python_chess(suite_positions, coverage_positions):
    """GenVictim's receivers (which squares can be victims, and of what class) on every suite
    position and a slice of the random games, against python-chess's attacks. The move lists
    above cannot see a receiver raised where no aggressor answers (it costs the core cycles, not
    moves): this can."""
    fens = suite_positions + [fen for fen, _ in coverage_positions[::4]]
    for fen in fens:
        got = receivers(suites.board_of(fen))
        want = expected_receivers(chess.Board(fen))
        if got != want:
            if len(got) != 64:
                pytest.fail(f"{fen}: {len(got)} receivers, not 64")
            square = next(s for s in range(64) if got[s] != want[s])
            pytest.fail(f"{fen}: receiver {chess.square_name(square)} raises "
                        f"{VictimClass(got[square]).name}, python-chess says "
                        f"{VictimClass(want[square]).name}")


def test_the_comparator_tree_picks_the_first_unmasked_square_of_the_ranking(suite_positions):
    """select_victim (the masked comparator tree, what the RTL's GenVictim is compared with) and
    victim_ranking (the order the search model scans) must agree for every disable mask: the
    highest class first, ties to the lowest relative square, masked squares never, None when
    nothing is left, in full-width nodes and in quiescence."""
    rng = random.Random(20261124)
    for fen in suite_positions[::7]:
        board = suites.board_of(fen)
        classes = receivers(board)
        for min_class in (VictimClass.QUIET.value, CAPTURE_MIN):
            ranking = victim_ranking(classes, board.side, min_class)
            masks = [0, (1 << 64) - 1] + [rng.getrandbits(64) & rng.getrandbits(64)
                                          for _ in range(6)]
            masks += [sum(1 << s for s in ranking[:k]) for k in range(len(ranking) + 1)]
            for mask in masks:
                want = next((s for s in ranking if not (mask >> s) & 1), None)
                got = select_victim(classes, mask, board.side, min_class)
                assert got == want, (f"{fen}: mask {mask:#018x}, min class {min_class}: the tree "
                                     f"picks {got}, the ranking's first unmasked square is {want}")
