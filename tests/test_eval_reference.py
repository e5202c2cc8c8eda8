"""The model's evaluation against an independent reference (tests/evalref.py, written from
docs/semantics.md section 6 without the project's tables).

- tests/data/eval-reference.json: 27 positions (start position, lone pieces on known squares,
  each game phase, the phase cap, the clamp, a negative floor shift, colour-mirrored pairs) with
  every intermediate value; the file, the reference and the model must agree on each.
- Every table entry through evaluate(): each piece kind of each colour on each of the 64 squares
  beside two kings, and each king on each square, so a swapped pair of entries, a wrong material
  value or a mis-mirrored black square fails here even though model, RTL and the search oracle
  all read the same tables (docs/testing.md: the planted swap of two PST entries).
- Random-play positions drawn with the run's seed (tests/seeds.py).
"""

import chess
import pytest

from chessaccel.model.position import board_from_chess
from chessaccel.model.evaluate import evaluate, material_pst

import seeds
import suites
from evalref import (REFERENCE_POSITIONS, read_reference, reference_eval, reference_record,
                     single_piece_boards, with_full_phase)

RECORDS = read_reference()
#: Random-play positions per run drawn with the run's seed.
FRESH_COUNT = 400


def model_eval(cb):
    return evaluate(board_from_chess(cb))


def test_reference_file_has_the_documented_positions():
    assert len(RECORDS) >= 20
    assert [r["name"] for r in RECORDS] == [p[0] for p in REFERENCE_POSITIONS]
    phases = {r["phase"] for r in RECORDS}
    assert {0, 24} <= phases and len(phases) >= 6, "every game phase is represented"
    assert any(r["score"] == 20000 for r in RECORDS) and any(r["score"] == -20000 for r in RECORDS)
    assert any(r["tapered"] < 0 and (r["mg"] * r["w"] + r["eg"] * (32 - r["w"])) % 32
               for r in RECORDS), "a negative score that the shift floors"


@pytest.mark.parametrize("record", RECORDS, ids=[r["name"] for r in RECORDS])
def test_model_equals_the_worked_out_value(record):
    cb = chess.Board(record["fen"])
    assert reference_record(record["name"], record["fen"], record["why"]) == record, \
        "tests/evalref.py no longer gives the committed value: see its docstring"
    got = model_eval(cb)
    assert got == record["score"], (
        f"{record['name']} ({record['fen']}): model {got}, document {record['score']}\n  "
        + "\n  ".join(record["pieces"]) + f"\n  phase {record['phase']} w {record['w']}: "
        + record["taper"])


def test_mirrored_pairs_score_alike():
    by_name = {r["name"]: r for r in RECORDS}
    for a, b in (("kiwipete", "kiwipete-mirror"),
                 ("black-pawn-d5-white-to-move", "black-pawn-d4-mirror")):
        assert chess.Board(by_name[a]["fen"]).mirror().board_fen() == \
            chess.Board(by_name[b]["fen"]).board_fen()
        assert by_name[a]["score"] == by_name[b]["score"]


def test_every_table_entry_through_evaluate():
    """768 material + PST entries (both phases, both colours) and 128 king placements: a swapped
    pair of entries or a wrong value fails, whatever the tables say of themselves. Each placement
    is checked as the model's (mg, eg) sums, and through evaluate() at a low phase and at the
    full phase (where the score is the middlegame sum itself)."""
    wrong = []
    for what, cb in single_piece_boards():
        _, record = reference_eval(cb, explain=True)
        sums = material_pst(board_from_chess(cb))
        if sums != (record["white_mg"], record["white_eg"]):
            wrong.append(f"{what}: model (mg, eg) {sums}, document "
                         f"{(record['white_mg'], record['white_eg'])}")
        for board in (cb, with_full_phase(cb)):
            want, got = reference_eval(board), model_eval(board)
            if want != got:
                wrong.append(f"{what} ({board.fen()}): model {got}, document {want}")
    assert not wrong, f"{len(wrong)} placements differ; first: " + "; ".join(wrong[:5])


def test_fresh_random_positions_equal_the_reference():
    seed = seeds.run_seed()
    for fen in suites.random_play_positions(seed, FRESH_COUNT):
        cb = chess.Board(fen)
        assert model_eval(cb) == reference_eval(cb), f"{fen} ({seeds.describe()})"


def test_the_terms_are_summed(monkeypatch):
    """Section 6: the evaluation is a sum of terms (TERMS; pawn structure, king cover and mobility
    are to come as further terms): with a second, constant term (+7 mg, -3 eg) the score
    moves by exactly what the taper makes of it (a rook ending, white to move: w = 5, so both
    halves count)."""
    import chessaccel.model.evaluate as model
    record = next(r for r in RECORDS if r["name"] == "phase-endgame-rooks")
    assert record["side_to_move"] == "white" and 0 < record["w"] < 32
    board = board_from_chess(chess.Board(record["fen"]))
    monkeypatch.setattr(model, "TERMS", (model.material_pst, lambda b: (7, -3)))
    w = record["w"]
    assert model.evaluate(board) == ((record["mg"] + 7) * w + (record["eg"] - 3) * (32 - w)) >> 5
    monkeypatch.setattr(model, "TERMS", (lambda b: (7, -3), model.material_pst))
    assert model.evaluate(board) == ((record["mg"] + 7) * w + (record["eg"] - 3) * (32 - w)) >> 5
