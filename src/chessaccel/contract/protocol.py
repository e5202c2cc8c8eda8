"""The host <-> board link protocol: frames, commands, payloads and the CRC, defined once.

docs/protocol.md is the prose version. The RTL (hdl/link.py, hdl/boardtop.py) uses these shapes
directly; the host (host/backends/board/client.py) and the tests pack and unpack with ``encode_payload`` /
``decode_payload``, which go through the layouts, so no bit position is written twice.

A frame on the wire::

    START_MARKER | FrameHeader (length, seq, command) | payload (length bytes) | CRC (2 bytes)

Every multi-byte value is little-endian: byte ``i`` of a packed layout holds its bits
``8*i .. 8*i+7``. The CRC (CRC-16/CCITT-FALSE) covers the header and the payload, not the start
marker, and is sent low byte first. The host sends requests; the board answers each accepted
request with one reply frame carrying the same ``seq`` and ``command``, or an ERROR frame.
"""

from dataclasses import dataclass

from amaranth.lib import data, enum

from chessaccel.contract.defs import SearchJob, SearchResult

__all__ = [
    "PROTOCOL_VERSION", "START_MARKER", "MAX_CORES", "CRC_POLY", "CRC_INIT", "CRC_BYTES",
    "Command", "ErrorCode", "JobAck", "AbortScope", "FrameHeader", "JobId",
    "InfoReply", "JobRequest", "JobReply", "ResultRequest", "ResultReply", "AbortRequest",
    "AbortReply", "StatusReply", "ErrorReply", "REQUEST_LAYOUT", "REPLY_LAYOUT",
    "HEADER_BYTES", "MAX_PAYLOAD", "byte_size", "crc16", "crc16_update",
    "encode_frame", "encode_payload", "decode_payload", "Frame", "FrameError", "FrameDecoder",
]

#: Bumped whenever a frame or payload layout changes; INFO reports it.
PROTOCOL_VERSION = 1
#: First byte of every frame; the receiver hunts for it after any error.
START_MARKER = 0xA5
#: Largest number of SearchCores one board may hold (the width of the core masks).
MAX_CORES = 8

#: CRC-16/CCITT-FALSE: polynomial x^16 + x^12 + x^5 + 1, MSB first, initial value 0xFFFF,
#: no final XOR. Its check value (CRC of b"123456789") is CRC_CHECK.
CRC_POLY = 0x1021
CRC_INIT = 0xFFFF
CRC_WIDTH = 16
CRC_CHECK = 0x29B1
CRC_BYTES = CRC_WIDTH // 8

JobId = 16


class Command(enum.Enum, shape=8):
    """What a frame asks for (request) or answers (reply: the same code as its request)."""
    NONE   = 0x00   # never sent: the reset value of registers that hold a command
    INFO   = 0x01   # protocol version, cores, clock, bit rate divisor, build id
    JOB    = 0x02   # start a job on a free core (idempotent by job id)
    RESULT = 0x03   # report a job's state and, once done, its result (may be asked again)
    ABORT  = 0x04   # stop one job or all jobs
    STATUS = 0x05   # busy cores and the link's frame counters
    ERROR  = 0x06   # only from the board: the request could not be served


class ErrorCode(enum.Enum, shape=8):
    NONE            = 0x00   # never sent: the reset value of registers that hold a code
    BAD_CRC         = 0x01   # CRC mismatch: the frame is dropped, the receiver resynchronises
    TRUNCATED       = 0x02   # the line went quiet in the middle of a frame
    BAD_LENGTH      = 0x03   # length above MAX_PAYLOAD, or wrong for the command
    UNKNOWN_COMMAND = 0x04   # intact frame whose command the board does not serve
    NO_FREE_CORE    = 0x05   # JOB while every core is busy
    UNKNOWN_JOB     = 0x06   # RESULT for a job id no core holds


class JobAck(enum.Enum, shape=8):
    STARTED       = 0x00    # the job was handed to a free core now
    ALREADY_KNOWN = 0x01    # a core already holds this job id: nothing was started (retry)


class AbortScope(enum.Enum, shape=8):
    ONE = 0x00   # the job with the given id
    ALL = 0x01   # every running job


class FrameHeader(data.Struct):
    length:  8          # payload bytes
    seq:     8          # chosen by the host, echoed by the reply
    command: Command


class InfoReply(data.Struct):
    version:         8
    cores:           8
    clock_hz:        32
    clocks_per_bit:  16
    build_id:        32


class JobRequest(data.Struct):
    job_id: JobId
    job:    SearchJob


class JobReply(data.Struct):
    job_id: JobId
    core:   8
    ack:    JobAck


class ResultRequest(data.Struct):
    job_id: JobId


class ResultReply(data.Struct):
    """A job's state (``result.status``: BUSY, DONE, ABORTED or BAD_JOB) and its result."""
    job_id: JobId
    core:   8
    result: SearchResult


class AbortRequest(data.Struct):
    job_id: JobId
    scope:  AbortScope


class AbortReply(data.Struct):
    job_id:  JobId
    aborted: MAX_CORES   # cores that were running the job(s) and were stopped


class StatusReply(data.Struct):
    busy:        MAX_CORES
    good_frames: 16      # intact requests received (wraps)
    bad_frames:  16      # frames dropped for CRC, truncation or length (wraps)


class ErrorReply(data.Struct):
    code:    ErrorCode
    command: 8           # the command byte of the offending frame (0 when not read)


#: Payload layout of each request (None: no payload).
REQUEST_LAYOUT = {
    Command.INFO: None, Command.JOB: JobRequest, Command.RESULT: ResultRequest,
    Command.ABORT: AbortRequest, Command.STATUS: None,
}
#: Payload layout of each reply.
REPLY_LAYOUT = {
    Command.INFO: InfoReply, Command.JOB: JobReply, Command.RESULT: ResultReply,
    Command.ABORT: AbortReply, Command.STATUS: StatusReply, Command.ERROR: ErrorReply,
}


def byte_size(layout):
    """Bytes a layout takes on the wire (0 for None); its last byte is zero-padded."""
    return 0 if layout is None else (data.Layout.cast(layout).size + 7) // 8


HEADER_BYTES = byte_size(FrameHeader)
#: Largest payload of any frame: the receiver's buffer size; longer lengths are refused.
MAX_PAYLOAD = max(byte_size(layout) for layout in (*REQUEST_LAYOUT.values(), *REPLY_LAYOUT.values()))


# --- CRC ------------------------------------------------------------------------------------

def crc16_update(crc, byte):
    """The CRC after one more byte (bit-serial definition; the RTL unrolls the same loop)."""
    crc ^= byte << (CRC_WIDTH - 8)
    for _ in range(8):
        crc = ((crc << 1) ^ CRC_POLY) if crc & (1 << (CRC_WIDTH - 1)) else (crc << 1)
        crc &= (1 << CRC_WIDTH) - 1
    return crc


def crc16(data_bytes, crc=CRC_INIT):
    for byte in data_bytes:
        crc = crc16_update(crc, byte)
    return crc


# --- payloads -------------------------------------------------------------------------------

def encode_payload(layout, fields):
    """Bytes of ``layout.const(fields)`` (a dict as ``Layout.const`` takes it)."""
    if layout is None:
        return b""
    value = data.Layout.cast(layout).const(fields).as_value().value
    return value.to_bytes(byte_size(layout), "little")


def decode_payload(layout, payload):
    """The ``layout`` view (a ``data.Const``) of payload bytes; raises FrameError on a bad size."""
    if len(payload) != byte_size(layout):
        raise FrameError(ErrorCode.BAD_LENGTH,
                         f"payload of {len(payload)} bytes, expected {byte_size(layout)}")
    return data.Layout.cast(layout).from_bits(int.from_bytes(payload, "little"))


# --- frames ---------------------------------------------------------------------------------

def encode_frame(seq, command, payload=b""):
    """The bytes of one frame; ``command`` is a Command or its integer code."""
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes exceeds MAX_PAYLOAD={MAX_PAYLOAD}")
    code = command.value if isinstance(command, Command) else command
    body = _header_bytes(len(payload), seq & 0xFF, code) + bytes(payload)
    crc = crc16(body)
    return bytes([START_MARKER]) + body + crc.to_bytes(CRC_BYTES, "little")


def _header_bytes(length, seq, code):
    layout = data.Layout.cast(FrameHeader)
    value = 0
    for name, raw in (("length", length), ("seq", seq), ("command", code)):
        field = layout[name]
        value |= (raw & ((1 << field.width) - 1)) << field.offset
    return value.to_bytes(HEADER_BYTES, "little")


@dataclass(frozen=True)
class Frame:
    seq: int
    command: int        # raw command byte (compare with Command.X.value)
    payload: bytes


class FrameError(Exception):
    """A frame that could not be decoded: ``code`` is the ErrorCode the board would send."""

    def __init__(self, code, message, seq=None, command=0):
        super().__init__(message)
        self.code = code
        self.seq = seq
        self.command = command


class FrameDecoder:
    """Streaming decoder with the receiver's resynchronisation rules (hdl/link.py).

    ``feed(bytes)`` returns a list of ``Frame`` and ``FrameError`` items in arrival order. Bytes
    before a start marker are skipped; a length above MAX_PAYLOAD is refused at once; a CRC
    mismatch drops the whole frame; after an error the decoder hunts for the next start marker,
    from the byte after the bad frame (it never rewinds, like the hardware). ``flush()`` ends a
    frame the line left unfinished (the timeout of the hardware) and reports it as TRUNCATED.

    ``rescan=True`` is the host's decoder (host/backends/board/client.py): after a bad frame it
    hunts again from the byte after the bad frame's start marker, through the bytes it had taken
    for that frame. A start marker that a broken frame swallowed (a stray 0xA5 before a reply
    reads the reply's own marker as a length of 165) is found again. Without it, a reply with a
    0xA5 byte near its end (in its CRC, say) leaves the decoder inside a false frame once a fault
    has put it out of step, and every copy of the same reply is swallowed in turn: a client's 31
    tries of one request all failed (a flake of test_requests_get_through_a_faulty_link).
    The hardware keeps no bytes; its line timeout ends such a false frame (``flush``). A false
    frame opened by junk just before the last reply can be longer than what is left of the
    stream, so the reply is found only when the line goes quiet: the host's ``flush`` looks
    again at the bytes after the unfinished frame's marker, as after a bad one (the client
    flushes when its wait for a reply ends with no byte).
    """

    _HUNT, _HEADER, _BODY = range(3)

    def __init__(self, rescan=False):
        self.rescan = rescan
        self.reset()

    def reset(self):
        self._state = self._HUNT
        self._buffer = bytearray()
        self._needed = 0

    @property
    def in_frame(self):
        return self._state != self._HUNT

    def feed(self, chunk):
        out = []
        pending = bytearray(chunk)
        at = 0
        while at < len(pending):
            byte = pending[at]
            at += 1
            if self._state == self._HUNT:
                if byte == START_MARKER:
                    self._state, self._buffer = self._HEADER, bytearray()
                continue
            self._buffer.append(byte)
            if self._state == self._HEADER and len(self._buffer) == HEADER_BYTES:
                header = self._header()
                if header["length"] > MAX_PAYLOAD:
                    out.append(FrameError(ErrorCode.BAD_LENGTH,
                                          f"length {header['length']} > {MAX_PAYLOAD}",
                                          header["seq"], header["command"]))
                    pending[at:at] = self._drop_bad_frame()
                    continue
                self._state = self._BODY
                self._needed = HEADER_BYTES + header["length"] + CRC_BYTES
            elif self._state == self._BODY and len(self._buffer) == self._needed:
                item = self._finish()
                out.append(item)
                if isinstance(item, FrameError):
                    pending[at:at] = self._drop_bad_frame()
                else:
                    self.reset()
        return out

    def _drop_bad_frame(self):
        """Hunt again; the bytes to look at again first (rescan: those after its marker)."""
        taken = self._buffer if self.rescan else bytearray()
        self.reset()
        return taken

    def flush(self):
        """End an unfinished frame (the line went quiet): [] if none was open, else
        [FrameError(TRUNCATED)], and with ``rescan`` whatever the bytes after its marker hold,
        each frame left unfinished there ended the same way."""
        if self._state == self._HUNT:
            return []
        header = self._header() if len(self._buffer) >= HEADER_BYTES else {"seq": None, "command": 0}
        out = [FrameError(ErrorCode.TRUNCATED, "frame ended early", header["seq"], header["command"])]
        out += self.feed(self._drop_bad_frame())
        return out + self.flush()

    def _header(self):
        value = int.from_bytes(self._buffer[:HEADER_BYTES], "little")
        layout = data.Layout.cast(FrameHeader)
        return {name: (value >> layout[name].offset) & ((1 << layout[name].width) - 1)
                for name in ("length", "seq", "command")}

    def _finish(self):
        header = self._header()
        body = bytes(self._buffer[:-CRC_BYTES])
        received = int.from_bytes(self._buffer[-CRC_BYTES:], "little")
        if crc16(body) != received:
            return FrameError(ErrorCode.BAD_CRC, f"CRC {received:#06x} != {crc16(body):#06x}",
                              header["seq"], header["command"])
        return Frame(header["seq"], header["command"], body[HEADER_BYTES:])
