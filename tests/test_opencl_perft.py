"""OpenCL perft on PoCL: the published counts of the perft suites in both counting modes (bulk
at the last ply; every leaf made, as the accelerator does), divide in the contract's order, and
the breadth-first expansion however it is cut up (frontier size, leaf depth, memory chunks)."""

import chess
import numpy as np
import pytest

from chessaccel.host.opencl import OpenCLBackend
from chessaccel.host.opencl.layout import pack_positions
from chessaccel.model.search import perft_divide

import suites

#: Published counts up to this many leaves run by default; the rest under -m long.
FAST_LIMIT = 100_000
LONG_LIMIT = 50_000_000
RECORDS = suites.perft_records()
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


@pytest.fixture(scope="module")
def backend():
    b = OpenCLBackend("pocl")
    yield b
    b.close()


def check_suites(backend, low, high):
    wrong, checked = [], 0
    for record in RECORDS:
        board = suites.board_of(record.fen)
        for depth, count in sorted(record.counts.items()):
            if not low < count <= high:
                continue
            for mode in ("bulk", "make"):
                got = backend.perft(board, depth, count_mode=mode)["nodes"]
                checked += 1
                if got != count:
                    wrong.append(f"{record.id} perft {depth} ({mode}): {got}, published {count}")
    assert checked and not wrong, f"{len(wrong)} of {checked} wrong, first: {wrong[:3]}"
    return checked


def test_published_counts_both_modes(backend):
    assert check_suites(backend, 0, FAST_LIMIT) > 2000


@pytest.mark.long
def test_published_counts_both_modes_deeper(backend):
    check_suites(backend, FAST_LIMIT, LONG_LIMIT)


@pytest.mark.parametrize("fen, depth", [
    (KIWIPETE, 1),            # the shallowest divide: each root move counts itself
    (KIWIPETE, 3),
    ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 4),
    ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 3),
    ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 3),
])
def test_divide_is_the_models_in_generation_order(backend, fen, depth):
    board = suites.board_of(fen)
    want = perft_divide(board, depth)
    for mode in ("bulk", "make"):
        got = backend.perft(board, depth, divide=True, count_mode=mode)
        assert list(got["divide"].items()) == list(want.items())
        assert got["nodes"] == sum(want.values())


def test_depth_zero_and_positions_without_moves(backend):
    assert backend.perft(suites.board_of(KIWIPETE), 0)["nodes"] == 1
    mated = suites.board_of("R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1")
    stalemated = suites.board_of(next(fen for fen in suites.fens("stalemate0.fen")
                                      if chess.Board(fen).is_stalemate()))
    for board in (mated, stalemated):
        for mode in ("bulk", "make"):
            assert [backend.perft(board, d, count_mode=mode)["nodes"] for d in (0, 1, 2)] == [1, 0, 0]


@pytest.mark.parametrize("frontier_target, bulk_leaf_depth, memory_fraction", [
    (1, 1, 0.25),          # leaves one ply deep: expansion down to the last ply but one
    (10**6, 3, 0.25),      # expand until the frontier is huge
    (4, 2, 1e-9),          # a memory budget of one position: every parent expanded alone
])
def test_expansion_however_it_is_cut(frontier_target, bulk_leaf_depth, memory_fraction):
    b = OpenCLBackend("pocl", frontier_target=frontier_target, bulk_leaf_depth=bulk_leaf_depth,
                      make_leaf_depth=bulk_leaf_depth, memory_fraction=memory_fraction)
    roots = pack_positions([suites.board_of(KIWIPETE), suites.board_of(suites.fens("mate1.fen")[0])])
    kiwipete_3, mate_3 = 97862, b.perft_positions(roots[1:], 3, "make")
    for mode in ("bulk", "make"):
        assert b.perft_positions(roots, 3, mode) == kiwipete_3 + mate_3
    assert len(b.last_run["frontiers"]) >= 2


@pytest.fixture(scope="module")
def queued():
    """A backend whose expansion's levels are queued (PERFT_LEAF's QUEUED_LEVELS), with its
    kernels from the bulk kernels' program."""
    b = OpenCLBackend("pocl", overrides={"PERFT_LEAF": 2048 | 8192})
    yield b
    b.close()


@pytest.mark.parametrize("n", [1, 63, 64, 65, 64 * 3 + 5, 5000, 64 * 64 + 1, 64 * 200 + 7])
@pytest.mark.parametrize("which", ["backend", "queued"])
def test_the_prefix_sum_of_the_child_counts_on_the_device(request, which, n):
    """The expansion's offsets (scan_groups, the group totals' sum on the host or, queued, on
    the device by scan_totals, add_group_bases): the exclusive prefix sum of the counts, with
    the total, across every edge of the work-groups and of scan_totals' runs of totals."""
    backend = request.getfixturevalue(which)
    counts = np.random.default_rng(n).integers(0, 219, n).astype(np.uint32)
    counts[::7] = 0                                   # positions without a legal move
    offsets_buf = backend._buffer(nbytes=8 * (n + 1))
    total = backend._prefix_sum(backend._buffer(counts), n, offsets_buf)
    want = np.concatenate([[0], np.cumsum(counts, dtype=np.uint64)])
    got = backend._read(offsets_buf, np.uint64, n + 1)
    assert total == int(want[-1])
    assert (got == want).all(), f"first difference at {int(np.argmax(got != want))}"


def test_the_expansion_keeps_its_buffers_from_call_to_call():
    """The levels' device buffers are kept for the next perft (_pooled): a smaller call reuses
    them, a larger one replaces them, and the counts stay right either way."""
    b = OpenCLBackend("pocl", frontier_target=4)
    start, kiwipete = suites.board_of(chess.STARTING_FEN), suites.board_of(KIWIPETE)
    assert b.perft(start, 4)["nodes"] == 197281
    kept = {key: buf.size for key, buf in b._pool.items()}
    assert kept and any(key[0] == "children" for key in kept)
    assert b.perft(start, 3)["nodes"] == 8902
    assert {key: buf.size for key, buf in b._pool.items()} == kept
    assert b.perft(kiwipete, 4)["nodes"] == 4085603
    assert any(b._pool[key].size > size for key, size in kept.items() if key in b._pool)
    assert b.perft(start, 4)["nodes"] == 197281
    b.close()
    assert not b._pool


def test_last_run_times_the_leaf_kernel_apart_from_the_expansion(backend):
    """last_run's leaf_seconds (the bulk kernel, launch to finish) and stage_seconds (the
    expansion's count kernel, prefix sum, buffers and expand kernel), which opencl_perft_ab.py
    prints to tell the leaf kernel's time from the rest: each within the call's seconds."""
    backend.perft(suites.board_of(KIWIPETE), 3)
    run = backend.last_run
    assert set(run["stage_seconds"]) == {"count", "prefix", "buffers", "expand"}
    assert 0 < run["leaf_seconds"]
    assert run["leaf_seconds"] + sum(run["stage_seconds"].values()) <= run["seconds"]


#: Each switch set is a program of its own, built for each work-group size: some 15 s of PoCL's
#: compiler on a fresh machine (measured 2026-11-29). The fast tier builds the sets the devices
#: use and one with each switch the defaults leave out; each switch alone, where another set
#: already runs its code, is built under -m long.
_ALONE = pytest.mark.long


@pytest.mark.parametrize("switches", [
    {"PERFT_LOCAL_LINES": 1},                          # the attack tables in local memory
    pytest.param({"PERFT_LOCAL_LINES": 2}, marks=_ALONE),  # the same, the rank attacks as bytes
    pytest.param({"PERFT_MAXRREG": 64}, marks=_ALONE),     # a register cap (NVIDIA's only)
    {"PERFT_MAXRREG": 64, "PERFT_LOCAL_LINES": 1},
    # perft_bulk_2's lanes take their positions sorted
    pytest.param({"PERFT_SORT_LANES": 1}, marks=_ALONE),
    {"PERFT_SORT_LANES": 2, "PERFT_LOCAL_LINES": 2},   # perft_bulk_3's too
    # enemy sliders that reach the king's zone only
    pytest.param({"PERFT_COUNT": 1}, marks=_ALONE),
    pytest.param({"PERFT_COUNT": 2}, marks=_ALONE),    # one loop per kind of own piece
    # the flip's byte swap in 32-bit halves (OpenCL's functions, not PoCL's builtins, which
    # swap bytes in one instruction whatever the switch says)
    pytest.param({"PERFT_COUNT": 4, "CPU_BUILTINS": 0}, marks=_ALONE),
    pytest.param({"PERFT_COUNT": 8}, marks=_ALONE),    # a position's count in 32 bits
    # the GPU's before, and its default, with a GPU's OpenCL functions (CPU_BUILTINS 0)
    {"PERFT_COUNT": 15, "PERFT_SORT_LANES": 1, "PERFT_LOCAL_LINES": 2, "CPU_BUILTINS": 0},
    {"PERFT_MAGIC": 1},                                # the sliders by magic bitboards
    {"PERFT_COUNT": 15, "PERFT_SORT_LANES": 1, "PERFT_MAGIC": 1, "CPU_BUILTINS": 0},
    # the two-ply leaf's parent flipped once into its children's frame
    pytest.param({"PERFT_LEAF": 1, "CPU_BUILTINS": 0}, marks=_ALONE),
    # every change to the leaf (its board restored by making the move again, the tables'
    # pointer restrict, en passant and pinned pawns counted without making a move, 32-bit sum)
    {"PERFT_LEAF": 127},
    # the GPU's default before: the leaf without a move made in the count, registers capped at 64
    pytest.param({"PERFT_COUNT": 15, "PERFT_SORT_LANES": 1, "PERFT_MAGIC": 1, "PERFT_LEAF": 57,
                  "PERFT_MAXRREG": 64, "CPU_BUILTINS": 0}, marks=_ALONE),
    # the GPU's default: with the fused leaf (the last ply written as parent indices and moves,
    # made by the leaf kernel) and the pins from the between table
    {"PERFT_COUNT": 31, "PERFT_SORT_LANES": 1, "PERFT_MAGIC": 1, "PERFT_LEAF": 185,
     "PERFT_MAXRREG": 64, "CPU_BUILTINS": 0},
    # the lowest bit by popcount, the magic tables of fixed size (constant shift, no offset to
    # load), the leaf's children made without their victims' types, their planes in one pass,
    # the lanes ranked by a counting sort
    pytest.param({"PERFT_COUNT": 63, "PERFT_SORT_LANES": 1, "PERFT_MAGIC": 2, "PERFT_LEAF": 1465,
                  "PERFT_MAXRREG": 40, "CPU_BUILTINS": 0}, marks=_ALONE),
    # and the expansion's kernels from this program, expand_moves' children gathered in local
    # memory, the levels queued without waits, the top levels in one launch, expand in several
    # lanes a position (the GPU's default)
    {"PERFT_COUNT": 63, "PERFT_SORT_LANES": 1, "PERFT_MAGIC": 2, "PERFT_LEAF": 425401,
     "PERFT_MAXRREG": 40, "CPU_BUILTINS": 0},
    # the same bits beside the tables in local memory, whose program has no expansion kernels
    pytest.param({"PERFT_LEAF": 2048 | 8192, "PERFT_LOCAL_LINES": 2}, marks=_ALONE),
    pytest.param({"PERFT_COUNT": 63, "PERFT_SORT_LANES": 1, "PERFT_MAGIC": 2, "PERFT_LEAF": 441,
                  "PERFT_MAXRREG": 40, "CPU_BUILTINS": 0}, marks=_ALONE),
    pytest.param({"PERFT_MAGIC": 2}, marks=_ALONE),
])
@pytest.mark.parametrize("local_size", [1, 8, 64])
def test_bulk_kernels_of_their_own_program(switches, local_size):
    """The bulk perft kernels built in their own program (device.BUILD_SWITCHES) count the
    published leaves with every leaf depth and work-group size (the local copy of the attack
    tables is shared by the work-group); the main program still serves the rest, the
    expansion's kernels too unless PERFT_LEAF's EXPANSION_OWN_PROGRAM asks for the bulk
    kernels' program (which has none where the tables are in local memory)."""
    from chessaccel.host.opencl.device import EXPANSION_OWN_PROGRAM
    b = OpenCLBackend("pocl", overrides=switches, local_size=local_size, frontier_target=4)
    d = b.device
    assert d.perft_program is not None
    assert d.kernel("perft_bulk_2").program == d.perft_program
    own = switches.get("PERFT_LEAF", 0) & EXPANSION_OWN_PROGRAM and not d.perft_local_lines
    for name in ("count_children", "scan_groups", "add_group_bases", "expand", "expand_moves"):
        assert d.kernel(name).program == (d.perft_program if own else d.program), name
    assert d.perft_local_lines == switches.get("PERFT_LOCAL_LINES", 0)
    assert d.perft_sort_lanes == switches.get("PERFT_SORT_LANES", 0)
    assert d.perft_count == switches.get("PERFT_COUNT", 0)
    assert d.perft_magic == switches.get("PERFT_MAGIC", 0)
    assert d.perft_leaf == switches.get("PERFT_LEAF", 0)
    assert d.perft_maxrreg == switches.get("PERFT_MAXRREG", 0)
    assert d.overrides["CPU_BUILTINS"] == switches.get("CPU_BUILTINS", 1)
    checked = 0
    for leaf_depth in (1, 2, 3):
        b.bulk_leaf_depth = leaf_depth
        for record in RECORDS[:12]:
            board = suites.board_of(record.fen)
            for depth, count in sorted(record.counts.items()):
                if count <= 20_000:
                    assert b.perft(board, depth)["nodes"] == count, (record.id, depth, leaf_depth)
                    checked += 1
    assert checked > 50


#: The position with 218 legal moves (the most known), beside positions with none.
MOST_MOVES = "R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1"


@pytest.mark.parametrize("local_size", [8, 32, 64])
@pytest.mark.parametrize("sort_local", [(2, 0), (2, 2), (1, 2)])
def test_sorted_lanes_count_every_position_once(local_size, sort_local):
    """PERFT_SORT_LANES: the lanes of a work-group take its positions ranked by their move counts
    (perft.cl, sorted_position). Many distinct roots in one launch (frontier_target 1: no
    expansion), with move counts from 0 (mate, stalemate) to 218, in check or not, one group
    only partly filled: every root is counted exactly once, at two and three plies per work-item,
    equal to the sum of the roots' counts made leaf by leaf by the default program
    (PERFT_SORT_LANES = 1 sorts the two-ply kernel's lanes only, 2 the three-ply kernel's too)."""
    sort, local_lines = sort_local
    fens = [r.fen for r in RECORDS if 0 < r.counts.get(3, 0) <= 30_000][:40]
    fens += [MOST_MOVES, KIWIPETE, "R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1",
             next(fen for fen in suites.fens("stalemate0.fen") if chess.Board(fen).is_stalemate())]
    boards = [suites.board_of(fen) for fen in fens]
    roots = pack_positions(boards)
    assert len(roots) % local_size     # the last group only partly filled
    plain = OpenCLBackend("pocl")
    b = OpenCLBackend("pocl", overrides={"PERFT_SORT_LANES": sort, "PERFT_LOCAL_LINES": local_lines},
                      local_size=local_size, frontier_target=1)
    assert b.device.perft_sort_lanes == sort
    for depth in (2, 3):
        want = sum(plain.perft_positions(roots[k:k + 1], depth, "make") for k in range(len(roots)))
        b.bulk_leaf_depth = depth
        assert b.perft_positions(roots, depth, "bulk") == want, depth
        assert b.last_run["frontiers"] == [(depth, len(roots))]   # the roots in one launch


@pytest.mark.parametrize("switches", [{"PERFT_LEAF": 128},
                                      {"PERFT_LEAF": 185, "PERFT_SORT_LANES": 1},
                                      {"PERFT_LEAF": 1209, "PERFT_SORT_LANES": 1},
                                      {"PERFT_LEAF": 32185, "PERFT_SORT_LANES": 1}])
def test_fused_leaf_counts_every_child_once(switches):
    """PERFT_LEAF 128: the last breadth-first ply is written as parent indices and moves
    (expand_moves) and the leaf kernel (perft_fused_N) makes each move itself. Roots with 0 to
    218 moves, in check or not, counted at one and two plies below the fused ply (work-groups of
    8 that the children do not fill): the sum of the roots' counts made leaf by leaf, and the
    last frontier is the fused one (the children, never written as positions)."""
    fens = [r.fen for r in RECORDS if 0 < r.counts.get(3, 0) <= 30_000][:24]
    fens += [MOST_MOVES, KIWIPETE, "R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1",
             next(fen for fen in suites.fens("stalemate0.fen") if chess.Board(fen).is_stalemate())]
    roots = pack_positions([suites.board_of(fen) for fen in fens])
    plain = OpenCLBackend("pocl")
    b = OpenCLBackend("pocl", overrides=switches, local_size=8, frontier_target=1)
    assert b.device.kernel("perft_fused_2").program == b.device.perft_program
    for depth, leaf in ((2, 1), (3, 2), (3, 1)):
        want = sum(plain.perft_positions(roots[k:k + 1], depth, "make") for k in range(len(roots)))
        b.bulk_leaf_depth = leaf
        assert b.perft_positions(roots, depth, "bulk") == want, (depth, leaf)
        frontiers = b.last_run["frontiers"]
        assert frontiers[-1][0] == leaf and frontiers[-2][0] == leaf + 1, frontiers
        assert b.last_run["leaf_positions"] == frontiers[-1][1]


@pytest.mark.parametrize("perft_leaf", [2048 | 4096 | 8192 | 128, 2048 | 16384 | 8192 | 128])
def test_expand_moves_writes_every_child_however_long_the_run(perft_leaf):
    """expand_moves' stores (PERFT_LEAF 4096: 16 bytes a store where aligned; 16384: a
    work-group's children gathered in local memory, or stored lane by lane where the run is
    longer than its buffer): roots of 0 to 218 moves in work-groups of 64 (one run of 6,780
    children, more than the 4,096 the buffer holds; one of 2,574), each child's parent index and
    move such that the fused leaf counts the roots' published sum."""
    fens = [([MOST_MOVES] * 30 + [KIWIPETE] * 5), ([KIWIPETE] * 40 + [MOST_MOVES] * 3),
            [KIWIPETE, "R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1", MOST_MOVES] * 3]
    plain = OpenCLBackend("pocl")
    b = OpenCLBackend("pocl", overrides={"PERFT_LEAF": perft_leaf}, local_size=64,
                      bulk_leaf_depth=1)
    assert b.device.kernel("expand_moves").program == b.device.perft_program
    for group in fens:
        roots = pack_positions([suites.board_of(fen) for fen in group])
        want = sum(plain.perft_positions(roots[k:k + 1], 2, "make") for k in range(len(roots)))
        children = sum(plain.perft_positions(roots[k:k + 1], 1, "make") for k in range(len(roots)))
        assert b.perft_positions(roots, 2, "bulk") == want
        # the roots expanded once, into the fused ply: every child
        assert b.last_run["frontiers"] == [(2, len(roots)), (1, children)]



@pytest.mark.parametrize("perft_leaf", [32185 | 131072, 32185 | 262144, 32185 | 131072 | 262144, 262144])
@pytest.mark.parametrize("local_size", [1, 64])
def test_top_levels_and_split_expansion_count_every_child_once(perft_leaf, local_size):
    """PERFT_LEAF 131072: the levels of at most one position a work-item expanded by one
    work-group in one launch (expand_top: the counts scanned in local memory, the children
    written into two buffers in turn); 262144: `expand` in 2, 4 or 8 lanes a position on small
    levels. Roots of 0 to 218 moves, in check or not, and single roots two and three levels above
    the fused ply: the plain backend's counts and the same levels (last_run's frontiers) as
    without the bits."""
    fens = [KIWIPETE, MOST_MOVES, chess.STARTING_FEN, "R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1",
            next(fen for fen in suites.fens("stalemate0.fen") if chess.Board(fen).is_stalemate())]
    fens += [r.fen for r in RECORDS if 0 < r.counts.get(3, 0) <= 30_000][:6]
    roots = pack_positions([suites.board_of(fen) for fen in fens])
    plain = OpenCLBackend("pocl")
    without = OpenCLBackend("pocl", overrides={"PERFT_LEAF": perft_leaf & 32185},
                            local_size=local_size)
    b = OpenCLBackend("pocl", overrides={"PERFT_LEAF": perft_leaf}, local_size=local_size)
    for positions, depth in ((roots, 3), (roots, 4), (roots[:1], 4), (roots[2:3], 5)):
        want = sum(plain.perft_positions(positions[k:k + 1], depth, "make")
                   for k in range(len(positions)))
        assert b.perft_positions(positions, depth, "bulk") == want, depth
        assert without.perft_positions(positions, depth, "bulk") == want, depth
        assert b.last_run["frontiers"] == without.last_run["frontiers"], depth
        # the top levels in their one launch where there is a level above the last to make and
        # the group has a work-item for each root
        top = perft_leaf & 131072 and depth >= 4 and len(positions) <= local_size
        assert ("top" in b.last_run["stage_seconds"]) == bool(top)


def test_line_table_words():
    """LINES_WORDS (board.cl: the words a work-group copies into local memory) is the table's size."""
    from chessaccel.host.opencl import layout
    assert (layout.LINE_TABLE_OFFSETS["DIAGONAL_ZONE"] + 64 == layout._LINE_TABLE_SIZE
            == len(layout.line_tables()) == max(layout.LINE_TABLE_OFFSETS.values()) + 64)


def test_the_magic_tables_are_the_gpu_default_not_the_cpus():
    """A GPU builds the bulk kernels with the sliders by magic bitboards of fixed-size tables
    (PERFT_MAGIC = 2, in global memory), perft_bulk_2's lanes sorted by move count and the
    count's changes PERFT_COUNT = 63 unless the overrides say otherwise, and the fused two-ply
    leaf PERFT_LEAF = 425401 (with the expansion's bits) with its registers capped at 40 (all measured faster on the H100 or
    the H200); PoCL reads the kindergarten tables, sorts nothing and counts the plain way."""
    from chessaccel.host.opencl import device
    gpu = {"PERFT_LOCAL_LINES": 0, "PERFT_MAGIC": 2, "PERFT_SORT_LANES": 1, "PERFT_COUNT": 63,
           "PERFT_LEAF": 425401, "PERFT_MAXRREG": 40}
    assert set(gpu) == set(device.BUILD_SWITCHES)
    for name, value in gpu.items():
        assert device.default_perft_switch(name, True) == getattr(device, name + "_GPU") == value
        assert device.default_perft_switch(name, False) == 0
    # the magic tables cannot share the tables' copy in local memory
    assert device.default_perft_switch("PERFT_MAGIC", True, local_lines=2) == 0
    b = OpenCLBackend("pocl")
    assert b.device.perft_program is None and b.device.perft_local_lines == 0
    assert b.device.perft_sort_lanes == 0 and b.device.perft_count == 0
    assert b.device.perft_magic == 0 and b.device.perft_leaf == 0 and b.device.perft_maxrreg == 0
    assert b._perft_local() == 1
    assert OpenCLBackend("pocl", local_size=8)._perft_local() == 8
    assert OpenCLBackend("pocl", local_size=8, perft_local_size=48)._perft_local() == 32


def test_the_magic_tables_cannot_be_read_from_local_memory():
    """PERFT_MAGIC reads its tables from global memory: asked for beside PERFT_LOCAL_LINES, the
    backend says so in one line; PERFT_LOCAL_LINES alone turns a GPU's default magic off."""
    from chessaccel.host.opencl.device import OpenCLError
    with pytest.raises(OpenCLError, match=r"^PERFT_MAGIC reads the tables from global memory: "
                                          r"it needs PERFT_LOCAL_LINES=0$"):
        OpenCLBackend("pocl", overrides={"PERFT_MAGIC": 1, "PERFT_LOCAL_LINES": 2}).describe()


def test_kernel_times_gives_every_launch_its_own_time(queued):
    """lab/perft_ab's kernel_times: one perft on a profiling queue, each launch by name with its
    time on the device, the count unchanged, and the backend's own queue back afterwards."""
    from chessaccel.lab.perft_ab import kernel_times
    queue = queued.device.queue
    nodes, seconds, launches = kernel_times(queued, pack_positions([suites.board_of(KIWIPETE)]), 3)
    assert nodes == 97862 and queued.device.queue is queue
    names = [name for name, _, _ in launches]
    assert names[:5] == ["count_children", "scan_groups", "scan_totals", "add_group_bases", "expand"]
    assert all(0 <= s <= seconds for _, _, s in launches)
