"""``chessaccel bench --host`` and ``--dispatch``: the figures they write, and that the host's
search is deterministic job for job (the instant backend scores by material, so the number of
jobs and host nodes of a search is a fixed signature of the search code)."""

import json
import subprocess
import sys

import pytest

import chessaccel.host.cli as cli
from chessaccel.contract.bench import BENCH
from chessaccel.host.cli import main
from chessaccel.lab.dispatch import (ENGINE_GOAL_JOBS_PER_S, GOAL_JOBS_PER_S, InstantBackend,
                                     goal_verdict, measure_interface, measure_search)
from chessaccel.host.engine.executors import Job
from chessaccel.model.position import parse_position
from chessaccel.contract.defs import INF

#: (name, jobs, host nodes) of the first three bench positions searched to depth 3 with
#: HardwarePlies 1 over the instant backend: changes whenever the host's search does.
SEARCH_SIGNATURE = [("startpos", 79, 23), ("kiwipete", 180, 100), ("cpw-pos3", 43, 17)]


def test_the_instant_backend_scores_by_material():
    board = parse_position("4k3/8/8/8/8/8/8/R3K2R b K - 0 1")[0]
    [result] = InstantBackend().search_many([Job(board, 3, -INF, INF)])
    assert result == {"score": -1000, "best_move": None, "pv": [], "nodes": 1, "cycles": None}


def test_host_search_signature_over_the_instant_backend():
    result = measure_search(depth=3, hardware_plies=1, positions=BENCH[:3])
    assert [(p["name"], p["jobs"], p["host_nodes"]) for p in result["positions"]] == \
        SEARCH_SIGNATURE
    assert result["jobs"] == result["jobs_handed_out"] == 302
    assert result["jobs_per_cpu_second"] > 0 and "load_average" in result


def test_the_interface_moves_every_job():
    rates = measure_interface(jobs_total=2000, sizes=(1, 32))
    assert set(rates) == {"inline", "threaded"}
    assert all(set(r) == {1, 32} and all(v["wall"] > 0 and v["cpu"] > 0 for v in r.values())
               for r in rates.values())


def test_bench_host_side_by_side(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(cli, "BENCH", BENCH[2:4])
    monkeypatch.chdir(tmp_path)     # a bare file name: written here, nothing else made
    out = tmp_path / "host.json"
    status = main(["bench", "--host", "--host-backends", "model, model", "--host-depth", "2",
                   "--hardware-plies", "1", "--out", "host.json", "--json"])
    assert status == 0
    obj = json.loads(capsys.readouterr().out)
    assert json.loads(out.read_text()) == obj
    assert (obj["depth"], obj["hardware_plies"], obj["disagreements"]) == (2, 1, [])
    first, second = obj["backends"]
    assert [p["name"] for p in first["positions"]] == ["cpw-pos3", "cpw-pos4"]
    assert first["nodes"] == first["host_nodes"] + first["accelerator_nodes"]
    assert first["jobs"] == sum(p["jobs"] for p in first["positions"])
    for a, b in zip(first["positions"], second["positions"]):
        assert (a["score"], a["best_move"], a["accelerator_nodes"], a["jobs"]) == \
            (b["score"], b["best_move"], b["accelerator_nodes"], b["jobs"])
    assert first["positions"][0]["best_move"] == "b4f4"      # the model's own, at depth 2
    assert (tmp_path / "host.png").stat().st_size > 1000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["host.json", "host.png"]


def test_bench_still_benches_without_host(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(cli, "BENCH", BENCH[:1])
    assert main(["bench", "--out", str(tmp_path / "b.json"), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["signature"] == obj["nodes"] == obj["positions"][0]["nodes"]


@pytest.mark.parametrize("argv, problem", [
    (["bench", "--host", "--host-depth", "0"], "host depth 0 out of range"),
    (["bench", "--host", "--accelerators", "0"], "accelerators must be at least 1"),
    (["bench", "--dispatch", "--dispatch-depth", "99"], "dispatch depth 99 out of range"),
    (["bench", "--host", "--host-backends", "quantum"], "unknown backend 'quantum'"),
])
def test_bench_bad_settings(capsys, argv, problem):
    assert main(argv) in (1, 2)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and problem in err[0]


def test_dispatch_command_writes_its_figures(tmp_path):
    out = tmp_path / "dispatch.json"
    done = subprocess.run([sys.executable, "-m", "chessaccel.host.cli", "bench", "--dispatch",
                           "--dispatch-depth", "2", "--hardware-plies", "1", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-400:]
    obj = json.loads(out.read_text())
    assert obj["goal_jobs_per_second"] == 100_000
    assert obj["search"]["depth"] == 2 and obj["search"]["jobs"] > 100
    assert "jobs per CPU second" in done.stdout and (tmp_path / "dispatch.png").exists()
    assert f"the search's rate {goal_verdict(obj['search'])} the goal of 100,000 jobs/s" in done.stdout
    compiled = obj["compiled_search"]
    assert compiled["jobs_handed_out"] >= compiled["jobs"] > 100 and compiled["launches"] > 0
    assert "compiled host search (CompiledSearch, one thread)" in done.stdout
    assert obj["engine_goal_jobs_per_second"] == 1_000_000
    assert (f"{goal_verdict(compiled, ENGINE_GOAL_JOBS_PER_S)} the engine's goal of 1,000,000 "
            "jobs/s") in done.stdout


def test_the_instant_backends_packed_launches_score_as_its_jobs():
    """start_packed (the compiled search's launches) gives each packed job the score that
    search_many gives the same job: the material balance from the side to move's view."""
    import suites
    from chessaccel.host.opencl.layout import pack_positions
    boards = [suites.board_of(fen) for fen in suites.random_play_positions(7, 60)]
    backend = InstantBackend()
    scores, moves, nodes = backend.start_packed(pack_positions(boards), None).arrays()
    want = [r.score for r in backend.search_many([Job(b, 1, -INF, INF) for b in boards])]
    assert scores.tolist() == want and not moves.any() and nodes.tolist() == [1] * len(boards)


@pytest.mark.parametrize("rate, verdict", [(GOAL_JOBS_PER_S - 1, "is below"),
                                           (GOAL_JOBS_PER_S, "meets"),
                                           (GOAL_JOBS_PER_S + 1, "meets")])
def test_the_goal_is_met_from_exactly_the_goal_rate_up(rate, verdict):
    assert GOAL_JOBS_PER_S == 100_000
    assert goal_verdict({"handed_out_per_cpu_second": rate}) == verdict
    engine_rate = rate * ENGINE_GOAL_JOBS_PER_S // GOAL_JOBS_PER_S
    assert goal_verdict({"handed_out_per_cpu_second": engine_rate},
                        ENGINE_GOAL_JOBS_PER_S) == verdict


def test_a_failing_batch_is_one_line_naming_the_instant_backend():
    """The executor's error line names the backend by its name ("instant"), inline and in a
    batch of the threaded variant; the executor counts each batch it ran."""
    from chessaccel.lab.dispatch import ThreadedInstantBackend
    from chessaccel.host.engine.executors import BatchExecutor, ExecutorError
    board = parse_position("4k3/8/8/8/8/8/8/4K3 w - - 0 1")[0]
    executor = BatchExecutor(InstantBackend())
    try:
        for _ in range(3):
            executor.submit([Job(board, 0, -INF, INF)] * 2).wait(5.0)
        assert (executor.stats["batches"], executor.stats["jobs"]) == (3, 6)
        with pytest.raises(ExecutorError, match=r"^instant backend failed: "):
            executor.run_inline(Job(None, 0, -INF, INF))
    finally:
        executor.close()
    executor = BatchExecutor(ThreadedInstantBackend())
    try:
        batch = executor.submit([Job(None, 0, -INF, INF)])
        with pytest.raises(ExecutorError, match=r"^instant backend failed: "):
            batch.wait(5.0)
    finally:
        executor.close()


# --- the figures' arithmetic on a clock that ticks by known steps ----------------------------

class _TickingClock:
    """A stand-in for the time module: each perf_counter() call is ``wall`` seconds after the
    last one, each process_time() call ``cpu`` seconds after the last."""

    def __init__(self, wall, cpu):
        self.wall, self.cpu = wall, cpu
        self.walls = self.cpus = 0

    def perf_counter(self):
        self.walls += 1
        return 100.0 + self.walls * self.wall

    def process_time(self):
        self.cpus += 1
        return 10.0 + self.cpus * self.cpu


def test_the_dispatch_figures_on_a_known_clock(monkeypatch):
    """Each bench position's search takes one tick of each clock (0.21236 s on the wall,
    0.04567 CPU s): per position the seconds to 0.1 ms, in total to a millisecond, and every
    rate is its count over the sum of the positions' times; the median of three runs, each run's rates
    listed; the profile run lists where the time went."""
    from chessaccel.lab import dispatch
    monkeypatch.setattr(dispatch, "time", _TickingClock(0.21236, 0.04567))
    result = measure_search(depth=3, hardware_plies=1, positions=BENCH[:3], profile=True)
    assert [(p["name"], p["jobs"], p["host_nodes"]) for p in result["positions"]] == \
        SEARCH_SIGNATURE
    for p in result["positions"]:
        assert (p["seconds"], p["cpu_seconds"]) == (0.2124, 0.0457)
        assert p["jobs_per_second"] == round(p["jobs"] / 0.21236)
    jobs = sum(job for _, job, _ in SEARCH_SIGNATURE)
    assert (result["seconds"], result["cpu_seconds"]) == (0.637, 0.137)
    assert (result["depth"], result["hardware_plies"]) == (3, 1)
    assert result["jobs"] == result["jobs_handed_out"] == jobs
    assert result["host_nodes"] == sum(nodes for _, _, nodes in SEARCH_SIGNATURE)
    wall, cpu = 3 * 0.2124, 3 * 0.0457
    assert result["jobs_per_second"] == result["handed_out_per_second"] == round(jobs / wall)
    assert result["jobs_per_cpu_second"] == result["handed_out_per_cpu_second"] == round(jobs / cpu)
    assert result["runs"] == [{"seconds": 0.637, "cpu_seconds": 0.137,
                               "handed_out_per_second": round(jobs / wall),
                               "handed_out_per_cpu_second": round(jobs / cpu)}] * 3
    assert 0 < len(result["profile"]) <= 12 and all("/" in line for line in result["profile"])
    assert "profile" not in measure_search(depth=1, hardware_plies=1, positions=BENCH[:1],
                                           repeats=1)


def test_the_dispatch_command_prints_and_draws_its_figures(tmp_path, monkeypatch, capsys):
    """``bench --dispatch``'s lines, JSON and chart (9 x 4 inches at 100 dpi) from given
    measurements."""
    import argparse
    import matplotlib.image
    from chessaccel.lab import dispatch
    interface = {"inline": {1: {"wall": 250_000, "cpu": 260_000}, 1024: {"wall": 900_000, "cpu": 950_000}},
                 "threaded": {1: {"wall": 20_000, "cpu": 40_000}, 1024: {"wall": 800_000, "cpu": 850_000}}}
    search = {"depth": 2, "hardware_plies": 1, "jobs": 1234, "jobs_handed_out": 1500,
              "host_nodes": 321, "seconds": 0.0125, "cpu_seconds": 0.0110,
              "handed_out_per_second": 120_000, "handed_out_per_cpu_second": 136_364,
              "jobs_per_cpu_second": 112_182, "load_average": 1.25,
              "runs": [{"handed_out_per_cpu_second": r} for r in (130_000, 136_364, 140_000)],
              "profile": [f"   10    0.001 x/y.py:{i}(f)" for i in range(12)]}
    compiled = {"depth": 2, "hardware_plies": 1, "jobs": 1234, "jobs_handed_out": 1300,
                "host_nodes": 321, "launches": 400, "seconds": 0.01, "cpu_seconds": 0.0125,
                "handed_out_per_second": 130_000, "handed_out_per_cpu_second": 104_000,
                "runs": [{"handed_out_per_cpu_second": r} for r in (90_000, 104_000, 110_000)]}
    calls = []
    monkeypatch.setattr(dispatch, "measure_interface", lambda: interface)
    monkeypatch.setattr(dispatch, "measure_search",
                        lambda **kw: calls.append(kw) or search)
    monkeypatch.setattr(dispatch, "measure_compiled_search",
                        lambda **kw: calls.append(kw) or compiled)
    out = tmp_path / "d.json"
    args = argparse.Namespace(dispatch_depth=2, hardware_plies=1, out=str(out), plot=None, json=False)
    assert dispatch.run(args) == 0
    assert calls == [{"depth": 2, "hardware_plies": 1, "profile": True},
                     {"depth": 2, "hardware_plies": 1}]
    lines = capsys.readouterr().out.splitlines()
    import os
    assert lines[:4] == [
        "interface (inline), batches of    1:   250,000 jobs/s,   260,000 per CPU second",
        "interface (inline), batches of 1024:   900,000 jobs/s,   950,000 per CPU second",
        "interface (threaded), batches of    1:    20,000 jobs/s,    40,000 per CPU second",
        "interface (threaded), batches of 1024:   800,000 jobs/s,   850,000 per CPU second"]
    assert lines[4] == ("host search, depth 2 with HardwarePlies 1: 1,234 jobs used, 1,500 handed "
                        "out and collected (speculative ones included), 321 host nodes")
    assert lines[5] == (f"  120,000 jobs/s on the clock (0.01 s, load average 1.2 on "
                        f"{os.cpu_count()} CPUs), 136,364 jobs per CPU second (0.01 s): what one "
                        f"free core gives; the median of 3 runs (130,000, 136,364, 140,000)")
    assert lines[6] == ("the search's rate meets the goal of 100,000 jobs/s; where the host's "
                        "time goes:")
    assert lines[7:15] == ["  " + line.strip() for line in search["profile"][:8]]
    assert lines[15] == ("compiled host search (CompiledSearch, one thread), the same searches: "
                         "1,300 jobs handed out in 400 launches, 130,000 jobs/s on the clock, "
                         "104,000 per CPU second (every thread of the process); the median of 3 "
                         "runs (90,000, 104,000, 110,000): is below the engine's goal of "
                         "1,000,000 jobs/s")
    assert lines[16:] == [f"wrote {out} and {tmp_path / 'd.png'}"]
    obj = json.loads(out.read_text())
    assert obj == {"goal_jobs_per_second": 100_000, "engine_goal_jobs_per_second": 1_000_000,
                   "search": search, "cpus": os.cpu_count(),
                   "compiled_search": compiled,
                   "interface_jobs_per_second": {m: {str(k): v for k, v in r.items()}
                                                 for m, r in interface.items()}}
    assert matplotlib.image.imread(tmp_path / "d.png").shape[:2] == (400, 900)
    args.json, args.plot = True, str(tmp_path / "p.png")
    assert dispatch.run(args) == 0
    assert json.loads(capsys.readouterr().out) == obj and (tmp_path / "p.png").exists()


def test_the_host_bench_figures_on_a_known_clock(monkeypatch):
    """hostbench.search_bench: each position's search one tick (0.31416 s): seconds per
    position to 0.1 ms, in total to a millisecond, rates to a tenth over the positions' times;
    the sums of the positions' figures; the progress line of each position."""
    from chessaccel.lab import hostbench
    monkeypatch.setattr(hostbench, "time", _TickingClock(0.31416, 0.0))
    lines = []
    r = hostbench.search_bench("model", 2, 1, 1, BENCH[2:4], progress=lines.append)
    rows = r["positions"]
    assert [p["name"] for p in rows] == ["cpw-pos3", "cpw-pos4"]
    assert all(p["seconds"] == 0.3142 for p in rows)
    assert (r["backend"], r["accelerators"], r["parallel"], r["seconds"]) == ("model", 1, False, 0.628)
    for key in ("host_nodes", "accelerator_nodes", "speculative_nodes", "span_nodes", "jobs"):
        assert r[key] == sum(p[key] for p in rows)
    assert r["nodes"] == r["host_nodes"] + r["accelerator_nodes"]
    assert r["jobs_per_second"] == round(r["jobs"] / (2 * 0.3142), 1)
    assert r["nodes_per_second"] == round(r["nodes"] / (2 * 0.3142), 1)
    for line, p in zip(lines, rows):
        assert line == (f"  model      {p['name']:12s} score {p['score']:6d} {p['best_move']}  host "
                        f"{p['host_nodes']:6d}  accelerator {p['accelerator_nodes']:8d}  jobs "
                        f"{p['jobs']:6d}  0.31 s")
    assert len(lines) == 2


def test_a_host_bench_disagreement_fails_the_command(tmp_path, monkeypatch, capsys):
    """Backends that differ in a score or a best move: a DISAGREE line each, exit 1; the JSON
    lists them; the chart is 10 x 4 inches."""
    import argparse
    import matplotlib.image
    from chessaccel.lab import hostbench

    def figures(spec, depth, plies, accelerators, positions, progress):
        moves = {"model": ("e2e4", "d2d4"), "rtl": ("e2e4", "c2c4"), "opencl": ("e2e4", "d2d4")}
        scores = {"model": (10, 20), "rtl": (10, 20), "opencl": (11, 20)}
        rows = [{"name": job.name, "score": s, "best_move": m}
                for job, s, m in zip(positions, scores[spec], moves[spec])]
        return {"backend": spec, "host_nodes": 100, "accelerator_nodes": 20_000, "jobs": 500,
                "seconds": 2.5, "jobs_per_second": 200.0, "nodes_per_second": 8040.0,
                "positions": rows}
    monkeypatch.setattr(hostbench, "search_bench", figures)
    out = tmp_path / "h.json"
    args = argparse.Namespace(host_backends="model, rtl,,opencl", backend="model", json=False,
                              host_depth=3, hardware_plies=2, accelerators=2, out=str(out), plot=None)
    emitted = []
    assert hostbench.run(args, BENCH[:2], lambda obj, lines: emitted.append((obj, lines))) == 1
    [(obj, lines)] = emitted
    assert lines[0] == "host bench, depth 3, HardwarePlies 2, 2 accelerator(s):"
    assert lines[1] == ("  model        host nodes      100  accelerator nodes     20000  jobs     "
                        "500      2.50 s      200.0 jobs/s      8040.0 nodes/s")
    assert [line.split()[0] for line in lines[1:4]] == ["model", "rtl", "opencl"]
    assert lines[4:6] == ["DISAGREE kiwipete: model 20 d2d4, rtl 20 c2c4",
                          "DISAGREE startpos: model 10 e2e4, opencl 11 e2e4"]
    assert lines[6:] == [f"wrote {out} and {tmp_path / 'h.png'}"]
    assert obj["disagreements"] == [line[len("DISAGREE "):] for line in lines[4:6]]
    assert (obj["depth"], obj["hardware_plies"], obj["accelerators"]) == (3, 2, 2)
    assert json.loads(out.read_text()) == obj
    assert matplotlib.image.imread(tmp_path / "h.png").shape[:2] == (400, 1000)
    args.host_backends = None
    assert hostbench.run(args, BENCH[:2], lambda obj, lines: emitted.append((obj, lines))) == 0
    assert [r["backend"] for r in emitted[-1][0]["backends"]] == ["model"]


def test_bench_host_reports_each_position_on_stderr_unless_json(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(cli, "BENCH", BENCH[2:3])
    out = str(tmp_path / "h.json")
    assert main(["bench", "--host", "--host-depth", "2", "--hardware-plies", "1", "--out", out]) == 0
    captured = capsys.readouterr()
    obj = json.loads((tmp_path / "h.json").read_text())
    [row] = obj["backends"][0]["positions"]
    [line] = captured.err.splitlines()
    assert line.startswith(f"  model      cpw-pos3     score {row['score']:6d} {row['best_move']}  "
                           f"host {row['host_nodes']:6d}  accelerator {row['accelerator_nodes']:8d}  "
                           f"jobs {row['jobs']:6d}  ")
    assert captured.out.splitlines()[0] == "host bench, depth 2, HardwarePlies 1, 1 accelerator(s):"
    assert main(["bench", "--host", "--host-depth", "2", "--hardware-plies", "1", "--out", out,
                 "--json"]) == 0
    assert capsys.readouterr().err == ""


def test_the_interface_rates_are_jobs_over_the_clocks(monkeypatch):
    """measure_interface on a clock that ticks by known steps (one tick per measured batch
    size): each rate is the jobs that went through submit/wait over that tick, on the wall
    clock and on the CPU clock."""
    from chessaccel.lab import dispatch
    from chessaccel.host.engine.executors import BatchExecutor
    monkeypatch.setattr(dispatch, "time", _TickingClock(0.5, 0.25))
    moved = []
    real_submit = BatchExecutor.submit

    def submit(self, jobs):
        moved.append((type(self.backend).__name__ if hasattr(self, "backend") else "?", len(jobs)))
        return real_submit(self, jobs)
    monkeypatch.setattr(BatchExecutor, "submit", submit)
    rates = measure_interface(jobs_total=2000, sizes=(1, 32))
    per_size = {}
    for _, size in moved:
        per_size[size] = per_size.get(size, 0) + size
    for label in ("inline", "threaded"):
        for size in (1, 32):
            jobs = per_size[size] // 2          # each size ran once inline and once threaded
            assert rates[label][size] == {"wall": round(jobs / 0.5), "cpu": round(jobs / 0.25)}
