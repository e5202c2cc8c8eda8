"""The OpenCL benchmark tooling: the job file's packing, the device runner (on PoCL, a small job
file), the committed H100 record and the cross-backend table generated from its JSON."""

import json
from pathlib import Path

import numpy as np
import pytest

from chessaccel.defs import INF
from chessaccel.host import crossbench
from chessaccel.host.opencl import gpubench
from chessaccel.host.opencl.benchjobs import PERFT_ROOTS
from chessaccel.host.opencl.layout import encode_move, pack_positions, unpack_positions
from chessaccel.sim.model.search import search as model_search

import suites

ROOT = Path(__file__).resolve().parent.parent

BENCHMARKS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks"


def test_packed_positions_unpack_to_the_same_boards():
    fens = suites.random_play_positions(5, 200) + [r.fen for r in suites.perft_records()][:200]
    boards = [suites.board_of(fen) for fen in fens]
    back = unpack_positions(pack_positions(boards), [b.side for b in boards])
    assert [b.key() for b in back] == [b.key() for b in boards]


def test_the_device_runner_checks_and_times_a_job_file(tmp_path):
    boards = [suites.board_of(fen) for fen in suites.random_play_positions(31, 24)]
    params = np.array([[d % 3, -INF, INF, 0] for d in range(len(boards))], dtype=np.int32)
    expected = [model_search(b, int(p[0])) for b, p in zip(boards, params)]
    moves = [encode_move(r.best_move, b.side == 1) for b, r in zip(boards, expected)]
    roots = [suites.board_of(fen) for _, fen, _ in PERFT_ROOTS]
    jobs = tmp_path / "jobs.npz"
    np.savez(jobs, positions=pack_positions(boards), params=params,
             check_index=np.arange(len(boards)), check_scores=np.array([r.score for r in expected]),
             check_best_moves=np.array(moves, dtype=np.uint32),
             check_nodes=np.array([r.nodes for r in expected], dtype=np.uint64),
             model_checked=np.int64(len(boards)), reference_device=np.array("the model"),
             perft_names=np.array([n for n, _, _ in PERFT_ROOTS]), perft_positions=pack_positions(roots),
             perft_depths=np.array([sorted(c) for _, _, c in PERFT_ROOTS]),
             perft_counts=np.array([[c[d] for d in sorted(c)] for _, _, c in PERFT_ROOTS]))
    out = tmp_path / "record.json"
    assert gpubench.main([str(jobs), "--out", str(out), "--backend", "opencl:pocl",
                          "--split", "300/100", "--device-split", "50/0"]) == 0
    record = json.loads(out.read_text())
    assert record["check"] == {**record["check"], "jobs": 24, "mismatches": 0}
    assert all(p["correct"] for p in record["perft"]) and len(record["perft"]) == 4
    labels = [r["label"] for r in record["leaf_search"]["runs"]]
    assert "the largest job alone" in labels and labels[0] == "default"
    assert record["leaf_search"]["nodes"] == sum(r.nodes for r in expected)
    split = [r for r in record["leaf_search"]["runs"] if r["label"].startswith("split")]
    assert len(split) == 2 and all(r["same_as_whole_jobs"] for r in split)
    assert split[0]["split_jobs"] > 0 and split[1]["split_points"] > 0


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
