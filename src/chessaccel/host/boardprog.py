"""Boards people own: ``chessaccel board program`` and ``chessaccel board detect``, through
openFPGALoader (Debian's ``openfpgaloader``; ``$OPENFPGALOADER``, or one installed beside the
running Python, wins over PATH).

- ``program_main(args)``: ``chessaccel board program --board NAME [--bitstream FILE] [--flash]``
  loads a bitstream (by default the newest ``chessaccel synth --board NAME`` build under
  ``--out``) into the board: the ULX3S over JTAG on its FT231X USB port (SRAM, or its SPI flash
  with ``--flash``), the OrangeCrab through its DFU bootloader (always its flash: hold the button
  while plugging it in), the iCEBreaker over its FT2232H (ice40_generic).
- ``detect_main(args)``: ``chessaccel board detect`` lists the USB probes openFPGALoader sees
  (``--scan-usb``) and any DFU device (``--dfu --detect``).

Every failure is one line on stderr and a nonzero exit status: 2 for bad input (unknown board,
no bitstream, an unreadable file), 1 for a failed run (openFPGALoader missing, no cable or board
found, a timeout, any other failure of the tool). openFPGALoader's own output (its progress) is
passed through on stdout as it comes.
"""

import math
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from chessaccel.synth.board import DEFAULT_BOARD_OUT, DESIGN_NAME
from chessaccel.synth.boardbuild import BOARDS
from chessaccel.synth.tools import tool_path

__all__ = ["Programmer", "PROGRAMMERS", "ProgramError", "openfpgaloader", "default_bitstream",
           "scan_usb_probes", "program_main", "detect_main", "add_program_arguments",
           "add_detect_arguments"]

EXIT_FAILED, EXIT_USAGE = 1, 2
#: Seconds a programming run may take (an 85F's SPI flash over JTAG takes about a minute).
PROGRAM_TIMEOUT_S = 600.0
#: Seconds a probe scan or detection may take (with nothing attached it answers at once).
DETECT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Programmer:
    """How openFPGALoader reaches one of our boards."""
    board: str          # openFPGALoader's board name (``--list-boards``; case matters)
    cable: str          # how openFPGALoader reaches it, for messages
    plug: str           # what the user does so that it can
    suffix: str         # the programming file of a ``chessaccel synth`` build
    dfu: bool = False   # programmed through a DFU bootloader (always the flash)


_ULX3S = Programmer("ulx3s", "JTAG on its FT231X USB port", "plug in its USB port", ".bit")
_ORANGECRAB = Programmer("orangeCrab", "its DFU bootloader",
                         "plug it in with its button held, so that its DFU bootloader runs",
                         ".dfu", dfu=True)
#: Our boards (synth/boardbuild.py ``BOARDS``) by the name the command line takes.
PROGRAMMERS = {
    "ulx3s-85f": _ULX3S, "ulx3s-45f": _ULX3S, "ulx3s-25f": _ULX3S,
    "orangecrab-85f": _ORANGECRAB, "orangecrab-25f": _ORANGECRAB,
    "icebreaker": Programmer("ice40_generic", "its FT2232H USB port", "plug in its USB port",
                             ".bin"),
}
assert set(PROGRAMMERS) == set(BOARDS), "every board of synth/boardbuild.py needs a programmer"

#: What openFPGALoader says when the cable or board is not there (v0.10.0, nothing attached).
_NOT_FOUND = ("unable to open ftdi device", "No DFU compatible device found", "Not found",
              "Failed to claim cable", "device not found")
#: USB ids of our boards' programming ports, for ``detect``'s hints.
_KNOWN_IDS = {("0403", "6015"): "an FT231X, as on the ULX3S: --board ulx3s-85f",
              ("0403", "6010"): "an FT2232H, as on the iCEBreaker: --board icebreaker"}


class ProgramError(Exception):
    """A failure to report in one line; ``status`` is the exit status."""

    def __init__(self, message, status=EXIT_FAILED):
        super().__init__(message)
        self.status = status


def openfpgaloader():
    """The path of openFPGALoader: ``$OPENFPGALOADER`` (looked up on PATH) when set, else the
    one beside the running Python (a virtual environment's bin/), else PATH. Raises ``ProgramError`` when there is none."""
    path = tool_path("openFPGALoader", "OPENFPGALOADER")
    if path is None:
        raise ProgramError("openFPGALoader is not installed (apt-get install openfpgaloader, "
                           "or set OPENFPGALOADER to its path)")
    return path


def _programmer(board):
    if board not in PROGRAMMERS:
        raise ProgramError(f"unknown board '{board}' (known boards: {', '.join(BOARDS)})",
                           EXIT_USAGE)
    return PROGRAMMERS[board]


def default_bitstream(board, out_dir=DEFAULT_BOARD_OUT):
    """The programming file of the newest ``chessaccel synth --board BOARD`` build under
    ``out_dir`` (its ``BOARD-Nc`` / ``BOARD-NcTt`` folders); ``ProgramError`` when none."""
    suffix = _programmer(board).suffix
    layout = re.compile(rf"{re.escape(board)}-\d+c(\d+t)?")
    found = [path for path in Path(out_dir).glob(f"{board}-*/{DESIGN_NAME}{suffix}")
             if layout.fullmatch(path.parent.name) and path.is_file()]
    if not found:
        raise ProgramError(f"no {board} bitstream in {out_dir}/{board}-*/: build one with "
                           f"`chessaccel synth --board {board}` (or give --bitstream FILE)",
                           EXIT_USAGE)
    return max(found, key=lambda path: path.stat().st_mtime)


def _check_file(path):
    path = Path(path)
    if not path.is_file():
        raise ProgramError(f"bitstream {path} does not exist or is not a file", EXIT_USAGE)
    try:
        with open(path, "rb") as f:
            if not f.read(1):
                raise ProgramError(f"bitstream {path} is empty", EXIT_USAGE)
    except OSError as error:
        raise ProgramError(f"bitstream {path} cannot be read: {error.strerror}", EXIT_USAGE)
    return path


def _run(argv, timeout, echo=True):
    """Run openFPGALoader; its stdout is passed through as it comes (``echo``) and kept, its
    stderr kept. Returns ``(exit status, stdout, stderr)``; a timeout is a ``ProgramError``."""
    started = time.monotonic()
    try:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
    except OSError as error:
        raise ProgramError(f"cannot run {argv[0]}: {error.strerror}")
    out, err = [], []

    def pump(stream, chunks, sink):
        for chunk in iter(lambda: stream.read1(4096), b""):
            chunks.append(chunk)
            if sink is not None:
                sink.write(chunk.decode(errors="replace"))
                sink.flush()

    readers = [threading.Thread(target=pump, args=(process.stdout, out,
                                                   sys.stdout if echo else None), daemon=True),
               threading.Thread(target=pump, args=(process.stderr, err, None), daemon=True)]
    for reader in readers:
        reader.start()
    try:
        # the clock runs from the start: a tool that ended after its time, but before this
        # thread looked, did not finish in time either (a loaded machine may start the
        # readers late)
        status = process.wait(timeout=max(0.0, started + timeout - time.monotonic()))
        if time.monotonic() - started > timeout:
            raise subprocess.TimeoutExpired(argv, timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise ProgramError(f"openFPGALoader did not finish in {timeout:g} s (stopped): "
                           f"{' '.join(argv[1:])}")
    for reader in readers:
        reader.join()
    return (status, b"".join(out).decode(errors="replace"),
            b"".join(err).decode(errors="replace"))


def _tool_said(text):
    """openFPGALoader's error lines, joined in one line."""
    lines = [line.strip() for line in text.replace("\r", "\n").splitlines() if line.strip()]
    return "; ".join(dict.fromkeys(lines))


def program(board, bitstream=None, *, flash=False, out_dir=DEFAULT_BOARD_OUT,
            timeout=PROGRAM_TIMEOUT_S, echo=True):
    """Load ``bitstream`` (default: ``default_bitstream``) into ``board``; returns the file
    loaded. Raises ``ProgramError``."""
    programmer = _programmer(board)
    if flash and programmer.dfu:
        raise ProgramError(f"--flash is how a DFU board is always programmed: leave it out for "
                           f"the {board}", EXIT_USAGE)
    path = _check_file(bitstream) if bitstream is not None else default_bitstream(board, out_dir)
    argv = [openfpgaloader(), "-b", programmer.board]
    if flash:
        argv.append("--write-flash")
    argv.append(str(path))
    print(f"{board}: {path} through {programmer.cable}"
          + (", to its flash" if flash or programmer.dfu else ", to its SRAM"), flush=True)
    status, out, err = _run(argv, timeout, echo)
    if status != 0:
        said = _tool_said(err) or _tool_said(out)
        if any(sign in err or sign in out for sign in _NOT_FOUND):
            raise ProgramError(f"no {board} found through {programmer.cable} "
                               f"(openFPGALoader -b {programmer.board}: {said}): {programmer.plug}")
        raise ProgramError(f"openFPGALoader -b {programmer.board} failed (exit status "
                           f"{status}): {said}")
    return path


_PROBE_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+0x([0-9a-fA-F]{4}):0x([0-9a-fA-F]{4})\s+(.*)$")


def scan_usb_probes(text):
    """``[(vid, pid, rest of the row)]`` of ``openFPGALoader --scan-usb``'s table."""
    return [(m.group(3).lower(), m.group(4).lower(), " ".join(m.group(5).split()))
            for m in map(_PROBE_ROW.match, text.splitlines()) if m]


def detect(timeout=DETECT_TIMEOUT_S):
    """``[line]`` describing each cable or DFU board found; ``ProgramError`` when none."""
    tool = openfpgaloader()
    status, out, err = _run([tool, "--scan-usb"], timeout, echo=False)
    if status != 0:
        raise ProgramError(f"openFPGALoader --scan-usb failed (exit status {status}): "
                           f"{_tool_said(err) or _tool_said(out)}")
    found = []
    for vid, pid, rest in scan_usb_probes(out):
        hint = _KNOWN_IDS.get((vid, pid))
        found.append(f"{vid}:{pid} {rest}" + (f" ({hint})" if hint else ""))
    status, out, err = _run([tool, "--dfu", "--detect"], timeout, echo=False)
    if status == 0:
        found += [f"DFU: {line.strip()}" for line in out.splitlines()
                  if line.strip() and "bypassed" not in line]
        found.append("(a DFU device such as the OrangeCrab's bootloader: --board orangecrab-85f)")
    if not found:
        raise ProgramError("no cable or board found (openFPGALoader --scan-usb lists no probe "
                           "and --dfu --detect no DFU device): plug in the ULX3S's USB port, or "
                           "the OrangeCrab with its button held")
    return found


def add_program_arguments(parser):
    parser.add_argument("--board", required=True, metavar="NAME",
                        help=f"one of: {', '.join(BOARDS)}")
    parser.add_argument("--bitstream", metavar="FILE",
                        help="file to load (default: the newest `chessaccel synth --board NAME` "
                             "build under --out; .bit for ECP5 JTAG, .dfu for the OrangeCrab)")
    parser.add_argument("--flash", action="store_true",
                        help="write the board's SPI flash (kept after power-off) instead of its "
                             "SRAM (JTAG boards; a DFU board always writes its flash)")
    parser.add_argument("--out", default=str(DEFAULT_BOARD_OUT), metavar="DIR",
                        help="build folder of `chessaccel synth` (default %(default)s)")
    parser.add_argument("--timeout", type=float, default=PROGRAM_TIMEOUT_S, metavar="S",
                        help="seconds before openFPGALoader is stopped (default %(default)g)")


def add_detect_arguments(parser):
    parser.add_argument("--timeout", type=float, default=DETECT_TIMEOUT_S, metavar="S",
                        help="seconds each openFPGALoader run may take (default %(default)g)")


def _positive(timeout):
    if not (timeout > 0 and math.isfinite(timeout)):
        raise ProgramError(f"--timeout must be a positive number of seconds, got {timeout}",
                           EXIT_USAGE)
    return timeout


def program_main(args):
    """``chessaccel board program``: exit status."""
    try:
        path = program(args.board, args.bitstream, flash=args.flash, out_dir=args.out,
                       timeout=_positive(args.timeout))
    except ProgramError as error:
        print(f"chessaccel board program: error: {error}", file=sys.stderr)
        return error.status
    print(f"{args.board}: loaded {path}")
    return 0


def detect_main(args):
    """``chessaccel board detect``: exit status."""
    try:
        found = detect(_positive(args.timeout))
    except ProgramError as error:
        print(f"chessaccel board detect: error: {error}", file=sys.stderr)
        return error.status
    for line in found:
        print(line)
    return 0
