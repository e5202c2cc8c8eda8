"""``chessaccel eval`` (host/evalcli.py) and the engine's ``Evaluation`` option: the terms
printed and in JSON, the model's total beside another backend's, and bad input as one line."""

import json

import chess
import pytest

from chessaccel.contract.evalweights import TEMPO, TERMS, WEIGHTS_VERSION
from chessaccel.host.cli import main
from chessaccel.host.engine.uci import UciEngine, UciError
from chessaccel.model.evalterms import evaluate_terms, term_values
from chessaccel.model.position import board_from_chess

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 0 1"


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_text_lists_every_term_and_the_score(capsys):
    status, out, err = run(capsys, "eval", KIWIPETE, "--evaluation", "terms")
    assert status == 0 and not err
    board = board_from_chess(chess.Board(KIWIPETE))
    values = term_values(board)
    for term in TERMS:
        mg, eg = values[term]
        assert any(line.split()[:3] == [term, str(mg), str(eg)] for line in out.splitlines()), term
    assert f"score: {evaluate_terms(board)} " in out
    assert f"weights version {WEIGHTS_VERSION}" in out and "side to move: black" in out


def test_json_holds_the_terms_and_the_tapered_parts(capsys):
    status, out, _ = run(capsys, "eval", "startpos", "--evaluation", "terms", "--json")
    obj = json.loads(out)
    assert status == 0 and list(obj["terms"]) == list(TERMS)
    # the start position: every term but the tempo is symmetric; the full phase weighs mg only
    assert obj["terms"]["tempo"] == {"mg": TEMPO[0], "eg": TEMPO[1], "tapered": TEMPO[0]}
    assert obj["score"] == TEMPO[0] and obj["phase"] == 24 and obj["weight"] == 32
    status, out, _ = run(capsys, "eval", "startpos", "--json")
    assert json.loads(out)["terms"] == {"material_pst": {"mg": 0, "eg": 0, "tapered": 0}}


def test_an_epd_file_gives_every_position(capsys, tmp_path):
    path = tmp_path / "two.epd"
    path.write_text(f"# two positions\n{chess.STARTING_FEN}\n\n{KIWIPETE}\n")
    status, out, _ = run(capsys, "eval", "--epd", str(path), "--evaluation", "terms", "--json")
    positions = json.loads(out)["positions"]
    assert status == 0 and [p["score"] for p in positions] == [
        TEMPO[0], evaluate_terms(board_from_chess(chess.Board(KIWIPETE)))]


def test_opencl_reports_the_same_total(capsys):
    pytest.importorskip("pyopencl")
    status, out, _ = run(capsys, "eval", KIWIPETE, "--evaluation", "terms",
                         "--backend", "opencl:pocl", "--json")
    obj = json.loads(out)
    assert status == 0 and obj["backend_score"] == obj["score"]


def test_rtl_reports_the_same_total(capsys):
    """The RTL backend with the terms evaluation (the core built with EvaluateTerms) gives the
    model's total on a one-node job."""
    from chessaccel.sim.rtl_search import toolchain_missing
    if toolchain_missing() is not None:
        pytest.skip(f"RTL simulation unavailable: {toolchain_missing()}")
    status, out, _ = run(capsys, "eval", KIWIPETE, "--evaluation", "terms", "--backend", "rtl",
                         "--json")
    obj = json.loads(out)
    assert status == 0 and obj["backend_score"] == obj["score"]


@pytest.mark.parametrize("argv, message", [
    (["eval", "not a fen"], "malformed FEN/EPD"),
    (["eval", "8/8/8/8/8/8/8/8 w - - 0 1"], "the board is empty"),
    (["eval", "startpos", "--evaluation", "nope"], "unknown evaluation 'nope' (choose from: pst, terms)"),
    (["eval", "startpos", "--evaluation", "terms", "--backend", "serial:/dev/ttyUSB0"],
     "backend 'serial:/dev/ttyUSB0' cannot evaluate with 'terms' (it offers: pst)"),
    (["eval"], "eval needs a POSITION or --epd FILE"),
    (["eval", "startpos", "--epd", "x.epd"], "eval needs a POSITION or --epd FILE"),
    (["eval", "--epd", "/no/such/file.epd"], "cannot read /no/such/file.epd"),
    (["search", "startpos", "--evaluation", "terms", "--backend", "serial:/dev/ttyUSB0"],
     "cannot evaluate"),
])
def test_bad_input_is_one_line_and_status_2(capsys, argv, message):
    status, out, err = run(capsys, *argv)
    assert status == 2 and not out
    assert err.count("\n") == 1 and err.startswith("chessaccel: error: ") and message in err, err


class _Lines:
    def __init__(self):
        self.lines = []

    def write(self, text):
        self.lines += [line for line in text.splitlines() if line]

    def flush(self):
        pass


def test_the_uci_option_picks_the_evaluation():
    out = _Lines()
    engine = UciEngine(output=out)
    try:
        engine.handle("uci")
        assert ("option name Evaluation type combo default auto var auto var pst var terms"
                in out.lines)
        engine.handle("isready")        # auto: the model offers terms, so it searches with them
        assert engine._ensure_executor() is not None and engine._executor_evaluation == "terms"
        engine.handle("setoption name Evaluation value terms")
        assert engine._executor_evaluation == "terms" and not any("error" in l for l in out.lines)
        with pytest.raises(UciError) as refused:      # the command loop prints it as one line
            engine.handle("setoption name Backend value serial:/dev/ttyUSB0")
        assert str(refused.value) == ("backend 'serial:/dev/ttyUSB0': backend "
                                      "'serial:/dev/ttyUSB0' cannot evaluate with 'terms' (it "
                                      "offers: pst)")
        with pytest.raises(UciError, match="option Evaluation needs one of auto, pst, terms"):
            engine.handle("setoption name Evaluation value nope")
        assert engine.values["Evaluation"] == "terms" and engine.values["Backend"] == "model"
        engine.handle("go depth 2")
        assert engine._search_over.wait(60)
        engine.searching()
        assert any(l.startswith("info depth 2") and "score cp" in l for l in out.lines)
    finally:
        engine.shutdown()


@pytest.mark.parametrize("spec, chosen, searched", [
    ("model", "auto", "terms"), ("opencl", "auto", "terms"), ("rtl", "auto", "terms"),
    ("verilator", "auto", "pst"), ("serial:/dev/ttyUSB0", "auto", "pst"),
    ("model", "pst", "pst"), ("verilator", "terms", "terms"), ("nosuchbackend", "auto", "pst")])
def test_evaluation_auto_is_terms_where_the_backend_offers_it(spec, chosen, searched):
    # "verilator" with "terms" stays "terms": a simulated board built with them
    # (tests/test_board_backend.py); auto stays pst there, as on the boards it stands for
    assert UciEngine._evaluation_for(spec, chosen) == searched
