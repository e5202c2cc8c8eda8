"""The board's top level: UART, link, dispatcher and N SearchCores (docs/protocol.md).

This is the design that goes into the bitstream and, unchanged, into the simulated board
(sim/boardsim.py, Verilator) and the link tests (cocotb + Icarus). Ports: ``uart_rx`` and
``uart_tx`` (the serial line, 8N1) and ``led`` (bit 0: something is happening on the link or in a
core; bit 1 + i: core i is busy). The simulated board uses ``led`` to let the simulation sleep
while the board is idle.
"""

import functools

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from chessaccel.contract.defs import SearchJob, SearchResult, Status
from chessaccel.contract.evalweights import DEFAULT_EVALUATION, check_evaluation
from chessaccel.contract.protocol import (MAX_CORES, PROTOCOL_VERSION, AbortReply, AbortRequest, AbortScope,
                                 Command, ErrorCode, ErrorReply, InfoReply, JobAck, JobReply,
                                 JobRequest, REQUEST_LAYOUT, ResultReply, ResultRequest,
                                 StatusReply, byte_size)
from .link import EventKind, LinkReceiver, LinkTransmitter, OutgoingFrame, ReceivedEvent
from .uart import DATA_BITS, UARTReceiver, UARTTransmitter

__all__ = ["CoreSignature", "Dispatcher", "BoardTop", "DEFAULT_TIMEOUT_BYTES", "LED_ACTIVITY"]

#: A frame that goes quiet for this many byte times is reported TRUNCATED.
DEFAULT_TIMEOUT_BYTES = 64
#: Bits on the line per byte (start, 8 data, stop): converts byte times into bit times.
BITS_PER_BYTE = 1 + DATA_BITS + 1
#: Index of the activity LED; the busy LED of core i is LED_ACTIVITY + 1 + i.
LED_ACTIVITY = 0

#: One SearchCore seen from the dispatcher: a job and its start strobe out, the result and busy
#: in; ``abort`` is held high until the core drops ``busy``.
CoreSignature = wiring.Signature({
    "job":    Out(SearchJob),
    "start":  Out(1),
    "abort":  Out(1),
    "result": In(SearchResult),
    "busy":   In(1),
})


def _view(layout, value):
    """``layout``'s view of the first bits of a payload buffer."""
    layout = data.Layout.cast(layout)
    return layout(value.as_value()[:layout.size])


class Dispatcher(wiring.Component):
    """Serves one request at a time: each event from the receiver becomes one reply frame.

    JOB goes to the lowest-numbered free core unless a core already holds its job id (then the
    reply says ALREADY_KNOWN and nothing starts: a retried JOB never runs twice). A core keeps its
    job id and result until it is given another job, so RESULT may be asked again and again,
    and a core is given another job only once a RESULT reply has carried its final result (a
    finished job is never overwritten before the host has it). ABORT of all jobs also makes every core forget its job id (a host starts its session so).
    """

    def __init__(self, cores, clock_hz, clocks_per_bit, build_id):
        if not 0 <= cores <= MAX_CORES:
            raise ValueError(f"cores must be in 0..{MAX_CORES}, got {cores}")
        self.cores = cores
        self.clock_hz = clock_hz
        self.clocks_per_bit = clocks_per_bit
        self.build_id = build_id
        super().__init__({
            "events":  In(stream.Signature(ReceivedEvent)),
            "replies": Out(stream.Signature(OutgoingFrame)),
            "core":    Out(CoreSignature).array(cores),
            "busy":    Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        n = self.cores
        event = self.events.payload
        reply = Signal(OutgoingFrame)
        m.d.comb += self.replies.payload.eq(reply)
        with m.If(self.replies.ready):
            m.d.sync += self.replies.valid.eq(0)

        good_frames = Signal(16)
        bad_frames = Signal(16)
        job = Signal(SearchJob)
        job_ids = [Signal(16, name=f"job_id_{i}") for i in range(n)]
        holds = Signal(n)          # core i has been given job_ids[i]
        delivered = Signal(n)      # core i's final result has been sent in a RESULT reply
        starting = Signal(n)       # start strobe goes out this cycle
        aborting = Signal(n)       # abort held until the core stops
        busy = Signal(n)
        m.d.sync += starting.eq(0)
        for i, port in enumerate(self.core):
            m.d.comb += [port.job.eq(job), port.start.eq(starting[i]), port.abort.eq(aborting[i]),
                         busy[i].eq(port.busy)]
            with m.If(~port.busy & ~starting[i]):
                m.d.sync += aborting[i].eq(0)
        m.d.comb += self.busy.eq(busy.any() if n else 0)

        # the job id every request carries sits at the front of its payload
        request_job_id = _view(ResultRequest, event.payload).job_id
        matches = Signal(n)
        free = Signal(n)
        for i in range(n):
            m.d.comb += [matches[i].eq(holds[i] & (job_ids[i] == request_job_id)),
                         # never hand out a core whose result the host has not yet received
                         free[i].eq(~busy[i] & ~starting[i] & (~holds[i] | delivered[i]))]
        matched_core = Signal(range(max(n, 1)))
        free_core = Signal(range(max(n, 1)))
        for i in reversed(range(n)):    # the lowest index wins
            with m.If(matches[i]):
                m.d.comb += matched_core.eq(i)
            with m.If(free[i]):
                m.d.comb += free_core.eq(i)
        any_match = matches.any() if n else 0
        any_free = free.any() if n else 0

        def answer(layout, fields):
            m.d.sync += [reply.header.length.eq(byte_size(layout)), reply.payload.eq(0)]
            view = _view(layout, reply.payload)
            m.d.sync += [getattr(view, name).eq(value) for name, value in fields.items()]

        def error(code):
            m.d.sync += reply.header.command.eq(Command.ERROR)
            answer(ErrorReply, {"code": code, "command": event.header.command.as_value()})

        m.d.comb += self.events.ready.eq(~self.replies.valid)
        with m.If(self.events.valid & self.events.ready):
            m.d.sync += [self.replies.valid.eq(1), reply.header.seq.eq(event.header.seq),
                         reply.header.command.eq(event.header.command)]
            command = event.header.command
            length = event.header.length
            with m.If(event.kind == EventKind.ERROR):
                m.d.sync += bad_frames.eq(bad_frames + 1)
                error(event.error)
            with m.Else():
                m.d.sync += good_frames.eq(good_frames + 1)
                with m.Switch(command):
                    for code, layout in REQUEST_LAYOUT.items():
                        with m.Case(code):
                            with m.If(length != byte_size(layout)):
                                error(ErrorCode.BAD_LENGTH)
                            with m.Else():
                                self._serve(m, code, event, answer, error, job, job_ids, holds,
                                            delivered, starting, aborting, busy, matches,
                                            matched_core,
                                            free_core, any_match, any_free, good_frames,
                                            bad_frames)
                    with m.Default():
                        error(ErrorCode.UNKNOWN_COMMAND)
        return m

    def _serve(self, m, command, event, answer, error, job, job_ids, holds, delivered, starting,
               aborting, busy, matches, matched_core, free_core, any_match, any_free,
               good_frames, bad_frames):
        if command == Command.INFO:
            answer(InfoReply, {"version": PROTOCOL_VERSION, "cores": self.cores,
                               "clock_hz": self.clock_hz, "clocks_per_bit": self.clocks_per_bit,
                               "build_id": self.build_id})
        elif command == Command.STATUS:
            answer(StatusReply, {"busy": busy, "good_frames": good_frames,
                                 "bad_frames": bad_frames})
        elif command == Command.JOB:
            request = _view(JobRequest, event.payload)
            with m.If(any_match):
                answer(JobReply, {"job_id": request.job_id, "core": matched_core,
                                  "ack": JobAck.ALREADY_KNOWN})
            with m.Elif(any_free):
                answer(JobReply, {"job_id": request.job_id, "core": free_core,
                                  "ack": JobAck.STARTED})
                m.d.sync += job.eq(request.job)
                for i in range(self.cores):
                    with m.If(free_core == i):
                        m.d.sync += [job_ids[i].eq(request.job_id), holds[i].eq(1),
                                     delivered[i].eq(0), starting[i].eq(1)]
            with m.Else():
                error(ErrorCode.NO_FREE_CORE)
        elif command == Command.RESULT:
            request = _view(ResultRequest, event.payload)
            with m.If(any_match):
                result = Signal(SearchResult)
                for i, port in enumerate(self.core):
                    with m.If(matched_core == i):
                        m.d.comb += result.eq(port.result)
                        # between the start strobe and the core's busy the job is running too
                        with m.If(busy[i] | starting[i]):
                            m.d.comb += result.status.eq(Status.BUSY)
                        with m.Else():
                            m.d.sync += delivered[i].eq(1)
                answer(ResultReply, {"job_id": request.job_id, "core": matched_core,
                                     "result": result})
            with m.Else():
                error(ErrorCode.UNKNOWN_JOB)
        elif command == Command.ABORT:
            request = _view(AbortRequest, event.payload)
            stopped = Signal(len(busy))
            with m.If(request.scope == AbortScope.ALL):
                # a new session: every job id is forgotten, so ids can never alias old jobs
                m.d.comb += stopped.eq(busy | starting)
                m.d.sync += holds.eq(0)
            with m.Else():
                m.d.comb += stopped.eq(matches & (busy | starting))
            m.d.sync += aborting.eq(aborting | stopped)
            answer(AbortReply, {"job_id": request.job_id, "aborted": stopped})


class BoardTop(wiring.Component):
    """UART + link + dispatcher + ``cores`` SearchCores: the whole board.

    ``clocks_per_bit`` sets the bit rate (``clock_hz / clocks_per_bit`` baud); ``build_id`` is
    reported by INFO; ``core_factory()`` makes one SearchCore (hdl/search.py by default).
    ``threads``: the jobs each core interleaves (hdl/interleave.py); the dispatcher, INFO and
    the LEDs see every thread as a core of its own (``cores * threads`` job slots).
    ``evaluation``: the cores' static evaluation ("pst" or "terms", docs/semantics.md 6).
    """

    def __init__(self, *, cores=1, clock_hz=50_000_000, clocks_per_bit=434, build_id=0,
                 timeout_bytes=DEFAULT_TIMEOUT_BYTES, core_factory=None, threads=1,
                 evaluation=DEFAULT_EVALUATION):
        check_evaluation(evaluation)
        if cores * threads > MAX_CORES:
            raise ValueError(f"{cores} cores of {threads} threads are {cores * threads} job "
                             f"slots; the link addresses at most {MAX_CORES}")
        self.cores = cores
        self.threads = threads
        self.evaluation = evaluation
        self.slots = cores * threads
        self.clock_hz = clock_hz
        self.clocks_per_bit = clocks_per_bit
        self.build_id = build_id
        self.timeout_cycles = timeout_bytes * BITS_PER_BYTE * clocks_per_bit
        self.core_factory = core_factory
        super().__init__({
            "uart_rx": In(1, init=1),
            "uart_tx": Out(1, init=1),
            "led":     Out(1 + cores * threads),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.uart_rx = uart_rx = UARTReceiver(self.clocks_per_bit)
        m.submodules.uart_tx = uart_tx = UARTTransmitter(self.clocks_per_bit)
        m.submodules.receiver = receiver = LinkReceiver(self.timeout_cycles)
        m.submodules.transmitter = transmitter = LinkTransmitter()
        m.submodules.dispatcher = dispatcher = Dispatcher(
            self.slots, self.clock_hz, self.clocks_per_bit, self.build_id)
        m.d.comb += [uart_rx.rx.eq(self.uart_rx), self.uart_tx.eq(uart_tx.tx)]
        wiring.connect(m, uart_rx.data, receiver.bytes_in)
        wiring.connect(m, receiver.events, dispatcher.events)
        wiring.connect(m, dispatcher.replies, transmitter.frames)
        wiring.connect(m, transmitter.bytes_out, uart_tx.data)

        factory = self.core_factory
        if factory is None and self.cores:
            from .search import SearchCore
            factory = functools.partial(SearchCore, threads=self.threads,
                                        evaluation=self.evaluation)
        for i in range(self.cores):
            core = factory()
            m.submodules[f"core_{i}"] = core
            slots = range(i * self.threads, (i + 1) * self.threads)
            _attach_core(m, [dispatcher.core[slot] for slot in slots], core)
            for slot in slots:
                m.d.comb += self.led[LED_ACTIVITY + 1 + slot].eq(dispatcher.core[slot].busy)
        m.d.comb += self.led[LED_ACTIVITY].eq(
            receiver.receiving | receiver.events.valid | dispatcher.replies.valid
            | transmitter.busy | uart_tx.busy | dispatcher.busy)
        return m


def _attach_core(m, ports, core):
    """Wire a SearchCore to its dispatcher ports (``CoreSignature``), one per thread.

    The threads of a core share its job port: the Dispatcher drives every port's ``job`` from
    its one job register and starts one job at a time, which is the sharing's contract."""
    m.d.comb += core.job.eq(ports[0].job)
    for thread, port in enumerate(ports):
        _, start, abort, result, busy = core.thread_ports(thread)
        m.d.comb += [start.eq(port.start), abort.eq(port.abort),
                     port.result.eq(result), port.busy.eq(busy)]
