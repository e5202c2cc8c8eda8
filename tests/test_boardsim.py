"""The simulated board (sim/boardsim.py: BoardTop under Verilator on a pty) and the host client.

The board is reached exactly as a real one: a pseudo-terminal, the link protocol, the same
client code (host/backends/board/client.py) and transports (host/backends/board/transport.py). Jobs are compared with the
model (sim/model/search.py) field by field; fault injection wraps the transport.
"""

import argparse
import os
import time

import pytest

from chessaccel.contract.defs import INF, Mode
from chessaccel.host.boardcli import board_info_main
from chessaccel.host.backends.board.client import BadJob, BoardClient, BoardError, JobFailed, NoBoardError
from chessaccel.model.position import chess_from_board
from chessaccel.host.backends.board.transport import FaultyTransport, PtyTransport, SerialTransport
from chessaccel.contract.protocol import PROTOCOL_VERSION
from chessaccel.sim.boardsim import (SIM_CLOCKS_PER_BIT, SIM_CLOCK_HZ, SIM_REPLY_TIMEOUT, BoardSim,
                                    verilator_missing)
from chessaccel.model import search as model

needs_verilator = pytest.mark.skipif(verilator_missing() is not None,
                                     reason=f"{verilator_missing()}")

#: Fault rates tried (per byte for flip/drop/duplicate, per call for stall), docs/protocol.md.
FAULT_RATES = [
    {"flip": 0.002, "drop": 0.002, "duplicate": 0.002, "stall": 0.01},
    {"flip": 0.01, "drop": 0.01, "duplicate": 0.01, "stall": 0.05},
]


@pytest.fixture(scope="module")
def link_board():
    """A board with no search core: the link, dispatcher and UART alone."""
    with BoardSim(cores=0) as sim:
        yield sim


@needs_verilator
def test_info_over_the_pty_with_pyserial_and_plain_fds(link_board, capsys):
    for transport in (SerialTransport(link_board.port), PtyTransport(link_board.port)):
        with transport:
            info = BoardClient(transport).info()
        assert (info.version, info.cores, info.clock_hz, info.clocks_per_bit) == \
            (PROTOCOL_VERSION, 0, SIM_CLOCK_HZ, SIM_CLOCKS_PER_BIT)
    status = board_info_main(argparse.Namespace(port=link_board.port, timeout=0.5, retries=2))
    out = capsys.readouterr().out
    assert status == 0
    assert f"protocol version: {PROTOCOL_VERSION}" in out and "cores: 0" in out


@needs_verilator
@pytest.mark.parametrize("rates", FAULT_RATES)
def test_requests_get_through_a_faulty_link(link_board, rates):
    """Every request ends with the right reply or a clear error, never a wrong answer."""
    transport = FaultyTransport(PtyTransport(link_board.port), seed=11, **rates)
    with transport:
        # a generous timeout: the simulated board slows down when the machine is loaded, and a
        # retry storm on a slow board tests the load, not the protocol
        client = BoardClient(transport, timeout=0.3, retries=30)
        before = client.status()
        for _ in range(60):
            info = client.info()
            assert (info.version, info.cores, info.clocks_per_bit) == \
                (PROTOCOL_VERSION, 0, SIM_CLOCKS_PER_BIT)
    assert sum(transport.counts.values()) > 0, "no fault was injected"
    with PtyTransport(link_board.port) as clean:
        after = BoardClient(clean).status()
    assert after["good_frames"] > before["good_frames"]


@needs_verilator
def test_no_board_answers():
    """A pty nobody serves: a clear NoBoardError, quickly, and exit status 2 from the CLI."""
    master, slave = os.openpty()
    try:
        with PtyTransport(os.ttyname(slave)) as transport:
            started = time.monotonic()
            with pytest.raises(NoBoardError, match="no board answers"):
                BoardClient(transport, timeout=0.05, retries=2).info()
            assert time.monotonic() - started < 2
        args = argparse.Namespace(port=os.ttyname(slave), timeout=0.05, retries=1)
        assert board_info_main(args) == 2
        assert board_info_main(argparse.Namespace(port="/dev/no-such-port", timeout=0.05,
                                                  retries=1)) == 2
    finally:
        os.close(master)
        os.close(slave)


# --- jobs on the simulated board (needs hdl/search.py's SearchCore) ------------------------

from suites import board_of, epd_positions, fens, perft_records, random_play_positions  # noqa: E402

#: Cores of the simulated board the job tests share (also the multi-core test).
JOB_CORES = 2
#: Jobs whose model walk enters more nodes than this are left to the long sweep.
DEFAULT_NODE_LIMIT = 150
LONG_NODE_LIMIT = 5000
DEFAULT_POSITIONS = 100
LONG_POSITIONS = 300
#: Jobs run through the faulty link by default (more under the long marker).
FAULTY_JOBS = 6
LONG_FAULTY_JOBS = 24


def _core_available():
    try:
        from chessaccel.hdl.search import SearchCore  # noqa: F401
    except ImportError as error:
        return f"no SearchCore yet ({error})"
    return None


needs_core = pytest.mark.skipif(_core_available() is not None, reason=f"{_core_available()}")


#: Boards of JOB_CORES job slots: JOB_CORES plain cores, and one core interleaving two jobs
#: (SearchCore threads=2, hdl/interleave.py), which the link and the host see as two cores.
BOARD_LAYOUTS = {"2-cores": (JOB_CORES, 1), "1-core-2-threads": (JOB_CORES // 2, 2)}
#: The layouts whose tests are the long tier's: the one-core-two-thread board is a Verilator build
#: of its own (some 2.5 min of the fast tier's wall); the fast tier checks its parts, the
#: two-thread core (tests/test_search.py, job by job, aborts and bad jobs) and the board with
#: two cores (here).
LONG_LAYOUTS = {"1-core-2-threads"}


@pytest.fixture(scope="module", params=[
    pytest.param(name, marks=pytest.mark.long) if name in LONG_LAYOUTS else name
    for name in sorted(BOARD_LAYOUTS)])
def search_board(request):
    cores, threads = BOARD_LAYOUTS[request.param]
    with BoardSim(cores=cores, threads=threads) as sim:
        yield sim


@pytest.fixture()
def search_client(search_board):
    with PtyTransport(search_board.port) as transport:
        client = BoardClient(transport, timeout=SIM_REPLY_TIMEOUT)
        client.abort()
        yield client


def _job_set(count, node_limit, seed, depths=(1, 1, 2), evaluation="pst"):
    """(board, depth, alpha, beta, model result): suite and random positions at ``depths``, full
    and narrow windows, whose model walk (with ``evaluation``) stays under ``node_limit``
    nodes."""
    import random
    rng = random.Random(seed)
    positions = [record.fen for record in perft_records(("tricky.perft", "perftsuite.epd"))]
    positions += epd_positions(("wac.epd",)) + fens("mate2.fen") + fens("stalemate2.fen")
    positions += random_play_positions(seed=seed, count=count)
    boards = [board_of(fen) for fen in positions]
    rng.shuffle(boards)
    jobs = []
    for board in boards:
        depth = rng.choice(depths)
        alpha, beta = -INF, INF
        if rng.random() < 0.3:
            alpha = rng.randrange(-300, 300)
            beta = alpha + rng.randrange(1, 60)
        want = model.search(board.copy(), depth, alpha, beta, evaluation=evaluation)
        if want.nodes <= node_limit:
            jobs.append((board, depth, alpha, beta, want))
        if len(jobs) == count:
            break
    return jobs


def _compare_jobs(client, jobs, cores):
    outcomes = client.run_jobs([(b, d, a, be, Mode.SEARCH) for b, d, a, be, _ in jobs], cores)
    for (board, depth, alpha, beta, want), got in zip(jobs, outcomes):
        assert (got.score, got.best_move, got.nodes) == (want.score, want.best_move, want.nodes), (
            f"{chess_from_board(board).fen()} depth {depth} window ({alpha}, {beta}): board "
            f"score {got.score} move {got.best_move} nodes {got.nodes}; model score "
            f"{want.score} move {want.best_move} nodes {want.nodes}")
    return outcomes


@needs_verilator
@needs_core
def test_jobs_over_the_pty_equal_the_model(search_client):
    jobs = _job_set(DEFAULT_POSITIONS, DEFAULT_NODE_LIMIT, seed=51)
    assert len(jobs) >= 100
    outcomes = _compare_jobs(search_client, jobs, JOB_CORES)
    assert {o.core for o in outcomes} == set(range(JOB_CORES)), "not every core was used"


@pytest.mark.long
@needs_verilator
@needs_core
def test_jobs_over_the_pty_equal_the_model_long(search_client):
    _compare_jobs(search_client, _job_set(LONG_POSITIONS, LONG_NODE_LIMIT, seed=52,
                                          depths=(1, 2, 2, 3)), JOB_CORES)


@pytest.mark.long
@needs_verilator
@needs_core
def test_jobs_on_a_terms_board_equal_the_terms_model():
    """A board whose core evaluates with the terms (``chessaccel board-sim --evaluation terms``,
    ``Backend verilator`` with ``Evaluation terms``): every job of the suites' set as the
    model's terms search, score, best move and node count (issue 30's simulated board)."""
    jobs = _job_set(LONG_POSITIONS, LONG_NODE_LIMIT, seed=53, depths=(0, 1, 1, 2, 3),
                    evaluation="terms")
    assert len(jobs) >= 250
    with BoardSim(cores=1, evaluation="terms") as sim, PtyTransport(sim.port) as transport:
        client = BoardClient(transport, timeout=SIM_REPLY_TIMEOUT)
        client.abort()
        _compare_jobs(client, jobs, 1)


@needs_verilator
@needs_core
def test_perft_jobs_equal_the_published_counts(search_client):
    cases = [("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 2, 400),
             ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 2, 2039),
             ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 2, 191),
             ("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 2, 264),
             ("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 1, 44)]
    jobs = [(board_of(fen), depth, -INF, INF, Mode.PERFT) for fen, depth, _ in cases]
    outcomes = search_client.run_jobs(jobs, JOB_CORES)
    assert [o.nodes for o in outcomes] == [nodes for _, _, nodes in cases]


def _faulty_jobs(search_board, rates, count):
    jobs = _job_set(count, DEFAULT_NODE_LIMIT, seed=53)
    transport = FaultyTransport(PtyTransport(search_board.port), seed=54, **rates)
    right = failed = 0
    with transport:
        client = BoardClient(transport, timeout=SIM_REPLY_TIMEOUT, retries=20)
        client.abort()
        for board, depth, alpha, beta, want in jobs:
            started = time.monotonic()
            try:
                got = client.run_job(board, depth, alpha, beta, job_timeout=120)
            except BoardError:
                failed += 1          # a clear failure is allowed, a wrong answer is not
                continue
            finally:
                assert time.monotonic() - started < 600, "a job hung"
            assert (got.score, got.best_move, got.nodes) == \
                (want.score, want.best_move, want.nodes), chess_from_board(board).fen()
            right += 1
    assert sum(transport.counts.values()) > 0
    assert right >= len(jobs) * 3 // 4, f"only {right} of {len(jobs)} jobs got through ({failed} failed)"


@needs_verilator
@needs_core
def test_jobs_through_a_faulty_link_are_right_or_fail_clearly(search_board):
    _faulty_jobs(search_board, FAULT_RATES[0], FAULTY_JOBS)


@pytest.mark.long
@needs_verilator
@needs_core
@pytest.mark.parametrize("rates", FAULT_RATES)
def test_jobs_through_a_faulty_link_long(search_board, rates):
    _faulty_jobs(search_board, rates, LONG_FAULTY_JOBS)


@needs_verilator
@needs_core
def test_abort_mid_search_returns_the_core_to_idle(search_client):
    busy_board = board_of("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    job_id = search_client.new_job_id()
    core = search_client.submit(job_id, busy_board, 5, -INF, INF)
    assert core is not None
    assert search_client.poll(job_id, core) is None          # running
    assert search_client.status()["busy"] & (1 << core)
    assert search_client.abort(job_id) == 1 << core
    with pytest.raises(JobFailed, match="ABORTED"):
        search_client.poll(job_id, core)
    assert search_client.status()["busy"] == 0
    # the core takes the next job as if nothing happened
    board, depth, alpha, beta, want = _job_set(1, DEFAULT_NODE_LIMIT, seed=55)[0]
    got = search_client.run_job(board, depth, alpha, beta)
    assert (got.score, got.nodes) == (want.score, want.nodes)


@needs_verilator
@needs_core
def test_cores_run_jobs_at_the_same_time(search_client):
    big = board_of("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    ids = [search_client.new_job_id() for _ in range(JOB_CORES)]
    cores = [search_client.submit(job_id, big, 2, -INF, INF) for job_id in ids]
    assert sorted(cores) == list(range(JOB_CORES))
    assert search_client.status()["busy"] == (1 << JOB_CORES) - 1, "the cores did not overlap"
    # a retried JOB (same id) starts nothing: it is acknowledged where it runs
    assert search_client.submit(ids[0], big, 2, -INF, INF) == cores[0]
    assert search_client.submit(search_client.new_job_id(), big, 2, -INF, INF) is None
    want = model.search(big.copy(), 2, -INF, INF)
    for job_id, core in zip(ids, cores):
        while (got := search_client.poll(job_id, core)) is None:
            time.sleep(0.001)
        assert (got.score, got.best_move, got.nodes) == (want.score, want.best_move, want.nodes)


@needs_verilator
@needs_core
def test_a_position_without_kings_is_refused_by_client_and_board(search_client):
    """A king-less job is named and never sent by the client; sent anyway (as a raw JOB
    request), the board answers BAD_JOB instead of searching with the previous job's king."""
    from chessaccel.contract.defs import Position, SearchJob
    from chessaccel.contract.protocol import Command, JobRequest
    from chessaccel.model.board import Board
    normal = board_of("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
    want = model.search(normal.copy(), 1, -INF, INF)
    got = search_client.run_job(normal, 1, -INF, INF)          # the core now holds two kings
    assert (got.score, got.nodes) == (want.score, want.nodes)
    kingless = Board([0] * 56 + [0, 0, 0, 0, 14, 0, 0, 0], 0, 0, None)   # a black king alone
    with pytest.raises(BadJob, match="0 white kings"):
        search_client.run_job(kingless, 1, -INF, INF)
    job_id = search_client.new_job_id()
    job = SearchJob.const({"position": Position.from_bits(kingless.to_bits()), "depth": 1,
                           "alpha": -INF, "beta": INF, "mode": Mode.SEARCH})
    reply = search_client.request(Command.JOB, JobRequest, {"job_id": job_id, "job": job})
    core = int(reply.core)
    deadline = time.monotonic() + 30
    with pytest.raises(BadJob, match="BAD_JOB"):
        while search_client.poll(job_id, core) is None and time.monotonic() < deadline:
            time.sleep(0.01)
    assert search_client.status()["busy"] == 0
    got = search_client.run_job(normal, 1, -INF, INF)          # and the core goes on as before
    assert (got.score, got.nodes) == (want.score, want.nodes)
