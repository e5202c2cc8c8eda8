"""The compiled part of the host (hostboard.cpp, loaded through ctypes) is built by the install:
setuptools compiles it as an extension module beside hostboard.py. Everything else is in
pyproject.toml."""

import hashlib
from pathlib import Path

from setuptools import Extension, setup

SOURCE = Path("src/chessaccel/host/engine/hostboard.cpp")

setup(ext_modules=[Extension(
    "chessaccel.host.engine._hostboard", [SOURCE.as_posix()], language="c++",
    define_macros=[("HOSTBOARD_DIGEST", f'"{hashlib.sha256(SOURCE.read_bytes()).hexdigest()}"'),
                   ("HOSTBOARD_PYTHON_MODULE", "1")],
    extra_compile_args=["-O2", "-std=c++17", "-fno-exceptions", "-Wall"],
)])
