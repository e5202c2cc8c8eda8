"""The job files the OpenCL benchmarks run: leaf jobs and the perft roots, packed.

Two kinds of leaf jobs:

- **full window** (the default): every position three plies below each position of the bench
  set (contract/bench.py), reached by the contract's legal moves, searched to depth 3 with the full
  window (483,504 jobs): the last plies of a 6-ply search whose top 3 plies the host searched
  as plain minimax. No real search hands out these jobs: an alpha-beta host narrows most
  windows (to null windows under PVS) and never visits most of these positions. The batch is
  the worst case, bound by its longest jobs (docs/opencl.md).
- **from a search** (``--from-search DEPTH``): the jobs the host engine really hands its
  executor while it searches each bench position to DEPTH (engine/search.py: iterative
  deepening from depth 1, a fresh 16 MiB table per position, aspiration, PVS, killers;
  ``--hardware-plies`` plies per job, 3 by default), recorded in submission order
  (engine/recorder.py) with their depth and window, speculative ones included: the jobs a cutoff
  made useless were handed out too. The search runs on ``--backend`` (the OpenCL backend,
  PoCL here); with it the engine hands out the eldest brother's job alone, then its brothers
  in one batch, and the jobs do not depend on timing (engine/recorder.py says why), so the
  same command writes the same jobs. The file holds them as one batch: the engine itself hands
  them out one to a few dozen at a time (the eldest brother alone), over the whole search.

Perft roots: the start position and Kiwipete.

A check sample (every CHECK_STRIDE-th job) carries its expected score, best move and node
count, computed by the OpenCL backend on the device at hand (PoCL here); a sub-sample of those
is first compared with the Python model, so the file's expectations are the contract's (for
jobs from a search, the sample is also compared with the results the search was given). The
device runner (gpubench) compares every sampled job on the GPU with them.

    python -m chessaccel.lab.benchjobs out/opencl/jobs.npz
    python -m chessaccel.lab.benchjobs --from-search 8 out/opencl/search-jobs.npz

The file is a numpy .npz (positions in the kernels' layout, so the device needs neither
python-chess nor the model to run it).
"""

import argparse
import sys
import time

import numpy as np

from chessaccel.contract.errors import first_line
from chessaccel.contract.defs import INF, MAX_DEPTH
from chessaccel.contract.bench import BENCH
from chessaccel.model.position import parse_position
from chessaccel.model.movegen import legal_moves
from chessaccel.model.search import search as model_search
from chessaccel.host.opencl.layout import pack_positions

__all__ = ["leaf_boards", "PERFT_ROOTS", "LEAF_PLIES", "LEAF_DEPTH", "CHECK_STRIDE", "build",
           "search_jobs", "build_from_search", "SEARCH_HARDWARE_PLIES", "job_statistics"]

LEAF_PLIES = 3
LEAF_DEPTH = 3
CHECK_STRIDE = 100
#: Every MODEL_STRIDE-th checked job is also searched by the Python model.
MODEL_STRIDE = 50
#: Plies per job of the recorded searches (the engine's default HardwarePlies).
SEARCH_HARDWARE_PLIES = 3
#: Deepest host search --from-search takes (engine/search.py's MAX_ITERATION).
MAX_SEARCH_DEPTH = 64

#: (name, FEN, published perft counts by depth)
PERFT_ROOTS = (
    ("startpos", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
     {5: 4865609, 6: 119060324, 7: 3195901860, 8: 84998978956}),
    ("kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
     {4: 4085603, 5: 193690690, 6: 8031647685, 7: 374190009323}),
)


def leaf_boards(plies=LEAF_PLIES):
    """(bench index, board) of every position ``plies`` below each bench position, in bench
    order and the contract's move order."""
    out = []

    def walk(index, board, left):
        if left == 0:
            out.append((index, board.copy()))
            return
        for move in legal_moves(board):
            undo = board.make(move)
            walk(index, board, left - 1)
            board.unmake(move, undo)

    for index, job in enumerate(BENCH):
        walk(index, parse_position(job.fen)[0], plies)
    return out


def build(path, backend=None, progress=sys.stderr, leaves=None):
    """Write the full-window job file to ``path``. ``leaves``: the (bench index, board) jobs,
    by default leaf_boards() of the whole bench set (minutes); a test gives a few."""
    t0 = time.perf_counter()
    leaves = leaf_boards() if leaves is None else leaves
    boards = [b for _, b in leaves]
    n = len(boards)
    params = np.zeros((n, 4), dtype=np.int32)
    params[:, 0] = LEAF_DEPTH
    params[:, 1] = -INF
    params[:, 2] = INF
    print(f"{n} leaf jobs ({time.perf_counter() - t0:.1f} s)", file=progress)
    return _write(path, boards, params, [i for i, _ in leaves], backend, progress)


def _write(path, boards, params, index, backend, progress, recorded=None, extra=None):
    """The job file: the jobs, their check sample (expected results from ``backend``, a
    sub-sample checked against the model and, where given, against the results ``recorded``
    (per job: score and node count, or None)), the perft roots and ``extra`` fields."""
    from chessaccel.host.opencl import OpenCLBackend
    positions = pack_positions(boards)
    n = len(boards)
    check = np.arange(0, n, CHECK_STRIDE)
    backend = backend or OpenCLBackend()
    t0 = time.perf_counter()
    raw = backend.run_search(positions[check], params[check])
    print(f"check sample: {len(check)} jobs, {int(raw['nodes'].sum())} nodes on "
          f"{backend.describe()} ({time.perf_counter() - t0:.1f} s)", file=progress)
    if recorded is not None:
        compared = 0
        for k, i in enumerate(check):
            if recorded[i] is None:
                continue
            if recorded[i] != (int(raw["scores"][k]), int(raw["nodes"][k])):
                raise SystemExit(f"job {i}: {backend.describe()} now gives (score, nodes) "
                                 f"{(int(raw['scores'][k]), int(raw['nodes'][k]))}, the search "
                                 f"was given {recorded[i]}")
            compared += 1
        print(f"the search was given the same scores and node counts on {compared} of them",
              file=progress)
    t0 = time.perf_counter()
    model_checked = 0
    for k in range(0, len(check), MODEL_STRIDE):
        board = boards[check[k]]
        depth, alpha, beta = (int(x) for x in params[check[k], :3])
        r = model_search(board, depth, alpha, beta)
        got = backend.search_many([(board, depth, alpha, beta)])[0]
        if (r.score, r.best_move, r.nodes) != (got["score"], got["best_move"], got["nodes"]) \
                or r.nodes != int(raw["nodes"][k]) or r.score != int(raw["scores"][k]):
            raise SystemExit(f"job {check[k]}: the model and {backend.describe()} disagree")
        model_checked += 1
    print(f"model agrees on {model_checked} of them ({time.perf_counter() - t0:.1f} s)",
          file=progress)

    roots = pack_positions([parse_position(fen)[0] for _, fen, _ in PERFT_ROOTS])
    np.savez_compressed(
        path, positions=positions, params=params,
        bench_index=np.array(index, dtype=np.int16),
        sides=np.array([b.side for b in boards], dtype=np.uint8),
        check_index=check.astype(np.int64), check_scores=raw["scores"],
        check_best_moves=raw["best_moves"], check_nodes=raw["nodes"],
        model_checked=np.int64(model_checked),
        perft_names=np.array([name for name, _, _ in PERFT_ROOTS]),
        perft_positions=roots,
        perft_depths=np.array([sorted(c) for _, _, c in PERFT_ROOTS], dtype=np.int64),
        perft_counts=np.array([[c[d] for d in sorted(c)] for _, _, c in PERFT_ROOTS],
                              dtype=np.int64),
        reference_device=np.array(backend.describe()), **(extra or {}))
    return path


def search_jobs(depth, hardware_plies=SEARCH_HARDWARE_PLIES, positions=BENCH, spec="opencl",
                progress=sys.stderr):
    """Record the jobs the host engine hands its executor (backend ``spec``) while it searches
    each of ``positions`` (BenchJobs: their FEN is used, their depth is not) to ``depth``, as
    hostbench.search_bench sets a search up. Returns (recorder, [position index per job],
    [SearchResult per position])."""
    import chess
    from chessaccel.host.backends import BackendError
    from chessaccel.host.engine.executors import make_executor
    from chessaccel.host.engine.recorder import RecordingExecutor
    from chessaccel.host.engine.search import HostSearch, Limits, SearchOptions
    from chessaccel.host.engine.tt import TranspositionTable
    recorder = RecordingExecutor(make_executor(spec))
    index, results = [], []
    try:
        for i, job in enumerate(positions):
            t0 = time.perf_counter()
            first = len(recorder.jobs)
            search = HostSearch(recorder, TranspositionTable(16),
                                SearchOptions(hardware_plies=hardware_plies))
            result = search.search(chess.Board(job.fen), Limits(depth=depth))
            if result.error:
                raise BackendError(result.error)
            handed = len(recorder.jobs) - first
            index.extend([i] * handed)
            results.append(result)
            print(f"  {job.name:12s} depth {result.depth} score {result.score:6d} "
                  f"{result.best_move.uci() if result.best_move else '-':6s} jobs handed out "
                  f"{handed:7d} (used {result.jobs}), accelerator nodes "
                  f"{result.accelerator_nodes + result.speculative_nodes:11d} "
                  f"({time.perf_counter() - t0:.1f} s)", file=progress, flush=True)
    finally:
        recorder.close()
    return recorder, index, results


def job_statistics(params, nodes, submission=None):
    """Figures of a batch of leaf jobs: ``params`` (N, 4) depth/alpha/beta, ``nodes`` per job
    (negative: unknown), ``submission`` the executor call of each job."""
    params = np.asarray(params)
    nodes = np.asarray(nodes, dtype=np.int64)
    known = nodes[nodes >= 0]
    width = params[:, 2].astype(np.int64) - params[:, 1]
    out = {"jobs": int(len(params)), "nodes": int(known.sum()),
           "jobs_without_result": int((nodes < 0).sum()),
           "null_window_jobs": int((width == 1).sum()),
           "full_window_jobs": int(((params[:, 1] == -INF) & (params[:, 2] == INF)).sum()),
           "depths": {int(d): int(c) for d, c in zip(*np.unique(params[:, 0], return_counts=True))},
           "nodes_per_job_quantiles": {str(q): int(np.quantile(known, q))
                                       for q in (0, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1)}
           if len(known) else {},
           "mean_nodes_per_job": round(float(known.mean()), 1) if len(known) else None}
    if submission is not None:
        sizes = np.bincount(np.asarray(submission))
        sizes = sizes[sizes > 0]
        out.update(submissions=int(len(sizes)), lone_jobs=int((sizes == 1).sum()),
                   jobs_per_submission_quantiles={str(q): int(np.quantile(sizes, q))
                                                  for q in (0.5, 0.9, 0.99, 1)})
    return out


def build_from_search(path, depth, hardware_plies=SEARCH_HARDWARE_PLIES, positions=BENCH,
                      spec="opencl", backend=None, progress=sys.stderr):
    """Write the job file of the jobs real host searches hand out (search_jobs) to ``path``;
    ``backend`` computes the check sample (default: the one ``spec`` names). Returns
    job_statistics of the batch."""
    if not 1 <= depth <= MAX_SEARCH_DEPTH:
        raise ValueError(f"search depth {depth} out of range 1..{MAX_SEARCH_DEPTH}")
    if not 0 <= hardware_plies <= MAX_DEPTH:
        raise ValueError(f"hardware plies {hardware_plies} out of range 0..{MAX_DEPTH}")
    t0 = time.perf_counter()
    print(f"searching {len(positions)} positions to depth {depth}, {hardware_plies} plies per "
          f"job, on {spec}:", file=progress, flush=True)
    recorder, index, results = search_jobs(depth, hardware_plies, positions, spec, progress)
    jobs = recorder.jobs
    answers = recorder.results()
    submission = np.repeat(np.arange(len(recorder.submissions), dtype=np.int32),
                           [s.count for s in recorder.submissions])
    params = np.zeros((len(jobs), 4), dtype=np.int32)
    params[:, 0] = [j.depth for j in jobs]
    params[:, 1] = [j.alpha for j in jobs]
    params[:, 2] = [j.beta for j in jobs]
    nodes = np.array([-1 if r is None else r["nodes"] for r in answers], dtype=np.int64)
    stats = job_statistics(params, nodes, submission)
    print(f"{stats['jobs']} jobs recorded in {stats['submissions']} submissions, "
          f"{stats['nodes']} nodes ({time.perf_counter() - t0:.1f} s)", file=progress, flush=True)
    if backend is None:
        from chessaccel.host.backends import get_backend
        backend = get_backend(spec)
    recorded = [None if r is None else (r["score"], r["nodes"]) for r in answers]
    extra = {"source": np.array("search"), "search_depth": np.int64(depth),
             "hardware_plies": np.int64(hardware_plies),
             "position_names": np.array([p.name for p in positions]),
             "position_fens": np.array([p.fen for p in positions]),
             "submission": submission,
             "submission_inline": np.array([s.inline for s in recorder.submissions]),
             "recorded_nodes": nodes,
             "recorded_scores": np.array([0 if r is None else r["score"] for r in answers],
                                         dtype=np.int32),
             "search_scores": np.array([r.score for r in results], dtype=np.int32),
             "search_best_moves": np.array([r.best_move.uci() if r.best_move else ""
                                            for r in results]),
             "search_executor": np.array(recorder.name)}
    _write(path, [j.board for j in jobs], params, index, backend, progress, recorded, extra)
    return stats


def _print_statistics(stats, progress):
    q = stats["nodes_per_job_quantiles"]
    print(f"jobs {stats['jobs']}, nodes {stats['nodes']}, null windows "
          f"{stats['null_window_jobs']} ({100 * stats['null_window_jobs'] / stats['jobs']:.1f}%), "
          f"full windows {stats['full_window_jobs']}, depths {stats['depths']}", file=progress)
    print("nodes per job: " + ", ".join(f"{k} {v}" for k, v in q.items())
          + f"; mean {stats['mean_nodes_per_job']}", file=progress)
    print(f"submissions {stats['submissions']} (lone jobs {stats['lone_jobs']}), jobs per "
          f"submission: {stats['jobs_per_submission_quantiles']}", file=progress)


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m chessaccel.lab.benchjobs",
        description="Write an OpenCL benchmark job file: by default every position 3 plies "
                    "below each bench position, searched to depth 3 with the full window "
                    "(the worst case); with --from-search DEPTH the jobs the host engine hands "
                    "its executor while it searches each bench position to DEPTH.")
    p.add_argument("path", help="the .npz to write")
    p.add_argument("--from-search", type=int, metavar="DEPTH",
                   help="record the jobs of real host searches of the bench positions to DEPTH "
                        "(iterative deepening from 1; the jobs of every iteration, speculative "
                        f"ones included; 1..{MAX_SEARCH_DEPTH})")
    p.add_argument("--hardware-plies", type=int, default=SEARCH_HARDWARE_PLIES,
                   help=f"with --from-search: plies each job searches (0..{MAX_DEPTH}; default "
                        f"{SEARCH_HARDWARE_PLIES})")
    p.add_argument("--backend", default="opencl",
                   help="with --from-search: the backend the searches run on and the check "
                        "sample is computed by (default opencl: the first OpenCL device)")
    args = p.parse_args(argv)
    import os
    if args.from_search is None:
        if args.hardware_plies != SEARCH_HARDWARE_PLIES or args.backend != "opencl":
            print("benchjobs: error: --hardware-plies and --backend go with --from-search",
                  file=sys.stderr)
            return 1
        os.makedirs(os.path.dirname(os.path.abspath(args.path)), exist_ok=True)
        build(args.path)
    else:
        if not 1 <= args.from_search <= MAX_SEARCH_DEPTH:
            print(f"benchjobs: error: search depth {args.from_search} out of range "
                  f"1..{MAX_SEARCH_DEPTH}", file=sys.stderr)
            return 1
        if not 0 <= args.hardware_plies <= MAX_DEPTH:
            print(f"benchjobs: error: hardware plies {args.hardware_plies} out of range "
                  f"0..{MAX_DEPTH}", file=sys.stderr)
            return 1
        from chessaccel.host.backends import BackendError
        os.makedirs(os.path.dirname(os.path.abspath(args.path)), exist_ok=True)
        try:
            stats = build_from_search(args.path, args.from_search, args.hardware_plies,
                                      spec=args.backend)
        except BackendError as e:
            print(f"benchjobs: error: {first_line(e)}", file=sys.stderr)
            return 1
        _print_statistics(stats, sys.stderr)
    print(f"wrote {args.path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
