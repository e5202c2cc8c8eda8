"""The boards and the board-level design: what of a bitstream is hardware, not flow.

``BOARDS`` names each board's amaranth-boards platform and where its serial line and LEDs are;
``BoardBuild`` wires the PLL, the chosen top and those pins together. The board flow
(synth/board.py) runs the tools around it. This file is one of the design sources whose digest
makes the board's build id (``synth.flow.DESIGN_SOURCES``), so a change to how the tools are run
leaves the netlist as it was.
"""

import importlib
from dataclasses import dataclass

from amaranth.hdl import ClockDomain, Elaboratable, Instance, Module, Signal
from amaranth.lib import io

from .harness import ScanHarness

__all__ = ["BoardSpec", "BOARDS", "BoardBuild"]


@dataclass(frozen=True)
class BoardSpec:
    """One board: its amaranth-boards platform and how the link reaches its pins."""
    name: str
    module: str
    cls: str
    family: str                 # "ecp5" or "ice40"
    oscillator_mhz: float
    capacity: int               # logic cells: TRELLIS_COMB (LUT4 / half a CCU2C) or ICESTORM_LC
    uart: str                   # where the serial line is; see BoardBuild
    leds: tuple                 # (resource, number, subsignal or None) per LED, LED 0 first
    ecppack_opts: tuple = ()
    dfu_ids: tuple = None       # (vendor, product) for a DFU file, or None
    note: str = ""

    def platform(self):
        module = importlib.import_module(self.module)
        return getattr(module, self.cls)()


_ULX3S_LEDS = tuple(("led", i, None) for i in range(8))
_ORANGECRAB_LEDS = (("rgb_led", 0, "g"), ("rgb_led", 0, "r"), ("rgb_led", 0, "b"))
_ICEBREAKER_LEDS = (("led", 1, None), ("led", 0, None))   # green (activity), red

#: The boards the flow knows, by the name the command line takes.
BOARDS = {spec.name: spec for spec in [
    BoardSpec("ulx3s-85f", "amaranth_boards.ulx3s", "ULX3S_85F_Platform", "ecp5", 25.0, 83_640,
              "uart", _ULX3S_LEDS, ("--compress",),
              note="link on the FTDI USB-serial bridge (the board's USB port)"),
    BoardSpec("ulx3s-45f", "amaranth_boards.ulx3s", "ULX3S_45F_Platform", "ecp5", 25.0, 43_848,
              "uart", _ULX3S_LEDS, ("--compress",)),
    BoardSpec("ulx3s-25f", "amaranth_boards.ulx3s", "ULX3S_25F_Platform", "ecp5", 25.0, 24_288,
              "uart", _ULX3S_LEDS, ("--compress",)),
    BoardSpec("orangecrab-85f", "amaranth_boards.orangecrab_r0_2", "OrangeCrabR0_2_85FPlatform",
              "ecp5", 48.0, 83_640, "io:0,1", _ORANGECRAB_LEDS, ("--compress", "--freq", "38.8"),
              dfu_ids=(0x1209, 0x5AF0),
              note="no USB-serial bridge: the link is on header pins 0 (TX) and 1 (RX), "
                   "3.3 V, for a USB-serial adapter"),
    BoardSpec("orangecrab-25f", "amaranth_boards.orangecrab_r0_2", "OrangeCrabR0_2_25FPlatform",
              "ecp5", 48.0, 24_288, "io:0,1", _ORANGECRAB_LEDS, ("--compress", "--freq", "38.8"),
              dfu_ids=(0x1209, 0x5AF0)),
    BoardSpec("icebreaker", "amaranth_boards.icebreaker", "ICEBreakerPlatform", "ice40", 12.0,
              5_280, "uart", _ICEBREAKER_LEDS,
              note="iCE40UP5K: 5,280 logic cells, the link only (see docs/synthesis.md)"),
]}


class BoardBuild(Elaboratable):
    """The board-level design: clocking, and the chosen top wired to the board's pins."""

    def __init__(self, top, spec, *, pll=None):
        self.top = top
        self.spec = spec
        self.pll = pll

    def _uart(self, m, platform):
        if self.spec.uart != "uart":
            # "io:TX,RX": pins of the board's "io" connector, for a 3.3 V USB-serial adapter
            from amaranth.build import Attrs
            from amaranth_boards.resources import UARTResource
            tx, rx = self.spec.uart.split(":")[1].split(",")
            platform.add_resources([UARTResource(0, rx=rx, tx=tx, conn=("io", 0),
                                                 attrs=Attrs(IO_TYPE="LVCMOS33", PULLMODE="UP"))])
        uart = platform.request("uart", 0, dir="-")
        m.submodules.uart_rx_buffer = rx = io.Buffer("i", uart.rx)
        m.submodules.uart_tx_buffer = tx = io.Buffer("o", uart.tx)
        return rx.i, tx.o

    def _leds(self, m, platform):
        outputs, requested = [], {}
        for index, (resource, number, subsignal) in enumerate(self.spec.leds):
            key = (resource, number)
            if key not in requested:
                requested[key] = platform.request(resource, number, dir="-")
            port = requested[key] if subsignal is None else getattr(requested[key], subsignal)
            buffer = io.Buffer("o", port)
            m.submodules[f"led_buffer_{index}"] = buffer
            outputs.append(buffer.o)
        return outputs

    def elaborate(self, platform):
        m = Module()
        if self.pll is not None:
            parameters, attributes, _achieved = self.pll
            m.submodules.oscillator = oscillator = io.Buffer(
                "i", platform.request(platform.default_clk, 0, dir="-"))
            m.domains.sync = sync = ClockDomain("sync")
            locked = Signal(name="pll_locked")
            m.submodules.pll = Instance(
                "EHXPLLL",
                *(("p", name, value) for name, value in parameters.items()),
                *(("a", name, value) for name, value in attributes.items()),
                ("i", "CLKI", oscillator.i), ("i", "CLKFB", sync.clk), ("o", "CLKOP", sync.clk),
                ("i", "RST", 0), ("i", "STDBY", 0), ("i", "PHASESEL0", 0), ("i", "PHASESEL1", 0),
                ("i", "PHASEDIR", 1), ("i", "PHASESTEP", 1), ("i", "PHASELOADREG", 1),
                ("i", "PLLWAKESYNC", 0), ("i", "ENCLKOP", 0), ("o", "LOCK", locked))
            # Held in reset until the PLL locks, so nothing runs on an unstable clock. nextpnr
            # derives the constraint of the PLL's output from its dividers.
            m.d.comb += sync.rst.eq(~locked)

        m.submodules.top = top = self.top
        rx, tx = self._uart(m, platform)
        leds = self._leds(m, platform)
        if isinstance(top, ScanHarness):
            m.d.comb += [top.scan_in.eq(rx), top.capture.eq(rx), leds[0].eq(top.scan_out)]
            return m
        m.d.comb += [top.uart_rx.eq(rx), tx.eq(top.uart_tx)]
        # LED i shows led[i]; a board with fewer LEDs than cores shows the rest ORed on its last.
        for i, led in enumerate(leds):
            bits = top.led[i:] if i == len(leds) - 1 else top.led[i:i + 1]
            if len(bits):
                m.d.comb += led.eq(bits.any())
        return m

