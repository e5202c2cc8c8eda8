"""``chessaccel epd``: scoring by bm / am / dm, the files it writes, resuming, bad suites; and
position text with trailing junk (contract/position.py)."""

import json

import pytest

from chessaccel.host.cli import main
from chessaccel.model.position import PositionError, parse_position

#: WAC and CCR positions with their published operations, a mate in one, a mated side and a
#: tablebase draw: small trees, so depth 3 costs a second or two on the model.
SUITE = """\
r1bq2rk/pp3pbp/2p1p1pQ/7P/3P4/2PB1N2/PP3PPR/2KR4 w - - bm Qxh7+; id "WAC.004";
7k/p7/1R5K/6r1/6p1/6P1/8/8 w - - bm Rb7; id "WAC.006";
R7/P4k2/8/8/8/8/r7/6K1 w - - bm Rh8; id "WAC.018";
3R1rk1/8/5Qpp/2p5/2P1p1q1/P3P3/1P2PK2/8 b - - bm Qh4+; id "WAC.025";
rnbq1b1r/ppp2kpp/3p1n2/8/3PP3/8/PPP2PPP/RNBQKB1R b KQ d3 1 5 id "CCR13"; am Ne4;

# comments and blank lines are skipped
r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - dm 1; id "scholar";
k7/8/1K6/8/8/8/8/7R b - - dm -1; id "mated";
1k1K4/8/8/pP6/8/8/8/8 w - a6 dm 0;
"""
#: What the engine (model, HardwarePlies 2, depth 3) plays and whether that solves the line.
EXPECTED = [("WAC.004", "Qxh7+", True), ("WAC.006", "Rb7", True), ("WAC.018", "Kh1", False),
            ("WAC.025", "Qh4+", True), ("CCR13", "Nxe4", False), ("scholar", "Qxf7#", True),
            ("mated", "Kb8", True), ("line10", "Kd7", True)]


@pytest.fixture
def suite(tmp_path):
    path = tmp_path / "small.epd"
    path.write_text(SUITE)
    return path


def run_epd(capsys, *argv):
    status = main(["epd", *map(str, argv)])
    return status, capsys.readouterr()


def test_suite_is_scored_by_bm_am_and_dm(suite, tmp_path, capsys):
    out = tmp_path / "run.json"
    status, captured = run_epd(capsys, suite, "--depth", 3, "--hardware-plies", 2, "--out", out,
                               "--json")
    assert status == 0
    summary = json.loads(captured.out)
    got = [(r["id"], r["san"], r["solved"]) for r in summary["positions"]]
    assert got == EXPECTED
    assert (summary["solved"], summary["total"], summary["limit"]) == (6, 8, "depth3")
    by_id = {r["id"]: r for r in summary["positions"]}
    assert by_id["scholar"]["mate"] == 1 and by_id["mated"]["mate"] == -1
    assert by_id["WAC.004"]["expected"] == {"bm": ["Qxh7+"]}
    assert by_id["CCR13"]["expected"] == {"am": ["Nxe4"]}   # SAN as python-chess writes it
    assert by_id["line10"]["expected"] == {"dm": 0} and by_id["line10"]["mate"] is None
    assert all(r["depth"] == 3 and r["nodes"] == r["host_nodes"] + r["accelerator_nodes"]
               for r in summary["positions"])
    assert json.loads(out.read_text()) == summary
    progress = [json.loads(l) for l in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert progress == summary["positions"]
    assert (tmp_path / "run.png").stat().st_size > 1000
    assert "8/8 solved 6" in captured.err          # the progress bar's last state


def test_an_interrupted_run_resumes_where_it_stopped(suite, tmp_path, capsys):
    out = tmp_path / "run.json"
    status, _ = run_epd(capsys, suite, "--depth", 2, "--first", 3, "--out", out)
    assert status == 0
    first = (tmp_path / "run.jsonl").read_text().splitlines()
    assert len(first) == 3
    status, captured = run_epd(capsys, suite, "--depth", 2, "--out", out, "--resume", "--json")
    summary = json.loads(captured.out)
    assert status == 0 and summary["resumed"] == 3 and summary["total"] == 8
    assert (tmp_path / "run.jsonl").read_text().splitlines()[:3] == first


@pytest.mark.parametrize("text, problem", [
    ("7k/p7/1R5K/6r1/6p1/6P1/8/8 w - - id \"x\";\n", "2: no bm, am or dm"),
    ("7k/p7/1R5K/6r1/6p1/6P1/8/8 w - - bm Qh8;\n", "1: "),
    ("7k/p7/1R5K/6r1/6p1/6P1/8/8 w - - bm Rb7 id x\n", "trailing text"),
    ("7k/p7/1R5K/6r1/6p1/6P1/8/8 x - - bm Rb7;\n", "1: malformed"),
    ("# nothing but a comment\n", "no positions"),
])
def test_bad_suites_are_one_line_naming_the_place(tmp_path, capsys, text, problem):
    path = tmp_path / "bad.epd"
    path.write_text("# a suite\n" + text if "no bm" in problem else text)
    status, captured = run_epd(capsys, path, "--depth", 1)
    lines = captured.err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and problem in lines[0], lines
    assert str(path) in lines[0] and captured.out == ""


@pytest.mark.parametrize("argv, problem", [
    (["epd", "/nonexistent/suite.epd", "--depth", "1"], "No such file"),
    (["epd", "x.epd"], "one of the arguments --nodes --movetime --depth is required"),
    (["epd", "x.epd", "--depth", "1", "--nodes", "5"], "not allowed with"),
    (["epd", "x.epd", "--nodes", "0"], "at least 1"),
    (["epd", "x.epd", "--depth", "1", "--hardware-plies", "9"], "out of range"),
])
def test_bad_arguments(capsys, argv, problem):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and problem in err[0]


@pytest.mark.parametrize("argv, line", [
    (["--first", "0"], "argument --first: first must be at least 1, got 0"),
    (["--first", "x"], "argument --first: first must be an integer, got 'x'"),
    (["--hash", "0"], "argument --hash: hash must be at least 1, got 0"),
    (["--hash", "-3"], "argument --hash: hash must be at least 1, got -3"),
    (["--accelerators", "0"], "argument --accelerators: accelerators must be at least 1, got 0"),
])
def test_counts_below_one_are_refused_naming_the_option(capsys, argv, line):
    assert main(["epd", "x.epd", "--depth", "1", *argv]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"chessaccel: error: {line}"]


@pytest.mark.parametrize("limit", ["nodes", "movetime", "depth"])
def test_each_limit_below_one_is_refused_naming_it(capsys, limit):
    assert main(["epd", "x.epd", f"--{limit}", "0"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"chessaccel: error: argument --{limit}: {limit} must be at least 1, got 0"]


def test_a_suite_without_positions_is_named_in_one_line(tmp_path, capsys):
    path = tmp_path / "empty.epd"
    path.write_text("# nothing here\n\n")
    status, captured = run_epd(capsys, path, "--depth", 1)
    assert status == 2
    assert captured.err.strip().splitlines() == [f"chessaccel: error: {path}: no positions"]


def test_the_help_lists_every_option_with_its_default(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as done:
        main(["epd", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    # the words after the usage, whatever the wrapping
    assert " ".join(text[text.index("positional arguments"):].split()) == " ".join([
        "positional arguments:", "file EPD suite (bm, am, dm operations)", "options:",
        "-h, --help show this help message and exit", "--nodes NODES nodes per position",
        "--movetime MOVETIME milliseconds per position", "--depth DEPTH plies per position",
        "--backend BACKEND where the leaf jobs run (default model)",
        "--accelerators ACCELERATORS model worker processes / simulated board cores (default 1)",
        "--hardware-plies HARDWARE_PLIES plies each job searches above quiescence (default 3)",
        "--hash HASH table MiB (default 16)", "--first FIRST only the first N positions",
        "--out OUT JSON to write (default out/epd-NAME-LIMIT.json)",
        "--resume keep the records already in OUT.jsonl and search the rest",
        "--json print one JSON object on stdout"])


def test_the_defaults_and_a_16_mib_table_unless_hash_says(suite, tmp_path, capsys, monkeypatch):
    from chessaccel.host.engine import epd
    sizes = []

    class Recorded(epd.TranspositionTable):
        def __init__(self, megabytes=16):
            sizes.append(megabytes)
            super().__init__(1)

    monkeypatch.setattr(epd, "TranspositionTable", Recorded)
    for extra in ([], ["--hash", "3"]):
        status, captured = run_epd(capsys, suite, "--depth", 1, "--first", 1, "--out",
                                   tmp_path / "run.json", "--json", *extra)
        assert status == 0
        summary = json.loads(captured.out)
        assert (summary["backend"], summary["accelerators"], summary["hardware_plies"]) == \
            ("model", 1, 3)     # the defaults
    assert sizes == [16, 3]


# --- position text: operations end with ';' ------------------------------------------------------

@pytest.mark.parametrize("text", [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 garbage",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - garbage",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 bm e4",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 2 3",
])
def test_trailing_junk_is_rejected(text):
    with pytest.raises(PositionError, match=r"trailing text .* \(EPD operations end with ';'\)"):
        parse_position(text)


def test_operations_and_free_text_after_one_are_accepted():
    board, ops = parse_position("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - bm e4;")
    assert [m.uci() for m in ops["bm"]] == ["e2e4"]
    _, ops = parse_position("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1; startpos")
    assert "startpos" in ops
    board, ops = parse_position("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 5")
    assert ops == {} and board.side == 0


def test_the_cli_rejects_trailing_junk_with_one_line(capsys):
    assert main(["moves", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 garbage"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["chessaccel: error: malformed FEN/EPD: trailing text 'garbage' "
                   "(EPD operations end with ';')"]


# --- the report: lines, files, progress bar, plot --------------------------------------------

def test_the_text_report_and_its_default_files(suite, tmp_path, capsys, monkeypatch):
    """Without --out: out/epd-NAME-LIMIT.json, its .jsonl and .png; the summary line (solved,
    per cent, backend, limit, searching seconds) and the files line; a progress line per
    position on stderr (not a terminal)."""
    import matplotlib.image
    monkeypatch.chdir(tmp_path)
    status, captured = run_epd(capsys, suite, "--nodes", 300, "--hardware-plies", 1, "--first", 3)
    assert status == 0
    out = tmp_path / "out" / "epd-small-nodes300.json"
    summary = json.loads(out.read_text())
    solved = summary["solved"]
    assert captured.out.splitlines() == [
        f"solved {solved}/3 ({100 * solved / 3:.1f}%)  model, nodes300, "
        f"{summary['seconds']:.1f} s searching",
        "wrote out/epd-small-nodes300.json, out/epd-small-nodes300.jsonl and "
        "out/epd-small-nodes300.png"]
    assert (summary["file"], summary["backend"], summary["accelerators"], summary["hardware_plies"],
            summary["limit"], summary["total"], summary["resumed"]) == \
        (str(suite), "model", 1, 1, "nodes300", 3, 0)
    records = summary["positions"]
    assert [r["id"] for r in records] == ["WAC.004", "WAC.006", "WAC.018"]
    assert summary["nodes"] == sum(r["nodes"] for r in records)
    assert summary["seconds"] == round(sum(r["seconds"] for r in records), 3)
    assert summary["wall_seconds"] >= summary["seconds"] - 0.01
    for r in records:
        assert r["nodes"] >= 300 and r["line"] >= 1 and r["fen"].split()[1] == "w"
        assert r["pv"][0] == r["move"] and r["seldepth"] >= r["depth"] >= 1 and r["jobs"] >= 1
    lines = captured.err.splitlines()
    assert len(lines) == 3
    for done, (line, r) in enumerate(zip(lines, records), 1):
        solved_so_far = sum(x["solved"] for x in records[:done])
        filled = 30 * done // 3
        assert line == (f"[{'#' * filled}{'.' * (30 - filled)}] {done}/3 solved {solved_so_far}  "
                        f"{r['id']}: {r['san']} {'solved' if r['solved'] else 'missed'}")
    assert matplotlib.image.imread(tmp_path / "out" / "epd-small-nodes300.png").shape[:2] == (600, 900)
    status, _ = run_epd(capsys, suite, "--movetime", 50, "--first", 1, "--hardware-plies", 1)
    assert status == 0 and (tmp_path / "out" / "epd-small-movetime50.json").exists()


def test_the_progress_bar_on_a_terminal_rewrites_one_line():
    import io
    from chessaccel.host.engine.epd import Progress

    class Tty(io.StringIO):
        def isatty(self):
            return True
    stream = Tty()
    bar = Progress(2, stream)
    bar.show(1, 0, {"solved": False, "id": "a", "san": None})
    assert stream.getvalue() == "\r" + f"[{'#' * 15}{'.' * 15}] 1/2 solved 0  a: - missed".ljust(120)
    bar.show(2, 1, {"solved": True, "id": "b" * 200, "san": "Qh4+"})
    last = stream.getvalue().split("\r")[-1]
    assert last.endswith("\n") and len(last) == 121 and last.startswith(f"[{'#' * 30}] 2/2 solved 1  bbb")
    plain = io.StringIO()
    Progress(4, plain).show(1, 1, {"solved": True, "id": "c", "san": "e4"})
    assert plain.getvalue() == f"[{'#' * 7}{'.' * 23}] 1/4 solved 1  c: e4 solved\n"


def test_a_new_run_forgets_the_old_progress_and_a_cut_line_is_searched_again(suite, tmp_path, capsys):
    """Without --resume an old .jsonl is removed; with it, a line cut short by an
    interruption is skipped (its position searched again unless a later line holds it), the
    rest kept."""
    out = tmp_path / "run.json"
    progress = tmp_path / "run.jsonl"
    progress.write_text('{"line": 1, "stale": true}\n')
    status, _ = run_epd(capsys, suite, "--depth", 1, "--first", 2, "--out", out)
    assert status == 0
    kept = progress.read_text().splitlines()
    assert len(kept) == 2 and "stale" not in progress.read_text()
    progress.write_text(kept[0] + "\n" + kept[1][:20])
    status, captured = run_epd(capsys, suite, "--depth", 1, "--first", 2, "--out", out,
                               "--resume", "--json")
    summary = json.loads(captured.out)
    assert status == 0 and summary["resumed"] == 1
    assert summary["positions"][0] == json.loads(kept[0])
    assert summary["positions"][1] == {**json.loads(kept[1]), "seconds": summary["positions"][1]["seconds"]}
    # a run resumed after a cut appends after the cut text: the cut line then sits in the middle
    progress.write_text(kept[0] + "\n" + kept[1][:20] + kept[1] + "\n" + kept[1] + "\n")
    status, captured = run_epd(capsys, suite, "--depth", 1, "--first", 2, "--out", out,
                               "--resume", "--json")
    assert status == 0 and json.loads(captured.out)["resumed"] == 2


def test_the_plot_titles_the_suite_with_its_score(tmp_path, monkeypatch):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from chessaccel.host.engine import epd
    kept = []
    real_close = plt.close
    monkeypatch.setattr(plt, "close", lambda fig=None: kept.append(fig))
    records = [{"solved": True, "depth": 5}, {"solved": False, "depth": 3}, {"solved": True, "depth": 4}]
    summary = {"file": "tests/data/wac.epd", "solved": 2, "total": 3, "backend": "opencl",
               "limit": "nodes1000", "positions": records}
    epd._plot(summary, tmp_path / "p.png")
    [fig] = kept
    try:
        top, bottom = fig.axes
        assert top.get_title() == "wac.epd: 2/3 on opencl (nodes1000)"
        assert list(top.lines[0].get_ydata()) == [1, 1, 2]
        assert [p.get_height() for p in bottom.patches] == [5, 3, 4]
        assert [p.get_width() for p in bottom.patches] == [1.0] * 3     # bars that touch
        import matplotlib.colors
        assert [matplotlib.colors.to_hex(p.get_facecolor()) for p in bottom.patches] == \
            [matplotlib.colors.to_hex(c) for c in ("tab:green", "tab:red", "tab:green")]
    finally:
        real_close(fig)
