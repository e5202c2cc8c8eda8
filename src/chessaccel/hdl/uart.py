"""UART: 8 data bits, no parity, one stop bit (8N1), LSB first, idle line high.

The bit time is ``clocks_per_bit`` clock cycles, a parameter: ``clock_hz // baud`` on a board
(50 MHz / 3 Mbaud = 16, 50 MHz / 115200 = 434), a small value in simulation so that the real
UART runs in the simulated board at a bearable cost. Model: the serial line as the host's
pyserial sees it (tests/test_uart.py drives and samples the pins bit by bit).
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

__all__ = ["UARTReceiver", "UARTTransmitter", "DATA_BITS", "MIN_CLOCKS_PER_BIT", "clocks_per_bit"]

DATA_BITS = 8
#: The receiver samples mid-bit after a two-flop synchroniser; below this the margin is gone.
MIN_CLOCKS_PER_BIT = 4


def clocks_per_bit(clock_hz, baud):
    """The divisor for a clock and bit rate; raises ValueError when the rate error exceeds 2%."""
    divisor = round(clock_hz / baud)
    if divisor < MIN_CLOCKS_PER_BIT:
        raise ValueError(f"{baud} baud needs at least {MIN_CLOCKS_PER_BIT} clocks per bit at {clock_hz} Hz")
    error = abs(clock_hz / divisor - baud) / baud
    if error > 0.02:
        raise ValueError(f"{baud} baud from {clock_hz} Hz is off by {error:.1%}")
    return divisor


def _check_divisor(component, divisor):
    if not isinstance(divisor, int) or divisor < MIN_CLOCKS_PER_BIT:
        component._MustUse__silence = True   # never built: no "unused elaboratable" warning
        raise ValueError(f"clocks_per_bit must be an integer >= {MIN_CLOCKS_PER_BIT}, got {divisor!r}")


class UARTReceiver(wiring.Component):
    """Deserialises the ``rx`` pin into a stream of bytes.

    A byte is offered on ``data`` once its stop bit has been sampled high; a byte whose stop bit
    is low (framing error) is dropped and pulses ``framing_error``. The line cannot be held
    back, so a byte still unaccepted when the next one completes is replaced and pulses
    ``overrun``.
    """

    rx:            In(1, init=1)
    data:          Out(stream.Signature(DATA_BITS))
    framing_error: Out(1)
    overrun:       Out(1)

    def __init__(self, clocks_per_bit):
        _check_divisor(self, clocks_per_bit)
        self.clocks_per_bit = clocks_per_bit
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        line = Signal(init=1)
        m.submodules.synchroniser = FFSynchronizer(self.rx, line, init=1)

        timer = Signal(range(self.clocks_per_bit))
        bits_left = Signal(range(DATA_BITS + 1))
        shift = Signal(DATA_BITS)

        with m.If(self.data.ready):
            m.d.sync += self.data.valid.eq(0)
        m.d.sync += [self.framing_error.eq(0), self.overrun.eq(0)]

        with m.If(timer != 0):
            m.d.sync += timer.eq(timer - 1)

        with m.FSM():
            with m.State("IDLE"):
                # wait for the falling edge of a start bit, then aim at its middle
                with m.If(~line):
                    m.d.sync += timer.eq(self.clocks_per_bit // 2 - 1)
                    m.next = "START"
            with m.State("START"):
                # mid start bit: still low means a real start bit, high was a glitch
                with m.If(timer == 0):
                    with m.If(line):
                        m.next = "IDLE"
                    with m.Else():
                        m.d.sync += [timer.eq(self.clocks_per_bit - 1), bits_left.eq(DATA_BITS)]
                        m.next = "DATA"
            with m.State("DATA"):
                # sample each data bit in its middle, LSB first
                with m.If(timer == 0):
                    m.d.sync += [shift.eq((shift >> 1) | (line << (DATA_BITS - 1))),
                                 bits_left.eq(bits_left - 1),
                                 timer.eq(self.clocks_per_bit - 1)]
                    with m.If(bits_left == 1):
                        m.next = "STOP"
            with m.State("STOP"):
                # mid stop bit: deliver the byte if the line is high, else drop it
                with m.If(timer == 0):
                    with m.If(line):
                        m.d.sync += [self.data.payload.eq(shift), self.data.valid.eq(1)]
                        with m.If(self.data.valid & ~self.data.ready):
                            m.d.sync += self.overrun.eq(1)
                    with m.Else():
                        m.d.sync += self.framing_error.eq(1)
                    m.next = "IDLE"
        return m


class UARTTransmitter(wiring.Component):
    """Serialises the bytes of the ``data`` stream onto the ``tx`` pin.

    ``tx`` and ``data.ready`` come straight from registers: a glitch-free line, and no
    combinational output whose reset value a simulator might fail to evaluate at time zero
    (Icarus does not run ``always @*`` blocks until an input changes).
    """

    data: In(stream.Signature(DATA_BITS))
    tx:   Out(1, init=1)
    busy: Out(1)

    def __init__(self, clocks_per_bit):
        _check_divisor(self, clocks_per_bit)
        self.clocks_per_bit = clocks_per_bit
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        line = Signal(init=1)
        idle = Signal(init=1)
        shift = Signal(DATA_BITS + 1)                  # data bits, then the stop bit
        bits_left = Signal(range(DATA_BITS + 2))
        timer = Signal(range(self.clocks_per_bit))
        m.d.comb += [self.tx.eq(line), self.data.ready.eq(idle), self.busy.eq(~idle)]

        with m.If(idle):
            with m.If(self.data.valid):
                m.d.sync += [line.eq(0), idle.eq(0),   # the start bit
                             shift.eq((1 << DATA_BITS) | self.data.payload),
                             bits_left.eq(DATA_BITS + 1), timer.eq(self.clocks_per_bit - 1)]
        with m.Elif(timer != 0):
            m.d.sync += timer.eq(timer - 1)
        with m.Elif(bits_left == 0):
            m.d.sync += idle.eq(1)                     # the stop bit has lasted a bit time
        with m.Else():
            m.d.sync += [line.eq(shift[0]), shift.eq(shift >> 1), bits_left.eq(bits_left - 1),
                         timer.eq(self.clocks_per_bit - 1)]
        return m
