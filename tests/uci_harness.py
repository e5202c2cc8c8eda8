"""A UCI engine process spoken to line by line, with timing: what the conformance tests need
beyond python-chess's driver (which hides when each line arrives)."""

import os
import queue
import subprocess
import sys
import threading
import time

ENGINE_COMMAND = [sys.executable, "-m", "chessaccel.host.cli", "uci"]


class RawEngine:
    """``chessaccel uci`` in a subprocess; ``lines`` arrive through a reader thread."""

    def __init__(self, command=ENGINE_COMMAND):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, bufsize=1)
        self._lines = queue.Queue()
        self.seen = []
        self._stderr = []
        threading.Thread(target=self._pump, args=(self.process.stdout, self._lines),
                         daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    def _pump(self, stream, out):
        for line in stream:
            out.put((time.monotonic(), line.rstrip("\n")))
        out.put((time.monotonic(), None))

    def _drain(self):
        for line in self.process.stderr:
            self._stderr.append(line)

    @property
    def stderr(self):
        return "".join(self._stderr)

    def send(self, line):
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        return time.monotonic()

    def read_until(self, predicate, timeout=30.0):
        """Lines up to and including the first that satisfies ``predicate``, with its arrival
        time: (lines, time). AssertionError on timeout or end of output."""
        got = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no matching line within {timeout} s; got {got[-10:]}")
            try:
                when, line = self._lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(f"engine output ended; got {got[-10:]}; "
                                     f"stderr {self.stderr[-500:]!r}")
            got.append(line)
            self.seen.append(line)
            if predicate(line):
                return got, when

    def sync(self, timeout=30.0):
        """Send isready and return the lines before readyok."""
        self.send("isready")
        lines, _ = self.read_until(lambda l: l == "readyok", timeout)
        return lines[:-1]

    def children(self):
        """Pids of the engine's child processes (its accelerator workers)."""
        pid = self.process.pid
        out = []
        task_dir = f"/proc/{pid}/task"
        for task in os.listdir(task_dir):
            try:
                with open(f"{task_dir}/{task}/children") as f:
                    out += [int(p) for p in f.read().split()]
            except OSError:
                pass
        return out

    def close(self):
        if self.process.poll() is None:
            try:
                self.send("quit")
            except (BrokenPipeError, OSError):
                pass
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                stream.close()
            except OSError:
                pass


def pid_alive(pid):
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
