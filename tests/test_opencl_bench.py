"""The OpenCL benchmark tooling: the job file's packing, the device runner (on PoCL, a small job
file), the committed H100 record and the cross-backend table generated from its JSON."""

import json
from pathlib import Path

import numpy as np
import pytest

from chessaccel.contract.defs import INF
from chessaccel.lab import crossbench
from chessaccel.lab import gpubench
from chessaccel.lab.benchjobs import PERFT_ROOTS
from chessaccel.host.opencl.layout import encode_move, pack_positions, unpack_positions
from chessaccel.model.search import search as model_search

import suites

ROOT = Path(__file__).resolve().parent.parent

BENCHMARKS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks"


def test_packed_positions_unpack_to_the_same_boards():
    fens = suites.random_play_positions(5, 200) + [r.fen for r in suites.perft_records()][:200]
    boards = [suites.board_of(fen) for fen in fens]
    back = unpack_positions(pack_positions(boards), [b.side for b in boards])
    assert [b.key() for b in back] == [b.key() for b in boards]


def test_the_device_runner_checks_and_times_a_job_file(tmp_path):
    jobs = tmp_path / "jobs.npz"
    expected = _checked_job_file(jobs)
    out = tmp_path / "record.json"
    assert gpubench.main([str(jobs), "--out", str(out), "--backend", "opencl:pocl",
                          "--split", "300/100", "--device-split", "50/0"]) == 0
    record = json.loads(out.read_text())
    import datetime
    started = datetime.datetime.strptime(record["started"], "%Y-%m-%d %H:%M:%S")
    assert abs(datetime.datetime.now() - started) < datetime.timedelta(hours=1)
    assert record["check"] == {**record["check"], "jobs": 24, "mismatches": 0}
    assert all(p["correct"] for p in record["perft"]) and len(record["perft"]) == 4
    for p in record["perft"]:       # the rate is the count over the time the record gives
        assert p["seconds"] > 0 and p["nodes_per_second"] == pytest.approx(p["nodes"] / p["seconds"],
                                                                           rel=1e-3)
    labels = [r["label"] for r in record["leaf_search"]["runs"]]
    assert "the largest job alone" in labels and labels[0] == "default"
    assert record["leaf_search"]["nodes"] == sum(r.nodes for r in expected)
    split = [r for r in record["leaf_search"]["runs"] if r["label"].startswith("split")]
    assert len(split) == 2 and all(r["same_as_whole_jobs"] for r in split)
    assert split[0]["split_jobs"] > 0 and split[1]["split_points"] > 0


def test_the_device_split_timeline_reads_the_device_clock():
    """Three jobs on the device's clock (ns): the queue empties when the last job starts (2 s
    after the first start), the last job ends at 3 s; the last five to end, in end order."""
    times = np.array([[0, 1_000_000_000], [500_000_000, 3_000_000_000],
                      [2_000_000_000, 2_500_000_000]], dtype=np.uint64)
    t = gpubench._timeline(times, np.array([10, 30, 20]))
    assert t["queue_empty_seconds"] == 2.0
    assert t["end_seconds_quantiles"]["1"] == 3.0 and t["end_seconds_quantiles"]["0.5"] == 2.5
    assert t["last_jobs_nodes"] == [10, 20, 30]
    assert gpubench._timeline(np.zeros((3, 2), dtype=np.uint64), np.array([1, 2, 3])) == {}


def test_the_large_perft_plan_is_the_one_the_h100_record_ran():
    """--perft-scale large is what docs/benchmarks/opencl-h100.json ran (root, depth, mode,
    plies per work-item, in order): the committed figures are this plan's."""
    record = json.loads((BENCHMARKS / "opencl-h100.json").read_text())
    assert "--perft-scale large" in record["command"]
    assert [(p["root"], p["depth"], p["mode"], p["leaf_depth_max"]) for p in record["perft"]] \
        == [tuple(run) for run in gpubench.PERFT_PLAN["large"]]


def test_the_device_runners_help_names_the_split_syntax(capsys):
    """--help shows --split's argument as docs/opencl.md writes it (BUDGET/CHILD)."""
    with pytest.raises(SystemExit) as exit_:
        gpubench.main(["--help"])
    assert exit_.value.code == 0
    assert "--split [BUDGET/CHILD ...]" in capsys.readouterr().out


def test_the_device_runner_refuses_bad_split_budgets(capsys):
    with pytest.raises(SystemExit) as exit_:
        gpubench.main(["jobs.npz", "--out", "x.json", "--split", "100/0"])
    assert exit_.value.code == 2 and "node budgets must be positive" in capsys.readouterr().err


def test_the_committed_h100_record_is_correct_and_large_enough():
    record = json.loads((BENCHMARKS / "opencl-h100.json").read_text())
    assert "H100" in record["device"]["name"]
    assert record["check"]["mismatches"] == 0 and record["check"]["jobs"] > 4000
    assert record["leaf_search"]["jobs"] >= 100_000
    assert record["perft"] and all(p["correct"] for p in record["perft"])
    assert {p["mode"] for p in record["perft"]} == {"bulk", "make"}


def test_the_fpga_projection_names_its_sources():
    p = crossbench._projection({"cycles_per_node": 6.0, "commit": "abc1234"})
    assert p["nodes_per_second"] == p["fmax_mhz"] * 1e6 * p["cores"] / p["cycles_per_node"]
    if p["sources"]["cycles_per_node"]["record"] == "this run's Verilator bench":
        assert p["cycles_per_node"] == 6.0
    else:   # a committed RTL bench record (synth/records/bench-rtl.json) wins over this run's
        record = json.loads((ROOT / p["sources"]["cycles_per_node"]["record"]).read_text())
        assert p["cycles_per_node"] == record["cycles_per_node"]
    assert set(p["sources"]) == {"fmax", "cores", "cycles_per_node"}
    if "board" in p["sources"]["cores"]:    # a board built with cores gives Fmax and cores
        board = json.loads((ROOT / p["sources"]["cores"]["record"]).read_text())
        assert board["kind"] == "board" and board["timing_met"]
        assert (p["cores"], p["fmax_mhz"]) == (board["cores"], min(board["fmax_mhz"].values()))
    if "synthesis.md" in p["sources"]["fmax"].get("record", ""):
        assert (p["lut4_per_core"], p["fmax_mhz"]) == crossbench._synthesis_table_row("searchcore")


def test_the_committed_table_is_generated_from_its_json():
    report = json.loads((BENCHMARKS / "backends.json").read_text())
    assert (BENCHMARKS / "backends.md").read_text() == \
        crossbench._markdown(report, crossbench._rows(report))
    assert (BENCHMARKS / "backends.png").stat().st_size > 10_000
    assert report["h100"]["record"] == "docs/benchmarks/opencl-h100.json"


def test_the_h100_section_is_read_from_its_record(tmp_path):
    """crossbench's H100 figures: the fastest run over all leaf jobs, the correct perft runs
    (the fastest of each root and mode), as the committed table has them; no record, no
    section."""
    path = BENCHMARKS / "opencl-h100.json"
    record = json.loads(path.read_text())
    h100 = crossbench._h100(path)
    full = [r for r in record["leaf_search"]["runs"] if r["jobs"] == record["leaf_search"]["jobs"]]
    assert h100["search"]["nodes_per_second"] == max(r["nodes_per_second"] for r in full)
    assert h100["device"] == record["device"]["name"] and h100["check_mismatches"] == 0
    assert {(p["root"], p["mode"]) for p in h100["perft"]} == \
        {(p["root"], p["mode"]) for p in record["perft"] if p["correct"]}
    assert h100 == json.loads((BENCHMARKS / "backends.json").read_text())["h100"]
    assert crossbench._h100(tmp_path / "no-record.json") is None


def test_the_real_search_batch_row_is_the_largest_search_batch_of_its_summary(tmp_path):
    """crossbench's second H100 row: the real-search batch with the most nodes from gpuscale's
    summary, as the committed table has it; the full-window batch is never that row, and
    without a summary (or without a search batch in it) there is no row."""
    path = BENCHMARKS / "opencl-h100-batches.json"
    summary = json.loads(path.read_text())
    row = crossbench._h100_batches(path)
    search = [b for b in summary["batches"] if b["job_source"]["kind"] == "search"]
    assert row["batch"] == max(search, key=lambda b: b["nodes"])
    assert row["batch"]["best_nodes_per_second"] >= max(
        b["best_nodes_per_second"] for b in search if b["nodes"] < row["batch"]["nodes"])
    assert row == json.loads((BENCHMARKS / "backends.json").read_text())["h100_batches"]
    assert crossbench._h100_batches(tmp_path / "absent.json") is None
    only_full = tmp_path / "full.json"
    only_full.write_text(json.dumps({**summary, "batches": [b for b in summary["batches"]
                                                             if b["job_source"]["kind"] != "search"]}))
    assert crossbench._h100_batches(only_full) is None
    lines = [line for line in (BENCHMARKS / "backends.md").read_text().splitlines()
             if line.startswith("| H100, OpenCL | ") and "real searches" in line]
    assert len(lines) == 1 and f"{row['batch']['jobs']:,} leaf jobs of real searches" in lines[0]


def test_the_committed_batch_summary_is_generated_from_its_records(tmp_path, monkeypatch):
    """docs/benchmarks/opencl-h100-batches.* are gpuscale's output for the records its JSON
    names (the command it gives, run again, writes the same JSON and Markdown)."""
    import shlex
    from chessaccel.lab import gpuscale
    summary = json.loads((BENCHMARKS / "opencl-h100-batches.json").read_text())
    argv = shlex.split(summary["command"])[3:]
    out = argv.index("--out")
    records = [str(ROOT / a) for a in argv[:out]]
    monkeypatch.chdir(ROOT)     # the command names the records from the repository's root
    assert gpuscale.main(argv[:out] + ["--out", str(tmp_path / "again")]) == 0
    again = json.loads((tmp_path / "again.json").read_text())
    assert again["batches"] == summary["batches"] and all(Path(r).exists() for r in records)
    md = (BENCHMARKS / "opencl-h100-batches.md").read_text()
    assert (tmp_path / "again.md").read_text().split("\n", 1)[1] == md.split("\n", 1)[1]
    assert all(b["device"].startswith("NVIDIA H100") for b in summary["batches"])


class _Unused:
    """A progress stream that must stay silent."""

    def write(self, text):
        raise AssertionError(f"progress written: {text!r}")

    def flush(self):
        pass


def test_an_existing_job_file_is_read_not_rebuilt(tmp_path):
    """crossbench reads a job file that exists (building one takes minutes and says so), with
    the sides it records, or else the sides 3 plies below the bench positions it names."""
    boards = [suites.board_of(fen) for fen in suites.random_play_positions(7, 4)]
    packed = pack_positions(boards)
    with_sides = tmp_path / "jobs.npz"
    np.savez(with_sides, positions=packed, sides=np.array([b.side for b in boards], dtype=np.uint8))
    data, sides = crossbench._job_file(with_sides, _Unused())
    assert (data["positions"] == packed).all() and list(sides) == [b.side for b in boards]
    older = tmp_path / "older.npz"
    np.savez(older, positions=packed, bench_index=np.array([0, 1, 0, 2]))
    _, sides = crossbench._job_file(older, _Unused())
    bench_sides = [suites.board_of(job.fen).side for job in crossbench.BENCH[:3]]
    assert list(sides) == [bench_sides[i] ^ 1 for i in (0, 1, 0, 2)]


def test_the_plot_gives_each_family_of_bars_its_colour(tmp_path):
    """backends.png: the model grey, the RTL and FPGA green, PoCL blue, the H100 red, Stockfish
    orange (each colour found in the drawn bars)."""
    import matplotlib.colors
    import matplotlib.image
    report = json.loads((BENCHMARKS / "backends.json").read_text())
    path = tmp_path / "backends.png"
    crossbench._plot(crossbench._rows(report), path)
    pixels = matplotlib.image.imread(path)[..., :3]
    for colour in ("tab:gray", "tab:green", "tab:blue", "tab:red", "tab:orange"):
        rgb = np.array(matplotlib.colors.to_rgb(colour))
        assert (np.abs(pixels - rgb).max(axis=-1) < 0.02).sum() > 200, f"no {colour} bar"


def test_each_bar_has_the_colour_of_its_family(tmp_path, monkeypatch):
    """backends.png bar by bar: every row's bar has its family's colour (the Python model grey,
    the RTL and the FPGA green, PoCL blue, the H100 red, Stockfish orange); each row's label
    names exactly one family."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.axes
    drawn = []
    real = matplotlib.axes.Axes.barh

    def barh(self, y, width, *args, color=None, **kwargs):
        drawn.append(list(color))
        return real(self, y, width, *args, color=color, **kwargs)
    monkeypatch.setattr(matplotlib.axes.Axes, "barh", barh)
    rows = crossbench._rows(json.loads((BENCHMARKS / "backends.json").read_text()))
    crossbench._plot(rows, tmp_path / "backends.png")
    family = {"Python model": "tab:gray", "RTL": "tab:green", "FPGA": "tab:green",
              "PoCL": "tab:blue", "H100": "tab:red", "Stockfish": "tab:orange"}
    assert len(drawn) == 2
    for table, colours in zip(("search", "perft"), drawn):
        labels = [r[1] for r in rows if r[0] == table]
        named = [[c for k, c in family.items() if k in label] for label in labels]
        assert all(len(n) == 1 for n in named), labels
        assert colours == [n[0] for n in named], (table, labels)
    assert {c for colours in drawn for c in colours} == set(family.values())


def test_without_a_board_record_the_cores_are_an_estimate(monkeypatch):
    """The FPGA projection from the committed records with the board records left out: Fmax and
    LUT4 from the search core's synthesis record, named with the commit it records, and the
    cores estimated from the routable share of an ECP5-85F."""
    kept = [(path, rec) for path, rec in crossbench._records()
            if not (isinstance(rec, dict) and rec.get("kind") == "board")]
    monkeypatch.setattr(crossbench, "_records", lambda: kept)
    core = next(rec for _, rec in kept if isinstance(rec, dict) and rec.get("block") == "searchcore")
    p = crossbench._projection({"cycles_per_node": 6.0, "commit": "abc1234"})
    assert p["fmax_mhz"] == min(core["fmax_mhz"].values())
    assert p["sources"]["fmax"]["commit"] == core["source"]["commit"]
    lut4 = p["lut4_per_core"]
    assert lut4 == (core.get("block_only") or core.get("total"))["lut4"]
    assert p["cores"] == max(1, int(crossbench.ROUTABLE_FRACTION * crossbench.ECP5_85F_LUT4 // lut4))
    assert "estimate" in p["sources"]["cores"]


def test_the_ecp5_85f_size_is_the_one_nextpnr_reports():
    """The core estimate divides the device's logic cells: the count nextpnr reported as
    available in the committed ECP5-85F board records (TRELLIS_COMB), not a number of its own."""
    boards = Path(__file__).resolve().parents[1] / "src" / "chessaccel" / "synth" / "records" / "boards"
    available = {json.loads(path.read_text())["available"]["comb"]
                 for path in boards.glob("*85f*.json")}
    assert available == {crossbench.ECP5_85F_LUT4}


def test_the_projection_takes_the_board_with_the_most_mhz_times_cores(monkeypatch):
    """Of the board records that met timing, the projection takes the one whose Fmax x cores
    is largest (its search rate), not the fastest clock: one core at 50 MHz loses to two at 40;
    a record that missed timing counts for nothing however large."""
    kept = [(path, rec) for path, rec in crossbench._records()
            if not (isinstance(rec, dict) and rec.get("kind") == "board")]
    boards = crossbench.ROOT / "src" / "chessaccel" / "synth" / "records" / "boards"
    made = [(boards / f"{name}.json", {"kind": "board", "board": name, "timing_met": met,
                                        "cores": cores, "fmax_mhz": {"clk": fmax}})
            for name, cores, fmax, met in (("one-fast", 1, 50.0, True), ("two", 2, 40.0, True),
                                           ("missed", 8, 45.0, False))]
    monkeypatch.setattr(crossbench, "_records", lambda: kept + made)
    monkeypatch.setattr(crossbench, "_git_commit", lambda path=None: "c0ffee0")
    p = crossbench._projection({"cycles_per_node": 6.0, "commit": "abc1234"})
    assert (p["fmax_mhz"], p["cores"]) == (40.0, 2)
    assert p["sources"]["cores"]["board"] == p["sources"]["fmax"]["board"] == "two"


def test_the_one_core_pocl_run_limits_pocl_to_one_thread(monkeypatch):
    """crossbench's PoCL worker on one core is pinned there and PoCL is told to start one
    thread (POCL_MAX_PTHREAD_COUNT=1); on all cores PoCL keeps its own thread count."""
    import io
    import subprocess
    seen = []

    def run(cmd, **kwargs):
        seen.append((cmd, kwargs["env"]))
        return subprocess.CompletedProcess(cmd, 0, stdout='{"search": {}}', stderr="")
    monkeypatch.delenv("POCL_MAX_PTHREAD_COUNT", raising=False)
    monkeypatch.setattr(crossbench.subprocess, "run", run)
    assert crossbench._pocl("jobs.npz", 3, 1, io.StringIO()) == {"search": {}}
    assert crossbench._pocl("jobs.npz", 3, 4, io.StringIO()) == {"search": {}}
    (one, env_one), (all_, env_all) = seen
    assert env_one.get("POCL_MAX_PTHREAD_COUNT") == "1" and "POCL_MAX_PTHREAD_COUNT" not in env_all
    assert one[-2:] == ["--cores", "1"] and all_[-2:] == ["--cores", "4"]


def test_the_rtl_figure_is_the_cpu_time_of_the_timed_jobs_alone(monkeypatch):
    """crossbench's Verilator row (here with a stand-in backend that spends a known share of a
    core): CPU seconds are those spent between the two readings, at most the wall time of a
    single-threaded run, and the rate is nodes over them."""
    import io
    import time
    from chessaccel.host.backends import Backend, rtl

    class Stand(Backend):
        name = "rtl"

        def search_many(self, jobs):
            end = time.process_time() + 0.02
            while time.process_time() < end:
                pass
            return [{"score": 0, "best_move": None, "nodes": 100, "cycles": 600} for _ in jobs]
    monkeypatch.setattr(rtl, "RtlBackend", Stand)
    r = crossbench._rtl(io.StringIO())
    assert r["jobs"] == len(crossbench.BENCH) and r["cycles_per_node"] == 6.0
    assert 0.015 < r["cpu_seconds"] <= r["seconds"] + 0.01
    assert r["nodes_per_second"] == r["nodes"] / r["cpu_seconds"]


def _small_job_file(path):
    """Six leaf jobs (depths 0-2) and the perft roots, as benchjobs writes them; the boards."""
    boards = [suites.board_of(fen) for fen in suites.random_play_positions(31, 6)]
    params = np.array([[d % 3, -INF, INF, 0] for d in range(len(boards))], dtype=np.int32)
    roots = [suites.board_of(fen) for _, fen, _ in PERFT_ROOTS]
    np.savez(path, positions=pack_positions(boards), params=params,
             sides=np.array([b.side for b in boards], dtype=np.uint8),
             perft_names=np.array([n for n, _, _ in PERFT_ROOTS]), perft_positions=pack_positions(roots),
             perft_depths=np.array([sorted(c) for _, _, c in PERFT_ROOTS]),
             perft_counts=np.array([[c[d] for d in sorted(c)] for _, _, c in PERFT_ROOTS]))
    return boards, params


def test_the_pocl_worker_measures_the_models_results(tmp_path):
    """crossbench's PoCL worker (a process pinned to one core): every leaf job's score, best
    move and node count equal to the model's, and the four perft runs correct."""
    import io
    jobs = tmp_path / "jobs.npz"
    boards, params = _small_job_file(jobs)
    progress = io.StringIO()
    out = crossbench._pocl(jobs, 1, 1, progress)
    assert progress.getvalue().startswith("PoCL on one core")
    assert len(out["affinity"]) == 1
    expected = [model_search(b, int(p[0])) for b, p in zip(boards, params)]
    search = out["search"]
    assert (search["jobs"], search["stride"]) == (6, 1)
    assert search["scores"] == [r.score for r in expected]
    assert search["nodes_list"] == [r.nodes for r in expected]
    assert search["nodes"] == sum(r.nodes for r in expected)
    assert search["best_moves"] == [encode_move(r.best_move, b.side == 1) if r.best_move else 0
                                    for b, r in zip(boards, expected)]
    assert [(p["root"], p["depth"], p["mode"], p["correct"]) for p in out["perft"]] == \
        [(root, depth, mode, True) for root, depth in (("startpos", 5), ("kiwipete", 4))
         for mode in ("bulk", "make")]


def test_the_cross_backend_table_of_a_small_run(tmp_path, capsys):
    """``python -m chessaccel.lab.crossbench`` on a small job file, the RTL and Stockfish left
    out: the report records what it skipped and the model's and PoCL's figures on the same jobs,
    takes the H100 section from its record, and writes the table and plot from its JSON."""
    jobs = tmp_path / "jobs.npz"
    _small_job_file(jobs)
    out = tmp_path / "benchmarks"
    h100 = BENCHMARKS / "opencl-h100.json"
    assert crossbench.main(["--jobs", str(jobs), "--out", str(out), "--model-stride", "1",
                            "--pocl-stride", "2", "--skip-rtl", "--skip-stockfish",
                            "--h100", str(h100)]) == 0
    report = json.loads((out / "backends.json").read_text())
    assert report["verilator"] == {"skipped": True} and report["stockfish"] == {"skipped": True}
    assert report["model"]["jobs"] == report["speedup"]["jobs"] == 6
    assert report["pocl_1"]["search"]["jobs"] == 6 and report["pocl_all"]["search"]["jobs"] == 3
    assert report["pocl_1"]["search"]["nodes"] == report["model"]["nodes"]
    assert not {"nodes_list", "scores", "best_moves"} & set(report["pocl_1"]["search"])
    pocl_rate = report["pocl_1"]["search"]["nodes"] / report["pocl_1"]["search"]["cpu_seconds"]
    assert report["speedup"]["pocl_1_over_model"] == pocl_rate / report["model"]["nodes_per_second"]
    assert report["model"]["nodes_per_second"] == report["model"]["nodes"] / report["model"]["cpu_seconds"]
    assert report["h100"] == crossbench._h100(h100)
    assert (out / "backends.md").read_text() == crossbench._markdown(report, crossbench._rows(report))
    assert (out / "backends.png").stat().st_size > 10_000
    console = capsys.readouterr().out.splitlines()
    assert console[-1] == (f"wrote {out / 'backends.json'}, {out / 'backends.md'} and "
                           f"{out / 'backends.png'}")
    rows = crossbench._rows(report)
    assert console[-1 - len(rows):-1] == [   # a row a line: columns of 6, 38, 38 and 10 characters
        t.ljust(6) + " " + name.ljust(38) + " " + what.ljust(38) + " "
        + crossbench._rate(rate).rjust(10) + "/s  " + note
        for t, name, what, nodes, seconds, rate, note in rows]
    assert console[-1 - len(rows)].startswith("search Python model (1 core)" + " " * 18 + "6 leaf jobs")


class _ModelAsDevice:
    """benchjobs.build's device stand-in: the model's answers (each off by one pawn on the
    boards of ``wrong``), in the OpenCL backend's two forms (run_search arrays, search_many)."""

    def __init__(self, boards, wrong=()):
        self.boards = {pack_positions([b])[0].tobytes(): b for b in boards}
        self.wrong = {b.key() for b in wrong}

    def describe(self):
        return "the model"

    def _answer(self, board, depth):
        r = model_search(board, depth, -INF, INF)
        return r, r.score + (100 if board.key() in self.wrong else 0)

    def run_search(self, positions, params):
        out = {"scores": [], "nodes": [], "best_moves": []}
        for row, p in zip(positions, params):
            board = self.boards[row.tobytes()]
            r, score = self._answer(board, int(p[0]))
            out["scores"].append(score)
            out["nodes"].append(r.nodes)
            out["best_moves"].append(encode_move(r.best_move, board.side == 1) if r.best_move else 0)
        return {k: np.array(v, dtype=np.int64) for k, v in out.items()}

    def search_many(self, jobs):
        out = []
        for board, depth, _, _ in jobs:
            r, score = self._answer(board, depth)
            out.append({"score": score, "best_move": r.best_move, "nodes": r.nodes})
        return out


def test_the_job_files_model_check_starts_at_the_first_checked_job(tmp_path):
    """benchjobs.build on three leaf jobs (the check sample is then job 0 alone): the model
    searches job 0 and agrees (model_checked 1 in the file, with job 0's expectations); a
    device that gets job 0 wrong is refused, naming it."""
    import io
    from chessaccel.lab import benchjobs
    fens = ["8/8/8/4k3/8/8/3PK3/8 w - - 0 1", "8/8/8/4k3/8/2N5/4K3/8 b - - 0 1",
            "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"]
    boards = [suites.board_of(fen) for fen in fens]
    leaves = list(enumerate(boards))
    path = tmp_path / "jobs.npz"
    benchjobs.build(path, _ModelAsDevice(boards), io.StringIO(), leaves=leaves)
    data = np.load(path)
    first = model_search(boards[0], benchjobs.LEAF_DEPTH, -INF, INF)
    assert int(data["model_checked"]) == 1 and list(data["check_index"]) == [0]
    assert (int(data["check_scores"][0]), int(data["check_nodes"][0])) == (first.score, first.nodes)
    assert len(data["positions"]) == 3 and list(data["bench_index"]) == [0, 1, 2]
    with pytest.raises(SystemExit, match="^job 0: the model and the model disagree"):
        benchjobs.build(tmp_path / "bad.npz", _ModelAsDevice(boards, wrong=boards[:1]),
                        io.StringIO(), leaves=leaves)


def test_the_job_file_command_makes_its_folder_and_exits_0(tmp_path, monkeypatch, capsys):
    """``python -m chessaccel.lab.benchjobs PATH`` (its build stood in for: minutes on
    the whole bench set) makes PATH's folder, builds there, says so and exits 0."""
    from chessaccel.lab import benchjobs
    built = []
    monkeypatch.setattr(benchjobs, "build", built.append)
    out = tmp_path / "new" / "jobs.npz"
    assert benchjobs.main([str(out)]) == 0
    assert built == [str(out)] and out.parent.is_dir()
    assert capsys.readouterr().out.strip() == f"wrote {out}"


def test_without_pyopencl_the_error_says_what_to_install(monkeypatch):
    """No pyopencl: one OpenCLError line naming the import error and the command docs/opencl.md
    gives (``pip install 'pyopencl[pocl]'``)."""
    import sys
    from chessaccel.host.opencl import device
    monkeypatch.setitem(sys.modules, "pyopencl", None)      # import pyopencl now fails
    with pytest.raises(device.OpenCLError) as raised:
        device._import_pyopencl()
    text = str(raised.value)
    assert text.startswith("pyopencl is not installed (")
    assert text.endswith("); pip install 'pyopencl[pocl]'") and "\n" not in text
    assert "pip install 'pyopencl[pocl]'" in (Path(__file__).parent.parent / "docs" / "opencl.md").read_text()


def _checked_job_file(path, count=24):
    """A job file as benchjobs writes it, the model's answers as its check sample (every job
    checked); the model's results."""
    boards = [suites.board_of(fen) for fen in suites.random_play_positions(31, count)]
    params = np.array([[d % 3, -INF, INF, 0] for d in range(len(boards))], dtype=np.int32)
    expected = [model_search(b, int(p[0])) for b, p in zip(boards, params)]
    moves = [encode_move(r.best_move, b.side == 1) for b, r in zip(boards, expected)]
    roots = [suites.board_of(fen) for _, fen, _ in PERFT_ROOTS]
    np.savez(path, positions=pack_positions(boards), params=params,
             check_index=np.arange(len(boards)), check_scores=np.array([r.score for r in expected]),
             check_best_moves=np.array(moves, dtype=np.uint32),
             check_nodes=np.array([r.nodes for r in expected], dtype=np.uint64),
             model_checked=np.int64(len(boards)), reference_device=np.array("the model"),
             perft_names=np.array([n for n, _, _ in PERFT_ROOTS]), perft_positions=pack_positions(roots),
             perft_depths=np.array([sorted(c) for _, _, c in PERFT_ROOTS]),
             perft_counts=np.array([[c[d] for d in sorted(c)] for _, _, c in PERFT_ROOTS]))
    return expected


class _WatchedOut:
    """stdout that keeps what had been written at each flush."""

    def __init__(self):
        self.text, self.flushed = "", []

    def write(self, s):
        self.text += s
        return len(s)

    def flush(self):
        self.flushed.append(self.text)


def test_the_device_runners_record_holds_every_figure(tmp_path, monkeypatch):
    """gpubench's record field by field on PoCL: what ran (backend, command, job file), the
    device and the time it took to open, the check sample against the file's expectations, the
    leaf search over every --stride-th job (its node-count quantiles, a --threads run at
    --local), and a perft run that fails: its error is recorded and its line printed (and
    flushed at once: a long GPU run is watched through a pipe) while the other runs go on."""
    import time
    from chessaccel.host.opencl.device import OpenCLError
    jobs = tmp_path / "jobs.npz"
    expected = _checked_job_file(jobs)
    real_get = gpubench.get_backend

    def get_backend(spec):
        backend = real_get(spec)
        perft = backend.perft_positions

        def failing(positions, depth, mode="bulk"):
            if (depth, mode) == (4, "make"):
                raise OpenCLError("out of resources (a test's)")
            return perft(positions, depth, mode)
        backend.perft_positions = failing
        return backend
    monkeypatch.setattr(gpubench, "get_backend", get_backend)
    watched = _WatchedOut()
    monkeypatch.setattr("sys.stdout", watched)
    out = tmp_path / "sub" / "record.json"
    argv = [str(jobs), "--out", str(out), "--backend", "opencl:pocl", "--stride", "2",
            "--threads", "128", "--local", "32"]
    t0 = time.perf_counter()
    assert gpubench.main(argv) == 0
    elapsed = time.perf_counter() - t0
    record = json.loads(out.read_text())
    assert record["backend"] == "opencl:pocl" and record["job_file"] == "jobs.npz"
    assert record["command"] == "python -m chessaccel.lab.gpubench " + " ".join(argv)
    device = record["device"]
    assert 0 <= device["open_seconds"] <= elapsed
    assert set(gpubench.KERNELS) <= set(device["kernels"]) and device["compute_units"] >= 1
    assert f"(opened in {device['open_seconds']} s)" in watched.text
    nodes = [r.nodes for r in expected]
    assert record["check"] == {"jobs": 24, "nodes": sum(nodes), "mismatches": 0,
                               "first_mismatches": [], "expected_from": "the model",
                               "model_checked": 24}
    leaf = record["leaf_search"]
    chosen = nodes[::2]
    assert (leaf["jobs"], leaf["stride"], leaf["nodes"]) == (12, 2, sum(chosen))
    assert leaf["node_count_quantiles"] == [int(np.quantile(chosen, q))
                                            for q in (0, 0.25, 0.5, 0.75, 0.9, 0.99, 1)]
    assert leaf["node_count_quantiles"][0] == min(chosen) and leaf["node_count_quantiles"][-1] == max(chosen)
    runs = {r["label"]: r for r in leaf["runs"]}
    threads = runs["local 32 x128/CU"]
    assert (threads["local_size"], threads["threads_per_unit"], threads["jobs"]) == (32, 128, 12)
    assert runs["the largest job alone"]["nodes"] == max(chosen)
    assert runs["default"]["nodes"] == runs["sorted by node count"]["nodes"] == sum(chosen)
    assert runs["uniform (median job repeated)"]["jobs"] == 12
    for run in leaf["runs"]:       # the rate over the kernel time, which is kept to a microsecond
        assert run["nodes"] / (run["kernel_seconds"] + 5e-7) <= run["nodes_per_second"] \
            <= run["nodes"] / (run["kernel_seconds"] - 5e-7)
    assert set(leaf["best"]) <= {"local_size", "threads_per_unit"}
    failed = [p for p in record["perft"] if "error" in p]
    assert failed == [{"root": "kiwipete", "depth": 4, "mode": "make",
                       "error": "out of resources (a test's)"}]
    assert [(p["root"], p["depth"], p["mode"], p["leaf_depth_max"], p["correct"])
            for p in record["perft"] if "error" not in p] == \
        [(root, depth, mode, leaf, True) for root, depth, mode, leaf in gpubench.PERFT_PLAN["small"]
         if (depth, mode) != (4, "make")]
    line = "  perft kiwipete 4 make: out of resources (a test's)\n"
    assert line in watched.text
    assert any(text.endswith(line) for text in watched.flushed), "the error line waits in a buffer"
    assert watched.text.endswith(f"wrote {out}\n")
    # the console: a line per kernel's figures, a line per leaf-search run
    for name, figures in device["kernels"].items():
        assert f"\n  kernel {name}: {figures}\n" in watched.text
    for run in leaf["runs"]:
        if "kernel_seconds" in run and "timeline" not in run:
            assert (f"  {run['label']:40s} {run['jobs']:8d} jobs {run['nodes']:13d} nodes "
                    f"{run['kernel_seconds']:8.3f} s ") in watched.text


def test_the_device_runner_names_an_opencl_failure_and_exits_1(monkeypatch, capsys, tmp_path):
    from chessaccel.host.opencl.device import OpenCLError

    def no_device(spec):
        raise OpenCLError("no OpenCL platform matches 'nowhere'")
    monkeypatch.setattr(gpubench, "get_backend", no_device)
    jobs = tmp_path / "jobs.npz"
    np.savez(jobs, positions=np.zeros((1, 4)))
    assert gpubench.main([str(jobs), "--out", str(tmp_path / "r.json")]) == 1
    captured = capsys.readouterr()
    assert captured.err == "gpubench: error: no OpenCL platform matches 'nowhere'\n"
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("flag, text, problem", [
    ("--split", "100", "expected BUDGET/CHILD node counts, got '100'"),
    ("--split", "0/5", "node budgets must be positive, got '0/5'"),
    ("--device-split", "x/1", "expected BUDGET/MIN_DEPTH, got 'x/1'"),
    ("--device-split", "0/1", "expected a positive budget and a depth >= 0, got '0/1'"),
    ("--device-split", "10/-1", "expected a positive budget and a depth >= 0, got '10/-1'"),
])
def test_the_device_runners_budgets_are_checked(capsys, flag, text, problem):
    with pytest.raises(SystemExit) as exit_:
        gpubench.main(["jobs.npz", "--out", "x.json", flag, text])
    assert exit_.value.code == 2 and problem in capsys.readouterr().err


def test_the_device_runner_reads_ptxas_figures():
    """NVIDIA's -cl-nv-verbose build log: registers and spills per kernel."""
    log = ("ptxas info    : Compiling entry function 'search_jobs' for 'sm_90'\n"
           "ptxas info    : Function properties for search_jobs\n"
           "    1024 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
           "ptxas info    : Used 128 registers, 380 bytes cmem[0]\n"
           "ptxas info    : Compiling entry function 'perft_walk' for 'sm_90'\n"
           "ptxas info    : Used 64 registers\n")
    assert gpubench._compiler_report("Used 5 registers\n") == {}
    assert gpubench._compiler_report(log) == {
        "search_jobs": {"registers": 128, "stack_frame": 1024, "spill_stores": 8, "spill_loads": 12},
        "perft_walk": {"registers": 64}}


def test_the_leaf_jobs_are_every_position_three_plies_below_the_bench(monkeypatch):
    """benchjobs.leaf_boards: by default every position 3 plies below each bench position
    (docs/opencl.md, the H100 record's 483,504 jobs), in bench order: here on two small bench
    positions, the positions python-chess reaches in 3 plies, one job per path."""
    import chess
    from collections import Counter
    from chessaccel.contract.bench import BenchJob
    from chessaccel.lab import benchjobs
    fens = ["4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", "8/8/8/4k3/8/2N5/4K3/8 b - - 0 1"]
    monkeypatch.setattr(benchjobs, "BENCH", [BenchJob(f"p{i}", fen, 3) for i, fen in enumerate(fens)])

    def below(board, plies):
        if plies == 0:
            return [board.board_fen() + (" w" if board.turn else " b")]
        out = []
        for move in board.legal_moves:
            board.push(move)
            out += below(board, plies - 1)
            board.pop()
        return out
    from chessaccel.model.position import chess_from_board
    leaves = benchjobs.leaf_boards()
    for index, fen in enumerate(fens):
        got = [chess_from_board(b) for i, b in leaves if i == index]
        assert Counter(b.board_fen() + (" w" if b.turn else " b") for b in got) == \
            Counter(below(chess.Board(fen), 3))
    assert [i for i, _ in leaves] == sorted(i for i, _ in leaves)


def _plotted_backends(tmp_path, monkeypatch):
    """crossbench's plot of the committed table, drawn to tmp_path/backends.png; its figure is
    kept open (the caller closes it with the returned close) so that its parts can be read."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    kept = []
    real_close = plt.close
    monkeypatch.setattr(plt, "close", lambda fig=None: kept.append(fig))
    rows = crossbench._rows(json.loads((BENCHMARKS / "backends.json").read_text()))
    crossbench._plot(rows, tmp_path / "backends.png")
    [fig] = kept
    return rows, fig, real_close


def test_the_plot_has_the_committed_size_and_one_small_type(tmp_path, monkeypatch):
    """backends.png redrawn from backends.json has the committed image's pixel size (13 x 6
    inches at 110 dpi), and every label beside the bars and the goal lines is set in the bar
    labels' type size (small, so that the long rows fit)."""
    import matplotlib.image
    rows, fig, real_close = _plotted_backends(tmp_path, monkeypatch)
    drawn = matplotlib.image.imread(tmp_path / "backends.png").shape[:2]
    assert drawn == matplotlib.image.imread(BENCHMARKS / "backends.png").shape[:2] == (660, 1430)
    try:
        for ax in fig.axes:
            sizes = {label.get_fontsize() for label in ax.get_yticklabels()}
            assert len(sizes) == 1
            texts = ax.texts
            assert len(texts) == len(ax.patches) + sum(t.get_text().startswith("goal:") for t in texts)
            assert any(t.get_text().startswith("goal:") for t in texts)
            assert {t.get_fontsize() for t in texts} == sizes
    finally:
        real_close(fig)


FAKE_STOCKFISH = r'''#!/usr/bin/env python3
import os, sys
log = open(os.environ["FAKE_STOCKFISH_LOG"], "a")
for line in sys.stdin:
    log.write(line)
    log.flush()
    words = line.split()
    if not words:
        continue
    if words[0] == "uci":
        print("id name Fakefish 1.0\nid author nobody\nuciok", flush=True)
    elif words[0] == "isready":
        print("readyok", flush=True)
    elif words[:2] == ["go", "depth"]:
        print("info depth 1 nodes 5 time 1\ninfo depth %s seldepth 3 nodes 1000 time 250 pv e2e4"
              % words[2], flush=True)
        print("bestmove e2e4", flush=True)
    elif words[:2] == ["go", "perft"]:
        print("a2a3: 1\n\nNodes searched: %d\n" % (10 ** int(words[2])), flush=True)
    elif words[0] == "quit":
        break
'''


def test_the_stockfish_row_reads_its_search_and_perft(tmp_path, monkeypatch):
    """crossbench's Stockfish figures from a stand-in engine: the last ``info depth`` line of
    each bench position (nodes, milliseconds) summed, the version from ``id name``, perft's
    ``Nodes searched`` at the start position (6) and Kiwipete (5); without the program, an
    error entry that says how to install it."""
    fake = tmp_path / "stockfish"
    fake.write_text(FAKE_STOCKFISH)
    fake.chmod(0o755)
    monkeypatch.setattr(crossbench, "STOCKFISH", str(fake))
    log = tmp_path / "commands.log"
    monkeypatch.setenv("FAKE_STOCKFISH_LOG", str(log))
    progress = _WatchedOut()       # the line is flushed at once: a long run is watched
    sf = crossbench._stockfish(progress)
    positions = len(crossbench.BENCH)
    commands = log.read_text().splitlines()
    # one thread (the record says so), a fresh game for each bench position in turn
    assert commands.count("setoption name Threads value 1") == 3 and commands.count("uci") == 3
    assert commands.count("setoption name Hash value 16") == 3
    searched = [c[len("position fen "):] for c in commands if c.startswith("position fen ")]
    assert searched[:positions] == [job.fen for job in crossbench.BENCH]
    assert searched[positions:] == [   # perft: the start position and Kiwipete
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"]
    assert commands[commands.index("position fen " + searched[0]) - 1] == "ucinewgame"
    assert commands.count("ucinewgame") == positions and commands.count("quit") == 3
    assert sf["version"] == "Fakefish 1.0" and sf["threads"] == 1
    search = sf["search"]
    assert search["what"] == f"go depth {crossbench.STOCKFISH_DEPTH} on each bench position"
    assert (search["nodes"], search["seconds"]) == (1000 * positions, 0.25 * positions)
    assert search["cpu_seconds"] > 0
    assert search["nodes_per_second"] == search["nodes"] / search["cpu_seconds"]
    assert [(p["root"], p["depth"], p["nodes"]) for p in sf["perft"]] == \
        [("startpos", 6, 10 ** 6), ("kiwipete", 5, 10 ** 5)]
    for p in sf["perft"]:
        assert p["nodes_per_second"] == p["nodes"] / p["cpu_seconds"] and p["seconds"] > 0
    assert progress.text.startswith(f"Stockfish: depth {crossbench.STOCKFISH_DEPTH} on the bench")
    assert progress.flushed[0] == (f"Stockfish: depth {crossbench.STOCKFISH_DEPTH} on the bench "
                                   "positions, perft ...\n")
    monkeypatch.setattr(crossbench, "STOCKFISH", str(tmp_path / "none"))
    assert crossbench._stockfish(progress) == {
        "error": f"{tmp_path / 'none'} not installed (apt-get install stockfish)"}


def test_render_only_redraws_the_committed_table(tmp_path, capsys):
    """``--render-only``: backends.md and .png again from backends.json with the H100 section
    read again from its record, nothing measured: the committed table comes out."""
    import shutil
    shutil.copy(BENCHMARKS / "backends.json", tmp_path / "backends.json")
    assert crossbench.main(["--render-only", "--out", str(tmp_path),
                            "--h100", str(BENCHMARKS / "opencl-h100.json")]) == 0
    assert capsys.readouterr().out == (f"rendered {tmp_path}/backends.md and backends.png from "
                                       "backends.json\n")
    assert (tmp_path / "backends.md").read_text() == (BENCHMARKS / "backends.md").read_text()
    assert json.loads((tmp_path / "backends.json").read_text()) == \
        json.loads((BENCHMARKS / "backends.json").read_text())
    assert (tmp_path / "backends.png").stat().st_size > 10_000


def test_a_failing_pocl_worker_is_named_with_its_last_error_line(monkeypatch):
    import io
    import subprocess

    def run(cmd, **kwargs):
        return subprocess.CompletedProcess(cmd, 1, "", "Traceback ...\n  ...\nOpenCLError: no device\n")
    monkeypatch.setattr(crossbench.subprocess, "run", run)
    with pytest.raises(SystemExit) as raised:
        crossbench._pocl("jobs.npz", 3, 1, io.StringIO())
    assert str(raised.value) == "PoCL worker failed: ['OpenCLError: no device']"


def test_without_records_the_projection_reads_the_synthesis_table(monkeypatch):
    """No synth/ record at all: Fmax and LUT4 from docs/synthesis.md's searchcore row, the
    cores estimated, the cycles per node from this run's Verilator bench; each source named."""
    monkeypatch.setattr(crossbench, "_records", lambda: [])
    monkeypatch.setattr(crossbench, "_git_commit", lambda path=None: "c0ffee0")
    p = crossbench._projection({"cycles_per_node": 6.0, "commit": "abc1234"})
    lut4, fmax = crossbench._synthesis_table_row("searchcore")
    cores = max(1, int(crossbench.ROUTABLE_FRACTION * crossbench.ECP5_85F_LUT4 // lut4))
    assert p == {"fmax_mhz": fmax, "cores": cores, "cycles_per_node": 6.0, "lut4_per_core": lut4,
                 "nodes_per_second": fmax * 1e6 * cores / 6.0, "sources": {
                     "fmax": {"record": "docs/synthesis.md (searchcore row)", "commit": "c0ffee0"},
                     "cores": {"estimate": f"floor({crossbench.ROUTABLE_FRACTION} x "
                                           f"{crossbench.ECP5_85F_LUT4} LUT4 / {lut4} LUT4 per "
                                           "core): no board record with cores yet"},
                     "cycles_per_node": {"record": "this run's Verilator bench", "commit": "abc1234"}}}
    with pytest.raises(SystemExit, match="no cycles per node"):
        crossbench._projection({"error": "no verilator"})


def test_the_plot_titles_and_labels_each_bar(tmp_path, monkeypatch):
    """backends.png: a panel per table with its title, each bar labelled with its row's
    implementation over its work, a rate beside each bar."""
    rows, fig, real_close = _plotted_backends(tmp_path, monkeypatch)
    try:
        assert fig._suptitle.get_text() == \
            "chessaccel: the search contract on every implementation (log scale)"
        for ax, table, title in zip(fig.axes, ("search", "perft"),
                                    ("search: nodes per second", "perft: leaves per second")):
            chosen = [r for r in rows if r[0] == table]
            assert ax.get_title() == title
            assert [t.get_text() for t in ax.get_yticklabels()] == [f"{r[1]}\n{r[2]}" for r in chosen]
            beside = [t.get_text() for t in ax.texts if not t.get_text().startswith("goal:")]
            assert beside == [" " + crossbench._rate(r[5]) for r in chosen]
            assert ax.get_xscale() == "log"
            assert sorted(t.get_text() for t in ax.texts if t.get_text().startswith("goal:")) == \
                sorted(f"goal: {label} " for _, label in crossbench.GOALS[table])
    finally:
        real_close(fig)


def test_the_smallest_budgets_are_accepted():
    assert gpubench._budgets("1/1") == (1, 1) and gpubench._split_args("1/0") == (1, 0)


# --- crossbench: the model's run, the goal lines of the plot ---------------------------------

def test_the_model_runs_every_stride_th_job_and_says_so_at_once(tmp_path):
    """crossbench's model figures: jobs 0, 2 and 4 of six at stride 2, searched by the model
    (its node counts), announced on the progress stream and flushed before the search starts."""
    boards, params = _small_job_file(tmp_path / "jobs.npz")
    data = np.load(tmp_path / "jobs.npz")
    watched = _WatchedOut()
    idx, results, seconds, cpu = crossbench._model(data, data["sides"], 2, watched)
    assert list(idx) == [0, 2, 4]
    assert [r.nodes for r in results] == \
        [model_search(boards[i], int(params[i][0]), -INF, INF).nodes for i in (0, 2, 4)]
    assert watched.text == "model: 3 leaf jobs (every 2-th) ...\n"
    assert watched.flushed == [watched.text]
    assert seconds >= 0 and cpu >= 0


def test_the_goal_lines_stand_at_the_projects_goals(tmp_path, monkeypatch):
    """backends.png: a dashed black line at each goal (brief and issue 10: 40 M nodes/s per
    ECP5-85F and 1 G on an H100 for search, 300 G leaves/s on an H100 for perft), its label
    upright against the line's left side, from the foot of the bars."""
    rows, fig, real_close = _plotted_backends(tmp_path, monkeypatch)
    goals = {"search": [(40e6, "goal: 40 M per ECP5-85F "), (1e9, "goal: 1 G on an H100 ")],
             "perft": [(300e9, "goal: 300 G on an H100 ")]}
    try:
        for ax, table in zip(fig.axes, ("search", "perft")):
            bars = sum(r[0] == table for r in rows)
            lines = [(line.get_xdata()[0], line.get_color(), line.get_linestyle(), line.get_linewidth())
                     for line in ax.lines]
            assert lines == [(x, "black", "--", 0.8) for x, _ in goals[table]]
            texts = [(t.get_position(), t.get_text(), t.get_rotation(), t.get_va(), t.get_ha())
                     for t in ax.texts if t.get_text().startswith("goal:")]
            assert texts == [((x, bars - 0.5), label, 90.0, "bottom", "right")
                             for x, label in goals[table]]
    finally:
        real_close(fig)


def test_the_job_file_holds_every_field(tmp_path):
    """benchjobs.build on 201 small leaf jobs and a stand-in device (the model): each job at
    depth 3 with the full window (docs/opencl.md), every 100th job checked (0, 100, 200) with its
    expected score, move and nodes, the first of them by the model too; the perft roots with
    their published counts (Chessprogramming Wiki); the progress lines."""
    import io
    import re
    from chessaccel.lab import benchjobs
    from chessaccel.model.position import chess_from_board
    fens = ["8/8/8/4k3/8/8/3PK3/8 w - - 0 1", "8/8/8/4k3/8/2N5/4K3/8 b - - 0 1",
            "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"]
    boards = [suites.board_of(fen) for fen in fens]
    leaves = [(k % 2, boards[k % 3]) for k in range(201)]
    progress = io.StringIO()
    path = tmp_path / "jobs.npz"
    assert benchjobs.build(path, _ModelAsDevice(boards), progress, leaves=leaves) == path
    data = np.load(path)
    assert data["params"].tolist() == [[3, -INF, INF, 0]] * 201
    assert data["bench_index"].tolist() == [k % 2 for k in range(201)]
    assert data["sides"].tolist() == [boards[k % 3].side for k in range(201)]
    unpacked = unpack_positions(data["positions"], data["sides"])
    assert [b.key() for b in unpacked] == [boards[k % 3].key() for k in range(201)]
    assert data["check_index"].tolist() == [0, 100, 200]
    expected = [model_search(boards[k % 3], 3, -INF, INF) for k in (0, 100, 200)]
    assert data["check_scores"].tolist() == [r.score for r in expected]
    assert data["check_nodes"].tolist() == [r.nodes for r in expected]
    assert data["check_best_moves"].tolist() == [encode_move(r.best_move, b.side == 1)
                                                 for r, b in zip(expected, boards)]
    assert int(data["model_checked"]) == 1 and str(data["reference_device"]) == "the model"
    assert data["perft_names"].tolist() == ["startpos", "kiwipete"]
    assert data["perft_depths"].tolist() == [[5, 6, 7, 8], [4, 5, 6, 7]]
    assert data["perft_counts"].tolist() == [[4_865_609, 119_060_324, 3_195_901_860, 84_998_978_956],
                                             [4_085_603, 193_690_690, 8_031_647_685, 374_190_009_323]]
    roots = unpack_positions(data["perft_positions"], np.array([0, 0]))
    assert [chess_from_board(b).fen() for b in roots] == [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"]
    nodes = sum(r.nodes for r in expected)
    assert re.fullmatch(r"201 leaf jobs \(\d+\.\d s\)\n"
                        rf"check sample: 3 jobs, {nodes} nodes on the model \(\d+\.\d s\)\n"
                        r"model agrees on 1 of them \(\d+\.\d s\)\n", progress.getvalue())


def test_rates_are_written_in_three_figures_with_their_unit():
    rate = crossbench._rate
    assert [rate(x) for x in (1e9, 2.5e9, 1_234e9, 1e6, 123_456_789, 999_999, 1000, 12_345, 999, 0.4)] \
        == ["1 G", "2.5 G", "1.23e+03 G", "1 M", "123 M", "1e+03 k", "1 k", "12.3 k", "999", "0"]


def _hand_report(h100=True, stockfish=True, split=True):
    """A report written by hand: every figure a round number whose rate is easy to check."""
    report = {
        "model": {"jobs": 6, "nodes": 1000, "cpu_seconds": 2.0, "nodes_per_second": 500.0},
        "verilator": {"jobs": 10, "nodes": 47_340, "cpu_seconds": 10.0, "nodes_per_second": 4734.0,
                      "cycles_per_node": 4.806},
        "fpga": {"nodes_per_second": 3e7, "fmax_mhz": 60.5, "cores": 3, "cycles_per_node": 4.814},
        "pocl_1": {"search": {"jobs": 6, "nodes": 1000, "cpu_seconds": 0.01},
                   "perft": [{"mode": "bulk", "root": "startpos", "depth": 5, "nodes": 4_865_609,
                              "cpu_seconds": 2.0}]},
        "speedup": {"pocl_1_over_model": 200.4, "jobs": 6},
        "pocl_all": {"compute_units": 2, "search": {"jobs": 3, "nodes": 600, "seconds": 0.002}},
    }
    if h100:
        report["h100"] = {
            "search": {"jobs": 483_504, "nodes": 5_686_987_855, "kernel_seconds": 2.5,
                       "nodes_per_second": 2.27e9, "work_items": 132 * 128,
                       "label": "split on the device 100000/1" if split else "default"},
            "compute_units": 132, "without_top_1_percent": 3.5e9, "uniform": 4.25e9,
            "perft": [{"mode": "bulk", "root": "startpos", "depth": 7, "nodes": 3_195_901_860,
                       "seconds": 0.5, "nodes_per_second": 6.4e9, "leaf_depth_max": 2}]}
    if stockfish:
        report["stockfish"] = {
            "version": "Stockfish 16", "search": {"nodes": 2_000_000, "cpu_seconds": 1.0,
                                                  "nodes_per_second": 2e6},
            "perft": [{"root": "kiwipete", "depth": 5, "nodes": 193_690_690, "cpu_seconds": 1.5,
                       "nodes_per_second": 1.29e8}]}
    return report


def test_the_table_rows_of_a_hand_written_report():
    """crossbench._rows on a report written by hand, row by row: (table, implementation,
    work, nodes, seconds, rate, note)."""
    rows = crossbench._rows(_hand_report())
    assert rows == [
        ("search", "Python model (1 core)", "6 leaf jobs", 1000, 2.0, 500.0,
         "the golden reference; CPU seconds"),
        ("search", "RTL in Verilator (1 core)", "bench set, 10 jobs", 47_340, 10.0, 4734.0,
         "4.81 cycles/node; CPU seconds"),
        ("search", "FPGA, projected (ECP5-85F)", "Fmax x cores / cycles per node", None, None, 3e7,
         "60.5 MHz x 3 cores / 4.81 cycles per node"),
        ("search", "PoCL, 1 CPU core", "6 leaf jobs (the model's)", 1000, 0.01, 100_000.0,
         "200x the model; CPU seconds"),
        ("search", "PoCL, all 2 CPU cores", "3 leaf jobs", 600, 0.002, 300_000.0,
         "wall seconds on the shared machine"),
        ("search", "H100, OpenCL", "483,504 leaf jobs, one batch", 5_686_987_855, 2.5, 2.27e9,
         "long jobs split on the device; 128 work-items per SM; 3500 M/s without the largest 1% "
         "of jobs, 4.2 G/s on one job repeated"),
        ("search", "Stockfish 16 (1 thread)", "its own search, bench positions", 2_000_000, 1.0, 2e6,
         "a different search: for scale; CPU seconds"),
        ("perft", "PoCL, 1 CPU core, bulk", "startpos perft 5", 4_865_609, 2.0, 4_865_609 / 2.0,
         "CPU seconds"),
        ("perft", "H100, OpenCL, bulk", "startpos perft 7", 3_195_901_860, 0.5, 6.4e9,
         "2 plies per work-item"),
        ("perft", "Stockfish 16 (1 thread), bulk", "kiwipete perft 5", 193_690_690, 1.5, 1.29e8,
         "CPU seconds"),
    ]
    unsplit = crossbench._rows(_hand_report(split=False))
    assert [r[6] for r in unsplit if r[1] == "H100, OpenCL"] == [
        "128 work-items per SM; 3500 M/s without the largest 1% of jobs, 4.2 G/s on one job repeated"]
    bare = _hand_report(h100=False, stockfish=False)
    bare["verilator"] = {"error": "no verilator"}
    assert [r[1] for r in crossbench._rows(bare)] == [
        "Python model (1 core)", "FPGA, projected (ECP5-85F)", "PoCL, 1 CPU core",
        "PoCL, all 2 CPU cores", "PoCL, 1 CPU core, bulk"]


def test_the_markdown_of_a_hand_written_report():
    report = _hand_report(h100=False, stockfish=False)
    report.update({"date": "2026-11-25", "commit": "abc1234",
                   "machine": {"cpus": 2, "load_average": [1.5, 1.0, 0.5]},
                   "machine_after": {"load_average": [2.0, 1.5, 1.0]}})
    report["fpga"]["sources"] = {"fmax": {"record": "synth/x.json", "commit": "def5678"},
                                 "cores": {"estimate": "70 % of the LUT4s"}}
    text = crossbench._markdown(report, crossbench._rows(report))
    assert text == (
        "<!-- generated by `python -m chessaccel.lab.crossbench`: do not edit -->\n\n"
        "Measured 2026-11-25 at commit abc1234; this machine: 2 CPUs, load average [1.5, 1.0, 0.5] "
        "at the start, [2.0, 1.5, 1.0] at the end (shared with other work). Single-threaded rows "
        "are timed in CPU seconds (what the run spent on a core, whatever the load); the all-cores "
        "row and the H100 in wall seconds. H100 figures: `none`.\n\n"
        "### Search (nodes per second)\n\n"
        "| implementation | work | nodes | seconds | nodes/s | note |\n"
        "|---|---|---:|---:|---:|---|\n"
        "| Python model (1 core) | 6 leaf jobs | 1,000 | 2.000 | 500 | the golden reference; CPU seconds |\n"
        "| RTL in Verilator (1 core) | bench set, 10 jobs | 47,340 | 10.000 | 4.73 k | 4.81 cycles/node; CPU seconds |\n"
        "| FPGA, projected (ECP5-85F) | Fmax x cores / cycles per node |  |  | 30 M | 60.5 MHz x 3 cores / 4.81 cycles per node |\n"
        "| PoCL, 1 CPU core | 6 leaf jobs (the model's) | 1,000 | 0.010 | 100 k | 200x the model; CPU seconds |\n"
        "| PoCL, all 2 CPU cores | 3 leaf jobs | 600 | 0.002 | 300 k | wall seconds on the shared machine |\n\n"
        "### Perft (leaves per second)\n\n"
        "| implementation | work | nodes | seconds | nodes/s | note |\n"
        "|---|---|---:|---:|---:|---|\n"
        "| PoCL, 1 CPU core, bulk | startpos perft 5 | 4,865,609 | 2.000 | 2.43 M | CPU seconds |\n\n"
        "FPGA projection sources: fmax: record synth/x.json, commit def5678; cores: estimate 70 % "
        "of the LUT4s.\n\n"
        "PoCL on one core against the model on the same 6 jobs: **200x** (every score and node "
        "count equal).\n")


def test_the_h100_section_of_a_hand_written_record(tmp_path):
    """_h100 on a record written by hand: the fastest run over every job (not a faster one over
    fewer jobs), the tail and uniform rates by their labels, and per (root, mode) the fastest
    correct perft run (a faster wrong one left out), sorted by mode then root; a record outside
    the tree is named by its path; without tail or uniform runs, None."""
    runs = [{"label": "default", "jobs": 8, "nodes_per_second": 5.0},
            {"label": "best again", "jobs": 8, "nodes_per_second": 7.0},
            {"label": "the largest job alone", "jobs": 1, "nodes_per_second": 99.0},
            {"label": "without the top 1% of jobs", "jobs": 7, "nodes_per_second": 9.0},
            {"label": "without the top 10% of jobs", "jobs": 6, "nodes_per_second": 11.0},
            {"label": "uniform (median job repeated)", "jobs": 8, "nodes_per_second": 6.0}]
    perft = [{"root": "startpos", "mode": "make", "correct": True, "nodes_per_second": 1.0},
             {"root": "startpos", "mode": "make", "correct": True, "nodes_per_second": 3.0},
             {"root": "startpos", "mode": "make", "correct": True, "nodes_per_second": 2.0},
             {"root": "kiwipete", "mode": "bulk", "correct": False, "nodes_per_second": 50.0},
             {"root": "kiwipete", "mode": "bulk", "correct": True, "nodes_per_second": 4.0},
             {"root": "startpos", "mode": "bulk", "correct": True, "nodes_per_second": 8.0},
             {"root": "kiwipete", "mode": "make", "error": "out of resources"},
             {"root": "kiwipete", "mode": "make", "correct": True, "nodes_per_second": 0.5}]
    record = {"device": {"name": "NVIDIA H100 80GB HBM3", "compute_units": 132},
              "check": {"mismatches": 2}, "leaf_search": {"jobs": 8, "runs": runs},
              "perft": perft}
    path = tmp_path / "h100.json"
    path.write_text(json.dumps(record))
    assert crossbench._h100(path) == {
        "record": str(path), "device": "NVIDIA H100 80GB HBM3", "compute_units": 132, "job_source": {},
        "check_mismatches": 2, "search": runs[1], "without_top_1_percent": 9.0, "uniform": 6.0,
        "perft": [perft[4], perft[5], perft[7], perft[1]]}
    record["leaf_search"]["runs"] = runs[:3]
    path.write_text(json.dumps(record))
    h100 = crossbench._h100(path)
    assert (h100["without_top_1_percent"], h100["uniform"]) == (None, None)


def test_crossbenchs_options_their_defaults_and_help(monkeypatch, help_lines):
    seen = []
    monkeypatch.setattr(crossbench, "run", lambda args: seen.append(args) or 0)
    monkeypatch.setattr(crossbench, "_worker", lambda args: seen.append(("worker", args)) or 7)
    assert crossbench.main([]) == 0
    [args] = seen
    assert (args.model_stride, args.pocl_stride, args.skip_rtl, args.skip_stockfish,
            args.render_only, args.worker) == (10_000, 1_000, False, False, False, False)
    assert (args.cores, args.stride, args.platform) == (0, 1, "pocl")
    assert Path(args.out) == ROOT / "docs" / "benchmarks"
    assert Path(args.jobs).name == "jobs.npz" and Path(args.h100) == BENCHMARKS / "opencl-h100.json"
    assert Path(args.h100_batches) == BENCHMARKS / "opencl-h100-batches.json"
    assert crossbench.main(["--worker", "--cores", "1", "--stride", "3", "--platform", "x"]) == 7
    worker = seen[1][1]
    assert (worker.cores, worker.stride, worker.platform) == (1, 3, "x")
    lines = help_lines(crossbench.main)
    for line in ("--jobs JOBS           job file (built when missing)",
                 "--h100 H100           gpubench record of an H100 run",
                 "--model-stride MODEL_STRIDE",
                 "--pocl-stride POCL_STRIDE",
                 "--skip-rtl", "--skip-stockfish"):
        assert any(l.startswith(line) for l in lines), line
    text = " ".join(lines)
    for words in ("model and PoCL-one-core: every N-th leaf job", "PoCL on all cores: every N-th job",
                  "redraw backends.md and .png from backends.json without measuring",
                  "gpuscale summary of H100 runs of several batches"):
        assert words in text
    assert "--worker" not in text and "--platform" not in text


def test_a_missing_job_file_is_built_and_says_so(tmp_path, monkeypatch):
    from chessaccel.lab import benchjobs
    path = tmp_path / "new" / "jobs.npz"
    built = []

    def build(where, progress):
        built.append(where)
        np.savez(where, positions=np.zeros((1, 5), dtype=np.uint64), sides=np.array([1]))
    monkeypatch.setattr(benchjobs, "build", build)
    watched = _WatchedOut()
    data, sides = crossbench._job_file(path, watched)
    assert built == [path] and sides.tolist() == [1]
    assert watched.text == f"building {path} (python -m chessaccel.lab.benchjobs)\n"


def test_without_any_cycles_per_node_the_projection_stops(monkeypatch):
    monkeypatch.setattr(crossbench, "_records", lambda: [])
    with pytest.raises(SystemExit) as stopped:
        crossbench._projection({"error": "verilator not found"})
    assert str(stopped.value) == ("no cycles per node: no RTL bench record and the Verilator run "
                                  "failed")
