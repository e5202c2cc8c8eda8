"""docs/fsm.md cannot rot: its state table is generated from hdl/search.py's STATES, and the
FSM the code builds uses exactly the transitions STATES declares."""

from pathlib import Path

from amaranth.hdl import Fragment

from chessaccel.hdl.search import STATES, SearchCore, update_doc, DOC_BEGIN, DOC_END

DOC = Path(__file__).resolve().parent.parent / "docs" / "fsm.md"
#: Hydra's FSM had 54 states (wait states included); ours must not have more.
HYDRA_STATES = 54


def test_doc_table_is_generated_from_the_code():
    text = DOC.read_text()
    assert DOC_BEGIN in text and DOC_END in text
    assert update_doc(text) == text, (
        "docs/fsm.md is stale: run `python -m chessaccel.hdl.search docs/fsm.md`")


def test_declared_transitions_are_the_ones_built():
    core = SearchCore()
    Fragment.get(core, None)  # elaborates the FSM (and its blocks), recording the transitions
    declared = {(state, target) for state, (_, targets) in STATES.items() for target in targets}
    assert core.transitions == declared


def test_every_state_has_a_comment_and_fits_hydras_budget():
    assert len(STATES) <= HYDRA_STATES
    for state, (comment, targets) in STATES.items():
        assert state.isupper() and comment and targets
        assert set(targets) <= set(STATES)
