"""A non-editable install works and is quiet: the wheel builds with no warning, holds the kernels,
the Verilator harnesses, the records and the host's compiled board (built by the install, not on
first use), and, installed on its own, runs OpenCL perft and the UCI engine from a folder that
holds a decoy ``chessaccel/`` package (nothing in the working folder shadows the install)."""

import os
import shutil
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: one wheel for the module's tests: under xdist they stay on one worker (--dist loadgroup), which
#: builds it once (the build compiles the host's library, about 20 CPU s)
pytestmark = pytest.mark.xdist_group("packaging")


def _source_copy(dest):
    """The checkout's tracked files (all of it but build outputs where it is no git checkout),
    copied to ``dest``: setuptools builds in its source's ``build/`` folder, which other tests'
    caches share, and it copies every module of the package; a file another worker writes or
    removes meanwhile once failed the build (``[Errno 2] No such file or directory``)."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True)
    if listed.returncode == 0 and listed.stdout:
        for name in listed.stdout.decode().split("\0"):
            if name and (ROOT / name).is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, dest / name)
    else:
        shutil.copytree(ROOT, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "out", "__pycache__", "*.egg-info"))
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    source = _source_copy(tmp_path_factory.mktemp("source"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps",
                            "--no-build-isolation", "-q", "-w", str(out)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    warnings = [line for line in (build.stdout + build.stderr).splitlines() if "warn" in line.lower()]
    assert not warnings, "\n".join(warnings)
    (path,) = out.glob("chessaccel-*.whl")
    return path


def test_the_wheel_holds_what_runs_without_the_checkout(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for kernel in ("board", "movegen", "perft", "search"):
        assert f"chessaccel/host/opencl/kernels/{kernel}.cl" in names
    assert any(n.startswith("chessaccel/host/engine/_hostboard") and n.endswith(".so") for n in names)
    assert "chessaccel/sim/verilator/searchcore.cpp" in names
    assert "chessaccel/synth/records/blocks/searchcore2.json" in names
    assert "chessaccel/lab/README.md" in names
    assert "chessaccel/contract/evalweights.json" in names        # the terms evaluation's weights
    assert not [n for n in names if n.startswith(("tests/", "tools/", "docs/"))]


def test_the_installed_wheel_runs_from_a_folder_with_a_decoy_package(wheel, tmp_path):
    target = tmp_path / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                              "--target", str(target), str(wheel)],
                             capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr[-3000:]
    work = tmp_path / "work"
    (work / "chessaccel").mkdir(parents=True)
    (work / "chessaccel" / "__init__.py").write_text("raise ImportError('the decoy was imported')\n")
    env = {**os.environ, "PYTHONPATH": str(target), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    where = subprocess.run([sys.executable, "-P", "-c",
                            "import chessaccel.host.engine.hostboard as h; print(h.__file__); "
                            "print(h._installed() is not None)"],
                           cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert where.returncode == 0, where.stderr[-2000:]
    assert where.stdout.split() == [str(target / "chessaccel/host/engine/hostboard.py"), "True"]
    cli = [sys.executable, "-P", "-m", "chessaccel.host.cli"]
    perft = subprocess.run([*cli, "perft", "startpos", "--depth", "3", "--backend", "opencl"],
                           cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert perft.returncode == 0, perft.stderr[-2000:]
    assert "nodes 8902" in perft.stdout
    with subprocess.Popen([*cli, "uci"], cwd=work, env=env, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as engine:
        watchdog = threading.Timer(300, engine.kill)     # a hung engine fails, never hangs
        watchdog.start()
        # two model worker processes search the leaves: they too must import the install
        engine.stdin.write("uci\nsetoption name Backend value model\n"
                           "setoption name Accelerators value 2\nisready\n"
                           "position startpos\ngo depth 4\n")
        engine.stdin.flush()
        lines = []
        for line in engine.stdout:
            lines.append(line)
            if line.startswith("bestmove"):
                break
        engine.stdin.write("quit\n")
        engine.stdin.flush()
        status = engine.wait(timeout=120)
        watchdog.cancel()
        assert status == 0, engine.stderr.read()[-2000:]
    text = "".join(lines)
    assert "uciok" in text and "info depth 4 " in text and lines[-1].startswith("bestmove "), \
        text[-2000:]
