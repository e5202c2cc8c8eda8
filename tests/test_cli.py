"""The command line: JSON keys, agreement with the model, and bad input (one line, exit 2)."""

import dataclasses
import json
import os
import re
import subprocess
import sys

import chess
import pytest

from chessaccel.contract.defs import MATE
from chessaccel.host.backends import Backend
import chessaccel.host.cli as cli
from chessaccel.host.cli import main
from chessaccel.contract.bench import BENCH

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


@pytest.mark.parametrize("argv", [["eval", "startpos"], ["moves", "startpos"],
                                  ["perft", "startpos", "--depth", "2", "--divide"]])
def test_a_reader_that_went_away_is_no_traceback(argv):
    """`chessaccel eval ... | head`: the pipe's reader is gone before anything is written; the
    command stops quietly with the status a shell reports for SIGPIPE."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "chessaccel.host.cli", *argv], stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert done.returncode == cli.EXIT_SIGPIPE


def test_bench_signature_is_the_documented_one():
    """The bench's signature (total nodes on the model) is the figure README.md publishes: a
    change to the bench set, move order, search or evaluation must update it on purpose."""
    import re
    from pathlib import Path
    from chessaccel.host.backends.model import ModelBackend
    from chessaccel.model.position import parse_position
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    published = int(re.search(r"bench signature \(total nodes\) \| ([\d,]+)", readme)
                    .group(1).replace(",", ""))
    backend = ModelBackend()
    nodes = [backend.search(parse_position(job.fen)[0], job.depth, -32767, 32767)["nodes"]
             for job in BENCH]
    assert len({job.name for job in BENCH}) == len(BENCH)
    assert sum(nodes) == published, f"bench signature {sum(nodes)}, README.md says {published}"
    # job by job: docs/fsm.md's table of the bench set (name, depth, nodes)
    fsm = (Path(__file__).resolve().parent.parent / "docs" / "fsm.md").read_text()
    table = fsm[fsm.index("## Measured cycles per node"):]
    rows = re.findall(r"^\| ([\w.-]+) \| (\d) \| ([\d,]+) \|", table, re.M)
    assert [(job.name, job.depth, n) for job, n in zip(BENCH, nodes)] == \
        [(name, int(depth), int(count.replace(",", ""))) for name, depth, count in rows]


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


# --- every command's text and JSON output, the count modes, the exit statuses ----------------

STALEMATE = "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"


def test_perft_count_modes_on_opencl(capsys):
    """``--count-mode`` on the opencl backend (PoCL here): both modes count the same leaves and
    the JSON names the mode that ran; without the option no mode is named (README's keys)."""
    counts = {}
    for mode in ("bulk", "make"):
        obj = run_json(capsys, "perft", KIWIPETE, "--depth", "2", "--backend", "opencl",
                       "--count-mode", mode)
        assert obj["count_mode"] == mode
        counts[mode] = obj["nodes"]
    assert counts == {"bulk": 2039, "make": 2039}
    obj = run_json(capsys, "perft", KIWIPETE, "--depth", "2", "--backend", "opencl")
    assert "count_mode" not in obj and obj["nodes"] == 2039
    assert main(["perft", "startpos", "--depth", "2", "--backend", "opencl", "--count-mode",
                 "make"]) == 0
    assert capsys.readouterr().out.startswith("perft 2: nodes 400  (")


def test_bulk_counting_needs_the_opencl_backend(capsys):
    """The other backends always make every leaf (the option's help): ``--count-mode make``
    is what they do anyway, ``bulk`` is refused with exit 2."""
    assert main(["perft", "startpos", "--depth", "1", "--count-mode", "bulk"]) == 2
    assert capsys.readouterr().err == ("chessaccel: error: --count-mode bulk needs the opencl "
                                       "backend (model makes every leaf)\n")
    obj = run_json(capsys, "perft", "startpos", "--depth", "2", "--count-mode", "make")
    assert obj["nodes"] == 400 and "count_mode" not in obj


def test_perft_text_output(capsys):
    """Without --json: one line per root move (``e2e4: 20``), a blank line, then the total."""
    assert main(["perft", "startpos", "--depth", "2", "--divide"]) == 0
    lines = capsys.readouterr().out.splitlines()
    board = chess.Board()
    assert sorted(lines[:20]) == sorted(f"{m.uci()}: 20" for m in board.legal_moves)
    assert lines[20] == ""
    assert re.fullmatch(r"perft 2: nodes 400  \(\d+\.\d{3} s\)", lines[21]) and len(lines) == 22
    obj = run_json(capsys, "perft", "startpos", "--depth", "1")
    assert set(obj) == {"nodes", "cycles", "seconds"} and obj["nodes"] == 20
    assert obj["seconds"] == round(obj["seconds"], 6) and 0 <= obj["seconds"] < 60


def test_search_text_output(capsys):
    assert main(["search", SCHOLAR, "--depth", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "bestmove h5f7  score mate 1  depth 1"
    assert lines[1] == "pv h5f7"
    assert re.fullmatch(r"nodes \d+  \(\d+\.\d{3} s\)", lines[2]) and len(lines) == 3
    assert main(["search", "startpos", "--depth", "1"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    obj = run_json(capsys, "search", "startpos", "--depth", "1")
    assert first == f"bestmove {obj['best_move']}  score cp {obj['score']}  depth 1"
    assert obj["mate"] is None and obj["depth"] == 1 and obj["cycles"] is None


def test_search_text_gives_the_whole_pv_space_separated(capsys):
    """Depth 2 from the start position: a PV of two legal moves, one after the other, and the
    same line in text as in JSON."""
    obj = run_json(capsys, "search", "startpos", "--depth", "2")
    board = chess.Board()
    for move in obj["pv"]:
        assert chess.Move.from_uci(move) in board.legal_moves
        board.push_uci(move)
    assert len(obj["pv"]) == 2 and obj["best_move"] == obj["pv"][0]
    assert main(["search", "startpos", "--depth", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == f"pv {obj['pv'][0]} {obj['pv'][1]}"


def test_search_of_a_position_with_no_moves(capsys):
    """Stalemate: no best move, score 0, an empty PV; in text ``bestmove (none)``."""
    obj = run_json(capsys, "search", STALEMATE, "--depth", "2")
    assert (obj["best_move"], obj["pv"], obj["score"], obj["mate"]) == (None, [], 0, None)
    assert main(["search", STALEMATE, "--depth", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["bestmove (none)  score cp 0  depth 2", "pv "]


def test_search_window_is_passed_to_the_backend(capsys):
    """A window that the start position's value lies above: the result is a fail-high bound at
    or above beta, with fewer nodes than the full window."""
    full = run_json(capsys, "search", "startpos", "--depth", "2")
    high = run_json(capsys, "search", "startpos", "--depth", "2", "--alpha", "-100", "--beta", "-50")
    assert full["score"] > -50 and high["score"] >= -50 and high["nodes"] < full["nodes"]


def test_moves_text_output(capsys):
    assert main(["moves", "startpos"]) == 0
    moves = capsys.readouterr().out.split()
    assert sorted(moves) == sorted(m.uci() for m in chess.Board().legal_moves)
    assert main(["moves", STALEMATE]) == 0
    assert capsys.readouterr().out == "(no legal moves)\n"
    assert run_json(capsys, "moves", STALEMATE) == {"moves": []}


class _CyclingModel(Backend):
    """The model with a hardware backend's cycle count (5 cycles a node, 3 a perft leaf)."""

    def __init__(self, spec):
        from chessaccel.host.backends.model import ModelBackend
        self.model = ModelBackend()
        self.closed = False

    def search(self, *job):
        r = self.model.search(*job)
        return dataclasses.replace(r, cycles=5 * r.nodes)

    def perft(self, board, depth, divide=False):
        r = self.model.perft(board, depth, divide)
        return dataclasses.replace(r, cycles=3 * r.nodes)

    def close(self):
        self.closed = True


def test_cycles_are_reported_where_a_backend_counts_them(capsys, monkeypatch, tmp_path):
    made = []
    monkeypatch.setattr(cli, "get_backend", lambda spec, **options: made.append(_CyclingModel(spec)) or made[-1])
    assert main(["perft", "startpos", "--depth", "2"]) == 0
    assert re.fullmatch(r"perft 2: nodes 400  cycles 1200  \(\d+\.\d{3} s\)\n", capsys.readouterr().out)
    assert main(["search", "startpos", "--depth", "1"]) == 0
    nodes = capsys.readouterr().out.splitlines()[2]
    n = int(nodes.split()[1])
    assert nodes.startswith(f"nodes {n}  cycles {5 * n}  (")
    monkeypatch.setattr(cli, "BENCH", BENCH[:2])
    obj = run_json(capsys, "bench", "--out", str(tmp_path / "b.json"))
    assert obj["cycles"] == 5 * obj["nodes"] and obj["cycles_per_node"] == 5.0
    assert [p["cycles_per_node"] for p in obj["positions"]] == [5.0, 5.0]
    assert main(["bench", "--out", str(tmp_path / "c.json")]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"bench (model): nodes {obj['nodes']}  ") and first.endswith(
        "nodes/s  cycles/node 5.00")
    assert all(backend.closed for backend in made) and len(made) == 4


def test_bench_text_output_default_files_and_plot(capsys, monkeypatch, tmp_path):
    """``chessaccel bench``: its progress per job on stderr, three lines on stdout, the JSON at
    out/bench-BACKEND.json (a ':' in the backend's name made '_') and the chart beside it,
    8 x 4 inches at 100 dpi; with --plot the chart goes where it says."""
    import matplotlib.image
    monkeypatch.setattr(cli, "BENCH", BENCH[:2])
    monkeypatch.chdir(tmp_path)
    assert main(["bench"]) == 0
    captured = capsys.readouterr()
    obj = json.loads((tmp_path / "out" / "bench-model.json").read_text())
    lines = captured.out.splitlines()
    assert lines[0] == (f"bench (model): nodes {obj['nodes']}  {obj['seconds']:.2f} s  "
                        f"{obj['nps']:.0f} nodes/s")
    assert lines[1:] == [f"signature {obj['nodes']}",
                         f"wrote {os.path.join('out', 'bench-model.json')} and "
                         f"{os.path.join('out', 'bench-model.png')}"]
    progress = captured.err.splitlines()
    assert [line.split()[0] for line in progress] == [job.name for job in BENCH[:2]]
    for line, p in zip(progress, obj["positions"]):
        assert f"depth {p['depth']}  nodes {p['nodes']:7d}  score {p['score']:6d}  " in line
    assert obj["backend"] == "model"
    assert obj["nps"] == pytest.approx(obj["nodes"] / obj["seconds"], rel=1e-4)
    assert [(p["name"], p["fen"], p["depth"]) for p in obj["positions"]] == \
        [(job.name, job.fen, job.depth) for job in BENCH[:2]]
    assert all(p["best_move"] and p["seconds"] > 0 and p["cycles_per_node"] is None
               for p in obj["positions"])
    assert obj["seconds"] >= sum(p["seconds"] for p in obj["positions"]) - 1e-5
    assert matplotlib.image.imread(tmp_path / "out" / "bench-model.png").shape[:2] == (400, 800)
    assert main(["bench", "--plot", "chart.png", "--out", "b.json", "--json"]) == 0
    assert capsys.readouterr().err == ""        # no progress lines with --json
    assert (tmp_path / "chart.png").exists() and not (tmp_path / "b.png").exists()


def test_bench_on_opencl_names_its_device(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(cli, "BENCH", BENCH[:1])
    monkeypatch.chdir(tmp_path)
    obj = run_json(capsys, "bench", "--backend", "opencl:pocl")
    assert json.loads((tmp_path / "out" / "bench-opencl_pocl.json").read_text()) == obj
    assert obj["backend"] == "opencl:pocl" and obj["device"]
    assert obj["signature"] == obj["nodes"] == obj["positions"][0]["nodes"]


class _Failing(Backend):
    def __init__(self, error):
        self.error = error
        self.closed = False

    def moves(self, board):
        raise self.error

    def close(self):
        self.closed = True


@pytest.mark.parametrize("error, status, line", [
    (cli.BackendError("board stopped answering"), 1, "chessaccel: error: board stopped answering"),
    (KeyboardInterrupt(), 130, "chessaccel: interrupted"),
])
def test_a_backend_failing_at_run_time(capsys, monkeypatch, error, status, line):
    """A backend failing mid-command: exit 1 (bad input is 2; README), or 130 on an interrupt;
    one line on stderr, nothing on stdout, and the backend closed either way."""
    backend = _Failing(error)
    monkeypatch.setattr(cli, "get_backend", lambda spec, **options: backend)
    assert main(["moves", "startpos"]) == status
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", line + "\n") and backend.closed


def test_every_help_text_is_lower_case_and_names_real_options():
    """Help texts follow argparse's own style (``show this help message and exit``): they
    start with a lower-case word or with a name the documents use (FEN, SearchCores); and
    every ``--option`` a help text names (outside a quoted command) is an option of the same
    command."""
    import argparse

    def walk(parser):
        options = {s for a in parser._actions for s in a.option_strings}
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:
                    yield choice.help, options
                for sub in action.choices.values():
                    yield from walk(sub)
            elif action.help and action.help != argparse.SUPPRESS:
                yield action.help, options
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    # (not docs/testing.md: it quotes mutants of these texts)
    names = set(re.findall(r"[A-Z][\w/-]*", (root / "README.md").read_text() + "".join(
        path.read_text() for path in (root / "docs").glob("*.md") if path.name != "testing.md")))
    seen = 0
    for text, options in walk(cli._parser()):
        seen += 1
        first = text.split()[0].rstrip(",:")
        assert re.match(r"[a-z0-9'(]", first) or first in names, text
        for named in re.findall(r"--[a-z][-a-z]*\w*", re.sub(r"`[^`]*`", "", text)):
            assert named in options, (named, text)
    assert seen > 40


# --- the user's manual and every usage error, word for word -------------------------------------

HELP = os.path.join(os.path.dirname(__file__), "data", "cli-help.txt")


def test_the_help_of_each_command_is_the_committed_one(capsys, monkeypatch):
    """``chessaccel [COMMAND] --help`` at 100 columns for the commands cli.py defines is
    tests/data/cli-help.txt (reviewed by hand: option names, defaults, choices and texts); a
    change of the manual updates the file on purpose."""
    monkeypatch.setenv("COLUMNS", "100")
    pages = []
    for argv in ([], ["moves"], ["perft"], ["search"], ["eval"], ["compare"], ["bench"],
                 ["board", "info"]):
        with pytest.raises(SystemExit) as exit_:
            main([*argv, "--help"])
        assert exit_.value.code == 0
        pages.append(f"$ chessaccel {' '.join(argv + ['--help'])}\n{capsys.readouterr().out}")
    with open(HELP) as f:
        assert "\n".join(pages) == f.read()


@pytest.mark.parametrize("argv, line", [
    (["search", "startpos", "--depth", "9"], "argument --depth: depth 9 out of range 0..8"),
    (["perft", "startpos", "--depth", "-1"], "argument --depth: depth -1 out of range 0..8"),
    (["search", "startpos", "--depth", "2.5"], "argument --depth: depth must be an integer, got '2.5'"),
    (["search", "startpos", "--alpha", "-32768"],
     "argument --alpha: window bound -32768 out of range -32767..32767"),
    (["search", "startpos", "--beta", "32768"],
     "argument --beta: window bound 32768 out of range -32767..32767"),
    (["search", "startpos", "--beta", "inf"], "argument --beta: window bound must be an integer, got 'inf'"),
    (["search", "startpos", "--alpha", "5", "--beta", "4"], "empty window: alpha 5 must be below beta 4"),
    (["perft", "startpos", "--depth", "1", "--count-mode", "bulk"],
     "--count-mode bulk needs the opencl backend (model makes every leaf)"),
    (["perft", "startpos", "--depth", "1", "--count-mode", "fast"],
     "argument --count-mode: invalid choice: 'fast' (choose from 'bulk', 'make')"),
    (["bench", "--host", "--host-depth", "0"], "host depth 0 out of range 1..64"),
    (["bench", "--host", "--host-depth", "65"], "host depth 65 out of range 1..64"),
    (["bench", "--host", "--accelerators", "0"], "accelerators must be at least 1, got 0"),
    (["bench", "--dispatch", "--dispatch-depth", "0"], "dispatch depth 0 out of range 1..64"),
    (["bench", "--dispatch", "--dispatch-depth", "65"], "dispatch depth 65 out of range 1..64"),
    (["moves", "startpos", "--backend", "opencl:"],
     "opencl backend needs a platform name after the colon: --backend opencl:NVIDIA or opencl:Portable"),
])
def test_each_usage_error_is_its_own_line(capsys, monkeypatch, argv, line):
    from chessaccel.lab import dispatch, hostbench
    monkeypatch.setattr(hostbench, "run", lambda *args: 0)     # an accepted value returns at once
    monkeypatch.setattr(dispatch, "run", lambda *args: 0)
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", f"chessaccel: error: {line}\n")


def test_the_limits_themselves_are_accepted(monkeypatch):
    from chessaccel.lab import dispatch, hostbench
    ran = []
    monkeypatch.setattr(hostbench, "run", lambda args, *rest: ran.append(
        ("host", args.host_depth, args.accelerators)) or 0)
    monkeypatch.setattr(dispatch, "run", lambda args: ran.append(("dispatch", args.dispatch_depth)) or 0)
    for depth in ("1", "64"):
        assert main(["bench", "--host", "--host-depth", depth, "--accelerators", "1"]) == 0
        assert main(["bench", "--dispatch", "--dispatch-depth", depth]) == 0
    assert ran == [("host", 1, 1), ("dispatch", 1), ("host", 64, 1), ("dispatch", 64)]
    for text, value in (("0", 0), ("8", 8), ("+3", 3)):
        assert cli._depth(text) == value
    for text, value in (("-32767", -32767), ("32767", 32767), ("0", 0)):
        assert cli._bound(text) == value
    assert cli._board("  startpos ").key() == cli._board(
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").key()
    assert cli._uci(None) is None


def test_each_command_reaches_its_module(monkeypatch, capsys):
    """board-sim, board info, synth, uci, epd and match run their own modules' entries with
    the parsed arguments and return their status; an EPD or match error is a usage error."""
    from chessaccel.host import boardcli
    from chessaccel.host.engine import epd, match, uci
    from chessaccel.synth import board as synth_board
    seen = []
    monkeypatch.setattr(boardcli, "board_sim_main", lambda args: seen.append(("sim", args.command)) or 3)
    monkeypatch.setattr(boardcli, "board_info_main",
                        lambda args: seen.append(("info", args.port)) or 4)
    monkeypatch.setattr(synth_board, "run_board_command", lambda args: seen.append(("synth", args.board)) or 5)
    monkeypatch.setattr(uci, "main", lambda: seen.append(("uci",)) or 6)

    def epd_run(args):
        raise epd.EpdError("no such suite: nowhere.epd")

    def match_run(args):
        raise match.MatchError("opponent 'nobody' did not start")
    monkeypatch.setattr(epd, "run", epd_run)
    monkeypatch.setattr(match, "run", match_run)
    assert main(["board-sim"]) == 3
    assert main(["board", "info", "--port", "/dev/pts/9"]) == 4
    assert main(["synth", "--board", "ulx3s"]) == 5
    assert main(["uci"]) == 6
    assert seen == [("sim", "board-sim"), ("info", "/dev/pts/9"), ("synth", "ulx3s"), ("uci",)]
    capsys.readouterr()
    assert main(["epd", "nowhere.epd", "--depth", "1"]) == 2
    assert capsys.readouterr().err == "chessaccel: error: no such suite: nowhere.epd\n"
    assert main(["match", "--opponent", "nobody", "--games", "2", "--tc", "1+0"]) == 2
    assert capsys.readouterr().err == "chessaccel: error: opponent 'nobody' did not start\n"


# --- plug-ins: the chessaccel.commands entry points ----------------------------------------------

class _Hello:
    """A plug-in that makes a command of its own."""
    help = "say hello"

    def add_arguments(self, parser, depth):
        parser.add_argument("--depth", type=depth, default=1)

    def run(self, args, host):
        host.emit({"hello": args.depth}, [f"hello {args.depth}"])
        return 0


def test_a_plugin_joins_or_makes_a_command_and_a_missing_one_is_left_out(monkeypatch, capsys):
    """Entry points of the chessaccel.commands group: one named after a new command makes it,
    one whose package is not installed is left out, and the project's own lab entry is there
    even when the installed metadata predates it (host/cli.py's OWN_PLUGINS)."""
    from importlib.metadata import EntryPoint
    import importlib.metadata as metadata
    hello = _Hello()
    monkeypatch.setattr(sys.modules[__name__], "HELLO", hello, raising=False)
    entries = [EntryPoint("hello", f"{__name__}:HELLO", cli.COMMANDS_GROUP),
               EntryPoint("bench", "chessaccel_not_installed.x:y", cli.COMMANDS_GROUP)]
    monkeypatch.setattr(metadata, "entry_points", lambda group: entries)
    monkeypatch.setattr(cli, "_PLUGINS", None)
    plugins = cli._plugins()
    from chessaccel.lab.benchcli import bench
    assert plugins == {"hello": [hello], "bench": [bench]}
    assert main(["hello", "--depth", "3"]) == 0
    assert capsys.readouterr().out == "hello 3\n"
    assert main(["hello", "--depth", "9"]) == 2
    assert "depth 9 out of range" in capsys.readouterr().err
    monkeypatch.setattr(cli, "_PLUGINS", None)


def test_the_own_plugins_are_the_ones_pyproject_declares():
    """host/cli.py's OWN_PLUGINS stands in for the chessaccel.commands entry points of a checkout
    whose install predates them: it must name exactly what pyproject.toml declares."""
    import tomllib
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert dict(cli.OWN_PLUGINS) == project["entry-points"][cli.COMMANDS_GROUP]
