"""``chessaccel bench --host`` and ``--dispatch``: the figures they write, and that the host's
search is deterministic job for job (the instant backend scores by material, so the number of
jobs and host nodes of a search is a fixed signature of the search code)."""

import json
import subprocess
import sys

import pytest

import chessaccel.host.cli as cli
from chessaccel.host.bench import BENCH
from chessaccel.host.cli import main
from chessaccel.host.engine.dispatch import (GOAL_JOBS_PER_S, InstantBackend, goal_verdict,
                                             measure_interface, measure_search)
from chessaccel.host.engine.jobs import Job
from chessaccel.host.position import parse_position
from chessaccel.defs import INF

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


@pytest.mark.parametrize("rate, verdict", [(GOAL_JOBS_PER_S - 1, "is below"),
                                           (GOAL_JOBS_PER_S, "meets"),
                                           (GOAL_JOBS_PER_S + 1, "meets")])
def test_the_goal_is_met_from_exactly_the_goal_rate_up(rate, verdict):
    assert GOAL_JOBS_PER_S == 100_000
    assert goal_verdict({"handed_out_per_cpu_second": rate}) == verdict


def test_a_failing_batch_is_one_line_naming_the_instant_backend():
    """The executor's error line names the backend by its name ("instant"), inline and in a
    batch of the threaded variant; the executor counts each batch it ran."""
    from chessaccel.host.engine.dispatch import ThreadedInstantBackend
    from chessaccel.host.engine.jobs import BatchExecutor, ExecutorError
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
