"""The board client: requests and replies of the link protocol over any Transport.

Every request carries a fresh sequence number; the client waits ``timeout`` seconds for the reply
with that number and otherwise sends the very same frame again, up to ``retries`` times, each
silent wait twice as long as the one before (up to BACKOFF_LIMIT times ``timeout``, once the board
has answered at all), so a slow or congested link is not flooded with copies. A
damaged reply (the decoder's FrameError) or an ERROR reply for a damaged request (BAD_CRC,
TRUNCATED, BAD_LENGTH) is retried at once. This is safe because every request is idempotent on
the board: JOB by job id (a retried JOB that already started answers ALREADY_KNOWN), RESULT,
INFO and STATUS only read, ABORT of a stopped job stops nothing. Replies to older requests
(duplicates, late answers) carry old sequence numbers and are ignored.

A job's answer is never trusted blindly: the RESULT reply must name the job id asked for, come
from the core the job was given to, and say DONE; an aborted or refused job, a board that
stops answering (``NoBoardError``) or a link too damaged to get through (``BoardError``) ends
the job with an error, never with a result.
"""

import random
import time
from collections import deque
from dataclasses import dataclass

from chessaccel.contract.defs import Mode, NO_MOVE, Position, SearchJob, Status
from chessaccel.contract.errors import first_line
from chessaccel.contract.geometry import unpack_move
from chessaccel.model.search import job_problem
from chessaccel.host.backends.base import JobResult
from chessaccel.contract.protocol import (AbortRequest, AbortScope, Command, ErrorCode, ErrorReply,
                                 FrameDecoder, FrameError, JobRequest, REPLY_LAYOUT,
                                 ResultRequest, byte_size, decode_payload, encode_frame,
                                 encode_payload)

__all__ = ["BoardError", "BoardRefused", "NoBoardError", "LinkLost", "JobFailed", "BadJob",
           "BoardInfo", "JobOutcome", "BoardClient", "run_on_boards"]

#: Errors that mean "the request was damaged on the way": send it again.
LINK_ERRORS = (ErrorCode.BAD_CRC, ErrorCode.TRUNCATED, ErrorCode.BAD_LENGTH)
JOB_ID_SPACE = 1 << 16
SEQ_SPACE = 1 << 8
#: Seconds to wait for a reply before sending the request again (a real board answers in ms;
#: the simulated one, in fractions of a second).
DEFAULT_TIMEOUT = 1.0
DEFAULT_RETRIES = 12
#: A silent wait doubles after each one, up to this many times ``timeout`` (only once the board
#: has answered: an absent board is reported after ``retries + 1`` plain timeouts).
BACKOFF_LIMIT = 4
#: Polling of a running job: first wait, growth factor and longest wait, in seconds.
POLL_FIRST, POLL_GROWTH, POLL_LONGEST = 0.0005, 1.5, 0.05


class BoardError(RuntimeError):
    """The board refused a request or the link failed; the message says which."""


class BoardRefused(BoardError):
    """The board answered a request with an ERROR other than a damaged-frame one."""

    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


class NoBoardError(BoardError):
    """Nothing answered at all."""


class LinkLost(BoardError):
    """The port itself failed: unplugged, or its far end (a simulated board) closed."""


class JobFailed(BoardError):
    """A job ended without a result (aborted, refused as bad, lost by the board)."""


class BadJob(JobFailed):
    """A job the core refuses (its BAD_JOB): caught before sending, or answered by the board."""


def _lost(what, transport, error):
    """The LinkLost of ``transport``'s failure ``error`` (an OSError) while doing ``what``."""
    text = first_line(error).removeprefix(f"{transport.name}: ")
    return LinkLost(f"{what} on {transport.name}: {text}")


def _member(view, name):
    """An enum field of a reply: its member, or its number when it names none (a newer board,
    or damage the CRC missed); the caller then reports it instead of raising ValueError."""
    try:
        return getattr(view, name)
    except ValueError:
        field = view.shape()[name]
        return (view.as_value().value >> field.offset) & ((1 << field.width) - 1)


@dataclass(frozen=True)
class BoardInfo:
    version: int
    cores: int
    clock_hz: int
    clocks_per_bit: int
    build_id: int

    def lines(self):
        return [f"protocol version: {self.version}", f"cores: {self.cores}",
                f"clock: {self.clock_hz} Hz",
                f"clocks per bit: {self.clocks_per_bit} "
                f"({self.clock_hz / self.clocks_per_bit:.0f} baud)",
                f"build id: {self.build_id:08x}"]


@dataclass(frozen=True)
class JobOutcome:
    score: int
    best_move: tuple        # (from, to, promo) or None
    nodes: int
    cycles: int
    core: int

    def result(self):
        """The JobResult of a search job (the board keeps no variation: ``pv`` is the move)."""
        return JobResult(self.score, self.best_move, [self.best_move] if self.best_move else [],
                         self.nodes, self.cycles)


class BoardClient:
    """Talks to one board over ``transport``; see the module docstring for the rules."""

    def __init__(self, transport, timeout=DEFAULT_TIMEOUT, retries=DEFAULT_RETRIES):
        self.transport = transport
        self.timeout = timeout
        self.retries = retries
        self._decoder = FrameDecoder(rescan=True)
        # a random first sequence number, and whatever an earlier session left in the line
        # dropped: a stale reply cannot pass for the answer to this session's first requests
        self._seq = random.randrange(SEQ_SPACE)
        try:
            while transport.read(0):
                pass
        except OSError as error:
            raise _lost("the link failed", transport, error) from None
        self._next_job_id = 0
        self.core_jobs = {}     # core -> job id, as the board acknowledged them
        self.retransmissions = 0
        self._ever_answered = False

    # --- requests -------------------------------------------------------------------------

    def request(self, command, layout=None, fields=None):
        """Send one request, return the reply payload (a layout view) or raise BoardError."""
        payload = encode_payload(layout, fields) if layout is not None else b""
        self._seq = (self._seq + 1) % SEQ_SPACE
        seq = self._seq
        frame = encode_frame(seq, command, payload)
        last_trouble = "no reply"
        wait = self.timeout
        for attempt in range(self.retries + 1):
            if attempt:
                self.retransmissions += 1
            # the decoder keeps a reply half received: it may be the slow answer to the same
            # request (same seq); a reply left broken fails its CRC and is retried
            try:
                self.transport.write(frame)
                outcome = self._await_reply(seq, command, wait)
            except OSError as error:    # the port itself failed (unplugged, its far end closed)
                raise _lost(f"{command.name} failed", self.transport, error) from None
            if not isinstance(outcome, str):
                return outcome
            last_trouble = outcome
            if outcome.startswith("no reply") and self._ever_answered:
                wait = min(2 * wait, BACKOFF_LIMIT * self.timeout)
        if not self._ever_answered:
            raise NoBoardError(f"no board answers on {self.transport.name} "
                               f"({self.retries + 1} tries, {self.timeout} s each)")
        raise BoardError(f"{command.name} failed after {self.retries + 1} tries on "
                         f"{self.transport.name}: {last_trouble}")

    def _await_reply(self, seq, command, wait):
        """The reply view, or a string saying why the request should be sent again.

        Everything read in one go is looked at: a damaged frame beside the wanted reply does
        not hide the reply."""
        deadline = time.monotonic() + wait
        while (left := deadline - time.monotonic()) > 0:
            trouble = None
            chunk = self.transport.read(left)
            # nothing came for the rest of the wait: the line is quiet, and a false frame that
            # junk opened may hold the reply (FrameDecoder.flush)
            for item in self._decoder.feed(chunk) if chunk else self._decoder.flush():
                self._ever_answered = True
                if isinstance(item, FrameError):
                    trouble = f"damaged reply ({item})"
                    continue
                if item.command == Command.ERROR.value:
                    if len(item.payload) != byte_size(ErrorReply):
                        trouble = "damaged ERROR reply"
                        continue
                    error = decode_payload(ErrorReply, item.payload)
                    code = _member(error, "code")
                    if code in LINK_ERRORS:
                        trouble = f"the board got a damaged request ({code.name})"
                        continue
                    if item.seq == seq:
                        name = code.name if isinstance(code, ErrorCode) else f"error code {code}"
                        raise BoardRefused(f"the board refused {command.name}: {name}", code)
                    continue     # a late answer to an older request
                if item.seq != seq or item.command != command.value:
                    continue     # a duplicate or late reply to an older request
                layout = REPLY_LAYOUT[command]
                if len(item.payload) != byte_size(layout):
                    trouble = f"{command.name} reply of {len(item.payload)} bytes"
                    continue
                return decode_payload(layout, item.payload)
            if trouble is not None:
                return trouble
        return f"no reply within {wait} s"

    # --- the commands ---------------------------------------------------------------------

    def info(self):
        reply = self.request(Command.INFO)
        return BoardInfo(int(reply.version), int(reply.cores), int(reply.clock_hz),
                         int(reply.clocks_per_bit), int(reply.build_id))

    def status(self):
        reply = self.request(Command.STATUS)
        return {"busy": int(reply.busy), "good_frames": int(reply.good_frames),
                "bad_frames": int(reply.bad_frames)}

    def abort(self, job_id=None):
        """Stop one job, or all jobs (and start a fresh session: job ids are forgotten)."""
        scope = AbortScope.ALL if job_id is None else AbortScope.ONE
        reply = self.request(Command.ABORT, AbortRequest,
                             {"job_id": job_id or 0, "scope": scope})
        if scope == AbortScope.ALL:
            self.core_jobs.clear()
        return int(reply.aborted)

    def new_job_id(self):
        """A job id that no core holds (the board would take it for a retry)."""
        held = set(self.core_jobs.values())
        while True:
            job_id = self._next_job_id
            self._next_job_id = (self._next_job_id + 1) % JOB_ID_SPACE
            if job_id not in held:
                return job_id

    def submit(self, job_id, board, depth, alpha, beta, mode=Mode.SEARCH):
        """Hand a job to the board; returns the core, or None when every core is busy.

        A job the core would refuse (``job_problem``: depth, window, not one king a side) raises
        BadJob here and is never sent."""
        problem = job_problem(board, depth, alpha, beta, perft=mode == Mode.PERFT)
        if problem:
            raise BadJob(f"job {job_id} not sent: {problem}")
        job = SearchJob.const({"position": Position.from_bits(board.to_bits()), "depth": depth,
                               "alpha": alpha, "beta": beta, "mode": mode})
        try:
            reply = self.request(Command.JOB, JobRequest, {"job_id": job_id, "job": job})
        except BoardRefused as error:
            if error.code == ErrorCode.NO_FREE_CORE:
                return None
            raise
        if int(reply.job_id) != job_id:
            raise BoardError(f"JOB {job_id} acknowledged as job {int(reply.job_id)}")
        core = int(reply.core)
        # ALREADY_KNOWN: an earlier copy of this very request started the job (its reply was
        # lost). Ids cannot alias older jobs: a session begins with ABORT of all jobs, which
        # makes the board forget every id, and new_job_id skips the ids cores still hold.
        self.core_jobs[core] = job_id
        return core

    def poll(self, job_id, core):
        """The job's outcome once DONE, None while it runs; JobFailed if it cannot finish."""
        try:
            reply = self.request(Command.RESULT, ResultRequest, {"job_id": job_id})
        except BoardRefused as error:
            if error.code == ErrorCode.UNKNOWN_JOB:
                raise JobFailed(f"the board lost job {job_id} (no core holds it)") from None
            raise
        if int(reply.job_id) != job_id or int(reply.core) != core:
            raise BoardError(f"RESULT for job {job_id} on core {core} answered for job "
                             f"{int(reply.job_id)} on core {int(reply.core)}")
        result = reply.result
        status = _member(result, "status")
        if status == Status.BUSY:
            return None
        if status == Status.BAD_JOB:
            raise BadJob(f"the board refused job {job_id} (BAD_JOB: a depth, window or position "
                         f"the core cannot hold)")
        if status != Status.DONE:
            name = status.name if isinstance(status, Status) else str(status)
            raise JobFailed(f"job {job_id} ended {name}")
        move_bits = result.best_move.as_value().value
        best = None if move_bits == NO_MOVE else unpack_move(move_bits)
        return JobOutcome(int(result.score), best, int(result.nodes), int(result.cycles), core)

    def run_jobs(self, jobs, cores, job_timeout=None):
        """Run (board, depth, alpha, beta, mode) jobs, up to ``cores`` at once; outcomes in order
        (``run_on_boards`` with this one board)."""
        return run_on_boards([(self, cores)], jobs, job_timeout)

    def run_job(self, board, depth, alpha, beta, mode=Mode.SEARCH, job_timeout=None):
        return self.run_jobs([(board, depth, alpha, beta, mode)], 1, job_timeout)[0]


def run_on_boards(boards, jobs, job_timeout=None):
    """Run (board, depth, alpha, beta, mode) jobs on ``boards``, (BoardClient, cores) pairs,
    each job to the board with the most free cores (ties: the first), polled until it is done;
    the outcomes in the jobs' order.

    A job that fails raises JobFailed (after aborting the others), a board that fails its
    BoardError; ``job_timeout`` seconds per job, when given, bound the wait.
    """
    outcomes = [None] * len(jobs)
    pending = deque(range(len(jobs)))
    running = {}        # job index -> (board number, job id, core, deadline)
    busy = [0] * len(boards)
    wait = POLL_FIRST
    try:
        while pending or running:
            full = set()        # boards that answered NO_FREE_CORE this round
            while pending:
                free = [(cores - busy[n], -n) for n, (_, cores) in enumerate(boards)
                        if n not in full and busy[n] < cores]
                if not free:
                    break
                number = -max(free)[1]
                client = boards[number][0]
                index = pending[0]
                job_id = client.new_job_id()
                core = client.submit(job_id, *jobs[index])
                if core is None:
                    full.add(number)
                    continue
                pending.popleft()
                busy[number] += 1
                deadline = time.monotonic() + job_timeout if job_timeout else None
                running[index] = (number, job_id, core, deadline)
                wait = POLL_FIRST
            time.sleep(wait)        # (with nothing running: every core of another session)
            wait = min(wait * POLL_GROWTH, POLL_LONGEST)
            for index, (number, job_id, core, deadline) in list(running.items()):
                client = boards[number][0]
                outcome = client.poll(job_id, core)
                if outcome is not None:
                    outcomes[index] = outcome
                    del running[index]
                    busy[number] -= 1
                    wait = POLL_FIRST
                elif deadline is not None and time.monotonic() > deadline:
                    client.abort(job_id)
                    del running[index]
                    raise JobFailed(f"job {job_id} took longer than {job_timeout} s; aborted")
    except BaseException:
        for number, job_id, _, _ in running.values():
            try:
                boards[number][0].abort(job_id)
            except BoardError:
                pass
        raise
    return outcomes
