"""Speed of the compiled simulations: the bare search core and the simulated board, in one run.

Both run the same bench jobs (contract/bench.py) under Verilator:

* **core**: SearchCore alone (sim/rtl_search.py's harness, sim/verilator/searchcore.cpp), jobs on
  its ports;
* **board**: BoardTop with ``--board-cores`` cores (sim/boardsim.py: UART, link, dispatcher, the
  pty), jobs as JOB / RESULT frames through the pty, exactly as a host talks to a real board.

Figures are **simulated clock cycles per CPU second of the simulator process** (user + system
time, from the kernel): the machines this runs on are shared, and wall time would measure the
other users. The board figure counts every cycle the board simulated (link cycles included)
over the CPU time of its whole process (pty handling and idle polls included). Results are
checked against the model. ``--icarus`` adds the cocotb + Icarus board for comparison (minutes).

    python -m chessaccel.lab.boardspeed [--jobs N] [--board-cores N] [--icarus] [--out FILE]
"""

import argparse
import functools
import json
import os
import subprocess
import sys
import time

from chessaccel.contract.defs import INF, Mode, Position, SearchJob, Status
from chessaccel.contract.bench import BENCH
from chessaccel.model.position import parse_position
from chessaccel.contract.protocol import (Command, FrameDecoder, JobRequest, ResultReply, ResultRequest,
                                 decode_payload, encode_frame, encode_payload)
from chessaccel.model import search as model

__all__ = ["measure_core", "measure_verilator", "measure_icarus", "main", "TARGETS"]

#: Cycles the Icarus bench waits after a RESULT request: the longest reply frame and some slack.
_REPLY_WAIT_CYCLES = 3000
#: The issue-11 targets: the core at least this many cycles per CPU second, the board within
#: this factor of the core.
TARGETS = {"core_cycles_per_second": 150_000, "board_within": 2.0}


def _jobs(count):
    jobs = []
    for bench in BENCH[:count]:
        board, _ = parse_position(bench.fen)
        jobs.append((bench.name, board, bench.depth))
    return jobs


def _check(name, board, depth, score, nodes):
    want = model.search(board.copy(), depth, -INF, INF)
    if (score, nodes) != (want.score, want.nodes):
        raise AssertionError(f"{name}: simulated score {score} nodes {nodes}, "
                             f"model {want.score} {want.nodes}")
    return nodes


def _cpu_seconds(usage):
    return usage.ru_utime + usage.ru_stime


def measure_core(jobs):
    """The bare SearchCore under Verilator: cycles per CPU second of its process."""
    from chessaccel.sim.rtl_search import RtlJob, build_verilator
    executable = build_verilator()
    hex_digits = (SearchJob.as_shape().size + 3) // 4
    stdin = "".join(f"{RtlJob(board, depth).packed():0{hex_digits}x} 0 -1\n"
                    for _, board, depth in jobs)
    started = time.perf_counter()
    process = subprocess.Popen([str(executable)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True)
    process.stdin.write(stdin)
    process.stdin.close()
    out = process.stdout.read()
    process.stdout.close()
    # reaped here with wait4: the child's own CPU time, not that of other children
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"the core simulator stopped with status {process.returncode}")
    results = [line.split() for line in out.splitlines()]
    if len(results) != len(jobs):
        raise RuntimeError(f"the core simulator answered {len(results)} of {len(jobs)} jobs")
    from chessaccel.contract.defs import SearchResult
    cycles = nodes = 0
    for (name, board, depth), fields in zip(jobs, results):
        result = SearchResult.from_bits(int(fields[0], 16))
        cycles += int(fields[2])
        nodes += _check(name, board, depth, int(result.score), int(result.nodes))
    cpu = _cpu_seconds(usage)
    return {"simulator": "verilator", "design": "SearchCore", "jobs": len(jobs), "nodes": nodes,
            "cycles": cycles, "cpu_seconds": round(cpu, 4), "wall_seconds": round(wall, 4),
            "cycles_per_second": cycles / cpu, "nodes_per_second": nodes / cpu}


def measure_verilator(jobs, cores=1):
    """The simulated board (Verilator, pty): cycles per CPU second of the simulator process."""
    from chessaccel.host.backends.board import BoardBackend
    from chessaccel.host.backends.board.transport import PtyTransport
    from chessaccel.sim.boardsim import BoardSim, SIM_REPLY_TIMEOUT
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
    stats = sim.stats or sim.close()
    cpu = stats["cpu_seconds"]
    return {"simulator": "verilator", "design": f"BoardTop ({cores} core(s), UART, link, pty)",
            "cores": cores, "jobs": len(jobs), "nodes": nodes, "cycles": stats["cycles"],
            "cpu_seconds": round(cpu, 4), "ticking_seconds": stats["ticking_seconds"],
            "wall_seconds": round(seconds, 4),
            "cycles_per_second": stats["cycles"] / cpu, "nodes_per_second": nodes / cpu}


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
            "nodes_per_second": nodes / out["seconds"],
            "note": "wall time of the testbench (cocotb cannot separate the simulator's CPU)"}


def main(argv=None):
    from chessaccel.sim.boardsim import SIM_CLOCKS_PER_BIT
    parser = argparse.ArgumentParser(prog="python -m chessaccel.lab.boardspeed",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=4,
                        help=f"first N bench jobs (default %(default)s of {len(BENCH)})")
    parser.add_argument("--board-cores", type=int, default=1,
                        help="cores of the simulated board (default 1: like for like with the "
                             "bare core; every core is simulated every cycle)")
    parser.add_argument("--icarus", action="store_true",
                        help="also run the cocotb + Icarus board (minutes per job)")
    parser.add_argument("--out", default="out/boardspeed.json")
    args = parser.parse_args(argv)
    if not 1 <= args.jobs <= len(BENCH):
        parser.error(f"--jobs must be in 1..{len(BENCH)}")
    if args.board_cores < 1:
        parser.error("--board-cores must be at least 1")
    jobs = _jobs(args.jobs)
    report = {"measure": "simulated clock cycles per CPU second of the simulator process "
                         "(user + system), not wall time",
              "targets": TARGETS}
    report["core"] = measure_core(jobs)
    print(json.dumps(report["core"]), flush=True)
    report["board"] = measure_verilator(jobs, args.board_cores)
    print(json.dumps(report["board"]), flush=True)
    if args.icarus:
        report["icarus"] = measure_icarus(jobs, SIM_CLOCKS_PER_BIT)
        print(json.dumps(report["icarus"]), flush=True)
    core, board = report["core"]["cycles_per_second"], report["board"]["cycles_per_second"]
    report["core_cycles_per_second"] = round(core)
    report["board_cycles_per_second"] = round(board)
    report["board_to_core"] = board / core
    report["meets"] = {"core": core >= TARGETS["core_cycles_per_second"],
                       "board": board * TARGETS["board_within"] >= core}
    print(f"core {core:,.0f} cycles/s (target {TARGETS['core_cycles_per_second']:,}: "
          f"{'met' if report['meets']['core'] else 'NOT met'}); board "
          f"({args.board_cores} core(s)) {board:,.0f} cycles/s = {board / core:.2f} of the core "
          f"(target within {TARGETS['board_within']:g}x: "
          f"{'met' if report['meets']['board'] else 'NOT met'}); CPU time of the simulator")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
