"""lab/device.py, the lab's GPU runs on any OpenCL machine: its set-up (a driver registered
with --icd, the output folder) and the command lines it runs, without a GPU."""

import os
import sys

from chessaccel.lab import device


def _recording(monkeypatch):
    """Every command a run would start, with its environment; each succeeds, but the one for a
    platform that does not exist, which fails as the command line does (status 1)."""
    seen = []

    def run(self, cmd, stdout=None):
        seen.append((cmd, dict(self.env)))
        return 1 if "opencl:nosuch" in cmd else 0
    monkeypatch.setattr(device._Run, "run", run)
    return seen


def test_icd_registers_the_driver_for_the_runs_only(tmp_path, monkeypatch):
    seen = _recording(monkeypatch)
    monkeypatch.delenv("OCL_ICD_VENDORS", raising=False)
    out = tmp_path / "out"
    assert device.main(["--icd", "/opt/x/libdriver.so", "--out", str(out), "--platform", "pocl",
                        "perft-ab", "--rounds", "1"]) == 0
    (cmd, env), = [s for s in seen if "chessaccel.lab.perft_ab" in s[0]]
    assert cmd == [sys.executable, "-m", "chessaccel.lab.perft_ab", "pocl", "--rounds", "1"]
    vendors = env["OCL_ICD_VENDORS"]
    assert os.listdir(vendors) == ["driver.icd"]
    assert (out / "icd" / "driver.icd").read_text() == "/opt/x/libdriver.so\n"
    assert env["OUT"] == str(out) and "OCL_ICD_VENDORS" not in os.environ
    assert (out / "perft_ab.log").exists()


def test_no_icd_and_no_platform_by_default(tmp_path, monkeypatch):
    seen = _recording(monkeypatch)
    monkeypatch.delenv("CHESSACCEL_OPENCL_ICD", raising=False)
    monkeypatch.delenv("OCL_ICD_VENDORS", raising=False)
    assert device.main(["--out", str(tmp_path), "cli"]) == 0
    commands = [cmd for cmd, env in seen]
    assert all("OCL_ICD_VENDORS" not in env for _, env in seen)
    backends = {cmd[cmd.index("--backend") + 1] for cmd in commands}
    assert backends == {"opencl", "opencl:nosuch"}
    assert [c[3] for c in commands] == ["moves", "search", "search", "perft", "perft", "perft",
                                        "perft", "bench", "search"]


def test_the_cli_run_fails_when_a_command_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(device._Run, "run", lambda self, cmd, stdout=None: 0)
    # the bad platform must fail with status 1: 0 there is a failure of the run
    assert device.main(["--out", str(tmp_path), "cli"]) == 1


def test_info_on_pocl(tmp_path, capsys):
    assert device.main(["--out", str(tmp_path), "--platform", "pocl", "info"]) == 0
    assert "Portable Computing Language" in (tmp_path / "device.log").read_text()
