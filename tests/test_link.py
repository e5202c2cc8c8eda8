"""The board's link (hdl/link.py + dispatcher in hdl/boardtop.py) against the Python codec.

The whole board top-level runs under cocotb + Icarus, driven at its UART pins, with no search
core (``cores=0``): every request still gets its reply or ERROR. What the board sends back is
decoded with ``chessaccel.contract.protocol.FrameDecoder`` and compared, frame by frame, with what a
reference board built on the same codec answers (``ReferenceLink``), for hand-made cases and a
seeded stream of corrupted, truncated, dropped and duplicated frames.
"""

import functools
import random

import pytest

from chessaccel.contract.defs import Mode, Position, SearchJob
from chessaccel.hdl.boardtop import BoardTop
from chessaccel.contract.protocol import (PROTOCOL_VERSION, START_MARKER, MAX_PAYLOAD, AbortReply,
                                 AbortRequest, AbortScope, Command, ErrorCode, ErrorReply, Frame,
                                 FrameDecoder, FrameError, InfoReply, JobRequest, REQUEST_LAYOUT,
                                 ResultRequest, StatusReply, byte_size, decode_payload,
                                 encode_frame, encode_payload)
from chessaccel.sim.cocotb_runner import run_testbench, toolchain_missing

CLOCKS_PER_BIT = 4
CLOCK_HZ = 1_000_000
BUILD_ID = 0x5EED1D
TIMEOUT_BYTES = 16
BITS_PER_BYTE = 10
TIMEOUT_CYCLES = TIMEOUT_BYTES * BITS_PER_BYTE * CLOCKS_PER_BIT
#: Long enough for the longest reply frame plus a pending one, and for the truncation timeout.
WAIT_CYCLES = TIMEOUT_CYCLES + 3 * (1 + 3 + MAX_PAYLOAD + 2) * BITS_PER_BYTE * CLOCKS_PER_BIT
FUZZ_FRAMES = 40

board_factory = functools.partial(BoardTop, cores=0, clock_hz=CLOCK_HZ,
                                  clocks_per_bit=CLOCKS_PER_BIT, build_id=BUILD_ID,
                                  timeout_bytes=TIMEOUT_BYTES)

START_FEN = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"


def _job_payload(job_id):
    from chessaccel.model.position import parse_position
    board, _ = parse_position(START_FEN)
    job = SearchJob.const({"position": Position.from_bits(board.to_bits()), "depth": 2,
                           "alpha": -100, "beta": 100, "mode": Mode.SEARCH})
    return encode_payload(JobRequest, {"job_id": job_id, "job": job})


class ReferenceLink:
    """What a board with no search core answers, built on the host codec (the model)."""

    def __init__(self):
        self.decoder = FrameDecoder()
        self.good = 0
        self.bad = 0

    def replies(self, stream, quiet_after):
        """Reply items (Frame) for ``stream``; ``quiet_after``: the line then stays quiet."""
        items = self.decoder.feed(stream)
        if quiet_after:
            items += self.decoder.flush()
        return [self._answer(item) for item in items]

    def _error(self, seq, command, code):
        return Frame(seq, Command.ERROR.value,
                     encode_payload(ErrorReply, {"code": code, "command": command or 0}))

    def _answer(self, item):
        if isinstance(item, FrameError):
            self.bad += 1
            return self._error(item.seq, item.command, item.code)
        good_before = self.good
        self.good += 1
        try:
            command = Command(item.command)
        except ValueError:
            command = None
        if command not in REQUEST_LAYOUT:
            return self._error(item.seq, item.command, ErrorCode.UNKNOWN_COMMAND)
        if len(item.payload) != byte_size(REQUEST_LAYOUT[command]):
            return self._error(item.seq, item.command, ErrorCode.BAD_LENGTH)
        if command == Command.INFO:
            payload = encode_payload(InfoReply, {
                "version": PROTOCOL_VERSION, "cores": 0, "clock_hz": CLOCK_HZ,
                "clocks_per_bit": CLOCKS_PER_BIT, "build_id": BUILD_ID})
        elif command == Command.STATUS:
            payload = encode_payload(StatusReply, {"busy": 0, "good_frames": good_before,
                                                   "bad_frames": self.bad})
        elif command == Command.JOB:
            return self._error(item.seq, item.command, ErrorCode.NO_FREE_CORE)
        elif command == Command.RESULT:
            return self._error(item.seq, item.command, ErrorCode.UNKNOWN_JOB)
        else:
            request = decode_payload(AbortRequest, item.payload)
            payload = encode_payload(AbortReply, {"job_id": int(request.job_id), "aborted": 0})
        return Frame(item.seq, item.command, payload)


def _flip(frame, rng):
    data = bytearray(frame)
    data[rng.randrange(1, len(data))] ^= 1 << rng.randrange(8)
    return bytes(data)


def _hand_made_cases():
    info = encode_frame(1, Command.INFO)
    return [
        ("INFO", info, True),
        ("STATUS", encode_frame(2, Command.STATUS), True),
        ("CRC flipped", info[:-1] + bytes([info[-1] ^ 0x40]), True),
        ("noise before a frame", bytes([0x00, 0x13, 0xFF]) + encode_frame(4, Command.INFO), True),
        ("length too large, then a frame",
         bytes([START_MARKER, MAX_PAYLOAD + 1, 5, Command.INFO.value, 1, 2])
         + encode_frame(5, Command.INFO), True),
        ("truncated after the header", encode_frame(6, Command.RESULT, b"\x01\x02")[:5], True),
        ("unknown command", encode_frame(7, 0x42), True),
        ("INFO with a payload", encode_frame(8, Command.INFO, b"\x00"), True),
        ("JOB with no core", encode_frame(9, Command.JOB, _job_payload(0x1234)), True),
        ("RESULT of an unknown job",
         encode_frame(10, Command.RESULT, encode_payload(ResultRequest, {"job_id": 0x1234})), True),
        ("ABORT all", encode_frame(11, Command.ABORT, encode_payload(
            AbortRequest, {"job_id": 7, "scope": AbortScope.ALL})), True),
        ("STATUS counts", encode_frame(12, Command.STATUS), True),
    ]


def _fuzz_cases(seed):
    rng = random.Random(seed)
    cases = []
    for n in range(FUZZ_FRAMES):
        command = rng.choice([Command.INFO, Command.STATUS, Command.RESULT, Command.ABORT])
        layout = REQUEST_LAYOUT[command]
        payload = bytes(rng.randrange(256) for _ in range(byte_size(layout)))
        if command == Command.ABORT:
            payload = encode_payload(AbortRequest, {"job_id": rng.randrange(1 << 16),
                                                    "scope": rng.choice(list(AbortScope))})
        frame = encode_frame(100 + n, command, payload)
        fault = rng.choice(["none", "flip", "drop", "duplicate", "noise", "cut"])
        if fault == "flip":
            frame = _flip(frame, rng)
        elif fault == "drop":
            i = rng.randrange(len(frame))
            frame = frame[:i] + frame[i + 1:]
        elif fault == "duplicate":
            i = rng.randrange(len(frame))
            frame = frame[:i + 1] + frame[i:]
        elif fault == "noise":
            frame = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6))) + frame
        elif fault == "cut":
            frame = frame[:rng.randrange(1 + 3 + 1, len(frame))]   # always past the header
        cases.append((f"fuzz {n} ({command.name}, {fault})", frame, True))
    return cases


def _run(cases):
    exchanges = [{"send": stream.hex(), "wait_cycles": WAIT_CYCLES} for _, stream, _ in cases]
    return run_testbench(board_factory, "boardtop_link", "chessaccel.sim.cocotb.tb_boardtop",
                         {"clocks_per_bit": CLOCKS_PER_BIT, "exchanges": exchanges})["replies"]


def _compare(cases, observed):
    reference = ReferenceLink()
    host = FrameDecoder()
    for (name, stream, quiet), got_hex in zip(cases, observed, strict=True):
        want = reference.replies(stream, quiet)
        got = host.feed(bytes.fromhex(got_hex))
        assert all(isinstance(g, Frame) for g in got), \
            f"{name}: the board sent a frame the host cannot decode: {got} (bytes {got_hex})"
        context = f"{name}: sent {stream.hex()}, board replied {got_hex}"
        assert len(got) == len(want), f"{context}: {len(got)} frames, reference {len(want)}: {want}"
        for g, w in zip(got, want):
            if w.command == Command.ERROR.value and w.seq is None:
                # truncated inside the header: the board's seq/command bytes are whatever it had
                g_error, w_error = (decode_payload(ErrorReply, f.payload) for f in (g, w))
                assert (g.command, g_error.code) == (w.command, w_error.code), context
            else:
                assert g == w, f"{context}: board {g}, reference {w}"


@pytest.mark.skipif(toolchain_missing() is not None, reason=f"{toolchain_missing()}")
def test_link_rtl_matches_codec():
    cases = _hand_made_cases() + _fuzz_cases(seed=5)
    observed = _run(cases)
    _compare(cases, observed)
    # the hand-made cases must show what they are named after
    first = FrameDecoder().feed(bytes.fromhex(observed[0]))[0]
    info = decode_payload(InfoReply, first.payload)
    assert (int(info.version), int(info.cores), int(info.clock_hz), int(info.build_id)) == \
        (PROTOCOL_VERSION, 0, CLOCK_HZ, BUILD_ID)
    codes = [decode_payload(ErrorReply, FrameDecoder().feed(bytes.fromhex(h))[0].payload).code
             for h in observed[2:3] + observed[4:10]]
    assert codes[0] == ErrorCode.BAD_CRC
    assert codes[1] == ErrorCode.BAD_LENGTH
    assert codes[2:] == [ErrorCode.TRUNCATED, ErrorCode.UNKNOWN_COMMAND, ErrorCode.BAD_LENGTH,
                         ErrorCode.NO_FREE_CORE, ErrorCode.UNKNOWN_JOB]


def test_state_tables_match_the_code():
    """docs/protocol.md lists each link FSM state with the comment the code gives it."""
    import inspect
    import re
    from pathlib import Path
    from chessaccel.hdl.link import LinkReceiver, LinkTransmitter
    doc = (Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text()
    for component in (LinkReceiver, LinkTransmitter):
        source = inspect.getsource(component.elaborate)
        states = re.findall(r'm\.State\("(\w+)"\):\n\s*# (.+)', source)
        assert states, f"no states found in {component.__name__}"
        rows = re.findall(rf"^\| (\w+) \| (.+) \|$", doc.split(f"| {component.__name__} state")[1]
                          .split("\n\n")[0], re.M)
        assert rows == states, f"docs/protocol.md's {component.__name__} table is out of date"
