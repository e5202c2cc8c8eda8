"""The terms evaluation (model/evalterms.py, docs/semantics.md section 6, "The terms evaluation").

- Every term on at least five positions whose value was worked out by hand from the document:
  each case lists the features counted (written as literals, with the reasoning in a comment)
  and the expected (mg, eg) is those counts times the weights read straight from
  evalweights.json with the json module (so a retuned file keeps the cases valid, and a weight
  the loader mixes up still fails).
- The independent reference (tests/evaltermsref.py, python-chess attacks) on suite and random
  positions, term by term.
- Colour-mirror symmetry: evaluate(position) == evaluate(mirror(position)).
- The "pst" evaluation is unchanged: the default everywhere and what evaluate() gives.
"""

import json

import chess
import pytest

from chessaccel.contract import evalweights
from chessaccel.model import search as model_search
from chessaccel.model.evaluate import evaluate
from chessaccel.model.evalterms import evaluate_terms, evaluator, term_values
from chessaccel.model.position import board_from_chess

import seeds
import suites
from evaltermsref import WEIGHTS, reference_squares, reference_terms

W = WEIGHTS


def pair(key, n=1):
    return n * W[key][0], n * W[key][1]


def passed(rank):
    return W["passed_pawn"]["mg"][rank], W["passed_pawn"]["eg"][rank]


def zone(name, n):
    return n * W["king_zone_attack"][name][0], n * W["king_zone_attack"][name][1]


def mobility(name, count):
    e = W["mobility"][name]
    return (count - e["centre"]) * e["per_square"][0], (count - e["centre"]) * e["per_square"][1]


def add(*pairs):
    return sum(p[0] for p in pairs), sum(p[1] for p in pairs)


def neg(p):
    return -p[0], -p[1]


ZERO = (0, 0)

#: (term, FEN, expected (mg, eg) from white's view). Relative ranks count from 0 (rank 1).
CASES = [
    # passed pawns: no enemy pawn ahead on its file or the files beside it
    ("passed_pawns", "4k3/8/8/3P4/8/8/8/4K3 w - - 0 1",
     add(passed(4), pair("passed_pawn_free_path"))),         # d5: rank 4, d6-d8 empty
    ("passed_pawns", "4k3/3r4/8/3P4/8/8/8/4K3 w - - 0 1",
     passed(4)),                                               # rook on d7: not free, d6 empty
    ("passed_pawns", "4k3/8/3n4/3P4/8/8/8/4K3 w - - 0 1",
     add(passed(4), pair("passed_pawn_blocked"))),            # knight on d6 blocks
    ("passed_pawns", "4k3/8/2p5/3P4/8/8/8/4K3 w - - 0 1",
     ZERO),                                   # c6 stops d5; d5 is ahead of c6 (for black)
    ("passed_pawns", "4k3/1P6/8/8/8/8/6p1/4K3 b - - 0 1",
     add(passed(6), pair("passed_pawn_free_path"),            # b7: rank 6, b8 empty
         neg(passed(6)), neg(pair("passed_pawn_free_path")))),  # g2: black's rank 6, g1 empty
    ("passed_pawns", "4k3/1P6/8/8/8/6p1/8/4K3 b - - 0 1",
     add(passed(6), pair("passed_pawn_free_path"),
         neg(passed(5)), neg(pair("passed_pawn_free_path")))),  # g3: black's rank 5
    # isolated pawns: no own pawn on a file beside
    ("isolated_pawns", "4k3/8/8/8/8/8/P7/4K3 w - - 0 1", pair("isolated_pawn")),
    ("isolated_pawns", "4k3/8/8/8/8/8/PP6/4K3 w - - 0 1", ZERO),
    ("isolated_pawns", "4k3/8/8/8/8/8/P1P5/4K3 w - - 0 1", pair("isolated_pawn", 2)),
    ("isolated_pawns", "4k3/p7/8/8/8/8/P1P5/4K3 w - - 0 1", pair("isolated_pawn", 1)),  # 2 - 1
    ("isolated_pawns", "4k3/pp5p/8/8/8/8/PP4PP/4K3 w - - 0 1", pair("isolated_pawn", -1)),  # h7
    # doubled pawns: an own pawn ahead on the same file (each rear pawn counts)
    ("doubled_pawns", "4k3/8/8/8/8/P7/P7/4K3 w - - 0 1", pair("doubled_pawn")),     # a2
    ("doubled_pawns", "4k3/8/8/8/P7/P7/P7/4K3 w - - 0 1", pair("doubled_pawn", 2)),  # a2, a3
    ("doubled_pawns", "4k3/8/8/8/8/8/PP6/4K3 w - - 0 1", ZERO),
    ("doubled_pawns", "4k3/p7/p7/8/8/P7/P7/4K3 w - - 0 1", ZERO),                   # 1 - 1
    ("doubled_pawns", "4k3/1p6/1p6/1p6/8/8/P7/4K3 b - - 0 1", pair("doubled_pawn", -2)),  # b7, b6
    # backward pawns: not isolated, every pawn beside is ahead, the stop square is attacked
    # by an enemy pawn
    ("backward_pawns", "4k3/8/8/1p6/3P4/2P5/8/4K3 w - - 0 1",
     pair("backward_pawn")),          # c3 (d4 ahead, c4 attacked by b5); b5 isolated: not counted
    ("backward_pawns", "4k3/8/8/8/3P4/2P5/8/4K3 w - - 0 1", ZERO),   # c4 not attacked
    ("backward_pawns", "4k3/8/8/3p4/3P4/2P5/8/4K3 w - - 0 1",
     pair("backward_pawn")),                       # d5 attacks c4; d4's stop d5 is not attacked
    ("backward_pawns", "4k3/8/8/1p6/8/2P5/8/4K3 w - - 0 1", ZERO),   # c3 isolated: not backward
    ("backward_pawns", "4k3/8/2p5/3p4/1P6/8/8/4K3 b - - 0 1",
     pair("backward_pawn", -1)),                   # the colour mirror of the first: black's c6
    # connected pawns: an own pawn beside on the same rank, or diagonally behind (defending)
    ("connected_pawns", "4k3/8/8/8/8/8/PP6/4K3 w - - 0 1", pair("connected_pawn", 2)),  # phalanx
    ("connected_pawns", "4k3/8/8/8/8/1P6/P7/4K3 w - - 0 1", pair("connected_pawn")),    # b3 by a2
    ("connected_pawns", "4k3/8/8/8/8/8/P1P5/4K3 w - - 0 1", ZERO),
    ("connected_pawns", "4k3/8/8/8/2P5/1P1P4/8/4K3 w - - 0 1", pair("connected_pawn")),  # c4 only
    ("connected_pawns", "4k3/pp6/8/8/8/8/P7/4K3 w - - 0 1", pair("connected_pawn", -2)),  # a7 b7
    # king shield: own pawns one rank (near) and two ranks (far) ahead on the king's file and
    # the files beside it
    ("king_shield", "6k1/8/8/8/8/8/5PPP/6K1 w - - 0 1", pair("king_shield_near", 3)),
    ("king_shield", "6k1/8/8/8/8/6P1/5P1P/6K1 w - - 0 1",
     add(pair("king_shield_near", 2), pair("king_shield_far"))),   # f2 h2 near, g3 far
    ("king_shield", "6k1/5ppp/8/8/8/8/5PPP/6K1 w - - 0 1", ZERO),
    ("king_shield", "7k/8/8/8/8/8/P7/K7 w - - 0 1", pair("king_shield_near")),  # a1: files a, b
    ("king_shield", "6k1/5pp1/7p/8/8/8/8/6K1 b - - 0 1",
     neg(add(pair("king_shield_near", 2), pair("king_shield_far")))),  # f7 g7 near, h6 far
    # king files: the king's file and those beside it without own pawns: open (no pawn at all)
    # or half-open (an enemy pawn)
    ("king_files", "4k3/8/8/8/8/8/8/4K3 w - - 0 1", ZERO),          # 3 open each: cancel
    ("king_files", "4k3/3ppp2/8/8/8/8/8/4K3 w - - 0 1", pair("king_half_open_file", 3)),
    ("king_files", "4k3/3ppp2/8/8/8/8/3P1P2/4K3 w - - 0 1", pair("king_half_open_file")),  # e
    ("king_files", "k7/pp6/8/8/8/8/8/K7 w - - 0 1", pair("king_half_open_file", 2)),  # a, b
    ("king_files", "4k3/8/8/8/8/8/3PPP2/4K3 b - - 0 1", pair("king_half_open_file", -3)),
    ("king_files", "4k3/8/8/8/8/8/8/R3K2R w - - 0 1", ZERO),        # no pawns: 3 open each
    # king attacks: squares of the zone (king square and its neighbours) each enemy piece attacks
    ("king_attacks", "R3k3/8/8/8/8/8/8/4K3 b - - 0 1", neg(zone("rook", 2))),  # a8: d8, e8
    ("king_attacks", "4k3/8/3N4/8/8/8/8/4K3 w - - 0 1", neg(zone("knight", 2))),  # d6: e8, f7
    ("king_attacks", "4k3/8/8/8/8/8/4q3/4K3 w - - 0 1",
     zone("queen", 5)),                               # e2: d1, e1, f1, d2, f2 (not its own e2)
    ("king_attacks", "4k3/8/8/8/8/8/3p1p2/4K3 w - - 0 1", zone("pawn", 2)),  # d2 and f2 take e1
    ("king_attacks", "4k3/8/8/1B6/8/8/8/4K3 w - - 0 1", neg(zone("bishop", 2))),  # b5: d7, e8
    ("king_attacks", "4k3/8/2p5/1B6/8/8/8/4K3 w - - 0 1", ZERO),    # c6 stops the bishop
    # mobility: attacked squares not holding an own piece nor attacked by an enemy pawn,
    # about the centre
    ("mobility", "4k3/8/8/8/3N4/8/8/4K3 w - - 0 1", mobility("knight", 8)),
    ("mobility", "4k3/8/8/8/8/8/8/N3K3 w - - 0 1", mobility("knight", 2)),   # b3, c2
    ("mobility", "4k3/3p4/8/8/3N4/8/8/4K3 w - - 0 1", mobility("knight", 6)),  # d7 takes c6, e6
    ("mobility", "4k3/8/8/8/8/8/8/R3K3 w - - 0 1", mobility("rook", 10)),  # a2-a8, b1-d1
    ("mobility", "b3k3/8/8/8/8/8/8/4K3 w - - 0 1", neg(mobility("bishop", 7))),  # b7 .. h1
    ("mobility", "4k3/8/8/8/8/8/8/Q3K3 w - - 0 1", mobility("queen", 17)),  # 7 + 3 + 7
    # bishop pair: two bishops or more
    ("bishop_pair", "4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1", pair("bishop_pair")),
    ("bishop_pair", "2b1kb2/8/8/8/8/8/8/2B1KB2 w - - 0 1", ZERO),
    ("bishop_pair", "4k3/8/8/8/8/8/8/2B1K3 w - - 0 1", ZERO),
    ("bishop_pair", "2b1kb2/8/8/8/8/8/8/4K3 w - - 0 1", pair("bishop_pair", -1)),
    ("bishop_pair", "4k3/8/8/8/8/8/8/1BB1KB2 w - - 0 1", pair("bishop_pair")),   # three: once
    # rook files: no own pawn on the rook's file: open (no pawn) or half-open (an enemy pawn)
    ("rook_files", "4k3/8/8/8/8/8/8/R3K3 w - - 0 1", pair("rook_open_file")),
    ("rook_files", "4k3/p7/8/8/8/8/8/R3K3 w - - 0 1", pair("rook_half_open_file")),
    ("rook_files", "4k3/8/8/8/8/8/P7/R3K3 w - - 0 1", ZERO),
    ("rook_files", "r3k3/8/8/8/8/8/P7/R3K3 w - - 0 1", pair("rook_half_open_file", -1)),
    ("rook_files", "r3k3/8/8/8/8/8/8/R3K2R w - - 0 1", pair("rook_open_file")),   # 2 - 1
    # rook on the seventh: its relative rank 7 with the enemy king on rank 8 or an enemy pawn
    # on rank 7
    ("rook_seventh", "4k3/R7/8/8/8/8/8/4K3 w - - 0 1", pair("rook_seventh")),
    ("rook_seventh", "8/R7/4k3/8/8/8/8/4K3 w - - 0 1", ZERO),
    ("rook_seventh", "8/R5p1/4k3/8/8/8/8/4K3 w - - 0 1", pair("rook_seventh")),
    ("rook_seventh", "4k3/8/8/8/8/8/r7/4K3 w - - 0 1", pair("rook_seventh", -1)),
    ("rook_seventh", "4k3/RR6/8/8/8/8/8/4K3 w - - 0 1", pair("rook_seventh", 2)),
    # threats: own knights, bishops, rooks and queens attacked by an enemy pawn, rooks and queens
    # by a knight or bishop, queens by a rook, and any of them attacked and not defended
    ("threats", "4k3/8/2p5/1N1R4/8/8/8/4K3 w - - 0 1",
     add(pair("threat_by_pawn", 2), pair("hanging_piece"))),  # c6 takes on b5, d5; the rook
    #                                              defends b5, nothing defends the rook
    ("threats", "4k3/8/8/3q4/8/2N5/8/4K3 b - - 0 1",
     neg(add(pair("threat_by_minor"), pair("hanging_piece")))),   # Nc3 on the lone queen d5
    ("threats", "4k3/8/2n5/3Q4/1b6/8/8/4K3 b - - 0 1",
     neg(pair("hanging_piece"))),            # Qd5 on the lone Nc6; nothing black hits d5
    ("threats", "3rk3/8/8/8/8/8/8/3QK3 w - - 0 1",
     pair("threat_by_rook")),                # d8 on d1; each side's king defends its piece
    ("threats", "4k3/8/8/2p5/1B6/P7/8/4K3 w - - 0 1",
     pair("threat_by_pawn")),                # c5 on b4, which a3 defends: not hanging
    ("threats", "4k3/8/8/8/3r4/8/2N5/4K3 b - - 0 1",
     neg(add(pair("threat_by_minor"), pair("hanging_piece")))),   # Nc2 on the lone rook d4
    ("threats", "4k3/8/8/3n4/4P3/8/8/4K3 w - - 0 1",
     neg(add(pair("threat_by_pawn"), pair("hanging_piece")))),    # e4 on the lone knight d5
    # tempo: the side to move's
    ("tempo", chess.STARTING_FEN, pair("tempo")),
    ("tempo", chess.STARTING_FEN.replace(" w ", " b "), pair("tempo", -1)),
    ("tempo", "4k3/8/8/8/8/8/8/4K3 w - - 0 1", pair("tempo")),
    ("tempo", "4k3/8/8/8/8/8/8/4K3 b - - 0 1", pair("tempo", -1)),
    ("tempo", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 0 1",
     pair("tempo", -1)),
]


def test_every_term_has_five_worked_cases():
    counts = {term: sum(1 for t, _, _ in CASES if t == term) for term in evalweights.TERMS[1:]}
    assert all(n >= 5 for n in counts.values()), counts


@pytest.mark.parametrize("term, fen, want", CASES, ids=[f"{t}-{i}" for i, (t, _, _) in
                                                         enumerate(CASES)])
def test_term_equals_the_worked_value(term, fen, want):
    cb = chess.Board(fen)
    got = term_values(board_from_chess(cb))[term]
    assert got == want, f"{term} on {fen}: model {got}, worked out {want}"
    assert reference_terms(cb)[term] == want, f"tests/evaltermsref.py differs on {fen}"


def _positions(seed, count):
    fens = [r.fen for r in suites.perft_records(("tricky.perft", "perftsuite.epd"))]
    fens += suites.epd_positions(("wac.epd",))
    fens += suites.random_play_positions(seed, count)
    return list(dict.fromkeys(fens))


def test_the_model_equals_the_reference_term_by_term():
    seed = seeds.run_seed()
    for fen in _positions(seed, 200):
        cb = chess.Board(fen)
        got = term_values(board_from_chess(cb))
        want = reference_terms(cb)
        for term, value in want.items():
            assert got[term] == value, (f"{term} on {fen}: model {got[term]}, reference "
                                        f"{value} ({seeds.describe()})")


def test_the_terms_material_is_the_files_own_tables():
    """The terms evaluation's material_pst: the weights file's "squares" summed by the
    reference (tests/evaltermsref.py), or, for a file without them, the pst evaluation's."""
    from chessaccel.model.evaluate import material_pst
    seed = seeds.run_seed()
    for fen in _positions(seed, 200):
        cb = chess.Board(fen)
        board = board_from_chess(cb)
        want = reference_squares(cb) or material_pst(board)
        assert term_values(board)["material_pst"] == want, f"{fen} ({seeds.describe()})"


def test_colour_mirror_scores_alike():
    """evaluate(position) == evaluate(mirror(position)) (python-chess's Board.mirror: ranks
    flipped, colours and the side to move swapped), and each term negates."""
    seed = seeds.run_seed()
    for fen in _positions(seed + 1, 300):
        cb = chess.Board(fen)
        board, mirrored = board_from_chess(cb), board_from_chess(cb.mirror())
        assert evaluate_terms(board) == evaluate_terms(mirrored), f"{fen} ({seeds.describe()})"
        terms, twin = term_values(board), term_values(mirrored)
        for term, (mg, eg) in terms.items():
            assert twin[term] == (-mg, -eg), f"{term} on {fen} and its mirror"


def test_the_sums_are_tapered_like_pst():
    """evaluate_terms is the taper of the terms' sums (side to move's view), clamped."""
    from chessaccel.model.evaluate import phase, taper
    for fen in _positions(5, 40)[:60]:
        board = board_from_chess(chess.Board(fen))
        mg = sum(v[0] for v in term_values(board).values())
        eg = sum(v[1] for v in term_values(board).values())
        if board.side:
            mg, eg = -mg, -eg
        assert evaluate_terms(board) == max(-20000, min(20000, taper(mg, eg, phase(board))))


def test_pst_stays_the_default_and_unchanged():
    assert evalweights.DEFAULT_EVALUATION == "pst"
    assert evaluator("pst") is evaluate
    board = suites.board_of("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    plain = model_search.search(board, 2)
    named = model_search.search(board, 2, evaluation="pst")
    terms = model_search.search(board, 2, evaluation="terms")
    assert (plain.score, plain.best_move, plain.nodes) == (named.score, named.best_move, named.nodes)
    assert (plain.score, plain.nodes) != (terms.score, terms.nodes), "terms change the search"


def test_an_unknown_evaluation_is_one_line():
    board = suites.board_of(chess.STARTING_FEN)
    with pytest.raises(model_search.SearchError, match="unknown evaluation 'nope'"):
        model_search.search(board, 1, evaluation="nope")


def test_the_weights_file_is_checked():
    """The loader refuses a malformed table in one line, and the shipped one fits the widths."""
    import json
    text = json.dumps(W)
    assert evalweights.load_weights(text)["version"] == W["version"] >= 1
    assert evalweights.SUM_BOUND < 1 << (evalweights.SUM_BITS - 1)
    bad = dict(W, isolated_pawn=[-10])
    with pytest.raises(evalweights.WeightsError, match="isolated_pawn must be"):
        evalweights.load_weights(json.dumps(bad))
    bad = dict(W, tempo=[300, 0])
    with pytest.raises(evalweights.WeightsError, match="does not fit"):
        evalweights.load_weights(json.dumps(bad))
    with pytest.raises(evalweights.WeightsError, match="not JSON"):
        evalweights.load_weights("{")


# --- the evaluation as counts times weights (model/evalterms.py's feature_counts, the tuner's) ---

def _use_weights(monkeypatch, weights):
    """Make the model evaluate with ``weights`` (a load_weights dict) instead of the file's."""
    from chessaccel.model import evalterms
    for key in ("passed_pawn_mg", "passed_pawn_eg", "king_zone_attack", "mobility_per_square",
                *(name for name in evalweights.WEIGHT_NAMES if "[" not in name and "." not in name)):
        monkeypatch.setattr(evalterms, key.upper(), weights[key])
    monkeypatch.setattr(evalterms, "_SQUARES", (weights["square_mg"], weights["square_eg"]))


def test_feature_counts_times_any_weights_are_the_terms(monkeypatch):
    """With random weights in every slot (so that two weights rarely share a value, as the
    file's knight and bishop king-zone weights do), material + PST plus the counts times the
    mg and eg weights are the terms' sums exactly, and their taper is evaluate_terms."""
    import random
    from chessaccel.model.evalterms import feature_counts
    from chessaccel.model.evaluate import material_pst, phase, taper
    seed = seeds.run_seed()
    rng = random.Random(seed)
    n = len(evalweights.WEIGHT_NAMES)
    for trial in range(3):
        mg = [rng.randrange(-20, 21) for _ in range(n)]
        eg = [rng.randrange(-20, 21) for _ in range(n)]
        raw = evalweights.raw_weights(mg, eg, 1, "random weights of a test")
        weights = evalweights.load_weights(json.dumps(raw))
        assert evalweights.weight_vectors(weights) == (tuple(mg), tuple(eg))
        _use_weights(monkeypatch, weights)
        for fen in _positions(seed + 2 + trial, 100):
            board = board_from_chess(chess.Board(fen))
            counts = feature_counts(board)
            base = material_pst(board, (weights["square_mg"], weights["square_eg"]))
            want_mg = sum(v[0] for v in term_values(board).values())
            want_eg = sum(v[1] for v in term_values(board).values())
            got_mg = base[0] + sum(c * w for c, w in zip(counts, mg))
            got_eg = base[1] + sum(c * w for c, w in zip(counts, eg))
            assert (got_mg, got_eg) == (want_mg, want_eg), f"{fen} ({seeds.describe()})"
            sign = -1 if board.side else 1
            assert taper(sign * got_mg, sign * got_eg, phase(board)) == evaluate_terms(board)


def test_the_file_is_written_back_byte_for_byte():
    """raw_weights and weights_json (what a tuner writes) give evalweights.json itself from
    its own vectors, version and note."""
    from importlib import resources
    text = resources.files(evalweights.__name__.rsplit(".", 1)[0]).joinpath(
        "evalweights.json").read_text()
    mg, eg = evalweights.weight_vectors()
    loaded = evalweights.WEIGHTS
    squares = ((loaded["square_mg"], loaded["square_eg"]) if "squares" in json.loads(text)
               else None)
    raw = evalweights.raw_weights(mg, eg, W["version"], W["about"], squares=squares)
    assert evalweights.weights_json(raw) == text
