"""``chessaccel board program`` and ``board detect`` (host/boardprog.py) against the real
openFPGALoader (Debian's 0.10.0, installed by ``make system-packages``) with no board attached:
every failure is one line on stderr and a nonzero status, never a traceback or a hang."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from chessaccel.host.boardprog import (PROGRAMMERS, ProgramError, default_bitstream,
                                       scan_usb_probes)
from chessaccel.synth.board import dfu_suffix
from chessaccel.synth.boardbuild import BOARDS

SRC = Path(__file__).resolve().parent.parent / "src"
OPENFPGALOADER = shutil.which("openFPGALoader")
needs_tool = pytest.mark.skipif(OPENFPGALOADER is None,
                                reason="openFPGALoader is not installed (make system-packages "
                                       "installs Debian's openfpgaloader)")


def chessaccel(*argv, cwd, env=None, timeout=60):
    """Run the command line as a user does; (status, stdout, stderr)."""
    environment = dict(os.environ, PYTHONPATH=str(SRC))
    environment.pop("OPENFPGALOADER", None)
    environment.update(env or {})
    run = subprocess.run([sys.executable, "-m", "chessaccel.host.cli", *argv], cwd=cwd,
                         env=environment, capture_output=True, text=True, timeout=timeout)
    return run.returncode, run.stdout, run.stderr


def one_error_line(stderr, command):
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"chessaccel board {command}: error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


def attached_probes():
    out = subprocess.run([OPENFPGALOADER, "--scan-usb"], capture_output=True, text=True,
                         timeout=30).stdout
    return scan_usb_probes(out)


@needs_tool
def test_detect_with_nothing_attached_says_so_in_one_line(tmp_path):
    if attached_probes():
        pytest.skip("a USB probe is attached to this machine")
    status, out, err = chessaccel("board", "detect", cwd=tmp_path)
    assert status == 1
    assert out == ""
    line = one_error_line(err, "detect")
    assert "no cable or board found" in line


@needs_tool
def test_program_ulx3s_without_a_board_names_the_cable(tmp_path):
    bitstream = tmp_path / "small.bit"
    bitstream.write_bytes(b"\xff\x00" * 64)
    status, out, err = chessaccel("board", "program", "--board", "ulx3s-85f",
                                  "--bitstream", str(bitstream), cwd=tmp_path)
    assert status == 1
    line = one_error_line(err, "program")
    # openFPGALoader 0.10.0 says "unable to open ftdi device: -3 (device not found)"
    assert "no ulx3s-85f found through JTAG on its FT231X USB port" in line
    assert "openFPGALoader -b ulx3s: unable to open ftdi device" in line
    assert f"{bitstream} through JTAG on its FT231X USB port, to its SRAM" in out


@needs_tool
def test_program_to_flash_asks_openfpgaloader_for_the_flash(tmp_path):
    bitstream = tmp_path / "small.bit"
    bitstream.write_bytes(b"\xff\x00" * 64)
    status, out, err = chessaccel("board", "program", "--board", "ulx3s-85f", "--flash",
                                  "--bitstream", str(bitstream), cwd=tmp_path)
    assert status == 1
    one_error_line(err, "program")
    assert "to its flash" in out
    assert "write to flash" in out       # openFPGALoader's own line, passed through


@needs_tool
def test_program_orangecrab_without_a_board_uses_dfu(tmp_path):
    bitstream = tmp_path / "small.dfu"
    bitstream.write_bytes(dfu_suffix(b"\xff\x00" * 64, *BOARDS["orangecrab-85f"].dfu_ids))
    status, out, err = chessaccel("board", "program", "--board", "orangecrab-85f",
                                  "--bitstream", str(bitstream), cwd=tmp_path)
    assert status == 1
    line = one_error_line(err, "program")
    assert "no orangecrab-85f found through its DFU bootloader" in line
    assert "No DFU compatible device found" in line
    # openFPGALoader read the DFU suffix's ids: our file is one it accepts
    assert "Parse file DONE" in out and "Open device 1209:5af0 Not found" in out


@needs_tool
def test_a_timeout_is_one_line_not_a_hang(tmp_path):
    status, _out, err = chessaccel("board", "detect", "--timeout", "0.0001", cwd=tmp_path)
    assert status == 1
    assert "openFPGALoader did not finish in 0.0001 s (stopped)" in one_error_line(err, "detect")


@pytest.mark.parametrize("argv, status, words", [
    (["program", "--board", "ulx3s-99f", "--bitstream", "x.bit"], 2,
     "unknown board 'ulx3s-99f' (known boards: ulx3s-85f,"),
    (["program", "--board", "ulx3s-85f", "--bitstream", "missing.bit"], 2,
     "bitstream missing.bit does not exist or is not a file"),
    (["program", "--board", "ulx3s-85f", "--bitstream", "empty.bit"], 2,
     "bitstream empty.bit is empty"),
    (["program", "--board", "ulx3s-85f", "--bitstream", "."], 2,
     "bitstream . does not exist or is not a file"),
    (["program", "--board", "ulx3s-85f"], 2,
     "no ulx3s-85f bitstream in build/board/ulx3s-85f-*/: build one with "
     "`chessaccel synth --board ulx3s-85f` (or give --bitstream FILE)"),
    (["program", "--board", "orangecrab-85f", "--bitstream", "x.bit", "--flash"], 2,
     "--flash is how a DFU board is always programmed"),
    (["program", "--board", "ulx3s-85f", "--timeout", "-1"], 2,
     "--timeout must be a positive number of seconds"),
    (["program", "--board", "ulx3s-85f", "--timeout", "inf"], 2,
     "--timeout must be a positive number of seconds, got inf"),
])
def test_bad_input_is_one_line_and_status_2(tmp_path, argv, status, words):
    (tmp_path / "empty.bit").write_bytes(b"")
    (tmp_path / "x.bit").write_bytes(b"\xff")
    got, _out, err = chessaccel("board", *argv, cwd=tmp_path)
    assert got == status
    assert words in one_error_line(err, "program")


@pytest.mark.parametrize("command", [["detect"], ["program", "--board", "ulx3s-85f",
                                                  "--bitstream", "x.bit"]])
def test_without_openfpgaloader_on_path(tmp_path, command):
    (tmp_path / "x.bit").write_bytes(b"\xff")
    status, _out, err = chessaccel("board", *command, cwd=tmp_path, env={"PATH": ""})
    assert status == 1
    assert "openFPGALoader is not installed (apt-get install openfpgaloader" \
        in one_error_line(err, command[0])


def test_the_default_bitstream_is_the_newest_build_of_that_board(tmp_path):
    with pytest.raises(ProgramError, match="build one with `chessaccel synth --board "
                                           "orangecrab-85f`") as error:
        default_bitstream("orangecrab-85f", tmp_path)
    assert error.value.status == 2
    old = tmp_path / "ulx3s-85f-2c" / "chessaccel.bit"
    new = tmp_path / "ulx3s-85f-3c2t" / "chessaccel.bit"
    other = tmp_path / "ulx3s-45f-1c" / "chessaccel.bit"       # another board
    block = tmp_path / "ulx3s-85f-genvictim" / "chessaccel.bit"  # a block behind the scan harness
    for age, path in enumerate([old, new, other, block]):
        path.parent.mkdir()
        path.write_bytes(b"\xff")
        os.utime(path, (1_000_000 + age, 1_000_000 + age))
    assert default_bitstream("ulx3s-85f", tmp_path) == new
    os.utime(old, (2_000_000, 2_000_000))
    assert default_bitstream("ulx3s-85f", tmp_path) == old
    # the OrangeCrab's programming file is the DFU file board.py writes beside the .bit
    crab = tmp_path / "orangecrab-85f-3c"
    crab.mkdir()
    (crab / "chessaccel.bit").write_bytes(b"\xff")
    with pytest.raises(ProgramError):
        default_bitstream("orangecrab-85f", tmp_path)
    (crab / "chessaccel.dfu").write_bytes(b"\xff")
    assert default_bitstream("orangecrab-85f", tmp_path) == crab / "chessaccel.dfu"


@needs_tool
def test_each_board_maps_to_a_board_openfpgaloader_knows():
    listed = subprocess.run([OPENFPGALOADER, "--list-boards"], capture_output=True, text=True,
                            timeout=30).stdout.split()
    assert set(PROGRAMMERS) == set(BOARDS)
    for programmer in PROGRAMMERS.values():
        assert programmer.board in listed, programmer


def test_scan_usb_rows():
    # openFPGALoader --scan-usb as printed by 0.10.0 here (nothing attached) and, for a row with
    # a probe, as quoted in public write-ups of that version (a Digilent FT2232H; an FTDI board)
    empty = ("found 0 USB device\n"
             "Bus device vid:pid       probe type      manufacturer serial               "
             "product\n")
    assert scan_usb_probes(empty) == []
    one = empty + ("001 008    0x0403:0x6010 FTDI2232        FTDI         V1.4_20210810        "
                   "USB <-> Serial Converter\n")
    assert scan_usb_probes(one) == [("0403", "6010",
                                     "FTDI2232 FTDI V1.4_20210810 USB <-> Serial Converter")]
