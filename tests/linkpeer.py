"""A scripted board at the far end of a pseudo-terminal, written from docs/protocol.md alone.

It shares no code with chessaccel.contract.protocol or host/: frames are packed and read here byte by byte
(CRC-16/CCITT-FALSE by ``binascii.crc_hqx``), payloads field by field after the layouts the
document names (little-endian, first field in the lowest bits), and a job's answer comes from
python-chess (perft, ``suites.chess_perft``) or the contract's recursive alpha-beta
(``oracle.alphabeta``), never from the model. The host code under test opens ``peer.port`` as it
would open a real board's serial port.

Between a request and its reply the tests put faults, one scripted action per intact request in
arrival order (``peer.script(...)``; "ok" when the script is empty):

    "ok"            the documented reply
    "drop"          the request is served (a JOB starts) but its reply is lost
    "lose"          the request is lost on its way in: nothing is served, nothing answered
    "duplicate"     the reply is sent twice
    "corrupt"       one bit of the reply's payload is flipped (the CRC no longer matches)
    "truncate"      only the first half of the reply is sent
    "noise"         bytes with no start marker come before the reply
    "stale"         a reply with the previous sequence number and other contents comes first
    "wrong_command" a STATUS reply with this request's sequence number comes first
    "short"         the reply's payload lacks its last byte (with a matching CRC)
    "bad_error"     an ERROR reply whose payload is one byte short, nothing served
    ("delay", s)    the reply is sent s seconds late
    ("error", code) an ERROR reply with this code (a name, or any number), nothing served
    ("old_error", code)  an ERROR reply with the previous sequence number first, then the reply
    ("fields", {...})    the reply with these payload fields replaced
    ("raw", bytes)  these bytes instead of a reply, nothing served
"""

import binascii
import fcntl
import os
import select
import struct
import termios
import threading
import time
import tty
from collections import deque

import chess

import suites
from oracle import alphabeta

__all__ = ["ScriptedBoard", "frame", "parse_frame", "pack", "unpack", "CMD", "ERR", "STATUS",
           "JOB_REQUEST", "RESULT_REPLY"]

START = 0xA5
MAX_PAYLOAD = 40
#: Command codes (docs/protocol.md, "Commands").
CMD = {"INFO": 0x01, "JOB": 0x02, "RESULT": 0x03, "ABORT": 0x04, "STATUS": 0x05, "ERROR": 0x06}
#: Error codes, in the order docs/protocol.md lists them (BAD_CRC = 1).
ERR = {"BAD_CRC": 1, "TRUNCATED": 2, "BAD_LENGTH": 3, "UNKNOWN_COMMAND": 4, "NO_FREE_CORE": 5,
       "UNKNOWN_JOB": 6}
#: A job's status in a RESULT reply.
STATUS = {"IDLE": 0, "BUSY": 1, "DONE": 2, "ABORTED": 3, "BAD_JOB": 4}
STARTED, ALREADY_KNOWN = 0, 1
SCOPE_ONE, SCOPE_ALL = 0, 1
SEARCH, PERFT = 0, 1
MAX_DEPTH = 8
INF = 32767

# Layouts: (field, bits); negative bits for a signed (two's complement) field.
INFO_REPLY = (("version", 8), ("cores", 8), ("clock_hz", 32), ("clocks_per_bit", 16),
              ("build_id", 32))
JOB_REQUEST = (("job_id", 16), *((f"sq{i}", 4) for i in range(64)), ("side", 1),
               ("white_kingside", 1), ("white_queenside", 1), ("black_kingside", 1),
               ("black_queenside", 1), ("ep_file", 3), ("ep_valid", 1), ("depth", 4),
               ("alpha", -16), ("beta", -16), ("mode", 1))
JOB_REPLY = (("job_id", 16), ("core", 8), ("ack", 8))
RESULT_REQUEST = (("job_id", 16),)
RESULT_REPLY = (("job_id", 16), ("core", 8), ("score", -16), ("from_sq", 6), ("to_sq", 6),
                ("promo", 3), ("nodes", 64), ("cycles", 48), ("status", 3))
ABORT_REQUEST = (("job_id", 16), ("scope", 8))
ABORT_REPLY = (("job_id", 16), ("aborted", 8))
STATUS_REPLY = (("busy", 8), ("good_frames", 16), ("bad_frames", 16))
ERROR_REPLY = (("code", 8), ("command", 8))
REQUEST_LENGTH = {CMD["INFO"]: 0, CMD["JOB"]: 40, CMD["RESULT"]: 2, CMD["ABORT"]: 3,
                  CMD["STATUS"]: 0}
#: Piece codes of a square's nibble: type | color << 3.
PIECE_TYPE = {1: chess.PAWN, 2: chess.KNIGHT, 3: chess.BISHOP, 4: chess.ROOK, 5: chess.QUEEN,
              6: chess.KING}
PROMO_CODE = {None: 0, chess.QUEEN: 5, chess.ROOK: 4, chess.BISHOP: 3, chess.KNIGHT: 2}
#: How long a frame may stop half-way before the peer answers TRUNCATED.
TRUNCATE_AFTER = 0.25


def size(layout):
    return (sum(abs(bits) for _, bits in layout) + 7) // 8


def pack(layout, values):
    word, offset = 0, 0
    for name, bits in layout:
        width = abs(bits)
        value = values.get(name, 0)
        if not -(1 << width) < value < (1 << width):
            raise ValueError(f"{name}={value} does not fit {width} bits")
        word |= (value & ((1 << width) - 1)) << offset
        offset += width
    return word.to_bytes(size(layout), "little")


def unpack(layout, payload):
    word, offset, out = int.from_bytes(payload, "little"), 0, {}
    for name, bits in layout:
        width = abs(bits)
        value = (word >> offset) & ((1 << width) - 1)
        if bits < 0 and value >> (width - 1):
            value -= 1 << width
        out[name] = value
        offset += width
    return out


def frame(seq, command, payload=b""):
    body = bytes([len(payload), seq & 0xFF, command]) + bytes(payload)
    return bytes([START]) + body + binascii.crc_hqx(body, 0xFFFF).to_bytes(2, "little")


def parse_frame(data):
    """(seq, command, payload) of one whole frame; ValueError when it is not one."""
    if len(data) < 6 or data[0] != START or data[1] != len(data) - 6:
        raise ValueError(f"not a frame: {data.hex(' ')}")
    if binascii.crc_hqx(data[1:-2], 0xFFFF) != int.from_bytes(data[-2:], "little"):
        raise ValueError(f"bad CRC: {data.hex(' ')}")
    return data[2], data[3], bytes(data[4:-2])


def board_of_job(fields):
    """The python-chess board of a JOB request's position fields."""
    cb = chess.Board(None)
    for square in range(64):
        code = fields[f"sq{square}"]
        if code & 7:
            cb.set_piece_at(square, chess.Piece(PIECE_TYPE[code & 7], not code >> 3))
    cb.turn = chess.WHITE if fields["side"] == 0 else chess.BLACK
    rights = "".join(c for c, name in (("K", "white_kingside"), ("Q", "white_queenside"),
                                       ("k", "black_kingside"), ("q", "black_queenside"))
                     if fields[name])
    cb.set_castling_fen(rights or "-")
    if fields["ep_valid"]:
        cb.ep_square = chess.square(fields["ep_file"], 5 if cb.turn == chess.WHITE else 2)
    return cb


class Core:
    def __init__(self):
        self.job_id = None
        self.status = STATUS["IDLE"]
        self.answer = {}
        self.polls_left = 0
        self.reported = True     # the last job's final result has gone out (or there was none)


class ScriptedBoard:
    """The board end of a pty; ``port`` is the path the host opens."""

    def __init__(self, cores=1, busy_polls=1, clock_hz=48_000_000, clocks_per_bit=16,
                 build_id=0x5EED_B0A2, version=1):
        self.info = {"version": version, "cores": cores, "clock_hz": clock_hz,
                     "clocks_per_bit": clocks_per_bit, "build_id": build_id}
        #: RESULT requests a job answers BUSY before DONE (None: it never finishes).
        self.busy_polls = busy_polls
        self.cores = [Core() for _ in range(cores)]
        self.good_frames = self.bad_frames = 0
        #: (seq, command, payload, action) of every intact request, in arrival order.
        self.requests = []
        #: Jobs started: (job_id, core, python-chess FEN, depth, alpha, beta, mode).
        self.started = []
        self.errors_sent = []
        self._script = deque()
        self._pending = []          # (due time, bytes)
        self._lock = threading.Lock()
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave, termios.TCSANOW)
        self.port = os.ttyname(self._slave)
        self._buffer = bytearray()
        self._last_byte = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    # --- the test's side ----------------------------------------------------------------

    def script(self, *actions):
        with self._lock:
            self._script.extend(actions)

    def send(self, data):
        """Bytes onto the line now (e.g. stale replies before the host's client starts)."""
        os.write(self.master, data)

    def wait_readable(self, count, timeout=5.0):
        """Wait until the host's side holds ``count`` unread bytes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            waiting = struct.unpack("i", fcntl.ioctl(self._slave, termios.FIONREAD, b"\0" * 4))[0]
            if waiting >= count:
                return
            time.sleep(0.005)
        raise AssertionError(f"the pty never held {count} bytes")

    def commands(self):
        return [command for _, command, _, _ in self.requests]

    def close(self):
        self._stop.set()
        self._thread.join(5)
        for fd in (self.master, self._slave):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- the line -----------------------------------------------------------------------

    def _serve(self):
        while not self._stop.is_set():
            now = time.monotonic()
            with self._lock:
                due = [data for when, data in self._pending if when <= now]
                self._pending = [(w, d) for w, d in self._pending if w > now]
            for data in due:
                os.write(self.master, data)
            try:
                ready, _, _ = select.select([self.master], [], [], 0.002)
            except (OSError, ValueError):
                return
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:
                    return
                self._last_byte = time.monotonic()
                for byte in chunk:
                    self._byte(byte)
            elif self._buffer and time.monotonic() - self._last_byte > TRUNCATE_AFTER:
                command = self._buffer[3] if len(self._buffer) > 3 else 0
                self._buffer.clear()
                self.bad_frames += 1
                self._error(0, command, "TRUNCATED")

    def _byte(self, byte):
        buffer = self._buffer
        if not buffer:
            if byte == START:
                buffer.append(byte)
            return
        buffer.append(byte)
        if len(buffer) == 2 and buffer[1] > MAX_PAYLOAD:
            buffer.clear()          # the command byte is not read yet
            self.bad_frames += 1
            self._error(0, 0, "BAD_LENGTH")
            return
        if len(buffer) >= 4 and len(buffer) == buffer[1] + 6:
            data = bytes(buffer)
            buffer.clear()
            self._frame(data)

    def _frame(self, data):
        length, seq, command = data[1], data[2], data[3]
        if binascii.crc_hqx(data[1:-2], 0xFFFF) != int.from_bytes(data[-2:], "little"):
            self.bad_frames += 1
            self._error(seq, command, "BAD_CRC")
            return
        with self._lock:
            action = self._script.popleft() if self._script else "ok"
        self.requests.append((seq, command, data[4:-2], action))
        kind = action[0] if isinstance(action, tuple) else action
        if kind == "lose":
            return
        if command in REQUEST_LENGTH and length != REQUEST_LENGTH[command]:
            self.bad_frames += 1
            self._error(seq, command, "BAD_LENGTH")
            return
        self.good_frames += 1
        if kind == "error":
            self._error(seq, command, action[1])
            return
        if kind == "bad_error":
            self._out(frame(seq, CMD["ERROR"], bytes([ERR["UNKNOWN_COMMAND"]])))
            return
        if kind == "raw":
            self._out(action[1])
            return
        if command not in REQUEST_LENGTH:
            self._error(seq, command, "UNKNOWN_COMMAND")
            return
        reply = self._serve_request(command, data[4:-2])
        if isinstance(reply, str):
            self._error(seq, command, reply)
            return
        layout, fields = reply
        if kind == "fields":
            fields = {**fields, **action[1]}
        payload = pack(layout, fields)
        answer = frame(seq, command, payload)
        if kind == "drop":
            return
        if kind == "duplicate":
            answer = answer + answer
        elif kind == "corrupt":
            damaged = bytearray(answer)
            damaged[4 if payload else 2] ^= 0x10
            answer = bytes(damaged)
        elif kind == "damaged_then_ok":
            damaged = bytearray(answer)
            damaged[-1] ^= 0x01
            answer = bytes(damaged) + answer
        elif kind == "truncate":
            answer = answer[:len(answer) // 2]
        elif kind == "noise":
            answer = bytes([0x00, 0x13, 0x5A, 0xFF]) + answer
        elif kind == "stale":
            other = bytearray(payload)
            other[0] ^= 0xFF
            answer = frame(seq - 1, command, bytes(other)) + answer
        elif kind == "wrong_command":
            answer = frame(seq, CMD["STATUS"], pack(STATUS_REPLY, {"busy": 0x7F})) + answer
        elif kind == "short":
            answer = frame(seq, command, payload[:-1])
        elif kind == "old_error":
            answer = frame(seq - 1, CMD["ERROR"], pack(ERROR_REPLY, {
                "code": ERR[action[1]], "command": command})) + answer
        if kind == "delay":
            with self._lock:
                self._pending.append((time.monotonic() + action[1], answer))
            return
        self._out(answer)

    def _out(self, data):
        with self._lock:
            self._pending.append((0.0, data))

    def _error(self, seq, command, code):
        self.errors_sent.append(code)
        self._out(frame(seq, CMD["ERROR"], pack(ERROR_REPLY, {
            "code": ERR.get(code, code), "command": command})))

    # --- the board ----------------------------------------------------------------------

    def _serve_request(self, command, payload):
        if command == CMD["INFO"]:
            return INFO_REPLY, self.info
        if command == CMD["STATUS"]:
            busy = sum(1 << i for i, core in enumerate(self.cores)
                       if core.status == STATUS["BUSY"])
            return STATUS_REPLY, {"busy": busy, "good_frames": self.good_frames & 0xFFFF,
                                  "bad_frames": self.bad_frames & 0xFFFF}
        if command == CMD["JOB"]:
            return self._job(unpack(JOB_REQUEST, payload))
        if command == CMD["RESULT"]:
            return self._result(unpack(RESULT_REQUEST, payload)["job_id"])
        if command == CMD["ABORT"]:
            request = unpack(ABORT_REQUEST, payload)
            return self._abort(request["job_id"], request["scope"])
        raise AssertionError(command)

    def _job(self, fields):
        job_id = fields["job_id"]
        for index, core in enumerate(self.cores):
            if core.job_id == job_id:
                return JOB_REPLY, {"job_id": job_id, "core": index, "ack": ALREADY_KNOWN}
        free = [i for i, core in enumerate(self.cores)
                if core.status != STATUS["BUSY"] and core.reported]
        if not free:
            return "NO_FREE_CORE"
        index = free[0]
        core = self.cores[index]
        cb = board_of_job(fields)
        depth, alpha, beta, mode = fields["depth"], fields["alpha"], fields["beta"], fields["mode"]
        self.started.append((job_id, index, cb.fen(), depth, alpha, beta, mode))
        core.job_id, core.reported, core.polls_left = job_id, False, self.busy_polls
        kings = [len(cb.pieces(chess.KING, color)) for color in (chess.WHITE, chess.BLACK)]
        if depth > MAX_DEPTH or kings != [1, 1] or (mode == SEARCH and not alpha < beta):
            core.status, core.answer = STATUS["BAD_JOB"], {}
        else:
            core.status, core.answer = STATUS["BUSY"], self._answer(cb, depth, alpha, beta, mode)
        return JOB_REPLY, {"job_id": job_id, "core": index, "ack": STARTED}

    @staticmethod
    def _answer(cb, depth, alpha, beta, mode):
        if mode == PERFT:
            nodes = suites.chess_perft(cb, depth)
            score, move = 0, None
        else:
            score, uci, nodes = alphabeta(cb, depth, alpha, beta)
            move = chess.Move.from_uci(uci) if uci else None
        answer = {"score": score, "nodes": nodes, "cycles": 5 * nodes + 17}
        if move is not None:
            answer.update(from_sq=move.from_square, to_sq=move.to_square,
                          promo=PROMO_CODE[move.promotion])
        return answer

    def _result(self, job_id):
        for index, core in enumerate(self.cores):
            if core.job_id == job_id:
                break
        else:
            return "UNKNOWN_JOB"
        if core.status == STATUS["BUSY"]:
            if core.polls_left is not None and core.polls_left <= 0:
                core.status = STATUS["DONE"]
            elif core.polls_left is not None:
                core.polls_left -= 1
        fields = {"job_id": job_id, "core": index, "status": core.status}
        if core.status != STATUS["BUSY"]:
            fields.update(core.answer)
            core.reported = True
        return RESULT_REPLY, fields

    def _abort(self, job_id, scope):
        stopped = 0
        for index, core in enumerate(self.cores):
            if scope == SCOPE_ALL or core.job_id == job_id:
                if core.status == STATUS["BUSY"]:
                    core.status = STATUS["ABORTED"]
                    stopped |= 1 << index
                core.reported = True
                if scope == SCOPE_ALL:
                    core.job_id = None
        return ABORT_REPLY, {"job_id": job_id, "aborted": stopped}
