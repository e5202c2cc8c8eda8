"""The lab's GPU runs on any machine with an OpenCL GPU: the device set-up that tools/'s shell
scripts did for one lab machine, as options, and the runs they made.

    python -m chessaccel.lab.device [--platform NAME] [--icd LIBRARY] [--out DIR] [--ncu PATH]
        {info,cli,perft-ab,perft-profile,search-profile} [ARGS ...]

The project must be importable (``pip install -e .``, or ``PYTHONPATH=src`` in a checkout), with
pyopencl; the profiles also need CuPy and Nsight Compute (``ncu``).

Set-up:

- ``--platform NAME``: the OpenCL platform (a substring of its name or vendor, as in
  ``--backend opencl:NAME``); default: the first GPU (``--backend opencl``). The profiles launch
  NVIDIA's PTX through CUDA and default to ``nvidia``.
- ``--icd LIBRARY`` (or $CHESSACCEL_OPENCL_ICD): an OpenCL driver that is installed but not
  registered (a container with the driver's libraries mounted and no /etc/OpenCL/vendors):
  a vendors folder under DIR naming LIBRARY becomes $OCL_ICD_VENDORS for the runs. For NVIDIA's
  driver mounted the usual way: ``--icd /usr/local/nvidia/lib64/libnvidia-opencl.so.1``. Default:
  none (the drivers the system registers).
- ``--out DIR`` (or $OUT; default out/device): every log and file of the run goes there.
- ``--ncu PATH``: Nsight Compute; default ``ncu`` on PATH, else /usr/local/cuda/bin/ncu or
  /opt/nvidia/nsight-compute/*/ncu.

Commands (each prints its log as it goes and writes it under DIR):

- ``info``: the devices OpenCL lists (and nvidia-smi's line where there is one): device.log.
- ``cli``: the command line on the GPU (moves; search of Kiwipete and Bratko-Kopec 1; perft 7,
  Kiwipete perft 6, perft 6 making every leaf, a divide; bench; a platform that does not exist,
  which must fail in one line with status 1): cli.log, bench-opencl.json.
- ``perft-ab ARGS``: lab/perft_ab.py (A/B of perft.cl's build switches): perft_ab.log,
  perft_ab.json.
- ``perft-profile [NAME=SWITCHES ...]``: lab/perft_profile.py prepare, each PTX launched
  through CUDA, perft_bulk_2 of base and of the first variant under Nsight Compute:
  profile.log, NAME_source.csv, NAME.ptx.
- ``search-profile [--jobs FILE] [--ab-rounds N] [--ab-only] [--ncu-sets SETS]
  [NAME=OVERRIDES ...]``: lab/search_profile.py prepare (job file FILE, default jobs.npz from
  ``python -m chessaccel.lab.benchjobs``), each PTX launched through CUDA on the mixed and
  uniform job sets, search_jobs of base under Nsight Compute on SETS (default "mixed uniform"),
  then with N > 0 (default 0; with --ab-only 2 and nothing else) N rounds of the A/B through
  OpenCL: profile.log, base_SET_source.csv, NAME.ptx.
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys
import time

__all__ = ["main"]

KIWI = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
BK01 = "1k1r4/pp1b1R2/3q2pp/4p3/2B5/4Q3/PPP2B2/2K5 b - - 0 1"
#: Nsight Compute's sections of the profiles (the runs of docs/opencl.md)
NCU_SECTIONS = ("SpeedOfLight", "ComputeWorkloadAnalysis", "InstructionStats", "WarpStateStats",
                "SchedulerStats", "Occupancy", "LaunchStats", "SourceCounters",
                "MemoryWorkloadAnalysis")


#: The logs of this process's runs, closed when main returns.
_OPEN = []


class _Run:
    """One command's environment and log."""

    def __init__(self, args, log_name):
        self.out = os.path.abspath(args.out)
        os.makedirs(self.out, exist_ok=True)
        self.env = dict(os.environ, OUT=self.out, PYTHONUNBUFFERED="1")
        if args.icd:
            vendors = os.path.join(self.out, "icd")
            os.makedirs(vendors, exist_ok=True)
            with open(os.path.join(vendors, "driver.icd"), "w") as f:
                f.write(args.icd + "\n")
            self.env["OCL_ICD_VENDORS"] = vendors
        self.log = open(os.path.join(self.out, log_name), "w")
        _OPEN.append(self.log)

    def say(self, line):
        print(line, flush=True)
        self.log.write(line + "\n")
        self.log.flush()

    def run(self, cmd, stdout=None):
        """Run ``cmd`` (its output into the log, or into the file ``stdout``); its status."""
        self.say("$ " + " ".join(cmd))
        sink = open(stdout, "w") if stdout else None
        try:
            with subprocess.Popen(cmd, env=self.env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, errors="replace") as proc:
                for line in proc.stdout:
                    if sink:
                        sink.write(line)
                    else:
                        self.say(line.rstrip("\n"))
            return proc.returncode
        finally:
            if sink:
                sink.close()

    def python(self, module, *args, stdout=None):
        return self.run([sys.executable, "-m", module, *args], stdout=stdout)

    def header(self):
        self.say(time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))
        smi = shutil.which("nvidia-smi")
        if smi:
            self.run([smi, "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,"
                           "temperature.gpu,power.draw", "--format=csv"])


def _ncu(args):
    found = args.ncu or shutil.which("ncu") or next(
        iter(glob.glob("/usr/local/cuda/bin/ncu") + sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"))),
        None)
    if not found:
        raise SystemExit("device: error: Nsight Compute (ncu) not found: give --ncu PATH")
    return found


def _profile(run, ncu, kernel, report, source_csv, launch, extra_sections=()):
    sections = [a for s in NCU_SECTIONS + tuple(extra_sections) for a in ("--section", s)]
    run.run([ncu, "--clock-control", "none", "-k", kernel, "--launch-count", "1", *sections,
             "-f", "-o", report, sys.executable, "-m", *launch])
    run.run([ncu, "-i", report + ".ncu-rep", "--page", "details"])
    run.run([ncu, "-i", report + ".ncu-rep", "--page", "source", "--csv", "--print-source", "sass"],
            stdout=source_csv)


def cmd_info(args, rest):
    run = _Run(args, "device.log")
    run.header()
    code = ("from chessaccel.host.opencl import OpenCLBackend; "
            f"print(OpenCLBackend({args.platform or None!r}).describe())")
    return run.run([sys.executable, "-c", code])


def cmd_cli(args, rest):
    run = _Run(args, "cli.log")
    backend = "opencl" + (f":{args.platform}" if args.platform else "")
    cli = "chessaccel.host.cli"
    failed = 0
    for what, argv in (
            ("moves", ["moves", "startpos"]),
            ("search", ["search", KIWI, "--depth", "4", "--json"]),
            ("search bk", ["search", BK01, "--depth", "5", "--json"]),
            ("perft 7", ["perft", "startpos", "--depth", "7", "--json"]),
            ("perft kiwi 6", ["perft", KIWI, "--depth", "6", "--json"]),
            ("perft make", ["perft", "startpos", "--depth", "6", "--count-mode", "make", "--json"]),
            ("divide", ["perft", KIWI, "--depth", "3", "--divide", "--json"]),
            ("bench", ["bench", "--json", "--out", os.path.join(run.out, "bench-opencl.json")])):
        run.say(f"== {what}")
        status = run.python(cli, *argv, "--backend", backend)
        failed += status != 0
    run.say("== bad platform")
    status = run.python(cli, "search", "startpos", "--backend", "opencl:nosuch", "--depth", "2")
    run.say(f"rc={status}")
    failed += status != 1
    return 1 if failed else 0


def cmd_perft_ab(args, rest):
    run = _Run(args, "perft_ab.log")
    run.header()
    return run.python("chessaccel.lab.perft_ab", args.platform, *rest)


def cmd_perft_profile(args, rest):
    run = _Run(args, "profile.log")
    ncu = _ncu(args)
    run.env.setdefault("PROFILE_PLATFORM", args.platform or "nvidia")
    run.header()
    work = os.path.join(run.out, "perft_profile")
    if run.python("chessaccel.lab.perft_profile", "prepare", work, *rest):
        return 1
    with open(os.path.join(work, "start5.txt")) as f:
        expected = f.read().strip()
    positions = os.path.join(work, "start5.npy")
    for ptx in sorted(glob.glob(os.path.join(work, "*.ptx"))):
        run.python("chessaccel.lab.perft_profile", "launch", ptx, positions, expected)
    first = rest[0].split("=", 1)[0] if rest else None
    for name in ("base", first):
        ptx = os.path.join(work, f"{name}.ptx")
        if name is None or not os.path.exists(ptx):
            continue
        _profile(run, ncu, "perft_bulk_2", os.path.join(work, name),
                 os.path.join(run.out, f"{name}_source.csv"),
                 ["chessaccel.lab.perft_profile", "launch", ptx, positions, expected])
        shutil.copy(ptx, run.out)
    return 0


def cmd_search_profile(args, rest):
    p = argparse.ArgumentParser(prog="python -m chessaccel.lab.device search-profile")
    p.add_argument("--jobs", default="jobs.npz", help="job file (default jobs.npz)")
    p.add_argument("--ab-rounds", type=int, default=None,
                   help="rounds of the A/B through OpenCL after the profiles (default 0)")
    p.add_argument("--ab-only", action="store_true", help="the A/B alone (default 2 rounds)")
    p.add_argument("--ncu-sets", default="mixed uniform", help="job sets profiled")
    p.add_argument("variants", nargs="*", help="NAME=OVERRIDES")
    opts = p.parse_args(rest)
    run = _Run(args, "profile.log")
    run.env.setdefault("PROFILE_PLATFORM", args.platform or "nvidia")
    run.header()
    tool = "chessaccel.lab.search_profile"
    if opts.ab_only:
        return run.python(tool, "ab", opts.jobs, str(opts.ab_rounds or 2), *opts.variants)
    ncu = _ncu(args)
    work = os.path.join(run.out, "search_profile")
    if run.python(tool, "prepare", work, opts.jobs, *opts.variants):
        return 1
    for ptx in sorted(glob.glob(os.path.join(work, "*.ptx"))):
        for job_set in ("mixed", "uniform"):
            run.python(tool, "launch", ptx, os.path.join(work, f"{job_set}.npz"))
    base = os.path.join(work, "base.ptx")
    for job_set in opts.ncu_sets.split():
        _profile(run, ncu, "search_jobs", os.path.join(work, f"base_{job_set}"),
                 os.path.join(run.out, f"base_{job_set}_source.csv"),
                 [tool, "launch", base, os.path.join(work, f"{job_set}.npz")],
                 extra_sections=("MemoryWorkloadAnalysis_Tables",))
    for ptx in glob.glob(os.path.join(work, "*.ptx")):
        shutil.copy(ptx, run.out)
    if opts.ab_rounds:
        return run.python(tool, "ab", opts.jobs, str(opts.ab_rounds), "base=", *opts.variants)
    return 0


COMMANDS = {"info": cmd_info, "cli": cmd_cli, "perft-ab": cmd_perft_ab,
            "perft-profile": cmd_perft_profile, "search-profile": cmd_search_profile}


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m chessaccel.lab.device",
                                description="The lab's GPU runs on any machine with an OpenCL GPU.")
    p.add_argument("--platform", default="",
                   help="OpenCL platform name substring (default: the first GPU; profiles: nvidia)")
    p.add_argument("--icd", default=os.environ.get("CHESSACCEL_OPENCL_ICD"),
                   help="register this OpenCL driver library for the runs (OCL_ICD_VENDORS)")
    p.add_argument("--out", default=os.environ.get("OUT", os.path.join("out", "device")),
                   help="folder for the logs and files (default $OUT or out/device)")
    p.add_argument("--ncu", help="Nsight Compute (default: ncu on PATH or CUDA's)")
    p.add_argument("command", choices=sorted(COMMANDS))
    p.add_argument("args", nargs=argparse.REMAINDER, help="the command's own arguments")
    args = p.parse_args(argv)
    try:
        return COMMANDS[args.command](args, args.args)
    finally:
        while _OPEN:
            _OPEN.pop().close()


if __name__ == "__main__":
    sys.exit(main())
