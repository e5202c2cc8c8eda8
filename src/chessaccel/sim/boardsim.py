"""The simulated board: hdl/boardtop.py under Verilator, served on a pseudo-terminal.

``build_board_sim`` exports the board top-level (the same ``BoardTop`` that goes into the
bitstream, UART included) to Verilog and compiles it with Debian's Verilator 5.006 and our own
C++ harness (sim/verilator/harness.cpp) into a git-ignored cache folder (``build/verilator``, or
``$CHESSACCEL_VERILATOR_BUILD``), once per design: the key hashes the design sources (every
module hdl/boardtop.py imports), the parameters, the harness and the tools' versions.

``BoardSim`` runs one and exposes its ``port`` (a /dev/pts path): pyserial, a terminal or
``chessaccel board info --port PORT`` talk to it as to a real board. In simulation the UART runs
at ``clocks_per_bit`` (default SIM_CLOCKS_PER_BIT) clock cycles per bit instead of the board's
434 (115200 baud at 50 MHz): the real UART, only fewer cycles per bit. INFO reports the divisor.
"""

import argparse
import hashlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from chessaccel.contract.errors import first_line
from chessaccel.sim.buildtools import (NETLIST_SCRIPT, VERILATOR_FLAGS, VERILATOR_MAKEFLAGS, build_root,
                                        files_digest, locked, make_arguments, module_files,
                                        netlist_tools, verilator_missing as _verilator_missing,
                                        verilator_build, verilator_netlist)

__all__ = ["SIM_CLOCKS_PER_BIT", "SIM_CLOCK_HZ", "MAX_SIM_BOARDS", "BUILD_ROOT", "BoardSimError",
           "SIM_REPLY_TIMEOUT", "verilator_missing", "build_board_sim", "BoardSim", "board_sim_main"]

_HARNESS = Path(__file__).resolve().parent / "verilator" / "harness.cpp"
BUILD_ROOT = build_root("verilator", "CHESSACCEL_VERILATOR_BUILD")
#: Clock cycles per UART bit in simulation: the smallest divisor the UART takes (the board
#: simulates at about 180 k cycles per CPU second, docs/synthesis.md: link cycles are dear).
SIM_CLOCKS_PER_BIT = 4
#: Seconds the host waits for a reply of the simulated board: a frame costs thousands of
#: simulated cycles, and the simulator shares loaded machines (and once ran at 1.7 k cycles/s).
SIM_REPLY_TIMEOUT = 5.0
#: The clock the simulated board reports (that of the real board it stands for).
SIM_CLOCK_HZ = 50_000_000
TOP_NAME = "boardtop"
#: Simulated boards one ``verilator:BOARDS`` or ``chessaccel board-sim --boards`` may start
#: (each is a simulator process).
MAX_SIM_BOARDS = 8
_VERILATOR_FLAGS = VERILATOR_FLAGS
_BUILDTOOLS = Path(__file__).resolve().parent / "buildtools.py"
_STARTUP_SECONDS = 30


class BoardSimError(RuntimeError):
    """The simulated board could not be built or started."""


def verilator_missing():
    """A one-line reason the Verilator build cannot run here, or None when it can."""
    return _verilator_missing("the simulated board")


def _key(cores, clocks_per_bit, threads=1, evaluation="pst"):
    digest = hashlib.sha256()
    digest.update(f"{cores}|{threads}|{evaluation}|{clocks_per_bit}|{SIM_CLOCK_HZ}|{netlist_tools()}|"
                  f"{_VERILATOR_FLAGS}|{VERILATOR_MAKEFLAGS}|{NETLIST_SCRIPT}|".encode())
    digest.update(_HARNESS.read_bytes())
    files_digest(digest, _design_files())
    return digest.hexdigest()[:16]


def _design_files():
    """What a board build is made from: hdl/boardtop.py and every module it imports (the link,
    the UART and, for a board with cores, the SearchCore's: sim/buildtools.module_files),
    sim/buildtools.py (the netlist), sim/rtl_search.py (the cores' shared netlist) and this
    file (the Verilator command)."""
    return sorted({*module_files("chessaccel.hdl.boardtop", "chessaccel.sim.rtl_search"),
                   _BUILDTOOLS, Path(__file__).resolve()})


_locked = locked


def build_board_sim(cores=1, clocks_per_bit=SIM_CLOCKS_PER_BIT, log=None, threads=1,
                    evaluation="pst"):
    """Path of the compiled simulated board, building it on first use (minutes for big designs).

    ``log`` (a callable taking a line) hears about a build that has to happen; ``threads``: the
    jobs each core interleaves, ``evaluation`` the cores' static evaluation (BoardTop's
    parameters).
    """
    from chessaccel.contract.evalweights import check_evaluation
    from chessaccel.contract.protocol import MAX_CORES
    check_evaluation(evaluation)
    if cores * threads > MAX_CORES:
        raise ValueError(f"{cores} cores of {threads} threads are {cores * threads} job slots; "
                         f"the link addresses at most {MAX_CORES}")
    reason = verilator_missing()
    if reason:
        raise BoardSimError(reason)
    key = _key(cores, clocks_per_bit, threads, evaluation)
    layout = f"{cores}c" if threads == 1 else f"{cores}c{threads}t"
    if evaluation != "pst":
        layout += f"-{evaluation}"
    folder = BUILD_ROOT / f"{TOP_NAME}-{layout}-{key}"
    executable = folder / "obj_dir" / "boardsim"
    if executable.exists():
        return executable
    with _locked(BUILD_ROOT / f".{folder.name}.lock"):
        if executable.exists():
            return executable
        if log:
            log(f"building the simulated board ({cores} core(s) of {threads} thread(s), "
                f"{evaluation} evaluation, {clocks_per_bit} clocks/bit) into {folder} ...")
        from chessaccel.hdl.boardtop import BoardTop
        from chessaccel.hdl.search import SearchCore
        from chessaccel.sim.rtl_search import CoreInstance, core_netlist
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=BUILD_ROOT))
        # the cores are one shared netlist's instances (sim/rtl_search.core_netlist): made
        # once for the core's harness and every board of that core, compiled once a board
        sources, factory = [], None
        if cores:
            module, netlist = core_netlist(threads=threads, evaluation=evaluation)
            sources.append(netlist)
            if cores > 1:       # one class for all the cores (Verilator inlines them otherwise)
                control = staging / "cores.vlt"
                control.write_text(f'`verilator_config\nno_inline -module "{module}"\n')
                sources.insert(0, control)

            def factory():
                return CoreInstance(SearchCore(threads=threads, evaluation=evaluation), module)
        top = BoardTop(cores=cores, clock_hz=SIM_CLOCK_HZ, clocks_per_bit=clocks_per_bit,
                       build_id=int(key[:8], 16), threads=threads, evaluation=evaluation,
                       core_factory=factory)
        verilog = verilator_netlist(top, TOP_NAME, lint=not cores)
        command = ["verilator", "--cc", "--exe", "--build", *_VERILATOR_FLAGS,
                   *make_arguments(), "--top-module", TOP_NAME, "-o", "boardsim", "-j", "2",
                   "-CFLAGS", f"-DCLOCKS_PER_BIT={clocks_per_bit}",
                   f"{TOP_NAME}.v", *map(str, sources), str(_HARNESS)]
        status, output = verilator_build(verilog, TOP_NAME, command, staging)
        if status != 0:
            raise BoardSimError(f"Verilator could not build the board (log in {staging / 'build.log'}):\n"
                                + output[-2000:])
        if folder.exists():     # an unfinished build (no executable) left by a killed run
            shutil.rmtree(folder)
        os.replace(staging, folder)
    return executable


class BoardSim:
    """A running simulated board; ``port`` is its pseudo-terminal. Use as a context manager.

    ``stats`` (after ``close``): {"cycles": simulated clock cycles, "ticking_seconds": wall time
    the harness spent ticking the design, "cpu_seconds": CPU time of the whole simulator
    process (user + system, ticking, pty and idle polls together)}.
    """

    def __init__(self, cores=1, clocks_per_bit=SIM_CLOCKS_PER_BIT, log=None, threads=1,
                 evaluation="pst"):
        self.cores = cores
        self.threads = threads
        self.evaluation = evaluation
        self.clocks_per_bit = clocks_per_bit
        executable = build_board_sim(cores, clocks_per_bit, log=log, threads=threads,
                                     evaluation=evaluation)
        self._stats_file = Path(tempfile.mkstemp(prefix="boardsim-", suffix=".json")[1])
        self.stats = None
        self.process = subprocess.Popen([str(executable), "--stats", str(self._stats_file)],
                                        stdout=subprocess.PIPE, text=True)
        ready, _, _ = select.select([self.process.stdout], [], [], _STARTUP_SECONDS)
        line = self.process.stdout.readline() if ready else ""
        if not line.startswith("PTY "):
            self.close()
            raise BoardSimError(f"the simulated board did not start (said {line.strip()!r})")
        self.port = line.split(None, 1)[1].strip()

    def close(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stdout.close()
        try:
            text = self._stats_file.read_text()
            self.stats = json.loads(text) if text else None
        finally:
            self._stats_file.unlink(missing_ok=True)
        return self.stats

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def board_sim_main(args):
    """``chessaccel board-sim``: serve simulated boards on ptys until interrupted.

    ``args`` has ``cores``, ``threads``, ``clocks_per_bit`` and ``boards`` (how many boards, each
    its own simulator process on its own pty, one build shared). Prints each board's pty path on
    its own line on stdout, and on stderr the ``serial:`` spec that drives them all. A board whose
    simulator ends is reported once; the others are served on until Ctrl-C or SIGTERM. Returns
    the exit status (2 on a problem, with a one-line message on stderr).
    """
    def note(line):
        print(line, file=sys.stderr, flush=True)
    boards = getattr(args, "boards", 1)
    if not 1 <= boards <= MAX_SIM_BOARDS:
        note(f"chessaccel board-sim: --boards must be in 1..{MAX_SIM_BOARDS}, not {boards}")
        return 2
    sims = []
    try:
        for _ in range(boards):         # the first builds (minutes, once); the others find it
            sims.append(BoardSim(cores=args.cores, clocks_per_bit=args.clocks_per_bit, log=note,
                                 threads=args.threads))
    except (BoardSimError, ValueError) as error:
        for sim in sims:
            sim.close()
        note(f"chessaccel board-sim: {first_line(error)}")
        return 2
    for sim in sims:
        print(sim.port, flush=True)
    ports = ",".join(sim.port for sim in sims)
    what = "simulated board" if boards == 1 else f"{boards} simulated boards"
    note(f"{what} ({args.cores} core(s) of {args.threads} thread(s), {args.clocks_per_bit} "
         f"clocks/bit) on {ports}; the engine's Backend: serial:{ports}; Ctrl-C to stop")
    stopped = False

    def stop(*_):
        nonlocal stopped
        stopped = True
    old = signal.signal(signal.SIGTERM, stop)
    ended = set()
    try:
        while not stopped and len(ended) < len(sims):
            for sim in sims:
                if sim.port not in ended and sim.process.poll() is not None:
                    ended.add(sim.port)
                    note(f"the simulated board on {sim.port} ended (status "
                         f"{sim.process.returncode})")
            try:
                next(sim for sim in sims if sim.port not in ended).process.wait(timeout=0.5)
            except (subprocess.TimeoutExpired, StopIteration):
                pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, old)
        for sim in sims:
            stats = sim.close()
            if stats:
                note(f"{sim.port}: simulated {stats['cycles']} cycles in "
                     f"{stats['ticking_seconds']:.2f} s of ticking")
    return 0


def add_board_sim_arguments(parser):
    parser.add_argument("--cores", type=int, default=1, help="SearchCores on the board (default 1)")
    parser.add_argument("--threads", type=int, default=1, choices=(1, 2),
                        help="jobs each core interleaves (default 1; 2: the C-slow core, "
                             "hdl/interleave.py); the host sees cores x threads job slots")
    parser.add_argument("--clocks-per-bit", type=int, default=SIM_CLOCKS_PER_BIT,
                        help=f"UART divisor in simulation (default {SIM_CLOCKS_PER_BIT})")
    parser.add_argument("--boards", type=int, default=1,
                        help="simulated boards, each on its own pty (default 1; the engine drives "
                             "them all as serial:PTY1,PTY2,...)")


if __name__ == "__main__":
    _parser = argparse.ArgumentParser(prog="chessaccel board-sim", description=board_sim_main.__doc__)
    add_board_sim_arguments(_parser)
    sys.exit(board_sim_main(_parser.parse_args()))
