"""``chessaccel compare`` (host/compare.py): one job on several backends side by side, and a clear
verdict: exit 0 only when every backend gives the model's score, best move and node count."""

import json

import pytest

from chessaccel.host import compare as compare_mod
from chessaccel.host.backends import JobResult, get_backend
from chessaccel.host.cli import main
from chessaccel.model.position import parse_position

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


def test_model_and_opencl_agree_through_the_command_line(tmp_path, capsys):
    out = tmp_path / "compare.json"
    assert main(["compare", KIWIPETE, "--depth", "2", "--backends", "model,opencl",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    record = json.loads(out.read_text())
    assert record["agree"] and [row["backend"] for row in record["backends"]] == ["model", "opencl"]
    model, opencl = record["backends"]
    assert (model["score"], model["best_move"], model["nodes"]) == \
        (opencl["score"], opencl["best_move"], opencl["nodes"])
    assert model["nodes"] > 0 and model["nps"] > 0
    assert f"agree: score cp {model['score']}, best move {model['best_move']}" in text


def test_the_rtl_core_agrees_with_the_model(capsys):
    assert main(["compare", "startpos", "--depth", "2", "--backends", "model,rtl", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    model, rtl = record["backends"]
    assert record["agree"] and rtl["cycles"] > rtl["nodes"] == model["nodes"]


class _OffByOne:
    """A backend that counts one node more than the model: what a broken implementation does."""

    def __init__(self):
        self.model = get_backend("model")

    def search(self, board, depth, alpha, beta):
        r = self.model.search(board, depth, alpha, beta)
        return JobResult(score=r.score, best_move=r.best_move, pv=r.pv, nodes=r.nodes + 1,
                         cycles=None)

    def close(self):
        self.model.close()


def test_a_backend_that_differs_is_named_with_what_differs():
    board, _ = parse_position(KIWIPETE)
    rows = compare_mod.compare(board, 1, ["model", "broken"],
                               lambda spec: _OffByOne() if spec == "broken" else get_backend(spec))
    verdict = compare_mod._verdict(rows)
    assert verdict == f"broken nodes {rows[0]['nodes'] + 1} != model {rows[0]['nodes']}"


def test_a_backend_that_fails_is_reported_and_the_others_still_run(capsys):
    assert main(["compare", "startpos", "--depth", "1", "--backends", "model,serial:"]) == 1
    out = capsys.readouterr().out
    assert "DISAGREE: serial: failed: serial backend needs a port" in out
    assert out.splitlines()[2].startswith("model ")


@pytest.mark.parametrize("argv, line", [
    (["compare", "startpos", "--backends", " , "], "--backends names no backend"),
    (["compare", "4k3/8/8/8/8/8/8/8 w - -", "--backends", "model"], "white has no king"),
    (["compare", "startpos", "--depth", "9"], "depth 9 out of range 0..8"),
])
def test_bad_input_is_one_line_and_status_2(argv, line, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert line in err and err.count("\n") == 1
