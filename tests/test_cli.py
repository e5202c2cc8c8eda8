"""The command line: JSON keys, agreement with the model, and bad input (one line, exit 2)."""

import json
import subprocess
import sys

import chess
import pytest

from chessaccel.defs import MATE
import chessaccel.host.cli as cli
from chessaccel.host.cli import main
from chessaccel.host.bench import BENCH

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
SCHOLAR = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"


def run_json(capsys, *argv):
    assert main([*argv, "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1, "--json prints exactly one line"
    return json.loads(out)


def test_moves_json_is_the_legal_set_in_order(capsys):
    obj = run_json(capsys, "moves", KIWIPETE)
    assert sorted(obj["moves"]) == sorted(m.uci() for m in chess.Board(KIWIPETE).legal_moves)
    assert obj["moves"][0] == "e2a6"   # bishop takes bishop: the most valuable victim first


def test_perft_divide_json(capsys):
    obj = run_json(capsys, "perft", KIWIPETE, "--depth", "2", "--divide")
    assert obj["nodes"] == 2039 and obj["cycles"] is None
    assert sum(obj["divide"].values()) == 2039 and len(obj["divide"]) == 48


def test_search_json_finds_mate(capsys):
    obj = run_json(capsys, "search", SCHOLAR, "--depth", "1")
    assert obj["best_move"] == "h5f7"
    assert obj["score"] == MATE - 1 and obj["mate"] == 1
    assert obj["pv"] == ["h5f7"]
    assert set(obj) >= {"score", "mate", "best_move", "pv", "nodes", "cycles"}


def test_search_accepts_epd_operations(capsys):
    obj = run_json(capsys, "search",
                   '2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - bm Qg6; id "WAC.001";',
                   "--depth", "1")
    assert obj["nodes"] > 1


def test_bench_json_and_files(capsys, tmp_path, monkeypatch):
    import chessaccel.host.cli as cli
    # A shorter bench for the test: the first two jobs, at the documented depths.
    monkeypatch.setattr(cli, "BENCH", BENCH[:2])
    out = tmp_path / "bench.json"
    obj = run_json(capsys, "bench", "--out", str(out))
    assert obj["signature"] == obj["nodes"] == sum(p["nodes"] for p in obj["positions"])
    assert obj["cycles"] is None and obj["cycles_per_node"] is None
    assert json.loads(out.read_text()) == obj
    assert (tmp_path / "bench.png").stat().st_size > 1000


@pytest.mark.parametrize("argv, problem", [
    (["search", "startpos", "--depth", "9"], "out of range"),
    (["search", "startpos", "--depth", "-1"], "out of range"),
    (["search", "startpos", "--depth", "x"], "integer"),
    (["search", "startpos", "--alpha", "10", "--beta", "10"], "empty window"),
    (["search", "startpos", "--alpha", "-40000"], "out of range"),
    (["moves", "startpos", "--backend", "quantum"], "unknown backend"),
    (["moves", "startpos", "--backend", "serial:"], "needs a port"),
    (["moves", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1"], "malformed"),
    (["moves", "hello have a nice day w - -0 1"], "malformed"),
    (["moves", ""], "empty"),
    (["perft", "rnbq1bnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "--depth", "1"], "no king"),
    (["perft", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKKNR w KQkq - 0 1", "--depth", "1"], "more than one king"),
    (["perft", "pnbqkbnr/ppprpppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "--depth", "1"], "pawn"),
    (["search", "4k3/8/8/8/8/8/8/r3K3 b - - 0 1"], "not to move is in check"),
    (["perft", "startpos"], "required"),
    ([], "required"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, problem):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("chessaccel: error:")
    assert problem in lines[0]


def test_installed_command_exit_status_and_no_traceback():
    bad = subprocess.run([sys.executable, "-m", "chessaccel.host.cli", "moves", "8/8/8/8 w - -"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    good = subprocess.run([sys.executable, "-m", "chessaccel.host.cli", "perft", "startpos",
                           "--depth", "2", "--json"], capture_output=True, text=True)
    assert good.returncode == 0 and json.loads(good.stdout)["nodes"] == 400


def test_bench_signature_is_the_documented_one():
    """The bench's signature (total nodes on the model) is the figure README.md publishes: a
    change to the bench set, move order, search or evaluation must update it on purpose."""
    import re
    from pathlib import Path
    from chessaccel.host.backends import ModelBackend
    from chessaccel.host.position import parse_position
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    published = int(re.search(r"bench signature \(total nodes\) \| ([\d,]+)", readme)
                    .group(1).replace(",", ""))
    backend = ModelBackend()
    nodes = [backend.search(parse_position(job.fen)[0], job.depth, -32767, 32767)["nodes"]
             for job in BENCH]
    assert len({job.name for job in BENCH}) == len(BENCH)
    assert sum(nodes) == published, f"bench signature {sum(nodes)}, README.md says {published}"


def _actions(parser):
    """Every option of a parser and of its sub-commands, depth first."""
    import argparse
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _actions(sub)
        else:
            yield action


def test_every_default_is_the_one_its_help_names():
    """An option whose help says "(default N)" defaults to N (the help is the user's manual)."""
    import re
    checked = 0
    for action in _actions(cli._parser()):
        said = re.search(r"\(default:? ([^)]+)\)", action.help or "")
        if said and said.group(1).lstrip("-").isdigit():
            assert action.default == int(said.group(1)), (action.option_strings, action.help)
            checked += 1
    assert checked >= 7


def test_the_help_describes_the_tool_as_the_package_does(capsys):
    """``chessaccel --help`` opens with the package's own one-line summary (chessaccel's
    docstring), word for word."""
    import chessaccel
    with pytest.raises(SystemExit):
        main(["--help"])
    summary = chessaccel.__doc__.strip().split(": ", 1)[1]
    description = capsys.readouterr().out.split("\n\n")[1]
    assert " ".join(description.split()) == summary[0].upper() + summary[1:]
