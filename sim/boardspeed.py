"""Speed of the simulated board: Verilator (sim/boardsim.py) beside cocotb + Icarus, one run.

Both simulators run ``BoardTop`` (the simulation divisor; Icarus one core, Verilator the
two-core build of the board tests) on the same bench
jobs (host/bench.py), driven at the UART pins: a JOB frame, the search, a RESULT frame. Reported
per simulator: simulated clock cycles per second (Verilator: cycles over the time the harness
spent ticking; Icarus: cycles over the testbench's wall time) and nodes per second (bench nodes
over the wall time of the jobs, link included). Both results are checked against the model.

    python -m chessaccel.sim.boardspeed [--jobs N] [--out FILE]
"""

import argparse
import functools
import json
import os
import sys
import time

from chessaccel.defs import INF, Mode, Position, SearchJob, Status
from chessaccel.host.bench import BENCH
from chessaccel.host.position import parse_position
from chessaccel.protocol import (Command, FrameDecoder, JobRequest, ResultReply, ResultRequest,
                                 decode_payload, encode_frame, encode_payload)
from chessaccel.sim.model import search as model

__all__ = ["measure_verilator", "measure_icarus", "main"]

#: Cycles the Icarus bench waits after a RESULT request: the longest reply frame and some slack.
_REPLY_WAIT_CYCLES = 3000


def _jobs(count):
    jobs = []
    for bench in BENCH[:count]:
        board, _ = parse_position(bench.fen)
        jobs.append((bench.name, board, bench.depth))
    return jobs


def _check(name, board, depth, score, nodes):
    want = model.search(board.copy(), depth, -INF, INF)
    if (score, nodes) != (want.score, want.nodes):
        raise AssertionError(f"{name}: board score {score} nodes {nodes}, "
                             f"model {want.score} {want.nodes}")
    return nodes


#: Cores of the Verilator board measured: the build the board tests use (two cores simulated
#: per cycle, one working: a conservative figure against the one-core Icarus board).
VERILATOR_CORES = 2


def measure_verilator(jobs, cores=VERILATOR_CORES):
    from chessaccel.host.boardcli import BoardBackend
    from chessaccel.host.transport import PtyTransport
    from chessaccel.sim.boardsim import BoardSim
    from chessaccel.sim.boardsim import SIM_REPLY_TIMEOUT
    sim = BoardSim(cores=cores, log=lambda line: print(line, file=sys.stderr))
    backend = BoardBackend(PtyTransport(sim.port), "verilator", sim=sim, timeout=SIM_REPLY_TIMEOUT)
    nodes = 0
    started = time.perf_counter()
    try:
        for name, board, depth in jobs:
            r = backend.search(board, depth, -INF, INF)
            nodes += _check(name, board, depth, r["score"], r["nodes"])
        seconds = time.perf_counter() - started
    finally:
        backend.close()
    stats = sim.stats
    return {"simulator": "verilator", "cores": cores, "jobs": len(jobs), "nodes": nodes,
            "cycles": stats["cycles"], "ticking_seconds": stats["ticking_seconds"],
            "wall_seconds": seconds,
            "cycles_per_second": stats["cycles"] / stats["ticking_seconds"],
            "nodes_per_second": nodes / seconds}


def measure_icarus(jobs, clocks_per_bit):
    from chessaccel.hdl.boardtop import BoardTop
    from chessaccel.sim.boardsim import SIM_CLOCK_HZ
    from chessaccel.sim.cocotb_runner import run_testbench
    exchanges = []
    for job_id, (_, board, depth) in enumerate(jobs):
        job = SearchJob.const({"position": Position.from_bits(board.to_bits()), "depth": depth,
                               "alpha": -INF, "beta": INF, "mode": Mode.SEARCH})
        exchanges.append({"send": encode_frame(2 * job_id, Command.JOB, encode_payload(
            JobRequest, {"job_id": job_id, "job": job})).hex(), "wait_cycles": 0,
            "until_idle": True})
        exchanges.append({"send": encode_frame(2 * job_id + 1, Command.RESULT, encode_payload(
            ResultRequest, {"job_id": job_id})).hex(), "wait_cycles": _REPLY_WAIT_CYCLES})
    factory = functools.partial(BoardTop, cores=1, clock_hz=SIM_CLOCK_HZ,
                                clocks_per_bit=clocks_per_bit)
    started = time.perf_counter()
    out = run_testbench(factory, "boardtop_speed", "chessaccel.sim.cocotb.tb_boardtop",
                        {"clocks_per_bit": clocks_per_bit, "exchanges": exchanges})
    wall = time.perf_counter() - started
    nodes = 0
    for (name, board, depth), reply_hex in zip(jobs, out["replies"][1::2]):
        [frame] = FrameDecoder().feed(bytes.fromhex(reply_hex))
        result = decode_payload(ResultReply, frame.payload).result
        assert result.status == Status.DONE, f"{name}: {result.status}"
        nodes += _check(name, board, depth, result.score, int(result.nodes))
    return {"simulator": "cocotb+icarus", "cores": 1, "jobs": len(jobs), "nodes": nodes,
            "cycles": out["cycles"], "bench_seconds": out["seconds"], "wall_seconds": wall,
            "cycles_per_second": out["cycles"] / out["seconds"],
            "nodes_per_second": nodes / out["seconds"]}


def main(argv=None):
    from chessaccel.sim.boardsim import SIM_CLOCKS_PER_BIT
    parser = argparse.ArgumentParser(prog="python -m chessaccel.sim.boardspeed",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2,
                        help=f"first N bench jobs, on both simulators (default 2 of {len(BENCH)}: "
                             "Icarus needs minutes per job)")
    parser.add_argument("--only", choices=("verilator", "icarus"),
                        help="measure one simulator (the report then has one side)")
    parser.add_argument("--out", default="out/boardspeed.json")
    args = parser.parse_args(argv)
    jobs = _jobs(args.jobs)
    report = {}
    if args.only != "icarus":
        report["verilator"] = measure_verilator(jobs)
        print(json.dumps(report["verilator"]), flush=True)
    if args.only != "verilator":
        report["icarus"] = measure_icarus(jobs, SIM_CLOCKS_PER_BIT)
        print(json.dumps(report["icarus"]), flush=True)
    if len(report) == 2:
        for key in ("cycles_per_second", "nodes_per_second"):
            report[f"{key}_ratio"] = report["verilator"][key] / report["icarus"][key]
        print(f"Verilator {report['verilator']['cycles_per_second']:.0f} cycles/s, "
              f"{report['verilator']['nodes_per_second']:.1f} nodes/s; cocotb+Icarus "
              f"{report['icarus']['cycles_per_second']:.0f} cycles/s, "
              f"{report['icarus']['nodes_per_second']:.1f} nodes/s; "
              f"ratio {report['cycles_per_second_ratio']:.1f}x")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
