"""Frame receiver and transmitter of the host link (chessaccel/protocol.py, docs/protocol.md).

``LinkReceiver`` turns the UART's bytes into checked request frames or error events, with the
resynchronisation rules of the protocol; ``LinkTransmitter`` sends a reply frame, computing its
CRC on the fly. Model: ``chessaccel.contract.protocol.FrameDecoder`` and ``encode_frame`` (the host codec);
tests/test_link.py compares the two.
"""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from chessaccel.contract.protocol import (CRC_BYTES, CRC_INIT, CRC_WIDTH, HEADER_BYTES,
                                 MAX_PAYLOAD, START_MARKER, ErrorCode, FrameHeader,
                                 crc16_update)
from .uart import DATA_BITS

__all__ = ["EventKind", "ReceivedEvent", "OutgoingFrame", "LinkReceiver", "LinkTransmitter",
           "crc16_next", "Payload"]

#: The frame payload buffer: MAX_PAYLOAD bytes, byte 0 first on the wire.
Payload = data.ArrayLayout(DATA_BITS, MAX_PAYLOAD)
_HeaderBytes = data.ArrayLayout(DATA_BITS, HEADER_BYTES)
_CrcBytes = data.ArrayLayout(DATA_BITS, CRC_BYTES)


def _crc_taps():
    """For each CRC bit after one byte: the (crc bits, byte bits) whose XOR gives it.

    One byte's CRC step is linear over GF(2) in the register and the byte, so the protocol's
    bit-serial definition (``crc16_update``), run on unit vectors, yields the XOR network.
    """
    taps = []
    for out_bit in range(CRC_WIDTH):
        crc_bits = [i for i in range(CRC_WIDTH) if crc16_update(1 << i, 0) >> out_bit & 1]
        byte_bits = [i for i in range(DATA_BITS) if crc16_update(0, 1 << i) >> out_bit & 1]
        taps.append((crc_bits, byte_bits))
    return taps


_CRC_TAPS = _crc_taps()


def crc16_next(crc, byte):
    """The CRC register after ``byte``: the protocol's CRC step as an XOR network."""
    bits = []
    for crc_bits, byte_bits in _CRC_TAPS:
        terms = [crc[i] for i in crc_bits] + [byte[i] for i in byte_bits]
        bits.append(Cat(*terms).xor())
    return Cat(*bits)


class EventKind(enum.Enum, shape=1):
    FRAME = 0   # an intact frame: header and payload are valid
    ERROR = 1   # a dropped frame: ``error`` says why; header fields may be garbage


class ReceivedEvent(data.Struct):
    kind:    EventKind
    error:   ErrorCode
    header:  FrameHeader
    payload: Payload


class OutgoingFrame(data.Struct):
    header:  FrameHeader
    payload: Payload


class LinkReceiver(wiring.Component):
    """Hunts for start markers, collects frames, checks length and CRC.

    Each frame or error leaves as one ``events`` transfer. While an event waits for ``ready``
    the receiver does not start a new frame (its bytes are skipped until the next start marker
    after the event is taken), so a waiting event is never overwritten. A frame that stops for
    ``timeout`` cycles is reported TRUNCATED. ``receiving`` is high inside a frame.
    """

    bytes_in:  In(stream.Signature(DATA_BITS))
    events:    Out(stream.Signature(ReceivedEvent))
    receiving: Out(1)

    def __init__(self, timeout):
        self.timeout = timeout
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        event = self.events.payload
        header_bytes = Signal(_HeaderBytes)
        crc_bytes = Signal(_CrcBytes)
        crc = Signal(CRC_WIDTH)
        index = Signal(range(max(HEADER_BYTES, MAX_PAYLOAD, CRC_BYTES) + 1))
        quiet = Signal(range(self.timeout + 1))
        byte = self.bytes_in.payload
        arrived = self.bytes_in.valid

        # the event is driven from registers: its fields change in different ways
        kind = Signal(EventKind)
        error = Signal(ErrorCode)
        payload = Signal(Payload)
        m.d.comb += [self.bytes_in.ready.eq(1), event.kind.eq(kind), event.error.eq(error),
                     event.header.eq(header_bytes), event.payload.eq(payload)]
        with m.If(self.events.ready):
            m.d.sync += self.events.valid.eq(0)

        def emit(new_kind, new_error=0):
            m.d.sync += [self.events.valid.eq(1), kind.eq(new_kind), error.eq(new_error)]

        with m.If(arrived):
            m.d.sync += quiet.eq(0)
        with m.Elif(quiet != self.timeout):
            m.d.sync += quiet.eq(quiet + 1)

        with m.FSM():
            with m.State("HUNT"):
                # skip bytes up to a start marker (and while the last event is still waiting)
                with m.If(arrived & (byte == START_MARKER) & ~self.events.valid):
                    m.d.sync += [crc.eq(CRC_INIT), index.eq(0)]
                    m.next = "HEADER"
            with m.State("HEADER"):
                # length, sequence number and command
                m.d.comb += self.receiving.eq(1)
                with m.If(arrived):
                    m.d.sync += [header_bytes[index].eq(byte), crc.eq(crc16_next(crc, byte)),
                                 index.eq(index + 1)]
                    with m.If(index == HEADER_BYTES - 1):
                        m.next = "CHECK_LENGTH"
                with m.Elif(quiet == self.timeout):
                    emit(EventKind.ERROR, ErrorCode.TRUNCATED)
                    m.next = "HUNT"
            with m.State("CHECK_LENGTH"):
                # refuse a length the buffer cannot hold before reading any of it
                m.d.comb += self.receiving.eq(1)
                m.d.sync += index.eq(0)
                with m.If(event.header.length > MAX_PAYLOAD):
                    emit(EventKind.ERROR, ErrorCode.BAD_LENGTH)
                    m.next = "HUNT"
                with m.Elif(event.header.length == 0):
                    m.next = "CRC"
                with m.Else():
                    m.next = "PAYLOAD"
            with m.State("PAYLOAD"):
                # payload bytes into the buffer
                m.d.comb += self.receiving.eq(1)
                with m.If(arrived):
                    m.d.sync += [payload[index].eq(byte), crc.eq(crc16_next(crc, byte)),
                                 index.eq(index + 1)]
                    with m.If(index == event.header.length - 1):
                        m.d.sync += index.eq(0)
                        m.next = "CRC"
                with m.Elif(quiet == self.timeout):
                    emit(EventKind.ERROR, ErrorCode.TRUNCATED)
                    m.next = "HUNT"
            with m.State("CRC"):
                # the sender's CRC, low byte first
                m.d.comb += self.receiving.eq(1)
                with m.If(arrived):
                    m.d.sync += [crc_bytes[index].eq(byte), index.eq(index + 1)]
                    with m.If(index == CRC_BYTES - 1):
                        m.next = "VERIFY"
                with m.Elif(quiet == self.timeout):
                    emit(EventKind.ERROR, ErrorCode.TRUNCATED)
                    m.next = "HUNT"
            with m.State("VERIFY"):
                # deliver the frame if the CRCs agree, else report it
                m.d.comb += self.receiving.eq(1)
                with m.If(crc_bytes.as_value() == crc):
                    emit(EventKind.FRAME)
                with m.Else():
                    emit(EventKind.ERROR, ErrorCode.BAD_CRC)
                m.next = "HUNT"
        return m


class LinkTransmitter(wiring.Component):
    """Sends the frame offered on ``frames``: marker, header, payload, CRC (low byte first).

    The frame is read in place while it is sent, so it must stay on ``frames`` until ``ready``,
    which rises with the last byte. ``busy`` is high from the first byte to the last.
    """

    frames:    In(stream.Signature(OutgoingFrame))
    bytes_out: Out(stream.Signature(DATA_BITS))
    busy:      Out(1)

    def elaborate(self, platform):
        m = Module()
        frame = self.frames.payload
        header_bytes = _HeaderBytes(frame.header.as_value())
        crc = Signal(CRC_WIDTH)
        crc_bytes = _CrcBytes(crc)
        index = Signal(range(max(HEADER_BYTES, MAX_PAYLOAD, CRC_BYTES) + 1))
        out = self.bytes_out
        sent = out.valid & out.ready

        with m.FSM():
            with m.State("IDLE"):
                # wait for a frame to send
                with m.If(self.frames.valid):
                    m.d.sync += [crc.eq(CRC_INIT), index.eq(0)]
                    m.next = "MARKER"
            with m.State("MARKER"):
                # the start marker, outside the CRC
                m.d.comb += [out.valid.eq(1), out.payload.eq(START_MARKER), self.busy.eq(1)]
                with m.If(sent):
                    m.next = "HEADER"
            with m.State("HEADER"):
                # length, sequence number, command
                m.d.comb += [out.valid.eq(1), out.payload.eq(header_bytes[index]), self.busy.eq(1)]
                with m.If(sent):
                    m.d.sync += [crc.eq(crc16_next(crc, out.payload)), index.eq(index + 1)]
                    with m.If(index == HEADER_BYTES - 1):
                        m.d.sync += index.eq(0)
                        with m.If(frame.header.length == 0):
                            m.next = "CRC"
                        with m.Else():
                            m.next = "PAYLOAD"
            with m.State("PAYLOAD"):
                # the payload bytes
                m.d.comb += [out.valid.eq(1), out.payload.eq(frame.payload[index]), self.busy.eq(1)]
                with m.If(sent):
                    m.d.sync += [crc.eq(crc16_next(crc, out.payload)), index.eq(index + 1)]
                    with m.If(index == frame.header.length - 1):
                        m.d.sync += index.eq(0)
                        m.next = "CRC"
            with m.State("CRC"):
                # the CRC, low byte first; the frame is released with its last byte
                m.d.comb += [out.valid.eq(1), out.payload.eq(crc_bytes[index]), self.busy.eq(1)]
                with m.If(sent):
                    m.d.sync += index.eq(index + 1)
                    with m.If(index == CRC_BYTES - 1):
                        m.d.comb += self.frames.ready.eq(1)
                        m.next = "IDLE"
        return m
