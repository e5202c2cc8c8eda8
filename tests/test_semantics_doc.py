"""docs/semantics.md states what the code computes: its generated parts and examples are checked."""

import pathlib
import re

from chessaccel.contract import defs
from chessaccel.contract.evaltables import markdown_tables, MATERIAL_MG, MATERIAL_EG, PHASE_WEIGHT
from chessaccel.contract.geometry import move_uci
from chessaccel.model.position import parse_position
from chessaccel.model.movegen import legal_moves

DOC = (pathlib.Path(__file__).parent.parent / "docs" / "semantics.md").read_text()


def test_appendix_tables_are_the_generated_ones():
    appendix = DOC[DOC.index("## Appendix: piece-square tables"):]
    appendix = appendix.partition("## Appendix: the terms evaluation's tables")[0].strip()
    assert appendix == markdown_tables().strip(), \
        "docs/semantics.md appendix is stale: regenerate with `python -m chessaccel.contract.evaltables`"


def test_constants_match_defs():
    for name in ("MATE", "INF", "MAX_PLY", "MAX_DEPTH", "EVAL_MAX"):
        m = re.search(rf"`{name} = ([\d,]+)`", DOC)
        assert m, f"{name} is not stated in docs/semantics.md"
        assert int(m.group(1).replace(",", "")) == getattr(defs, name), name


def test_material_table_matches():
    rows = re.findall(r"^\| (pawn|knight|bishop|rook|queen|king) \| (\d+) \| (\d+) \|$", DOC, re.M)
    names = {"pawn": 1, "knight": 2, "bishop": 3, "rook": 4, "queen": 5, "king": 6}
    assert len(rows) == 6
    for name, mg, eg in rows:
        assert (MATERIAL_MG[names[name]], MATERIAL_EG[names[name]]) == (int(mg), int(eg)), name


def test_phase_weight_formula():
    assert PHASE_WEIGHT == tuple((p * 32 + 12) // 24 for p in range(25))


def test_start_position_order_example():
    m = re.search(r"for example from the start position: `([^`]*)`", DOC.replace("\n", " "))
    example = re.sub(r"\s+", " ", m.group(1)).split(" ... ")
    board, _ = parse_position("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
    order = " ".join(move_uci(mv) for mv in legal_moves(board))
    head, middle, tail = example
    assert order.startswith(head)
    assert middle in order
    assert order.endswith(tail)


def test_the_weights_table_is_the_file():
    from chessaccel.contract.evalweights import SUM_BOUND, markdown_squares, markdown_weights
    assert markdown_weights() in DOC, \
        "docs/semantics.md 6.1's weights are stale: regenerate with `python -m chessaccel.contract.evalweights`"
    assert markdown_squares() in DOC.partition("## Appendix: the terms evaluation's tables")[2], \
        ("docs/semantics.md's appendix of the terms evaluation's tables is stale: regenerate "
         "with `python -m chessaccel.contract.evalweights`")
    assert f"at most\n{SUM_BOUND:,} < 2^17" in DOC or f"at most {SUM_BOUND:,} < 2^17" in DOC, \
        "the widths paragraph states SUM_BOUND"
