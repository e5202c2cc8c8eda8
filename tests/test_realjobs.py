"""The job file of real searches (benchjobs --from-search): the jobs recorded are the ones the
host engine hands its executor, in order, the same every run and on every backend, and the
file's check sample is the model's (PoCL; small searches)."""

import io
import json

import chess
import numpy as np
import pytest

from chessaccel.contract.defs import INF
from chessaccel.contract.bench import BENCH
from chessaccel.host.engine.executors import Job, make_executor
from chessaccel.host.engine.recorder import RecordingExecutor, ReplayExecutor, ReplayMismatch
from chessaccel.host.engine.search import HostSearch, Limits, SearchOptions
from chessaccel.host.engine.tt import TranspositionTable
from chessaccel.lab import benchjobs, gpubench
from chessaccel.host.opencl.layout import pack_positions, unpack_positions
from chessaccel.model.search import search as model_search

pytest.importorskip("pyopencl")

POCL = "opencl:pocl"
#: small searches: a few bench positions, shallow (the file's own are depth 8, 3 plies a job)
POSITIONS = BENCH[:4]
DEPTH, PLIES = 5, 2


def _search(executor, job, depth=DEPTH, plies=PLIES):
    search = HostSearch(executor, TranspositionTable(16), SearchOptions(hardware_plies=plies))
    return search.search(chess.Board(job.fen), Limits(depth=depth))


def _jobs_key(jobs):
    """The jobs as the kernels get them: positions in their layout, depth and window."""
    return (pack_positions([j.board for j in jobs]).tobytes(),
            [(j.board.side, j.depth, j.alpha, j.beta) for j in jobs])


@pytest.fixture(scope="module")
def record():
    """The searches of POSITIONS on PoCL, recorded: (recorder, results, search results)."""
    recorder = RecordingExecutor(make_executor(POCL))
    try:
        found = [_search(recorder, job) for job in POSITIONS]
    finally:
        recorder.close()
    return recorder, recorder.results(), found


def test_a_replayed_search_hands_out_exactly_the_recorded_jobs(record):
    """Each search run again through an executor that only answers from the record (and
    refuses any job that is not the next recorded one) hands out every recorded job, no
    other, in the same order, and finds the same score, best move and PV."""
    recorder, results, found = record
    assert len(recorder.jobs) > 300 and all(r is not None for r in results)
    assert sum(s.count for s in recorder.submissions) == len(recorder.jobs)
    assert {j.depth for j in recorder.jobs} == {1, 2}     # iterations 1-2, then 2 plies a job
    replay = ReplayExecutor(recorder.jobs, results, recorder)
    for job, first in zip(POSITIONS, found):
        again = _search(replay, job)
        assert (again.score, again.best_move, again.pv, again.jobs, again.accelerator_nodes) \
            == (first.score, first.best_move, first.pv, first.jobs, first.accelerator_nodes)
    assert replay.replayed == len(recorder.jobs)
    # the record holds every job handed out, the ones a cutoff made useless too
    used = sum(r.accelerator_nodes for r in found)
    unused = sum(r.speculative_nodes for r in found)
    assert unused > 0 and sum(r["nodes"] for r in results) == used + unused


def test_the_replay_refuses_a_job_that_differs_from_the_record(record):
    recorder, results, _ = record
    jobs = list(recorder.jobs)
    k = len(jobs) // 2
    jobs[k] = Job(jobs[k].board, jobs[k].depth, jobs[k].alpha - 1, jobs[k].beta)
    replay = ReplayExecutor(jobs, results, recorder)
    with pytest.raises(ReplayMismatch, match=f"job {k}: handed out"):
        for job in POSITIONS:
            _search(replay, job)
    assert replay.replayed == k
    short = ReplayExecutor(recorder.jobs[:-1], results[:-1], recorder)
    with pytest.raises(ReplayMismatch, match="the record holds"):     # one job too many
        for job in POSITIONS:
            _search(short, job)


def test_the_jobs_are_the_same_every_run_and_on_the_model(record):
    """The jobs depend on the results alone, which are the contract's: a second recording on
    PoCL and one on the Python model (a pool of one worker process) hand out the same jobs."""
    recorder, results, _ = record
    again = RecordingExecutor(make_executor(POCL))
    try:
        for job in POSITIONS:
            _search(again, job)
    finally:
        again.close()
    assert _jobs_key(again.jobs) == _jobs_key(recorder.jobs)
    assert again.submissions == recorder.submissions
    model = RecordingExecutor(make_executor("model"))
    try:
        for job in POSITIONS[:2]:       # the model is slow: two positions, shallower
            _search(model, job, depth=4)
    finally:
        model.close()
    pocl = RecordingExecutor(make_executor(POCL))
    try:
        for job in POSITIONS[:2]:
            _search(pocl, job, depth=4)
    finally:
        pocl.close()
    assert len(model.jobs) > 50 and _jobs_key(model.jobs) == _jobs_key(pocl.jobs)
    # the model's pool drops the jobs of a batch cut off before they start: no result
    answered = [(a, b) for a, b in zip(model.results(), pocl.results()) if a is not None]
    assert len(answered) > 50 and all(b is not None for b in pocl.results())
    assert [(a["score"], a["nodes"]) for a, _ in answered] \
        == [(b["score"], b["nodes"]) for _, b in answered]


def test_the_job_file_holds_the_recorded_jobs_and_the_models_results(record, tmp_path):
    """build_from_search writes the recorded jobs in order (positions, depth, window), the
    search each came from, the results the search was given, and a check sample whose
    expected results are the model's; gpubench runs it with no mismatch."""
    recorder, results, found = record
    path = tmp_path / "search-jobs.npz"
    progress = io.StringIO()
    stats = benchjobs.build_from_search(path, DEPTH, PLIES, POSITIONS, spec=POCL,
                                        progress=progress)
    assert f"{len(recorder.jobs)} jobs recorded" in progress.getvalue()
    data = np.load(path)
    assert str(data["source"]) == "search" and int(data["search_depth"]) == DEPTH
    assert int(data["hardware_plies"]) == PLIES
    assert data["positions"].tobytes() == pack_positions([j.board for j in recorder.jobs]).tobytes()
    assert data["params"][:, :3].tolist() == [[j.depth, j.alpha, j.beta] for j in recorder.jobs]
    assert (data["params"][:, 3] == 0).all()
    assert data["recorded_nodes"].tolist() == [r["nodes"] for r in results]
    assert data["recorded_scores"].tolist() == [r["score"] for r in results]
    assert data["search_scores"].tolist() == [r.score for r in found]
    sizes = np.bincount(data["submission"]).tolist()
    assert sizes == [s.count for s in recorder.submissions]
    index = data["bench_index"].tolist()
    assert index == sorted(index) and set(index) == set(range(len(POSITIONS)))
    # the check sample: every CHECK_STRIDE-th job, its expected result the model's
    check = data["check_index"]
    assert check.tolist() == list(range(0, len(recorder.jobs), benchjobs.CHECK_STRIDE))
    boards = unpack_positions(data["positions"][check], data["sides"][check])
    for k, (board, i) in enumerate(zip(boards, check)):
        depth, alpha, beta = (int(x) for x in data["params"][i, :3])
        want = model_search(board, depth, alpha, beta)
        assert (want.score, want.nodes) == (int(data["check_scores"][k]), int(data["check_nodes"][k]))
    assert int(data["model_checked"]) >= 1
    # the figures
    assert stats["jobs"] == len(recorder.jobs) and stats["nodes"] == sum(r["nodes"] for r in results)
    assert stats["null_window_jobs"] == sum(j.beta == j.alpha + 1 for j in recorder.jobs)
    assert stats["null_window_jobs"] > stats["jobs"] // 2
    assert stats["full_window_jobs"] == sum((j.alpha, j.beta) == (-INF, INF) for j in recorder.jobs)
    assert stats["submissions"] == len(recorder.submissions)
    out = tmp_path / "record.json"
    assert gpubench.main([str(path), "--out", str(out), "--backend", POCL,
                          "--perft-scale", "none", "--device-split", "50/0"]) == 0
    bench = json.loads(out.read_text())
    assert bench["check"]["mismatches"] == 0 and bench["check"]["jobs"] == len(check)
    assert bench["job_source"] == {"kind": "search", "search_depth": DEPTH,
                                   "hardware_plies": PLIES,
                                   "positions": [p.name for p in POSITIONS],
                                   "executor": POCL}
    assert bench["leaf_search"]["nodes"] == stats["nodes"] and bench["perft"] == []
    split = [r for r in bench["leaf_search"]["runs"] if r["label"].startswith("split on")]
    assert split and all(r["same_as_whole_jobs"] for r in split)


@pytest.mark.parametrize("argv, message", [
    (["--from-search", "0"], "search depth 0 out of range 1..64"),
    (["--from-search", "65"], "search depth 65 out of range 1..64"),
    (["--from-search", "3", "--hardware-plies", "9"], "hardware plies 9 out of range 0..8"),
    (["--hardware-plies", "2"], "--hardware-plies and --backend go with --from-search"),
])
def test_bad_input_gets_one_line_and_exit_1(argv, message, tmp_path, capsys):
    path = tmp_path / "jobs.npz"
    assert benchjobs.main(argv + [str(path)]) == 1
    err = capsys.readouterr().err
    assert message in err and err.startswith("benchjobs: error: ") and err.count("\n") == 1
    assert not path.exists()


def test_a_device_that_is_not_there_ends_the_recording_with_one_line(tmp_path, capsys):
    path = tmp_path / "jobs.npz"
    assert benchjobs.main(["--from-search", "2", "--backend", "opencl:quantum", str(path)]) == 1
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith("benchjobs: error: ") and "quantum" in last
    assert not path.exists()
