"""Long jobs split into their children (lab/hostsplit.py) on PoCL: the search kernel's node
budget and start ply, the node_children kernel, and split results equal to the whole jobs'
(score, best move, node count) and to the model's, with budgets small enough that nearly every
job is split several levels deep."""

import time

import numpy as np
import pytest

from chessaccel.contract.defs import INF, MATE
from chessaccel.host.opencl import OpenCLBackend
from chessaccel.host.opencl.layout import decode_moves, pack_positions
from chessaccel.lab.hostsplit import search_split
from chessaccel.model import search as model_search_module
from chessaccel.model.evaluate import evaluate
from chessaccel.model.testcheck import in_check as in_check_of
from chessaccel.model.movegen import legal_moves
from chessaccel.model.search import search as model_search

import suites

TACTICAL = [" ".join(line.split()[:4]) for _, line in suites.suite_lines("wac.epd")[:10]]
MATES = suites.fens("mate1.fen")[:4] + suites.fens("mate2.fen")[:4]
STALEMATES = suites.fens("stalemate1.fen")[:4]
RANDOM_PLAY = suites.random_play_positions(2024, 12, plies=50)


@pytest.fixture(scope="module")
def backend():
    b = OpenCLBackend("pocl")
    yield b
    b.close()


def _packed(jobs):
    boards = [suites.board_of(fen) for fen, *_ in jobs]
    params = np.array([(d, a, b, 0) for _, d, a, b in jobs], dtype=np.int32)
    return boards, pack_positions(boards), params


JOBS = ([(fen, 2, -INF, INF) for fen in TACTICAL + RANDOM_PLAY]
        + [(fen, 3, -INF, INF) for fen in MATES + STALEMATES]
        + [(fen, 2, -50, 50) for fen in RANDOM_PLAY[:6]]        # narrow windows: fail high / low
        + [(fen, 1, 30, 31) for fen in TACTICAL[:6]])


def test_a_job_over_its_node_budget_is_given_up(backend):
    _, positions, params = _packed(JOBS)
    whole = backend.run_search(positions, params)
    budget = int(np.median(whole["nodes"]))
    limited = backend.run_search(positions, params, node_budget=budget)
    over = whole["nodes"] > budget
    assert over.any() and not over.all()
    assert (limited["nodes"][over] == 0).all()
    for key in ("scores", "best_moves", "nodes"):
        assert (limited[key][~over] == whole[key][~over]).all(), key


def test_a_job_started_below_the_root_scores_mates_from_its_ply(backend):
    boards, positions, params = _packed([(fen, 1, -INF, INF) for fen in suites.fens("mate1.fen")[:3]])
    params[:, 3] = 5
    raw = backend.run_search(positions, params)
    assert (raw["scores"] == MATE - 6).all(), "mate in one found at ply 5 scores MATE - 6"


def test_node_children_sees_what_the_search_enters(backend):
    """In check, the stand-pat value and the legal children in generation order (captures
    only in quiescence), each child position the one the move makes."""
    fens = TACTICAL + STALEMATES + MATES + RANDOM_PLAY
    boards, positions, _ = _packed([(fen, 0, 0, 0) for fen in fens])
    for depth in (0, 1):
        params = np.array([(depth, 0, 0, 0)] * len(fens), dtype=np.int32)
        seen = backend.node_children(positions, params)
        for i, (fen, board) in enumerate(zip(fens, boards)):
            in_check = in_check_of(board, board.side)
            assert bool(seen["in_check"][i]) == in_check, fen
            assert seen["stand_pat"][i] == evaluate(board), fen
            moves = legal_moves(board, captures_only=depth == 0 and not in_check)
            count = int(seen["counts"][i])
            assert len(seen["moves"][i]) == len(seen["children"][i]) == count, "only the real children"
            assert decode_moves(seen["moves"][i], board.side == 1) == moves, f"{fen} depth {depth}"
            children = []
            for move in moves:
                child = board.copy()
                child.make(move)
                children.append(child)
            if children:
                assert (seen["children"][i] == pack_positions(children)).all(), fen


@pytest.mark.parametrize("budget, child_budget, eager", [(200, 60, False), (400, 150, True),
                                                         (60, 20, False)])
def test_split_jobs_equal_the_whole_jobs_and_the_model(backend, budget, child_budget, eager):
    boards, positions, params = _packed(JOBS)
    whole = backend.run_search(positions, params)
    split = search_split(backend, positions, params, budget=budget, child_budget=child_budget,
                         eager=eager)
    assert backend.last_run["split_jobs"] >= len(JOBS) // 3, "many jobs were split"
    assert backend.last_run["split_nodes"] > backend.last_run["split_jobs"], "and split again"
    differ = [f"{JOBS[i][0]} depth {JOBS[i][1]}: split {split['scores'][i]}/{split['nodes'][i]}, "
              f"whole {whole['scores'][i]}/{whole['nodes'][i]}"
              for i in range(len(JOBS))
              if (split["scores"][i], split["best_moves"][i], split["nodes"][i])
              != (whole["scores"][i], whole["best_moves"][i], whole["nodes"][i])]
    assert not differ, f"{len(differ)} of {len(JOBS)} split jobs differ, first: {differ[:3]}"
    assert_sample_is_the_models(split, boards, step=7)


def assert_sample_is_the_models(split, boards, step):
    """Every step-th job of JOBS: score, best move and node count are the model's."""
    for i in range(0, len(JOBS), step):
        fen, depth, alpha, beta = JOBS[i]
        want = model_search(boards[i], depth, alpha, beta)
        best = decode_moves(split["best_moves"][i:i + 1], boards[i].side == 1)[0]
        assert (int(split["scores"][i]), best, int(split["nodes"][i])) == \
               (want.score, want.best_move, want.nodes), fen


def test_split_jobs_keep_the_stack_full_rule():
    """With MAX_PLY = 4 a split child that reaches ply 4 is evaluated there, as the model does."""
    small = OpenCLBackend("pocl", overrides={"MAX_PLY": 4})
    jobs = [(fen, 3, -INF, INF) for fen in TACTICAL[:4]]
    boards, positions, params = _packed(jobs)
    split = search_split(small, positions, params, budget=60, child_budget=20)
    assert small.last_run["split_nodes"] > len(jobs)
    for i, board in enumerate(boards):
        want = model_search_module.search(board, 3, max_ply=4)
        assert (int(split["scores"][i]), int(split["nodes"][i])) == (want.score, want.nodes), jobs[i][0]


def test_budgets_must_be_positive(backend):
    _, positions, params = _packed(JOBS[:1])
    with pytest.raises(ValueError, match="positive"):
        search_split(backend, positions, params, budget=0)


# --- split on the device (search_jobs_split) --------------------------------------------------

@pytest.mark.parametrize("budget, min_depth, per_unit", [(10, 0, 8), (50, 1, 4), (200, 2, 8),
                                                         (1000, 1, 16)])
def test_device_split_jobs_equal_the_whole_jobs_and_the_model(budget, min_depth, per_unit):
    """Jobs publish their nodes once past a budget small enough that nearly every job is split
    at many nodes, and several lanes per compute unit take the parts: score, best move and node
    count equal the whole jobs' (and, for a sample, the model's)."""
    backend = OpenCLBackend("pocl", threads_per_unit=per_unit)
    boards, positions, params = _packed(JOBS)
    whole = backend.run_search(positions, params)
    started = time.perf_counter()
    split = backend.run_search_split(positions, params, split_budget=budget, min_depth=min_depth)
    elapsed = time.perf_counter() - started
    assert backend.last_run["split_points"] > len(JOBS) // 4, "many nodes were published"
    assert 0 < backend.last_run["seconds"] <= elapsed, "the kernel's time lies within the call's"
    for key in ("scores", "best_moves", "nodes"):
        assert (split[key] == whole[key]).all(), key
    assert_sample_is_the_models(split, boards, step=9)


def test_device_split_with_a_tail_budget():
    """A budget never reached while the queue holds jobs, a small one once it is empty: the
    batch's last jobs are split, with the same results."""
    backend = OpenCLBackend("pocl", threads_per_unit=2)
    jobs = [(TACTICAL[i], 3, -INF, INF) for i in (1, 2, 0)]   # 2,694, 15,358, 52,804 nodes
    boards, positions, params = _packed(jobs)
    whole = backend.run_search(positions, params)
    assert whole["nodes"].min() > 2000
    split = backend.run_search_split(positions, params, split_budget=1 << 40, min_depth=0,
                                     tail_budget=20)
    assert backend.last_run["split_points"] > 0 and backend.last_run["tail_budget"] == 20
    for key in ("scores", "best_moves", "nodes"):
        assert (split[key] == whole[key]).all(), key


@pytest.mark.parametrize("kernel", ["search_jobs", "search_jobs_split"])
def test_many_lanes_change_no_result(kernel):
    """Two warps of lanes and more taking jobs from the queue: every job is still searched
    once, to the same score, best move and node count as with one lane per compute unit."""
    one = OpenCLBackend("pocl", threads_per_unit=1)
    wide = OpenCLBackend("pocl", threads_per_unit=32)
    jobs = JOBS * 4
    boards, positions, params = _packed(jobs)
    whole = one.run_search(positions, params)
    if kernel == "search_jobs":
        many = wide.run_search(positions, params)
    else:
        many = wide.run_search_split(positions, params, split_budget=100, min_depth=0)
    assert wide.last_run["work_items"] >= 64 and wide.last_run["work_items"] % 32 == 0
    for key in ("scores", "best_moves", "nodes"):
        assert (many[key] == whole[key]).all(), key


def test_device_split_with_few_places_and_the_stack_full_rule():
    """A table of a few entries fills up (publishing then stops) and a kernel built with
    MAX_PLY = 4 evaluates a published child at ply 4 as the model does."""
    small = OpenCLBackend("pocl", threads_per_unit=8, overrides={"MAX_PLY": 4})
    jobs = [(fen, 3, -INF, INF) for fen in TACTICAL[:6]]
    boards, positions, params = _packed(jobs)
    for entries in (40, 1 << 12):
        split = small.run_search_split(positions, params, split_budget=20, min_depth=1,
                                       entries=entries, split_points=8)
        assert small.last_run["split_points"] >= 1
        for i, board in enumerate(boards):
            want = model_search_module.search(board, 3, max_ply=4)
            assert (int(split["scores"][i]), int(split["nodes"][i])) == (want.score, want.nodes), \
                jobs[i][0]


def test_node_children_in_chunks_when_memory_is_short(backend):
    """With a memory budget below one position's children, node_children runs one position per
    launch and returns what one launch over all of them returns."""
    fens = TACTICAL[:5]
    _, positions, _ = _packed([(fen, 0, 0, 0) for fen in fens])
    params = np.array([(1, 0, 0, 0)] * len(fens), dtype=np.int32)
    whole = backend.node_children(positions, params)
    short = OpenCLBackend("pocl", memory_fraction=1e-12)
    try:
        parts = short.node_children(positions, params)
        assert short.last_run["launches"] == len(fens)
    finally:
        short.close()
    for key in ("counts", "in_check", "stand_pat"):
        assert (parts[key] == whole[key]).all(), key
    for i, count in enumerate(whole["counts"]):
        assert count > 0
        for key in ("moves", "children"):
            assert len(parts[key][i]) == len(whole[key][i]) == count, (key, fens[i])
            assert (parts[key][i] == whole[key][i]).all(), (key, fens[i])


def test_device_split_with_every_idle_lane_kept_changes_no_result():
    """max_idle: every lane without work stays to help, with a small tail budget: the same
    results."""
    backend = OpenCLBackend("pocl", threads_per_unit=16)
    boards, positions, params = _packed(JOBS)
    whole = backend.run_search(positions, params)
    split = backend.run_search_split(positions, params, split_budget=200, min_depth=0,
                                     max_idle=1 << 20, tail_budget=20)
    assert backend.last_run["split_points"] > 0
    for key in ("scores", "best_moves", "nodes"):
        assert (split[key] == whole[key]).all(), key
