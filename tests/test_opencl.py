"""The OpenCL backend against the model, on PoCL (the CPU platform pip installs).

- search: score, best move, node count and principal variation equal to the model's on more
  than 500 leaf jobs: depths 0 to 3, full and narrow windows (fail high and fail low), tactical
  (quiescence-heavy) positions, mates, stalemates, the perft suites' special positions,
  random-play and sparse random positions; all jobs of a group in one launch;
- the stack-full rule (MAX_PLY) on a kernel built with a small MAX_PLY against the model
  patched alike;
- moves: the legal moves in the contract's generation order;
- errors: an unknown platform, no OpenCL platform at all and a kernel that does not build are
  one line and exit status 1; bad jobs are refused before they reach the device.

Perft is in test_opencl_perft.py.
"""

import json
import os
import subprocess
import sys
import time

import chess
import pytest

from chessaccel.contract.defs import INF, MATE
from chessaccel.contract.geometry import move_uci
from chessaccel.host.cli import main
from chessaccel.host.opencl import OpenCLBackend, OpenCLError
from chessaccel.host.opencl import device as opencl_device
from chessaccel.contract.bench import BENCH
from chessaccel.model import search as model_search_module
from chessaccel.model.movegen import legal_moves
from chessaccel.model.search import SearchError, job_problem, search as model_search

import suites

#: PoCL's platform: its vendor is "The pocl project" (the name "Portable Computing Language").
POCL = "opencl:pocl"


@pytest.fixture(scope="module")
def backend():
    b = OpenCLBackend("pocl")
    yield b
    b.close()


def _uci(move):
    return move_uci(move) if move else None


def assert_same_as_model(backend, jobs, pv=True):
    """Run ``jobs`` (fen, depth, alpha, beta) in one launch and compare each with the model."""
    boards = [suites.board_of(fen) for fen, *_ in jobs]
    started = time.perf_counter()
    results = backend.search_many([(b, d, a, be) for b, (_, d, a, be) in zip(boards, jobs)], pv=pv)
    elapsed = time.perf_counter() - started
    assert backend.last_run["jobs"] == len(jobs), "the group ran in one launch"
    assert 0 < backend.last_run["seconds"] <= elapsed, "the kernel's time, within the call's"
    mismatches = []
    for (fen, depth, alpha, beta), board, got in zip(jobs, boards, results):
        want = model_search(board, depth, alpha, beta)
        want_pv = [_uci(m) for m in want.pv] if pv else ([_uci(want.best_move)] if want.best_move else [])
        g = (got["score"], _uci(got["best_move"]), got["nodes"], [_uci(m) for m in got["pv"]])
        w = (want.score, _uci(want.best_move), want.nodes, want_pv)
        if g != w:
            mismatches.append(f"{fen} depth {depth} ({alpha}, {beta}): opencl {g}, model {w}")
    assert not mismatches, f"{len(mismatches)} of {len(jobs)} jobs differ, first: {mismatches[:3]}"
    return results


# --- the job groups (over 500 jobs in all) -------------------------------------------------

RANDOM_PLAY = suites.random_play_positions(1010, 80, plies=70)
TACTICAL = [" ".join(line.split()[:4]) for _, line in suites.suite_lines("wac.epd")[:40]] + \
           [" ".join(line.split()[:4]) for _, line in suites.suite_lines("bratko-kopec.epd")]
MATES = suites.fens("mate1.fen")[:24]
STALEMATES = [fen for name in ("stalemate0.fen", "stalemate1.fen", "stalemate2.fen")
              for fen in suites.fens(name)]
SPECIAL = [r.fen for r in suites.perft_records(("perftsuite.epd", "perft-stress.epd"))][:40]
SPARSE = [suites.sparse_position(seed, pieces, plies)
          for seed, pieces, plies in zip(range(40), [2, 3, 4, 5, 6] * 8, [0, 2, 4, 6] * 10)]


def test_random_play_positions_at_depths_0_to_2(backend):
    assert_same_as_model(backend, [(fen, depth, -INF, INF)
                                   for fen in RANDOM_PLAY for depth in (0, 1, 2)])


def test_narrow_windows_fail_high_and_low_like_the_model(backend):
    jobs = []
    for fen in RANDOM_PLAY[:30]:
        v = model_search(suites.board_of(fen), 2).score
        jobs += [(fen, 2, v - 1, v + 1), (fen, 2, v, v + 1), (fen, 2, v + 30, v + 31),
                 (fen, 2, v - 31, v - 30)]
    assert_same_as_model(backend, [(f, d, max(a, -INF), min(b, INF)) for f, d, a, b in jobs])


def test_depth_three_and_the_bench_set(backend):
    jobs = [(fen, 3, -INF, INF) for fen in RANDOM_PLAY[::12]]
    jobs += [(job.fen, min(job.depth, 2), -INF, INF) for job in BENCH]
    assert_same_as_model(backend, jobs)


def test_tactical_positions_quiescence_heavy(backend):
    assert_same_as_model(backend, [(fen, depth, -INF, INF) for fen in TACTICAL for depth in (0, 1)])


def test_mates_and_stalemates(backend):
    jobs = [(fen, depth, -INF, INF) for fen in MATES for depth in (1, 2)]
    jobs += [(fen, depth, -INF, INF) for fen in STALEMATES for depth in (0, 1, 2)]
    results = assert_same_as_model(backend, jobs)
    assert all(r["score"] == MATE - 1 for r in results[:len(MATES) * 2:2]), "mate in 1 at depth 1"


def test_castling_en_passant_and_promotion_positions(backend):
    assert_same_as_model(backend, [(fen, depth, -INF, INF) for fen in SPECIAL for depth in (1, 2)])


def test_sparse_positions_at_depth_three(backend):
    assert_same_as_model(backend, [(fen, 3, -INF, INF) for fen in SPARSE])


def test_stack_full_rule_with_a_small_max_ply():
    """A kernel built with MAX_PLY = 4 evaluates at ply 4 exactly as the model does with the
    same limit: depth-3 searches whose quiescence reaches past it."""
    small = OpenCLBackend("pocl", overrides={"MAX_PLY": 4})
    jobs = [(fen, depth, -INF, INF) for fen in TACTICAL[:12] for depth in (2, 3)]
    boards = [suites.board_of(fen) for fen, *_ in jobs]
    results = small.search_many([(b, d, a, be) for b, (_, d, a, be) in zip(boards, jobs)], pv=True)
    for (fen, depth, *_), board, got in zip(jobs, boards, results):
        want = model_search_module.search(board, depth, max_ply=4)
        assert (got["score"], got["best_move"], got["nodes"], got["pv"]) == \
               (want.score, want.best_move, want.nodes, want.pv), f"{fen} depth {depth}"
    full = OpenCLBackend("pocl").search_many([(boards[0], 3, -INF, INF)])[0]
    assert full["nodes"] != results[1]["nodes"], "the limit changed the tree"


# --- moves -----------------------------------------------------------------------------------

def test_moves_in_generation_order(backend):
    fens = RANDOM_PLAY + SPECIAL + STALEMATES + MATES + suites.random_play_positions(77, 300)
    boards = [suites.board_of(fen) for fen in fens]
    got = backend.moves_many(boards)
    for fen, board, moves in zip(fens, boards, got):
        assert moves == legal_moves(board), fen


# --- the batch interface -----------------------------------------------------------------------

def test_search_many_takes_thousands_of_jobs_in_one_launch(backend):
    fens = suites.random_play_positions(99, 3000, plies=40)
    jobs = [(suites.board_of(fen), fen_index % 2, -INF, INF) for fen_index, fen in enumerate(fens)]
    results = backend.search_many(jobs)
    assert backend.last_run["jobs"] == 3000
    for (board, depth, alpha, beta), got in list(zip(jobs, results))[::97]:
        want = model_search(board, depth, alpha, beta)
        assert (got["score"], got["best_move"], got["nodes"]) == (want.score, want.best_move, want.nodes)
        assert got["pv"] == ([want.best_move] if want.best_move else []) and got["cycles"] is None


def test_results_do_not_depend_on_the_launch_shape():
    jobs = [(suites.board_of(fen), 2, -INF, INF) for fen in RANDOM_PLAY[:30]]
    a = OpenCLBackend("pocl", local_size=1, threads_per_unit=1).search_many(jobs)
    b = OpenCLBackend("pocl", local_size=4, threads_per_unit=8).search_many(jobs)
    assert a == b


def assert_searches_and_counts_as_the_model(backend):
    """A program built with other switches: 50 jobs at depth 2 equal the model's, and the start
    position's perft 4 its published count."""
    assert_same_as_model(backend, [(fen, 2, -INF, INF) for fen in RANDOM_PLAY[:40] + TACTICAL[:10]])
    assert backend.perft(suites.board_of(chess.STARTING_FEN), 4)["nodes"] == 197281


def test_the_vector_shuffle_byte_swap_searches_the_same():
    """BYTE_SWAP_HALVES = 0 (the flip's byte swap as the vector shuffle it was before the
    32-bit halves became every program's default) gives the model's results too. With OpenCL's
    own functions (CPU_BUILTINS 0), as on a GPU: PoCL's builtin swaps bytes whatever the switch."""
    overrides = {"BYTE_SWAP_HALVES": 0, "CPU_BUILTINS": 0}
    old = OpenCLBackend("pocl", overrides=overrides)
    source = opencl_device.kernel_source(overrides)
    assert "#define BYTE_SWAP_HALVES 0" in source and "#define CPU_BUILTINS 0" in source
    assert old.device.overrides["CPU_BUILTINS"] == 0
    assert_searches_and_counts_as_the_model(old)


def test_pocl_builds_clangs_builtins_and_opencls_own_search_the_same(backend):
    """PoCL builds CPU_BUILTINS = 1 (board.cl's byte swap, lowest bit and popcount as Clang's
    builtins); 0, OpenCL's own functions, is what every other device builds: the tests run on
    PoCL, so that code is held to the model here."""
    assert backend.device.overrides["CPU_BUILTINS"] == 1
    assert "#define CPU_BUILTINS 0" in opencl_device.kernel_source()
    plain = OpenCLBackend("pocl", overrides={"CPU_BUILTINS": 0})
    try:
        assert plain.device.overrides["CPU_BUILTINS"] == 0
        assert_searches_and_counts_as_the_model(plain)
    finally:
        plain.close()


@pytest.mark.parametrize("job, problem", [
    ((chess.STARTING_FEN, 9, -INF, INF), "depth"),
    ((chess.STARTING_FEN, -1, -INF, INF), "depth"),
    ((chess.STARTING_FEN, 2, 5, 5), "window"),
    ((chess.STARTING_FEN, 2, -INF - 1, INF), "window"),
])
def test_bad_jobs_are_refused_before_the_device(backend, job, problem):
    """Refused with the model's very words (the error line is the interface)."""
    fen, depth, alpha, beta = job
    with pytest.raises(SearchError, match=problem) as refused:
        backend.search_many([(suites.board_of(fen), depth, alpha, beta)])
    assert str(refused.value) == job_problem(suites.board_of(fen), depth, alpha, beta)


def test_a_position_without_exactly_one_king_each_is_refused(backend):
    board = suites.board_of(chess.STARTING_FEN)
    board.sq[4] = 0     # the white king removed behind the parser's back
    with pytest.raises(SearchError, match="white kings"):
        backend.search_many([(board, 1, -INF, INF)])
    assert backend.search_many([]) == []


def test_a_device_index_past_the_platforms_devices_is_one_backend_error(backend):
    """PoCL has one device: opencl:Portable:0 is it, opencl:Portable:1 is a clear error when the
    device is first needed (as every device failure: exit 1, not bad input)."""
    from chessaccel.host.backends import BackendError, get_backend
    board = suites.board_of(chess.STARTING_FEN)
    first = get_backend("opencl:Portable:0")
    assert first.name == "opencl:Portable:0" and first.device.name == backend.device.name
    assert first.moves(board) == backend.moves(board)
    second = get_backend("opencl:Portable:1")
    with pytest.raises(BackendError) as error:
        second.moves(board)
    assert str(error.value) == ("OpenCL platform 'Portable Computing Language' has 1 device(s) "
                                "(0..0): no device 1")


def test_one_context_per_process_and_pocls_cache_holds_the_program(backend):
    backend.device
    assert opencl_device.open_device("pocl") is backend.device, "one context per process"
    again = opencl_device.open_device("pocl", fresh=True)
    assert again is not backend.device and not again.from_cache
    assert any((opencl_device.cache_dir() / "pocl").rglob("program.bc")), "PoCL's own cache"


# --- the command line ---------------------------------------------------------------------------

def run_json(capsys, *argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_commands_on_pocl_agree_with_the_model(capsys):
    kiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
    for argv in (["moves", kiwipete], ["search", kiwipete, "--depth", "2"],
                 ["perft", kiwipete, "--depth", "2", "--divide"]):
        on_pocl, on_model = run_json(capsys, *argv, "--backend", POCL), run_json(capsys, *argv)
        on_pocl.pop("seconds", None)
        on_model.pop("seconds", None)
        assert on_pocl == on_model, argv
    obj = run_json(capsys, "perft", "startpos", "--depth", "3", "--backend", POCL,
                   "--count-mode", "make")
    assert (obj["nodes"], obj["count_mode"]) == (8902, "make")


def test_cli_bench_on_pocl(capsys, tmp_path):
    obj = run_json(capsys, "bench", "--backend", POCL, "--out", str(tmp_path / "bench.json"))
    assert obj["signature"] == sum(p["nodes"] for p in obj["positions"])
    assert "Portable" in obj["device"] and obj["cycles"] is None
    for p in obj["positions"][:3]:
        want = model_search(suites.board_of(p["fen"]), p["depth"])
        assert (p["nodes"], p["score"]) == (want.nodes, want.score)


def one_line_error(capsys, argv, code=1):
    assert main(argv) == code
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert captured.out == "" and len(lines) == 1 and lines[0].startswith("chessaccel: error:")
    return lines[0]


def test_unknown_platform_is_one_line_exit_1(capsys):
    line = one_line_error(capsys, ["search", "startpos", "--depth", "1", "--backend", "opencl:quantum"])
    assert "no OpenCL platform matches 'quantum'" in line and "Portable Computing Language" in line


def test_empty_platform_name_is_bad_input(capsys):
    assert "platform name" in one_line_error(capsys, ["moves", "startpos", "--backend", "opencl:"], 2)


def test_bulk_counting_needs_the_opencl_backend(capsys):
    line = one_line_error(capsys, ["perft", "startpos", "--depth", "1", "--count-mode", "bulk"], 2)
    assert "opencl" in line


def test_kernel_build_error_is_one_line_exit_1(capsys, monkeypatch):
    source = opencl_device.kernel_source()
    monkeypatch.setattr(opencl_device, "_OPEN", {})       # open (and build) the device again
    monkeypatch.setattr(opencl_device, "kernel_source",
                        lambda overrides=None: source + "\n__kernel void broken(void) { undeclared = 1; }\n")
    line = one_line_error(capsys, ["moves", "startpos", "--backend", POCL])
    assert "kernel build failed" in line and "undeclared" in line


def test_no_opencl_platform_is_one_line_exit_1(tmp_path):
    env = {**os.environ, "OCL_ICD_VENDORS": str(tmp_path / "no-vendors")}
    r = subprocess.run([sys.executable, "-m", "chessaccel.host.cli", "perft", "startpos",
                        "--depth", "1", "--backend", "opencl"], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [
        "chessaccel: error: no OpenCL platform found (install a GPU driver's OpenCL ICD, "
        "or PoCL: pip install 'pyopencl[pocl]')"]


def test_the_backends_name_is_its_spec():
    """An OpenCL backend is named as --backend names it (opencl, opencl:PLATFORM): the name
    that error lines and records carry."""
    from chessaccel.host.backends import get_backend
    for spec in ("opencl", "opencl:pocl"):
        backend = get_backend(spec)
        try:
            assert backend.name == spec
        finally:
            backend.close()
