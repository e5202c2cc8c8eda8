"""The scan harness: a synthesis top that gives any block exactly three data pins.

A block such as GenVictim has hundreds of port bits (a whole ``Position`` in, a move out). Put
on FPGA pins directly they would need more I/O than the package has, and left unconnected the
synthesiser would delete every gate that drives nothing. The harness keeps each port bit alive
and observable at the cost of flip-flops and a few LUTs that are easy to account for:

* every input bit of the block is a flip-flop of one shift register loaded serially from the
  ``scan_in`` pin (no LUTs, one FF per input bit), so no input is constant and the block's
  input paths start at registers, as they would inside the search core;
* every output bit is captured in a flip-flop enabled by the ``capture`` pin (one FF per output
  bit, so the block's paths end at registers and no harness logic can merge into the block's last
  LUT level; ECP5 flip-flops have a clock enable, so the enable costs no LUT), and the captured
  bits are folded ``FOLD`` at a time into a compactor chain (a shift register whose every stage
  XORs in ``FOLD`` captured bits: one LUT4 and one FF per stage), ending at the ``scan_out`` pin.
  Each output bit enters the chain at its own stage, so no two outputs can cancel each other.

The harness cost therefore depends only on the block's port widths: ``in_bits + out_bits +
stages`` flip-flops and ``stages`` LUT4s, with ``stages = ceil(out_bits / FOLD)``.
``HarnessBaseline`` is a block with no logic of its own; synthesising it behind the harness at the
same port widths measures that cost, which the flow subtracts to report the block alone.
"""

from amaranth.hdl import Cat, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["FOLD", "ScanHarness", "HarnessBaseline", "port_widths", "harness_cost"]

#: Captured output bits folded into one compactor stage: a LUT4 has the previous stage plus 3.
FOLD = 3


def _port_values(block):
    """The block's port values split by direction, in signature order."""
    inputs, outputs = [], []
    for _path, member, value in block.signature.flatten(block):
        (inputs if member.flow == In else outputs).append(Value.cast(value))
    return inputs, outputs


def port_widths(block):
    """``(in_bits, out_bits)``: total width of the block's input and output ports."""
    inputs, outputs = _port_values(block)
    return sum(len(v) for v in inputs), sum(len(v) for v in outputs)


def harness_cost(in_bits, out_bits):
    """What the harness adds by construction: ``{"lut4": ..., "ff": ...}``."""
    stages = -(-out_bits // FOLD)
    return {"lut4": stages, "ff": in_bits + 1 + out_bits + stages}


class ScanHarness(wiring.Component):
    """Wraps ``block`` (a ``wiring.Component`` in the ``sync`` domain) behind three data pins.

    ``scan_in`` shifts into the register that drives all of the block's inputs; while ``capture``
    is high the block's outputs are captured; ``scan_out`` is the end of the compactor chain that
    observes all of them.
    """

    scan_in:  In(1)
    capture:  In(1)
    scan_out: Out(1)

    def __init__(self, block):
        self.block = block
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.submodules.block = block = self.block
        inputs, outputs = _port_values(block)
        in_bits = sum(len(v) for v in inputs)
        out_bits = sum(len(v) for v in outputs)

        # One spare bit at the end of the input chain feeds the compactor, so every input
        # flip-flop is observable whether or not the block reads it: the chain always costs
        # exactly ``in_bits`` flip-flops, which makes the harness cost independent of the block.
        input_chain = Signal(in_bits + 1, reset_less=True)
        m.d.sync += input_chain.eq(Cat(self.scan_in, input_chain[:-1]))
        m.d.comb += Cat(*inputs).eq(input_chain[:in_bits])

        # The capture enable keeps these flip-flops distinct from the input chain's: without it a
        # block output that equals an input would share a D input with the next chain stage,
        # and Yosys would merge the two, making the harness cost depend on the block.
        captured = Signal(out_bits, reset_less=True)
        with m.If(self.capture):
            m.d.sync += captured.eq(Cat(*outputs))
        stages = -(-out_bits // FOLD)
        compactor = Signal(stages, reset_less=True)
        previous = input_chain[-1]
        for stage in range(stages):
            folded = captured[stage * FOLD:(stage + 1) * FOLD].xor()
            m.d.sync += compactor[stage].eq(previous ^ folded)
            previous = compactor[stage]
        m.d.comb += self.scan_out.eq(previous)
        return m


class HarnessBaseline(wiring.Component):
    """A block with no logic: ``outputs[i] = inputs[i % in_bits]``, for measuring the harness.

    Its port widths are chosen to equal another block's, so the harness built around it costs the
    same; anything synthesis reports for it is harness. Give it at least as many inputs as
    outputs: a repeated input would make capture flip-flops with equal D inputs, which Yosys
    merges (the flow adds inputs and subtracts their chain flip-flops, which cost no LUT).
    """

    def __init__(self, in_bits, out_bits):
        if in_bits < 1 or out_bits < 1:
            raise ValueError(f"HarnessBaseline needs at least one input and one output bit, "
                             f"got {in_bits} in and {out_bits} out")
        self.in_bits = in_bits
        self.out_bits = out_bits
        super().__init__({"inputs": In(in_bits), "outputs": Out(out_bits)})

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.outputs.eq(Cat(self.inputs[i % self.in_bits] for i in range(self.out_bits)))
        return m
