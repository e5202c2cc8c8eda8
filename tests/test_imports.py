"""The folder tree is the import tree: import-linter's layers contract (pyproject.toml) holds, and
every subpackage of chessaccel is in one of its layers (a new folder cannot slip outside it)."""

import pkgutil
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import chessaccel

ROOT = Path(__file__).resolve().parent.parent


def _layers():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = config["contracts"]
    return [name.strip() for layer in contract["layers"] for name in layer.split("|")]


def test_every_subpackage_is_in_a_layer():
    packages = {f"chessaccel.{m.name}" for m in pkgutil.iter_modules(chessaccel.__path__) if m.ispkg}
    assert packages == set(_layers())


def test_imports_flow_down_only():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint, "import-linter is part of the test extra: pip install -e '.[test]'"
    run = subprocess.run([lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "0 broken" in run.stdout
