"""How the OpenCL device is found and opened (host/opencl/device.py): the platform and device
choice on stand-in platforms (every branch and every message a user sees), the cache folder,
the compiler's error lines, and the PoCL device this machine has (opened once per process)."""

import hashlib
from pathlib import Path

import numpy as np
import pytest

from chessaccel.host.opencl import device as opencl_device
from chessaccel.host.opencl.device import OpenCLError


class _Error(Exception):
    pass


class _Types:
    GPU, CPU, ALL = 4, 2, 0xFFFFFFFF


class _Platform:
    """A stand-in pyopencl platform: its devices by type (ALL: every one)."""

    def __init__(self, name, vendor="", gpus=(), cpus=(), others=(), broken=False):
        self.name, self.vendor = name, vendor
        self.by_kind = {_Types.GPU: list(gpus), _Types.CPU: list(cpus),
                        _Types.ALL: list(gpus) + list(cpus) + list(others)}
        self.broken = broken

    def get_devices(self, device_type):
        if self.broken:
            raise _Error("clGetDeviceIDs failed: DEVICE_NOT_FOUND")
        return self.by_kind[device_type]


class _CL:
    Error = _Error
    device_type = _Types

    def __init__(self, *platforms, error=None):
        self.platforms, self.error = list(platforms), error

    def get_platforms(self):
        if self.error:
            raise _Error(self.error)
        return self.platforms


POCL = _Platform("Portable Computing Language", "The pocl project", cpus=["pocl-cpu", "pocl-cpu2"])
NVIDIA = _Platform("NVIDIA CUDA", "NVIDIA Corporation", gpus=["h100", "h100-b"])
AMD = _Platform("AMD Accelerated Parallel Processing", "Advanced Micro Devices, Inc.",
                gpus=["mi300"], cpus=["epyc"])
FPGA = _Platform("Intel(R) FPGA Emulation Platform", "Intel(R) Corporation", others=["fpga-emu"])


def test_without_a_platform_name_an_nvidia_gpu_comes_first():
    assert opencl_device._choose(_CL(AMD, POCL, NVIDIA), None) == "h100"
    assert opencl_device._choose(_CL(AMD, POCL), None) == "mi300"
    assert opencl_device._choose(_CL(POCL, AMD), None) == "mi300", "a GPU before any CPU"


def test_without_a_gpu_a_cpu_comes_before_other_devices():
    assert opencl_device._choose(_CL(FPGA, POCL), None) == "pocl-cpu"
    assert opencl_device._choose(_CL(FPGA), None) == "fpga-emu"
    assert opencl_device._choose(_CL(_Platform("broken", broken=True), POCL), None) == "pocl-cpu"


def test_a_platform_name_matches_its_name_or_vendor_in_any_case():
    cl = _CL(NVIDIA, AMD, POCL)
    assert opencl_device._choose(cl, "pocl") == "pocl-cpu"
    assert opencl_device._choose(cl, "PORTABLE") == "pocl-cpu"
    assert opencl_device._choose(cl, "micro devices") == "mi300", "GPU first on the platform"
    assert opencl_device._choose(cl, "Corporation") == "h100"
    # of two matching platforms, a GPU on the second comes before a CPU on the first
    assert opencl_device._choose(_CL(POCL, NVIDIA), "o") == "h100"
    assert opencl_device._choose(_CL(FPGA), "fpga") == "fpga-emu"


def test_a_device_index_picks_among_the_devices_the_name_would_choose_from():
    """opencl:PLATFORM:INDEX: the devices of the matching platforms, GPUs first (a second GPU
    is opencl:NVIDIA:1); an index past them is one line saying how many there are."""
    cl = _CL(NVIDIA, AMD, POCL)
    assert opencl_device._choose(cl, "nvidia", 0) == opencl_device._choose(cl, "nvidia") == "h100"
    assert opencl_device._choose(cl, "nvidia", 1) == "h100-b"
    assert opencl_device._choose(cl, "pocl", 1) == "pocl-cpu2"
    assert opencl_device._choose(cl, None, 1) == "h100-b"
    for platform, index, message in (
            ("nvidia", 2, "OpenCL platform 'NVIDIA CUDA' has 2 device(s) (0..1): no device 2"),
            ("micro devices", 1, "OpenCL platform 'AMD Accelerated Parallel Processing' has 1 "
                                 "device(s) (0..0): no device 1")):
        with pytest.raises(OpenCLError) as e:
            opencl_device._choose(cl, platform, index)
        assert str(e.value) == message


def test_each_failure_to_find_a_device_is_one_line_naming_the_platforms():
    with pytest.raises(OpenCLError) as e:
        opencl_device._choose(_CL(), None)
    assert str(e.value) == ("no OpenCL platform found (install a GPU driver's OpenCL ICD, "
                            "or PoCL: pip install 'pyopencl[pocl]')")
    with pytest.raises(OpenCLError) as e:
        opencl_device._choose(_CL(NVIDIA, POCL), "quantum")
    assert str(e.value) == ("no OpenCL platform matches 'quantum' "
                            "(platforms: 'NVIDIA CUDA', 'Portable Computing Language')")
    empty = _Platform("Empty One")
    with pytest.raises(OpenCLError) as e:
        opencl_device._choose(_CL(empty, _Platform("Empty Two")), "empty")
    assert str(e.value) == "OpenCL platform 'Empty One' has no device"
    with pytest.raises(OpenCLError) as e:
        opencl_device._choose(_CL(empty, _Platform("x", broken=True)), None)
    assert str(e.value) == "no OpenCL device found (platforms: 'Empty One', 'x')"


def test_listing_the_platforms():
    """No ICD at all (PLATFORM_NOT_FOUND_KHR) is no platform; another error is named."""
    assert opencl_device._platforms(_CL(error="clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR")) == []
    with pytest.raises(OpenCLError) as e:
        opencl_device._platforms(_CL(error="clGetPlatformIDs failed: OUT_OF_HOST_MEMORY\nmore"))
    assert str(e.value) == "cannot list OpenCL platforms: clGetPlatformIDs failed: OUT_OF_HOST_MEMORY"
    assert opencl_device._devices(_CL, _Platform("x", broken=True), _Types.ALL) == []


def test_a_compiler_line_loses_its_temporary_path():
    message = opencl_device._compiler_message
    assert message("/tmp/pocl-x1/kernel.cl:123:7: error: use of undeclared identifier 'foo'") == \
        "line 123: use of undeclared identifier 'foo'"
    assert message("<source>.cl:9:1: unknown type name 'bar'") == "line 9: unknown type name 'bar'"
    assert message("  error: something else  ") == "error: something else"


def test_the_cache_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("CHESSACCEL_OPENCL_CACHE", str(tmp_path / "mine"))
    assert opencl_device.cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("CHESSACCEL_OPENCL_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert opencl_device.cache_dir() == tmp_path / "xdg" / "chessaccel" / "opencl"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert opencl_device.cache_dir() == tmp_path / "home" / ".cache" / "chessaccel" / "opencl"


def test_the_kernel_source_is_the_prelude_then_each_file():
    from chessaccel.host.opencl.layout import kernel_prelude
    text = opencl_device.kernel_source()
    assert text.startswith(kernel_prelude() + "\n// ---- ")
    kernels = Path(opencl_device.__file__).parent / "kernels"
    for name in opencl_device.KERNEL_FILES:
        assert f"// ---- {name} ----\n" + (kernels / name).read_text() in text


def test_the_pocl_device_as_opened():
    """The real PoCL platform: its names without padding, a CPU, its program's source hash;
    each kernel object made once; the driver's figures of a kernel as whole numbers."""
    d = opencl_device.open_device("pocl")
    cl = d.cl
    assert d.name == d.device.name.strip() and d.platform_name == "Portable Computing Language"
    assert d.describe() == f"{d.name} (Portable Computing Language)"
    assert d.is_gpu is False and d.compute_units == d.device.max_compute_units >= 1
    assert d.device.type & cl.device_type.CPU
    # PoCL's program takes Clang's builtins (CPU_BUILTINS, board.cl), whatever was asked
    assert d.overrides == {"CPU_BUILTINS": 1}
    assert d.source_sha256 == hashlib.sha256(
        opencl_device.kernel_source({"CPU_BUILTINS": 1}).encode()).hexdigest()
    assert d.kernel("perft_bulk_1") is d.kernel("perft_bulk_1")
    info = d.kernel_info(d.kernel("perft_bulk_1"))
    assert set(info) == {"work_group_size", "private_mem_size", "local_mem_size",
                         "preferred_work_group_size_multiple"}
    assert all(type(v) is int for v in info.values()) and info["work_group_size"] >= 1
    key = d._cache_key("source", ["-a"])
    assert len(key) == 32 and int(key, 16) >= 0
    assert key != d._cache_key("source", ["-b"]) and key != d._cache_key("other", ["-a"])
    assert key == d._cache_key("source", ["-a"])


class _RecordingCL:
    """pyopencl, with each program it is asked to make recorded (3 arguments: from binaries)."""

    def __init__(self, cl):
        self._cl, self.programs = cl, []

    def __getattr__(self, name):
        return getattr(self._cl, name)

    def Program(self, *args):
        self.programs.append(len(args))
        return self._cl.Program(*args)


#: A program of one small kernel: asked for its binary, PoCL compiles only that kernel.
_SMALL_PROGRAM = "kernel void store_one(global int *out) { out[get_global_id(0)] = 1; }"


def test_a_cached_binary_is_loaded_not_built_again(monkeypatch, tmp_path):
    """With the binary cache on (a GPU's default; PoCL's only when asked), a second build of
    the same program on the same device finds the first one's binary: a program made from the
    binary, with the source build's log read back beside it. (A small program: PoCL compiles
    every kernel of a program for its binary, 16 s for the search program.)"""
    monkeypatch.setenv("CHESSACCEL_OPENCL_CACHE", str(tmp_path))
    opened = opencl_device.open_device("pocl")
    device = opencl_device.Device(opened.cl, opened.device)   # its program from PoCL's cache
    device.binary_cache = True
    built = device._build(source=_SMALL_PROGRAM)
    assert device.from_cache is False
    device.cl = cl = _RecordingCL(opened.cl)
    loaded = device._build(source=_SMALL_PROGRAM)
    assert cl.programs == [3] and device.from_cache is True
    key = device._cache_key(_SMALL_PROGRAM, list(opencl_device._BUILD_OPTIONS))
    log = tmp_path / f"{key}.log"
    assert (tmp_path / f"{key}.bin").exists()
    assert device.build_log == (log.read_text() if log.exists() else "")
    buffer = cl.Buffer(device.context, cl.mem_flags.READ_WRITE, 4 * 4)
    cl.Kernel(loaded, "store_one")(device.queue, (4,), None, buffer)
    out = np.zeros(4, dtype=np.int32)
    cl.enqueue_copy(device.queue, out, buffer)
    assert out.tolist() == [1, 1, 1, 1], "the loaded binary runs"
    assert built is not loaded


def test_pocl_programs_are_left_to_pocls_own_cache(monkeypatch, tmp_path):
    """On PoCL a Device builds from source and writes no binary of its own: PoCL's cache has
    the build (asking PoCL for the binary would compile every kernel for any work-group size)."""
    monkeypatch.setenv("CHESSACCEL_OPENCL_CACHE", str(tmp_path))
    opened = opencl_device.open_device("pocl")
    cl = _RecordingCL(opened.cl)
    again = opencl_device.Device(cl, opened.device)
    assert again.binary_cache is False and again.from_cache is False
    assert cl.programs == [2], "a program from the source, none from a binary"
    assert not list(tmp_path.glob("*.bin"))
    assert again.kernel("search_jobs") is not opened.kernel("search_jobs")


def test_one_device_per_process_unless_fresh():
    d = opencl_device.open_device("pocl")
    assert opencl_device.open_device("pocl") is d
    d.queue.finish()
    assert 0 <= d.build_seconds < 600


def test_without_pyopencl_the_error_says_what_to_install(monkeypatch, tmp_path):
    """PoCL's cache goes under ours (unless set already); without pyopencl, one line naming
    the package to install."""
    import sys
    monkeypatch.setenv("POCL_CACHE_DIR", "")      # recorded, so that teardown restores it
    monkeypatch.delenv("POCL_CACHE_DIR")
    monkeypatch.setenv("CHESSACCEL_OPENCL_CACHE", str(tmp_path))
    monkeypatch.setitem(sys.modules, "pyopencl", None)
    with pytest.raises(OpenCLError) as e:
        opencl_device._import_pyopencl()
    assert str(e.value).startswith("pyopencl is not installed (")
    assert str(e.value).endswith("); pip install 'pyopencl[pocl]'")
    import os
    assert os.environ["POCL_CACHE_DIR"] == str(tmp_path / "pocl")


# --- building, on a stand-in pyopencl ---------------------------------------------------------

class _Program:
    def __init__(self, cl, source=None, binary=None):
        self.cl, self.source, self.binary = cl, source, binary

    def build(self, options, devices):
        self.cl.builds.append((self.binary is not None, list(options)))
        failure = self.cl.fail_binary if self.binary is not None else self.cl.fail_source
        if failure:
            raise _Error(failure)

    def get_info(self, what):
        return [b"binary of " + self.source.encode()[:8]]

    def get_build_info(self, device, what):
        if self.cl.log is None:
            raise _Error("no log")
        return self.cl.log


class _BuildCL(_CL):
    """Programs that build (or fail as told) and record each build: (from a binary, options)."""
    VERSION_TEXT = "2024.1"

    class program_info:
        BINARIES = "BINARIES"

    class program_build_info:
        LOG = "LOG"

    def __init__(self, log="", fail_source=None, fail_binary=None):
        super().__init__()
        self.log, self.fail_source, self.fail_binary = log, fail_source, fail_binary
        self.builds = []

    def Program(self, context, *args):
        if len(args) == 1:
            return _Program(self, source=args[0])
        [device], [binary] = args
        return _Program(self, binary=binary)


class _FakeDevice:
    name, version, driver_version = "Fake GPU", "OpenCL 3.0", "1.0"

    def __init__(self, platform_name):
        self.platform = type("P", (), {"name": platform_name, "version": "OpenCL 3.0"})()


def _device(cl, platform_name="Fake Platform"):
    d = object.__new__(opencl_device.Device)
    d.cl, d.device, d.context, d.overrides = cl, _FakeDevice(platform_name), None, {}
    d.name, d.platform_name, d.build_log, d.from_cache = "Fake GPU", platform_name, "", False
    d.binary_cache = True
    return d


def test_a_build_is_cached_and_the_next_one_loads_it(monkeypatch, tmp_path):
    monkeypatch.setenv("CHESSACCEL_OPENCL_CACHE", str(tmp_path / "cache"))
    cl = _BuildCL(log="built fine")
    first = _device(cl)
    program = first._build()
    assert program.source == opencl_device.kernel_source() and first.from_cache is False
    assert cl.builds == [(False, list(opencl_device._BUILD_OPTIONS))]
    [binary] = (tmp_path / "cache").glob("*.bin")
    assert binary.read_bytes() == program.get_info(None)[0]
    assert binary.with_suffix(".log").read_text() == "built fine" == first.build_log
    assert 0 <= first.build_seconds < 60
    cl.log = "the binary's own log"
    second = _device(cl)
    assert second._build().binary == binary.read_bytes() and second.from_cache is True
    assert second.build_log == "built fine", "the source build's log, kept beside the binary"
    assert not list((tmp_path / "cache").glob("*.tmp"))


def test_a_stale_binary_is_built_again_from_source(monkeypatch, tmp_path):
    monkeypatch.setenv("CHESSACCEL_OPENCL_CACHE", str(tmp_path))
    cl = _BuildCL()
    _device(cl)._build()
    cl.builds, cl.fail_binary = [], "INVALID_BINARY"
    again = _device(cl)
    assert again._build().source is not None and again.from_cache is False
    assert [b for b, _ in cl.builds] == [True, False]


def test_a_cpu_pocl_does_not_know_says_what_to_install():
    # PoCL 3.0 (LLVM 14) on AMD's Zen 5: LLVM names the CPU 'generic' and clang refuses it
    cl = _BuildCL(log="error: unknown target CPU 'generic'\n", fail_source="BUILD_PROGRAM_FAILURE")
    with pytest.raises(OpenCLError) as e:
        _device(cl, "Portable Computing Language")._run_build(_Program(cl, source="s"), [])
    assert "unknown target CPU 'generic'; this PoCL's LLVM does not know this CPU" in str(e.value)
    assert "apt-get install pocl-opencl-icd" in str(e.value)
    with pytest.raises(OpenCLError) as e:
        _device(cl)._run_build(_Program(cl, source="s"), [])
    assert str(e.value).endswith("unknown target CPU 'generic'"), "the hint is PoCL's alone"


def test_nvidia_builds_report_their_registers(monkeypatch, tmp_path):
    monkeypatch.setenv("CHESSACCEL_OPENCL_CACHE", str(tmp_path))
    cl = _BuildCL()
    _device(cl, "NVIDIA CUDA")._build()
    _device(cl, "Fake Platform")._build()
    assert cl.builds[0][1] == list(opencl_device._BUILD_OPTIONS) + ["-cl-nv-verbose"]
    assert cl.builds[1][1] == list(opencl_device._BUILD_OPTIONS)


def test_a_failed_build_names_the_first_error_line():
    cl = _BuildCL(log="x.cl:1:1: warning: unused\n/tmp/p/k.cl:5:3: error: first one\n"
                      "/tmp/p/k.cl:9:1: error: second", fail_source="BUILD_PROGRAM_FAILURE")
    d = _device(cl)
    with pytest.raises(OpenCLError) as e:
        d._run_build(_Program(cl, source="s"), [])
    assert str(e.value) == "OpenCL kernel build failed on Fake GPU (Fake Platform): line 5: first one"
    cl.log = None      # no log to read: the error's own lines
    cl.fail_source = "clBuildProgram failed: BUILD_PROGRAM_FAILURE\nk.cl:3:2: error: from the error"
    with pytest.raises(OpenCLError) as e:
        d._run_build(_Program(cl, source="s"), [])
    assert str(e.value).endswith("Fake Platform): line 3: from the error")
    cl.fail_source = "clBuildProgram failed: nothing useful"
    with pytest.raises(OpenCLError) as e:
        d._run_build(_Program(cl, source="s"), [])
    assert str(e.value).endswith("Fake Platform): clBuildProgram failed: nothing useful")
    cl.fail_source = None
    d._run_build(_Program(cl, source="s"), [])
    assert d.build_log == ""
    cl.log = "ptxas info"
    d._run_build(_Program(cl, source="s"), [])
    assert d.build_log == "ptxas info"


def test_a_device_that_will_not_open_is_named():
    class CL(_CL):
        def Context(self, devices):
            raise _Error("clCreateContext failed: DEVICE_NOT_AVAILABLE\ndetail")

    class Device(_FakeDevice):
        type, max_compute_units = _Types.GPU, 132
    with pytest.raises(OpenCLError) as e:
        opencl_device.Device(CL(), Device("NVIDIA CUDA"))
    assert str(e.value) == "cannot open OpenCL device 'Fake GPU': clCreateContext failed: DEVICE_NOT_AVAILABLE"
