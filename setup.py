"""The compiled part of the host (hostboard.cpp and hostsearch.cpp, loaded through ctypes) is built
by the install:
setuptools compiles it as an extension module beside hostboard.py. Everything else is in
pyproject.toml."""

import hashlib
from pathlib import Path

from setuptools import Extension, setup

HERE = Path("src/chessaccel/host/engine")
#: hostboard.py's _SOURCES, in its order: the digest covers them all, the build compiles the .cpp
SOURCES = [HERE / "hostboard.hpp", HERE / "hostboard.cpp", HERE / "hostsearch.cpp",
           HERE / "hostlaunch.hpp", HERE / "hostlaunch.cpp", HERE / "hosteval.hpp"]
DIGEST = hashlib.sha256(b"".join(path.read_bytes() for path in SOURCES)).hexdigest()

setup(ext_modules=[Extension(
    "chessaccel.host.engine._hostboard",
    [path.as_posix() for path in SOURCES if path.suffix == ".cpp"], language="c++",
    depends=[path.as_posix() for path in SOURCES if path.suffix == ".hpp"],
    define_macros=[("HOSTBOARD_DIGEST", f'"{DIGEST}"'),
                   ("HOSTBOARD_PYTHON_MODULE", "1")],
    extra_compile_args=["-O2", "-std=c++17", "-pthread", "-Wall"],
    extra_link_args=["-pthread"],
    libraries=["dl"],       # hostlaunch.cpp opens the OpenCL library pyopencl loaded
)])
