"""The host's link client (host/backends/board/client.py) and transports (host/backends/board/transport.py) against a scripted
board (tests/linkpeer.py) on a real pseudo-terminal: retries, sequence numbers, timeouts, every
reply and error of docs/protocol.md, and faults injected reply by reply, in milliseconds.

The peer is written from docs/protocol.md alone (frames, CRCs and payloads by hand) and answers
jobs with python-chess perft and the contract's recursive alpha-beta (tests/oracle.py), so a
result that comes back right has crossed the whole host stack: packing the position, the frame,
the pty, decoding, and the checks the client makes before it believes a reply.
"""

import os
import threading
import time
import types

import chess
import pytest

from chessaccel.contract.defs import INF, MATE, Mode
from chessaccel.contract.geometry import move_uci
from chessaccel.host.backends.board import client as client_module
from chessaccel.host.backends.board.client import (POLL_FIRST, POLL_GROWTH, POLL_LONGEST, BadJob, BoardClient,
                                    BoardError, BoardRefused, JobFailed, JobOutcome, LinkLost,
                                    NoBoardError)
from chessaccel.model.position import parse_position
from chessaccel.host.backends.board.transport import (FaultyTransport, PtyTransport, SerialTransport, Transport,
                                       TransportError, open_transport)
from chessaccel.contract.protocol import ErrorCode
from chessaccel.model.board import Board

import suites
from linkpeer import (CMD, JOB_REQUEST, STATUS, STATUS_REPLY, ScriptedBoard, board_of_job, frame,
                      pack, parse_frame, unpack)
from oracle import alphabeta

#: Castling rights both ways and an en-passant square: every field of the packed position.
RICH = "r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1"
STARTPOS = chess.STARTING_FEN
#: Seconds a client waits when a test wants "at once" to stand out from "after the timeout".
PATIENT = 3.0


@pytest.fixture
def peer():
    with ScriptedBoard(cores=2) as board:
        yield board


@pytest.fixture
def connect():
    """connect(peer, **client options) -> BoardClient over a PtyTransport to the peer."""
    opened = []

    def make(peer, timeout=PATIENT, retries=3, transport=None):
        transport = transport or PtyTransport(peer.port)
        opened.append(transport)
        return BoardClient(transport, timeout=timeout, retries=retries)

    yield make
    for transport in opened:
        transport.close()


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def requests_of(peer, command):
    return [(seq, payload, action) for seq, c, payload, action in peer.requests
            if c == CMD[command]]


# --- the peer itself: it must speak the hand-written golden frames ------------------------------

def test_the_peer_packs_the_golden_frames():
    golden = {}
    for _, line in suites.suite_lines("link-golden.txt"):
        name, data, *_ = (field.strip() for field in line.split("|"))
        golden[name] = bytes.fromhex(data)
    assert frame(0x00, CMD["INFO"]) == golden["info-request"]
    assert frame(0x2A, CMD["JOB"], pack((("job_id", 16), ("core", 8), ("ack", 8)),
                                        {"job_id": 0x0102, "core": 1, "ack": 1})) == golden["job-reply"]
    assert frame(0x00, CMD["INFO"], pack((("version", 8), ("cores", 8), ("clock_hz", 32),
                                          ("clocks_per_bit", 16), ("build_id", 32)),
                                         {"version": 1, "cores": 2, "clock_hz": 50_000_000,
                                          "clocks_per_bit": 434, "build_id": 0xDEADBEEF})) == \
        golden["info-reply"]
    seq, command, payload = parse_frame(golden["job-request"])
    job = unpack(JOB_REQUEST, payload)
    assert (seq, command, job["job_id"], job["depth"], job["alpha"], job["beta"], job["mode"]) == \
        (0x2A, CMD["JOB"], 0x0102, 3, -32767, 32767, 0)
    assert board_of_job(job).fen() == STARTPOS
    assert pack(JOB_REQUEST, job) == payload


# --- requests, replies, sequence numbers ----------------------------------------------------

def test_info_status_and_the_info_lines(peer, connect):
    client = connect(peer)
    info = client.info()
    assert (info.version, info.cores, info.clock_hz, info.clocks_per_bit, info.build_id) == \
        (1, 2, 48_000_000, 16, 0x5EEDB0A2)
    assert info.lines() == ["protocol version: 1", "cores: 2", "clock: 48000000 Hz",
                            "clocks per bit: 16 (3000000 baud)", "build id: 5eedb0a2"]
    assert client.status() == {"busy": 0, "good_frames": 2, "bad_frames": 0}
    assert client.retransmissions == 0
    assert peer.commands() == [CMD["INFO"], CMD["STATUS"]]
    assert all(payload == b"" for _, _, payload, _ in peer.requests)


def test_each_request_takes_the_next_sequence_number_and_they_wrap(peer, connect):
    client = connect(peer)
    for _ in range(258):
        client.status()
    seqs = [seq for seq, _, _, _ in peer.requests]
    assert all(b == (a + 1) % 256 for a, b in zip(seqs, seqs[1:])), seqs
    assert 255 in seqs[:-1] and client.status()["good_frames"] == 259


def test_the_first_sequence_number_is_drawn_at_random(peer, connect):
    firsts = set()
    for _ in range(6):
        connect(peer).info()
        firsts.add(peer.requests[-1][0])
    assert len(firsts) > 1, "six sessions began with the same sequence number"


def test_stale_replies_on_the_line_are_dropped_when_a_session_starts(peer, connect):
    """A STATUS reply for every sequence number waits in the line (2,816 bytes: the pty holds
    4 KB): whatever number the new session draws, it must not take one of them."""
    stale = b"".join(frame(seq, CMD["STATUS"], pack(STATUS_REPLY, {
        "busy": 0xFF, "good_frames": 0xFFFF, "bad_frames": 0xFFFF})) for seq in range(256))
    peer.send(stale)
    peer.wait_readable(len(stale))
    assert connect(peer).status() == {"busy": 0, "good_frames": 1, "bad_frames": 0}


def test_a_lost_reply_is_asked_again_with_the_identical_frame(peer, connect):
    peer.script("drop")
    client = connect(peer, timeout=0.3)
    started = time.monotonic()
    assert client.info().cores == 2
    assert time.monotonic() - started >= 0.3
    assert client.retransmissions == 1
    (seq1, _, _, _), (seq2, _, _, _) = peer.requests
    assert seq1 == seq2


def test_a_late_reply_to_the_first_copy_is_taken(peer, connect):
    peer.script(("delay", 0.5), "lose")
    client = connect(peer, timeout=0.3)
    started = time.monotonic()
    assert client.info().cores == 2
    assert time.monotonic() - started >= 0.45
    assert client.retransmissions == 1


@pytest.mark.parametrize("fault", ["corrupt", "short", "bad_error", ("error", "BAD_CRC"),
                                   ("error", "TRUNCATED"), ("error", "BAD_LENGTH")],
                         ids=str)
def test_a_damaged_exchange_is_retried_at_once(peer, connect, fault):
    peer.script(fault)
    client = connect(peer)
    started = time.monotonic()
    assert client.info().cores == 2
    assert time.monotonic() - started < PATIENT / 2, "retried only after the timeout"
    assert client.retransmissions == 1
    assert [seq for seq, _, _, _ in peer.requests] == [peer.requests[0][0]] * 2


def test_a_damaged_frame_read_with_the_reply_does_not_hide_it(peer, connect):
    peer.script("damaged_then_ok")
    client = connect(peer)
    assert client.info().cores == 2
    assert client.retransmissions == 0


def test_silent_waits_double_so_a_slow_board_is_not_flooded(peer, connect):
    """Once the board has answered, a reply takes 0.35 s and the timeout is 0.1 s: copies go at
    0 s, 0.1 s and 0.3 s (waits of 0.1, 0.2, 0.4 s) and the first copy's late reply is taken;
    fixed waits would send four."""
    client = connect(peer, timeout=0.1, retries=5)
    client.status()
    peer.script(("delay", 0.35), "lose", "lose", "lose")
    assert client.info().cores == 2
    assert client.retransmissions == 2 and len(peer.requests) == 4


def test_a_reply_cut_short_is_recovered(peer, connect):
    peer.script("truncate")
    client = connect(peer, timeout=0.2, retries=4)
    assert client.info().cores == 2
    assert client.status()["busy"] == 0
    assert client.retransmissions >= 1


@pytest.mark.parametrize("fault", ["duplicate", "stale", "wrong_command", "noise",
                                   ("old_error", "UNKNOWN_COMMAND"), ("delay", 0.05)], ids=str)
def test_old_duplicate_and_foreign_replies_are_ignored(peer, connect, fault):
    peer.script(fault)
    client = connect(peer)
    info = client.info()
    assert (info.version, info.cores, info.build_id) == (1, 2, 0x5EEDB0A2)
    time.sleep(0.06)
    assert client.status() == {"busy": 0, "good_frames": 2, "bad_frames": 0}
    assert client.retransmissions == 0


def test_a_refusal_is_reported_with_its_code(peer, connect):
    peer.script(("error", "UNKNOWN_COMMAND"))
    client = connect(peer)
    with pytest.raises(BoardRefused, match=r"^the board refused INFO: UNKNOWN_COMMAND$") as error:
        client.info()
    assert error.value.code == ErrorCode.UNKNOWN_COMMAND
    assert client.retransmissions == 0


def test_an_error_code_this_host_does_not_know_is_a_refusal_not_a_crash(peer, connect):
    peer.script(("error", 0x42))
    with pytest.raises(BoardRefused, match=r"^the board refused STATUS: error code 66$") as error:
        connect(peer).status()
    assert error.value.code == 0x42


def test_nothing_answers(peer, connect):
    peer.script("lose", "lose", "lose")
    client = connect(peer, timeout=0.05, retries=2)
    with pytest.raises(NoBoardError) as error:
        client.info()
    assert str(error.value) == f"no board answers on {peer.port} (3 tries, 0.05 s each)"
    assert len(peer.requests) == 3 and len({seq for seq, _, _, _ in peer.requests}) == 1


def test_a_board_that_answered_and_falls_silent_is_a_board_error(peer, connect):
    client = connect(peer, timeout=0.05, retries=1)
    client.info()
    peer.script("lose", "lose")
    with pytest.raises(BoardError) as error:
        client.status()
    assert not isinstance(error.value, NoBoardError)
    assert str(error.value) == (f"STATUS failed after 2 tries on {peer.port}: "
                                f"no reply within 0.1 s")


def test_a_board_whose_end_of_the_link_closes_is_one_board_error_at_once(connect):
    """A simulated board that exits closes its end of the pty: the next request fails at once
    with one line (LinkLost, a BoardError), whether it is sent after or while it happens,
    never a wait through every retry or an OSError."""
    with ScriptedBoard() as gone:
        client = connect(gone, timeout=PATIENT, retries=3)
        client.info()
        gone.close()
        started = time.monotonic()
        with pytest.raises(LinkLost) as error:
            client.status()
        assert time.monotonic() - started < PATIENT
        assert str(error.value) in (f"STATUS failed on {gone.port}: Input/output error",
                                    f"STATUS failed on {gone.port}: the board's end of the "
                                    f"terminal has closed")
    with ScriptedBoard() as leaving:
        client = connect(leaving, timeout=PATIENT, retries=3)
        leaving.script("lose")          # the request is swallowed; then the board goes
        timer = threading.Timer(0.2, leaving.close)
        timer.start()
        started = time.monotonic()
        with pytest.raises(LinkLost, match=f"^INFO failed on {leaving.port}: the board's end "
                                           f"of the terminal has closed$"):
            client.info()
        assert time.monotonic() - started < PATIENT
        timer.join()


def test_a_link_too_damaged_names_its_last_trouble(peer, connect):
    peer.script("corrupt", "corrupt")
    client = connect(peer, retries=1)
    with pytest.raises(BoardError, match=r"^INFO failed after 2 tries on .*: damaged reply \(CRC"):
        client.info()
    peer.script("short", "short")
    with pytest.raises(BoardError, match=r"INFO failed after 2 tries .*: INFO reply of 11 bytes$"):
        client.info()
    peer.script(("error", "BAD_CRC"), ("error", "BAD_CRC"))
    with pytest.raises(BoardError, match=r": the board got a damaged request \(BAD_CRC\)$"):
        client.info()
    peer.script("bad_error", "bad_error")
    with pytest.raises(BoardError, match=r": damaged ERROR reply$"):
        client.info()


# --- jobs -----------------------------------------------------------------------------------

def model_board(fen):
    return parse_position(fen)[0]


def expected_search(fen, depth, alpha=-INF, beta=INF):
    score, best, nodes = alphabeta(chess.Board(fen), depth, alpha, beta)
    return score, best, nodes


def test_a_search_job_is_packed_polled_and_believed(connect):
    with ScriptedBoard(cores=2, busy_polls=3) as peer:
        client = connect(peer)
        assert client.abort() == 0
        outcome = client.run_job(model_board(RICH), 1, -INF, INF)
        score, best, nodes = expected_search(RICH, 1)
        assert isinstance(outcome, JobOutcome)
        assert (outcome.score, move_uci(outcome.best_move), outcome.nodes, outcome.cycles,
                outcome.core) == (score, best, nodes, 5 * nodes + 17, 0)
        [(job_id, core, fen, depth, alpha, beta, mode)] = peer.started
        assert (job_id, core, fen, depth, alpha, beta, mode) == (0, 0, RICH, 1, -INF, INF, 0)
        assert len(requests_of(peer, "RESULT")) == 4     # three times BUSY, then DONE
        assert client.core_jobs == {0: 0}


def test_perft_jobs_in_a_narrow_window_and_a_promotion(peer, connect):
    client = connect(peer)
    outcome = client.run_job(model_board(STARTPOS), 3, 5, 5, Mode.PERFT)
    assert (outcome.nodes, outcome.best_move, outcome.score) == (8902, None, 0)
    assert peer.started[-1][3:] == (3, 5, 5, 1)
    fen = "8/1P6/8/8/8/8/6k1/K7 w - - 0 1"
    outcome = client.run_job(model_board(fen), 1, -INF, INF)
    score, best, nodes = expected_search(fen, 1)
    assert best == "b7b8q" and (outcome.score, move_uci(outcome.best_move), outcome.nodes) == \
        (score, best, nodes)
    outcome = client.run_job(model_board(RICH), 1, -7, 9)
    assert (outcome.score, move_uci(outcome.best_move), outcome.nodes) == \
        expected_search(RICH, 1, -7, 9)
    assert peer.started[-1][3:] == (1, -7, 9, 0)


def test_a_mated_root_has_no_best_move(peer, connect):
    fen = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"
    outcome = connect(peer).run_job(model_board(fen), 1, -INF, INF)
    assert (outcome.score, outcome.best_move, outcome.nodes) == (-MATE, None, 1)


def test_more_jobs_than_free_cores_wait_for_no_free_core(connect):
    fens = [STARTPOS, RICH, "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "8/8/4k3/8/2p5/8/B2P2K1/8 w - - 0 1"]
    with ScriptedBoard(cores=2, busy_polls=2) as peer:
        client = connect(peer)
        outcomes = client.run_jobs([(model_board(f), 2, -INF, INF, Mode.PERFT) for f in fens], 3)
        assert [o.nodes for o in outcomes] == [suites.chess_perft(chess.Board(f), 2) for f in fens]
        assert "NO_FREE_CORE" in peer.errors_sent
        assert len({job_id for job_id, *_ in peer.started}) == 4
        assert {o.core for o in outcomes} == {0, 1}


def test_submit_answers_none_when_every_core_is_busy(connect):
    with ScriptedBoard(cores=1, busy_polls=None) as peer:
        client = connect(peer)
        assert client.submit(0, model_board(STARTPOS), 1, -INF, INF) == 0
        assert client.submit(1, model_board(STARTPOS), 1, -INF, INF) is None
        assert client.core_jobs == {0: 0}


def test_a_retried_job_whose_first_copy_started_runs_once(peer, connect):
    peer.script("ok", "drop")               # ABORT, then the JOB's reply is lost
    client = connect(peer, timeout=0.2)
    client.abort()
    outcome = client.run_job(model_board(STARTPOS), 1, -INF, INF)
    assert len(peer.started) == 1, "the retried JOB started a second job"
    assert len(requests_of(peer, "JOB")) == 2
    assert outcome.nodes == expected_search(STARTPOS, 1)[2]
    assert client.retransmissions == 1 and client.core_jobs == {0: 0}


def test_a_job_the_board_does_not_hold(peer, connect):
    with pytest.raises(JobFailed) as error:
        connect(peer).poll(77, 0)
    assert str(error.value) == "the board lost job 77 (no core holds it)"
    assert not isinstance(error.value, BadJob)


@pytest.mark.parametrize("status,kind,message", [
    ("BAD_JOB", BadJob, "the board refused job 0 (BAD_JOB: a depth, window or position the core "
                        "cannot hold)"),
    ("ABORTED", JobFailed, "job 0 ended ABORTED"),
    ("IDLE", JobFailed, "job 0 ended IDLE"),
    (7, JobFailed, "job 0 ended 7"),
])
def test_a_result_that_is_not_done_is_no_result(connect, status, kind, message):
    with ScriptedBoard(cores=1, busy_polls=0) as peer:
        code = STATUS.get(status, status)
        peer.script("ok", ("fields", {"status": code}))
        client = connect(peer)
        with pytest.raises(kind) as error:
            client.run_job(model_board(STARTPOS), 1, -INF, INF)
        assert str(error.value) == message


@pytest.mark.parametrize("fields,answered", [({"job_id": 5}, "job 5 on core 0"),
                                             ({"core": 1}, "job 0 on core 1")])
def test_a_result_for_another_job_or_core_is_refused(peer, connect, fields, answered):
    peer.script("ok", ("fields", fields))
    client = connect(peer)
    with pytest.raises(BoardError) as error:
        client.run_job(model_board(STARTPOS), 1, -INF, INF)
    assert str(error.value) == f"RESULT for job 0 on core 0 answered for {answered}"


def test_a_job_acknowledged_under_another_id_is_refused(peer, connect):
    peer.script(("fields", {"job_id": 9}))
    with pytest.raises(BoardError, match=r"^JOB 0 acknowledged as job 9$"):
        connect(peer).submit(0, model_board(STARTPOS), 1, -INF, INF)


def test_jobs_the_core_would_refuse_are_never_sent(peer, connect):
    client = connect(peer)
    no_black_king = Board([6] + [0] * 63, 0, 0, None)
    with pytest.raises(BadJob, match=r"^job 3 not sent: the position has 0 black kings"):
        client.submit(3, no_black_king, 1, -INF, INF)
    with pytest.raises(BadJob, match=r"^job 4 not sent: depth 9 out of range 0\.\.8$"):
        client.submit(4, model_board(STARTPOS), 9, -INF, INF)
    with pytest.raises(BadJob, match=r"window \(5, 5\)"):
        client.submit(5, model_board(STARTPOS), 1, 5, 5)
    assert peer.requests == []
    assert client.submit(6, model_board(STARTPOS), 1, 5, 5, Mode.PERFT) == 0


def test_abort_one_and_abort_all(connect):
    with ScriptedBoard(cores=2, busy_polls=None) as peer:
        client = connect(peer)
        assert client.submit(10, model_board(STARTPOS), 2, -INF, INF) == 0
        assert client.submit(11, model_board(RICH), 2, -INF, INF) == 1
        assert client.status()["busy"] == 0b11
        assert client.abort(11) == 0b10
        assert client.abort(11) == 0, "an aborted job stopped twice"
        with pytest.raises(JobFailed, match="^job 11 ended ABORTED$"):
            client.poll(11, 1)
        assert client.core_jobs == {0: 10, 1: 11}
        assert client.abort() == 0b01
        assert client.core_jobs == {}
        aborts = [unpack((("job_id", 16), ("scope", 8)), payload)
                  for _, payload, _ in requests_of(peer, "ABORT")]
        assert aborts == [{"job_id": 11, "scope": 0}, {"job_id": 11, "scope": 0},
                          {"job_id": 0, "scope": 1}]
        client.abort(0)
        assert unpack((("job_id", 16), ("scope", 8)), requests_of(peer, "ABORT")[-1][1]) == \
            {"job_id": 0, "scope": 0}


def test_a_job_over_its_time_is_aborted_and_so_are_the_others(connect):
    with ScriptedBoard(cores=2, busy_polls=None) as peer:
        client = connect(peer)
        jobs = [(model_board(STARTPOS), 1, -INF, INF, Mode.SEARCH)] * 2
        started = time.monotonic()
        with pytest.raises(JobFailed, match=r"^job 0 took longer than 0\.2 s; aborted$"):
            client.run_jobs(jobs, 2, job_timeout=0.2)
        assert time.monotonic() - started >= 0.2
        aborted = {unpack((("job_id", 16), ("scope", 8)), payload)["job_id"]
                   for _, payload, _ in requests_of(peer, "ABORT")}
        assert aborted == {0, 1}
        assert client.status()["busy"] == 0


def test_new_job_ids_skip_the_ids_cores_hold_and_wrap(peer, connect):
    client = connect(peer)
    assert [client.new_job_id() for _ in range(3)] == [0, 1, 2]
    client.core_jobs.update({0: 3, 1: 5})
    assert [client.new_job_id() for _ in range(3)] == [4, 6, 7]
    client.core_jobs.clear()
    for _ in range(65536 - 8 - 1):
        client.new_job_id()
    assert [client.new_job_id() for _ in range(3)] == [65535, 0, 1]


def test_polling_waits_grow_from_the_first_to_the_longest(connect, monkeypatch):
    waits = []

    def sleep(seconds):
        waits.append(seconds)
        time.sleep(seconds)

    monkeypatch.setattr(client_module, "time", types.SimpleNamespace(monotonic=time.monotonic,
                                                                     sleep=sleep))
    with ScriptedBoard(cores=1, busy_polls=14) as peer:
        client = connect(peer)
        client.run_jobs([(model_board(STARTPOS), 0, -INF, INF, Mode.PERFT)] * 2, 1)
    expected = []
    wait = POLL_FIRST
    for _ in range(15):
        expected.append(wait)
        wait = min(wait * POLL_GROWTH, POLL_LONGEST)
    assert waits == pytest.approx(expected * 2)
    # a job's end is noticed within 50 ms, a short one within about a millisecond
    assert expected[-1] == POLL_LONGEST and waits[0] <= 0.001 and max(waits) <= 0.05


# --- transports -----------------------------------------------------------------------------

@pytest.fixture
def bare_pty():
    master, slave = os.openpty()         # cooked mode, as a fresh terminal comes
    yield master, os.ttyname(slave)
    for fd in (master, slave):
        os.close(fd)


def read_master(master, count, timeout=5.0):
    import select
    data = b""
    deadline = time.monotonic() + timeout
    while len(data) < count and time.monotonic() < deadline:
        if select.select([master], [], [], 0.05)[0]:
            data += os.read(master, 65536)
    return data


def read_transport(transport, count, timeout=5.0):
    data = b""
    deadline = time.monotonic() + timeout
    while len(data) < count and time.monotonic() < deadline:
        data += transport.read(0.05)
    return data


def test_the_pty_is_raw_both_ways(bare_pty):
    master, path = bare_pty
    every_byte = bytes(range(256))
    with PtyTransport(path) as transport:
        transport.write(every_byte)
        assert read_master(master, 256) == every_byte
        os.write(master, every_byte)
        assert read_transport(transport, 256) == every_byte
        assert read_master(master, 1, timeout=0.1) == b"", "the terminal echoed"


def test_a_write_larger_than_the_pty_buffer_arrives_whole(bare_pty):
    import threading
    master, path = bare_pty
    data = bytes(range(256)) * 800
    got = []
    reader = threading.Thread(target=lambda: (time.sleep(0.1), got.append(read_master(master, len(data)))))
    reader.start()
    with PtyTransport(path) as transport:
        transport.write(data)
    reader.join()
    assert got[0] == data


def test_pty_reads_wait_their_timeout_and_no_longer(bare_pty):
    master, path = bare_pty
    with PtyTransport(path) as transport:
        started = time.monotonic()
        assert transport.read(0.2) == b""
        assert time.monotonic() - started >= 0.19
        assert transport.read(0) == b"" and transport.read(-1) == b""
        os.write(master, b"\xa5\x01")
        assert read_transport(transport, 2) == b"\xa5\x01"


def test_transports_close_what_they_open(bare_pty):
    _, path = bare_pty
    before = open_fds()
    with PtyTransport(path) as transport:
        assert open_fds() == before + 1 and transport.name == path
    assert open_fds() == before
    transport.close()                    # twice is harmless
    with SerialTransport(path) as serial_transport:
        assert serial_transport.name == path
    assert open_fds() == before


def test_ports_that_cannot_be_opened_or_read():
    with pytest.raises(TransportError, match=r"^cannot open /dev/pts/999999: No such file or directory$"):
        PtyTransport("/dev/pts/999999")
    with pytest.raises(TransportError, match=r"^cannot open /dev/pts/999999: No such file"):
        open_transport("/dev/pts/999999")
    with pytest.raises(TransportError, match=r"^cannot open serial port /dev/no-such-port: "):
        open_transport("/dev/no-such-port")
    with pytest.raises(TransportError, match=r"^cannot open serial port /dev/no-such-port: "):
        SerialTransport("/dev/no-such-port")
    try:
        broken = PtyTransport("/proc/self/mem")      # readable at once, every read fails (EIO)
    except TransportError:
        pytest.skip("/proc/self/mem cannot be opened here")
    with broken, pytest.raises(TransportError, match=r"^/proc/self/mem: Input/output error$"):
        broken.read(0.1)


def test_open_transport_takes_a_pty_directly_and_anything_else_through_pyserial(peer, connect):
    transport = open_transport(peer.port)
    assert type(transport) is PtyTransport
    assert connect(peer, transport=transport).info().cores == 2
    serial_transport = SerialTransport(peer.port)
    client = connect(peer, transport=serial_transport)
    assert client.info().cores == 2 and client.status()["good_frames"] == 3
    started = time.monotonic()
    assert serial_transport.read(0.15) == b""
    assert time.monotonic() - started >= 0.14


def test_the_transport_interface():
    transport = Transport()
    for call in (lambda: transport.write(b"x"), lambda: transport.read(0)):
        with pytest.raises(NotImplementedError):
            call()
    with transport as same:
        assert same is transport
    assert transport.name == "?"


@pytest.mark.parametrize("direction", ["write", "read"])
def test_faulty_transport_damage_each_kind(bare_pty, direction):
    master, path = bare_pty
    data = bytes(range(1, 201))

    def through(**rates):
        faulty = FaultyTransport(PtyTransport(path), seed=3, **rates)
        with faulty:
            if direction == "write":
                faulty.write(data)
                got = read_master(master, 1 if rates.get("drop") else len(data) * 2, timeout=0.3)
            else:
                os.write(master, data)
                got = read_transport(faulty, len(data) * 2, timeout=0.3)
        return got, faulty.counts

    assert through() == (data, {"flip": 0, "drop": 0, "duplicate": 0, "stall": 0})
    assert through(drop=1.0) == (b"", {"flip": 0, "drop": 200, "duplicate": 0, "stall": 0})
    got, counts = through(duplicate=1.0)
    assert got == bytes(b for b in data for _ in range(2)) and counts["duplicate"] == 200
    got, counts = through(flip=1.0)
    assert len(got) == 200 and counts["flip"] == 200
    assert all(bin(a ^ b).count("1") == 1 for a, b in zip(got, data))
    got, counts = through(drop=0.5, flip=0.5)
    assert 60 < counts["drop"] < 140 and 30 < counts["flip"] < 100
    assert len(got) == 200 - counts["drop"]


def test_faulty_transport_is_repeatable_by_seed_and_stalls(bare_pty):
    master, path = bare_pty
    data = bytes(range(256))
    runs = []
    for seed in (5, 5, 6):
        faulty = FaultyTransport(PtyTransport(path), flip=0.1, drop=0.1, duplicate=0.1, seed=seed)
        with faulty:
            faulty.write(data)
            runs.append(read_master(master, 1, timeout=0.5) + read_master(master, 512, timeout=0.1))
    assert runs[0] == runs[1] != runs[2]
    faulty = FaultyTransport(PtyTransport(path), stall=1.0, stall_seconds=0.1)
    assert faulty.name == f"faulty({path})"
    with faulty:
        started = time.monotonic()
        faulty.write(b"\x01")
        faulty.read(0)
        assert time.monotonic() - started >= 0.2 and faulty.counts["stall"] == 2
    assert read_master(master, 1, timeout=0.5) == b"\x01"


def test_the_client_gets_through_a_faulty_link(peer, connect):
    faulty = FaultyTransport(PtyTransport(peer.port), flip=0.005, drop=0.005, duplicate=0.005,
                             seed=12)
    client = connect(peer, timeout=0.1, retries=30, transport=faulty)
    for _ in range(40):
        info = client.info()
        assert (info.version, info.cores, info.build_id) == (1, 2, 0x5EEDB0A2)
    assert sum(faulty.counts.values()) > 0 and client.retransmissions > 0


class _Recording(Transport):
    """An inner transport in memory: what was written, and given bytes to read."""
    name = "memory"

    def __init__(self, incoming=b""):
        self.written, self.incoming = [], incoming

    def write(self, data):
        self.written.append(data)

    def read(self, timeout):
        return self.incoming


def test_faulty_transport_defaults_are_seed_0_and_50_ms_stalls(monkeypatch):
    from chessaccel.host.backends.board import transport
    data = bytes(range(64))

    def damaged(**kwargs):
        inner = _Recording(data)
        faulty = FaultyTransport(inner, flip=0.3, drop=0.2, duplicate=0.2, **kwargs)
        faulty.write(data)
        return inner.written[0] + faulty.read(0), faulty.counts

    assert damaged() == damaged(seed=0) != damaged(seed=1)
    assert FaultyTransport(_Recording()).rates == {"flip": 0.0, "drop": 0.0, "duplicate": 0.0,
                                                   "stall": 0.0}
    sleeps = []
    monkeypatch.setattr(transport.time, "sleep", sleeps.append)
    faulty = FaultyTransport(_Recording(b"ab"), stall=1.0)
    faulty.write(b"x")
    assert faulty.read(0) == b"ab" and sleeps == [0.05, 0.05]
    assert faulty.counts == {"flip": 0, "drop": 0, "duplicate": 0, "stall": 2}
