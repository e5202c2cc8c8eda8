"""``python -m chessaccel.synth.depth BLOCK``: the deepest register-to-register paths of a block
in Yosys's ECP5 netlist, without place and route.

Place and route takes minutes and reports one critical path; this reads the netlist that
``synth_ecp5`` maps (the block behind the scan harness, as the block flow builds it: about 90 s for
the search core) and counts the logic between flip-flops for every flip-flop input, so a change
can be judged on both stages of the two-thread core at once. One level is a LUT4 with the
routing in front of it (1.0); PFUMX and L6MUX21, the wide multiplexers inside a slice, add 0.2; a
carry chain adds 1.0 where it is entered and 0.08 per CCU2C along it; a block RAM's output starts
at 1.5 and a multiplier adds 3.0. On the ECP5-85F at speed grade 6 a level costs about 1.9 ns,
nine tenths of it routing, so these depths rank paths; Fmax is still measured by place and route.

The report lists the deepest flip-flop inputs, one per register, and the named signals of the
design with their depth (where Yosys kept a name: Amaranth's signals at block boundaries, the
cuts, the next-state values), which tells which stage a path belongs to.

Exit status: 0 after the report; 1 when the toolchain is missing or Yosys fails; 2 for bad
arguments.
"""

import argparse
import collections
import json
import re
import subprocess
import sys
from pathlib import Path

from amaranth.back import rtlil

from .flow import YOSYS_SCRIPT, toolchain_problem, _tools
from .harness import ScanHarness
from .registry import BlockUnavailable, resolve

__all__ = ["LEVEL_WEIGHTS", "netlist_depths", "main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
#: Depth a cell adds (see the module docstring); cells not listed add one level.
LEVEL_WEIGHTS = {"LUT4": 1.0, "PFUMX": 0.2, "L6MUX21": 0.2, "MULT18X18D": 3.0}
CARRY_ENTRY, CARRY_STEP = 1.0, 0.08
#: Where a register's output starts: a flip-flop at 0, a block RAM's registered output later.
SOURCE_DEPTH = {"TRELLIS_FF": 0.0}
RAM_SOURCE_DEPTH = 1.5
CARRY_DATA_PORTS = ("A0", "B0", "C0", "D0", "A1", "B1", "C1", "D1")
#: A name that is Yosys's or abc9's, not the design's.
MACHINE_NAME = re.compile(r"\$|LUT4|CCU2C|PFUMX|L6MUX|TRELLIS")


def _bits(connection):
    return [bit for bit in connection if isinstance(bit, int)]


def netlist_depths(netlist):
    """(endpoints, named) of a ``synth_ecp5`` JSON netlist's top module: ``endpoints`` is a
    list of (depth, cell, port, name) for every register and memory input, deepest first;
    ``named`` maps each signal name the design kept to the depth of its deepest bit."""
    module = next(iter(netlist["modules"].values())) if len(netlist["modules"]) == 1 else \
        netlist["modules"]["top"]
    names = {}
    for name, net in module["netnames"].items():
        if MACHINE_NAME.search(name):
            continue
        for bit in _bits(net["bits"]):
            names.setdefault(bit, name)
    drivers, sinks = {}, []
    for cell_name, cell in module["cells"].items():
        kind, directions, connections = cell["type"], cell["port_directions"], cell["connections"]
        inputs = {port: _bits(bits) for port, bits in connections.items()
                  if directions.get(port) == "input"}
        outputs = [bit for port, bits in connections.items() if directions.get(port) == "output"
                   for bit in _bits(bits)]
        if kind == "TRELLIS_FF" or kind.startswith(("DP16KD", "TRELLIS_DPR", "$")):
            start = SOURCE_DEPTH.get(kind, RAM_SOURCE_DEPTH)
            for bit in outputs:
                drivers[bit] = ("source", start, [])
            ports = ("DI", "CE", "LSR") if kind == "TRELLIS_FF" else tuple(inputs)
            sinks += [(cell_name, port, bit) for port in ports for bit in inputs.get(port, [])]
        elif kind == "CCU2C":
            slow = [bit for port in CARRY_DATA_PORTS for bit in inputs.get(port, [])]
            for bit in outputs:
                drivers[bit] = ("carry", inputs.get("CIN", []), slow)
        else:
            fan_in = [bit for bits in inputs.values() for bit in bits]
            for bit in outputs:
                drivers[bit] = ("logic", LEVEL_WEIGHTS.get(kind, 1.0), fan_in)

    depth = {}

    def depth_of(bit):
        # iterative depth-first walk: the search core's netlist is deeper than Python's stack
        pending = [bit]
        while pending:
            current = pending[-1]
            if current in depth:
                pending.pop()
                continue
            driver = drivers.get(current)
            if driver is None or driver[0] == "source":
                depth[current] = 0.0 if driver is None else driver[1]
                pending.pop()
                continue
            fan_in = driver[2] if driver[0] == "logic" else driver[1] + driver[2]
            missing = [b for b in fan_in if b not in depth]
            if missing:
                pending.extend(missing)
                continue
            if driver[0] == "logic":
                depth[current] = max((depth[b] for b in fan_in), default=0.0) + driver[1]
            else:
                depth[current] = max([depth[b] + CARRY_STEP for b in driver[1]]
                                     + [depth[b] + CARRY_ENTRY for b in driver[2]] + [0.0])
            pending.pop()
        return depth[bit]

    endpoints = sorted(((depth_of(bit), cell, port, names.get(bit, cell))
                        for cell, port, bit in sinks), reverse=True)
    named = collections.defaultdict(float)
    for bit, name in names.items():
        if bit in drivers and drivers[bit][0] != "source":
            named[name] = max(named[name], depth_of(bit))
    return endpoints, dict(named)


def synthesise(block, work_dir):
    """Run the block flow's Yosys step on ``block`` in ``work_dir``; the netlist as JSON."""
    work_dir.mkdir(parents=True, exist_ok=True)
    (work_dir / "design.il").write_text(rtlil.convert(ScanHarness(block), name="top"))
    (work_dir / "synth.ys").write_text(YOSYS_SCRIPT)
    subprocess.run([_tools()["yosys"], "-q", "-l", "yosys.log", "-s", "synth.ys"], cwd=work_dir,
                   check=True, capture_output=True)
    return json.loads((work_dir / "netlist.json").read_text())


def report(endpoints, named, top=12, floor=None):
    """The report's lines: the deepest registers (one line each) and the named signals."""
    lines = ["deepest register inputs (depth, register, port):"]
    seen = set()
    for value, cell, port, name in endpoints:
        register = re.sub(r"\[\d+\]$", "", name)
        if register in seen:
            continue
        seen.add(register)
        lines.append(f"  {value:5.1f}  {register}  ({port})")
        if len(seen) >= top:
            break
    floor = endpoints[0][0] - 4 if floor is None and endpoints else (floor or 0)
    lines.append(f"named signals at depth {floor:.1f} or more:")
    lines += [f"  {value:5.1f}  {name}" for name, value in
              sorted(named.items(), key=lambda item: -item[1]) if value >= floor]
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m chessaccel.synth.depth",
        description="Logic depth between registers of a block in Yosys's ECP5 netlist "
                    "(no place and route).")
    parser.add_argument("block", help="a block of `python -m chessaccel.synth --list`")
    parser.add_argument("--out", default="out/synth/depth", metavar="DIR",
                        help="work folder (default %(default)s)")
    parser.add_argument("--top", type=int, default=12, help="registers to list")
    args = parser.parse_args(argv)
    try:
        block = resolve(args.block).build()
    except BlockUnavailable as error:
        print(f"chessaccel.synth.depth: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    problem = toolchain_problem()
    if problem:
        print(f"chessaccel.synth.depth: {problem}", file=sys.stderr)
        return EXIT_FAILED
    print(f"[{args.block}] yosys synth_ecp5 (about 90 s for the search core)", flush=True)
    try:
        netlist = synthesise(block, Path(args.out) / args.block)
    except subprocess.CalledProcessError as error:
        print(f"chessaccel.synth.depth: yosys failed (status {error.returncode}); its log is in "
              f"{Path(args.out) / args.block / 'yosys.log'}", file=sys.stderr)
        return EXIT_FAILED
    endpoints, named = netlist_depths(netlist)
    print("\n".join(report(endpoints, named, args.top)))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
