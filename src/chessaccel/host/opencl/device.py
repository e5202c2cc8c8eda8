"""Finding the OpenCL device and building the kernels once per device.

The platform is chosen by name, never by index: ``opencl`` takes a GPU where one exists
(NVIDIA's first) and otherwise the first CPU device (PoCL, which pip installs with
``pyopencl[pocl]``); ``opencl:SUBSTRING`` takes the platform whose name or vendor contains
SUBSTRING (case-insensitive; of two such, the first listed that has devices, a GPU platform
first: Debian's PoCL and the wheel's share their name), its GPU if it has one.

The program is compiled once per device and its binary cached under
``$CHESSACCEL_OPENCL_CACHE`` (default ``~/.cache/chessaccel/opencl``), keyed by the source, the
build options and the device and driver; the file is written under a temporary name and renamed,
so pytest-xdist workers that build at once never read a half-written binary. PoCL's own cache
of the code it generates per work-group size goes to a folder beside it.

Every failure (no platform, no match, build error, device out of memory) is an
``OpenCLError``: a ``BackendError`` the command line prints as one line, exit status 1.
"""

import hashlib
import os
import re
import tempfile
import warnings
from importlib import resources
from pathlib import Path

from chessaccel.host.backends.base import BackendError, first_line
from chessaccel.contract.evalweights import EVALUATIONS
from .layout import eval_table, kernel_prelude, line_tables
from .magics import lines_with_magic_tables

__all__ = ["OpenCLError", "Device", "open_device", "cache_dir", "kernel_source", "perft_source",
           "KERNEL_FILES", "BUILD_SWITCHES", "device_count"]

#: The kernel sources, concatenated in this order after the generated prelude.
KERNEL_FILES = ("board.cl", "movegen.cl", "search.cl", "perft.cl")
_BUILD_OPTIONS = ("-cl-std=CL1.2",)
#: Overrides that are build switches of the bulk perft kernels rather than kernel constants; either
#: one builds those kernels in a second program (the prelude, board.cl and perft.cl alone):
#: PERFT_MAXRREG = N > 0 caps their registers (NVIDIA's ``-cl-nv-maxrregcount=N``: more warps per
#: multiprocessor; other platforms build without it), PERFT_LOCAL_LINES = 1 copies the attack
#: tables into each work-group's local memory (``-D PERFT_LOCAL_LINES=1``, board.cl and perft.cl),
#: 2 the same with the rank attacks as bytes; PERFT_SORT_LANES = 1 has the lanes of a work-group
#: of perft_bulk_2 take its positions sorted by their legal-move counts (``-D PERFT_SORT_LANES=1``,
#: perft.cl), 2 those of perft_bulk_3 too; PERFT_COUNT = a bit set of changes to the count
#: (``-D PERFT_COUNT=N``, perft.cl says which); PERFT_MAGIC = 1 has the bulk kernels find the
#: sliders' attacks by magic bitboards (host/opencl/magics.py, their tables after the line tables
#: in the lines buffer; with PERFT_LOCAL_LINES = 0 only); PERFT_LEAF = a bit set of changes to the
#: two-ply leaf (``-D PERFT_LEAF=N``, perft.cl says which).
BUILD_SWITCHES = ("PERFT_MAXRREG", "PERFT_LOCAL_LINES", "PERFT_SORT_LANES", "PERFT_COUNT",
                  "PERFT_MAGIC", "PERFT_LEAF")
#: PERFT_LOCAL_LINES on a GPU unless the overrides say otherwise: none since the magic tables
#: (PERFT_MAGIC_GPU), which are read from global memory; the compact copy in local memory (2) was
#: measured faster than the global kindergarten tables on the H100 and the H200, and the magic
#: tables from global memory faster than both on the H200 (docs/opencl.md, "Perft"). A CPU
#: (PoCL) reads the global tables (its "local memory" is ordinary memory), unless asked.
PERFT_LOCAL_LINES_GPU = 0



#: PERFT_MAGIC on a GPU unless the overrides say otherwise (or ask for the tables in local
#: memory): the sliders by magic bitboards, measured 15 % faster than the local kindergarten
#: tables on the H200 (start position perft 8 393-397 against 344-346 G leaves/s, Kiwipete perft
#: 7 642-650 against 559-564; docs/opencl.md, "Beside perft_gpu"). A CPU counts the plain way.
#: 2 (the tables of fixed size: a constant shift, no offset to load) since 2026-11-30: the leaf
#: kernel 1.5-2 % faster on the H200 (docs/opencl.md, "Beside perft_gpu").
PERFT_MAGIC_GPU = 2



#: PERFT_SORT_LANES on a GPU unless the overrides say otherwise: perft_bulk_2's lanes sorted,
#: measured faster on the H100 (Kiwipete perft 7 by 6 %, the start position level; docs/opencl.md,
#: "Perft"); a CPU (PoCL), whose work-items do not run in lock-step, sorts nothing unless asked.
PERFT_SORT_LANES_GPU = 1



#: PERFT_COUNT on a GPU unless the overrides say otherwise; a CPU (PoCL) counts the plain way
#: unless asked. 16 (the pins from the between table) since 2026-11-30: the leaf kernel 3-5 %
#: faster on the H200 (docs/opencl.md, "Beside perft_gpu"). 32 (the lowest set bit by a popcount)
#: since 2026-11-30, later: start position perft 8 569-574 against 524-527 G leaves/s, Kiwipete
#: perft 7 975-977 against 887 on the H200.
PERFT_COUNT_GPU = 63



#: PERFT_LEAF on a GPU unless the overrides say otherwise: the parent flipped once into its
#: children's frame (1), en passant and pinned pawns counted without making a move (8, 16, 32),
#: with PERFT_MAXRREG_GPU, measured 22-24 % faster than the leaf before on the H200 (start
#: position perft 8 483-486 against 395 G leaves/s, Kiwipete perft 7 798-803 against 646-649;
#: docs/opencl.md, "Beside perft_gpu"); a CPU (PoCL) builds the plain leaf unless asked. 128
#: (the fused leaf: the last expansion writes parent indices and moves, not positions) since
#: 2026-11-30: with PERFT_COUNT 31 and work-groups of 512, start position perft 8 522-527
#: against 482-486 G leaves/s, Kiwipete perft 7 882-887 against 794-803 (three A/B runs). 256
#: (the leaf's children made without their victims' types, their planes in one pass) since
#: 2026-11-30, later: with PERFT_COUNT 63, PERFT_MAGIC 2 and 40 registers, start position perft 8
#: 594-600 against 578-581 G leaves/s, Kiwipete perft 7 1,018-1,021 against 984-986; and 1024
#: (the sorted lanes ranked by a counting sort): 609-617 against 588-595, Kiwipete 1,035-1,040
#: against 1,013-1,018. And the expansion's bits (2048: its kernels from the perft program; 4096:
#: expand_moves' 16-byte stores; 8192: the levels queued without waits) since 2026-11-30, later
#: still: Kiwipete perft 7 1,049-1,056 against 1,037-1,043, start position perft 8 622-635
#: against 609-623 (expand_moves 2.9 against 6.2 ms on the device); and 16384 (expand_moves'
#: children gathered in local memory, written by the whole work-group of 64): Kiwipete perft 7
#: 1,054-1,060 against 1,053-1,056, start position perft 8 625-637 against 629-635
#: (expand_moves 1.8 against 2.9 ms on Kiwipete, 1.3 against 1.6 on the start position). And
#: 131072 (the top levels expanded by one work-group in one launch) and 262144 (expand in several
#: lanes a position on small levels) since 2026-11-30, later still: five alternating rounds on the
#: H200, Kiwipete perft 7 1,056-1,061 against 1,057-1,059 G leaves/s, start position perft 8
#: 633-638 against 630-637, Kiwipete perft 6 848-856 against 826-843 (the call 353.1 against
#: 353.5 ms on the device's profiling queue, 17 launches instead of 26).
PERFT_LEAF_GPU = 425401



#: PERFT_MAXRREG on a GPU unless the overrides say otherwise (0: no cap): 64 registers, four
#: work-groups of 256 per multiprocessor instead of three at 80, some spills; a win only with the
#: leaf of PERFT_LEAF_GPU, whose count makes no move (neutral on the leaf before, docs/opencl.md).
#: 40 since 2026-11-30, later (three work-groups of 512 per multiprocessor instead of two, with
#: spills): 0.5-1 % faster than 64 with the leaf of fewer instructions (PERFT_COUNT 63).
PERFT_MAXRREG_GPU = 40



#: Each build switch's value on a GPU when the overrides do not name it (the constants above,
#: each with its measurement); a CPU (PoCL) builds none of them unless asked.
PERFT_GPU_DEFAULTS = {"PERFT_MAXRREG": PERFT_MAXRREG_GPU, "PERFT_LOCAL_LINES": PERFT_LOCAL_LINES_GPU,
                      "PERFT_SORT_LANES": PERFT_SORT_LANES_GPU, "PERFT_COUNT": PERFT_COUNT_GPU,
                      "PERFT_MAGIC": PERFT_MAGIC_GPU, "PERFT_LEAF": PERFT_LEAF_GPU}


def default_perft_switch(name, is_gpu, local_lines=0):
    """The value of the build switch ``name`` (BUILD_SWITCHES) when the overrides do not name it:
    PERFT_GPU_DEFAULTS on a GPU, 0 on a CPU; no PERFT_MAGIC where the tables go to local memory
    (``local_lines``, PERFT_LOCAL_LINES), whose copy the magic tables cannot share."""
    if not is_gpu or (name == "PERFT_MAGIC" and local_lines):
        return 0
    return PERFT_GPU_DEFAULTS[name]


#: The kernels that the second program serves.
PERFT_PROGRAM_KERNELS = ("perft_bulk_1", "perft_bulk_2", "perft_bulk_3", "perft_fused_1",
                         "perft_fused_2")
#: The breadth-first expansion's kernels, which the second program serves too where PERFT_LEAF
#: has EXPANSION_OWN_PROGRAM (with the count's and the tables' switches; perft.cl) and the tables
#: are not copied into local memory (PERFT_LOCAL_LINES, whose program leaves them out).
PERFT_EXPANSION_KERNELS = ("count_children", "scan_groups", "scan_totals", "add_group_bases",
                           "expand", "expand_moves", "expand_top")
EXPANSION_OWN_PROGRAM = 2048
#: The sources of the second program, after the prelude.
PERFT_FILES = ("board.cl", "perft.cl")


class OpenCLError(BackendError):
    """The OpenCL backend cannot run: the message is one line for the user."""


def cache_dir():
    root = os.environ.get("CHESSACCEL_OPENCL_CACHE")
    if not root:
        root = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                            "chessaccel", "opencl")
    return Path(root)


def kernel_source(overrides=None):
    """The whole program: the generated prelude, then the .cl files (build switches, which are
    no kernel constants, are left out)."""
    return _program_source(KERNEL_FILES, overrides)


def perft_source(overrides=None):
    """The bulk perft kernels' own program (BUILD_SWITCHES): the prelude, board.cl, perft.cl."""
    return _program_source(PERFT_FILES, overrides)


def _program_source(files, overrides):
    """The generated prelude with the overrides that are kernel constants, then the files."""
    constants = {k: v for k, v in (overrides or {}).items() if k not in BUILD_SWITCHES}
    parts = [kernel_prelude(constants or None)]
    folder = resources.files(__package__).joinpath("kernels")
    for name in files:
        parts.append(f"// ---- {name} ----\n" + folder.joinpath(name).read_text())
    return "\n".join(parts)


def _import_pyopencl():
    # PoCL reads its cache location when the platform is first loaded
    os.environ.setdefault("POCL_CACHE_DIR", str(cache_dir() / "pocl"))
    try:
        import pyopencl as cl
    except ImportError as e:
        raise OpenCLError(f"pyopencl is not installed ({e}); pip install 'pyopencl[pocl]'") from None
    return cl


def _compiler_message(line):
    """A compiler's error line without the temporary file's path: 'line N: message'."""
    match = re.search(r"[^\s:]+\.cl:(\d+):\d+:\s*(?:error:\s*)?(.*)", line)
    if match:
        return f"line {match.group(1)}: {match.group(2).strip()}"
    return line.strip()


def _unknown_cpu_hint(message, is_pocl):
    """What to do when PoCL's LLVM does not know this CPU (it then names it 'generic', which
    its compiler refuses): the wheel's PoCL 3.0 is built on LLVM 14, older than AMD's Zen 5."""
    if is_pocl and "unknown target CPU" in message:
        return ("; this PoCL's LLVM does not know this CPU: install a newer PoCL (Debian: "
                "apt-get install pocl-opencl-icd, as `make setup` does; the OpenCL loader "
                "lists it before the wheel's)")
    return ""


def _platforms(cl):
    try:
        return cl.get_platforms()
    except cl.Error as e:
        if "PLATFORM_NOT_FOUND" in str(e):
            return []
        raise OpenCLError(f"cannot list OpenCL platforms: {first_line(e)}") from None


def _devices(cl, platform, kind):
    try:
        return platform.get_devices(device_type=kind)
    except cl.Error:
        return []


def _choose(cl, platform_substring, index=None):
    """The device: the first GPU (else CPU) of any platform, NVIDIA's first; with a platform
    substring, the first device of the first matching platform that has one (a platform with
    a GPU first); ``index`` picks another device of that platform."""
    devices, where = _candidates(cl, platform_substring)
    return _pick(devices, index, where)


def device_count(platform_substring=None):
    """How many devices ``opencl[:PLATFORM]:INDEX`` can name (INDEX 0 .. count - 1)."""
    return len(_candidates(_import_pyopencl(), platform_substring)[0])


def _candidates(cl, platform_substring):
    """The devices an index picks among, and where they are (for messages): always one
    platform's (two may share a name, as Debian's PoCL and the wheel's do, and the first the
    loader lists is the one to use)."""
    platforms = _platforms(cl)
    if not platforms:
        raise OpenCLError("no OpenCL platform found (install a GPU driver's OpenCL ICD, "
                          "or PoCL: pip install 'pyopencl[pocl]')")
    names = ", ".join(repr(p.name) for p in platforms)
    if platform_substring:
        wanted = platform_substring.lower()
        matching = [p for p in platforms
                    if wanted in p.name.lower() or wanted in p.vendor.lower()]
        if not matching:
            raise OpenCLError(f"no OpenCL platform matches {platform_substring!r} "
                              f"(platforms: {names})")
        found = _first_with_devices(cl, ((cl.device_type.GPU, matching),
                                         (cl.device_type.ALL, matching)))
        if found is None:
            raise OpenCLError(f"OpenCL platform {matching[0].name!r} has no device")
        return found
    gpu_platforms = sorted(platforms, key=lambda p: "nvidia" not in p.name.lower())
    found = _first_with_devices(cl, ((cl.device_type.GPU, gpu_platforms),
                                     (cl.device_type.CPU, platforms),
                                     (cl.device_type.ALL, platforms)))
    if found is None:
        raise OpenCLError(f"no OpenCL device found (platforms: {names})")
    return found


def _first_with_devices(cl, searches):
    """For each (device kind, platforms) in turn, the first platform with devices of that
    kind: (its devices, where they are), or None."""
    for kind, platforms in searches:
        for p in platforms:
            devices = _devices(cl, p, kind)
            if devices:
                return devices, f"OpenCL platform {p.name!r}"
    return None


def _pick(devices, index, where):
    if index is None:
        return devices[0]
    if not 0 <= index < len(devices):
        raise OpenCLError(f"{where} has {len(devices)} device(s) (0..{len(devices) - 1}): "
                          f"no device {index}")
    return devices[index]


class Device:
    """One OpenCL device with its context, queue and the built program."""

    def __init__(self, cl, device, overrides=None):
        self.cl = cl
        self.device = device
        self.overrides = dict(overrides or {})
        self.platform_name = device.platform.name.strip()
        self.name = device.name.strip()
        self.is_gpu = bool(device.type & cl.device_type.GPU)
        if self.is_pocl and "CPU_BUILTINS" not in self.overrides:
            self.overrides["CPU_BUILTINS"] = 1   # layout.py's prelude, board.cl
        #: whether programs go through our binary cache: not on PoCL by default, which keeps
        #: every program it builds in its own cache (POCL_CACHE_DIR, beside ours: a build found
        #: there takes 0.1 s) and, asked for the binary, compiles every kernel of the program for
        #: any work-group size first (the search program: 16 s against 1.5 s for the build;
        #: the kernels that run are compiled again for their work-group sizes anyway)
        self.binary_cache = not self.is_pocl
        self.compute_units = device.max_compute_units
        try:
            self.context = cl.Context([device])
            self.queue = cl.CommandQueue(self.context)
        except cl.Error as e:
            raise OpenCLError(f"cannot open OpenCL device {self.name!r}: {first_line(e)}") from None
        self.build_log = ""
        self.build_seconds = 0.0
        self.from_cache = False
        self.source_sha256 = hashlib.sha256(kernel_source(self.overrides).encode()).hexdigest()
        self.program = self._build()
        #: the bulk perft kernels' own program (BUILD_SWITCHES), or None: they come from the main one
        self.perft_program = None
        self.perft_source_sha256 = None
        # each of BUILD_SWITCHES as built: the override, else default_perft_switch's value
        # (PERFT_MAXRREG acts on NVIDIA's compiler only)
        def switch(name, local_lines=0):
            return int(self.overrides.get(
                name, default_perft_switch(name, self.is_gpu, local_lines)) or 0)
        self.perft_local_lines = switch("PERFT_LOCAL_LINES")
        self.perft_maxrreg = switch("PERFT_MAXRREG")
        self.perft_sort_lanes = switch("PERFT_SORT_LANES")
        self.perft_count = switch("PERFT_COUNT")
        self.perft_magic = switch("PERFT_MAGIC", self.perft_local_lines)
        self.perft_leaf = switch("PERFT_LEAF")
        if self.perft_magic and self.perft_local_lines:
            raise OpenCLError("PERFT_MAGIC reads the tables from global memory: it needs "
                              "PERFT_LOCAL_LINES=0")
        if (self.perft_maxrreg > 0 or self.perft_local_lines or self.perft_sort_lanes
                or self.perft_count or self.perft_magic or self.perft_leaf):
            main_log, main_seconds = self.build_log, self.build_seconds
            extra = []
            if self.perft_maxrreg > 0 and "nvidia" in self.platform_name.lower():
                extra.append(f"-cl-nv-maxrregcount={self.perft_maxrreg}")
            if self.perft_local_lines:
                extra.append(f"-D PERFT_LOCAL_LINES={self.perft_local_lines}")
            if self.perft_sort_lanes:
                extra.append(f"-D PERFT_SORT_LANES={self.perft_sort_lanes}")
            if self.perft_count:
                extra.append(f"-D PERFT_COUNT={self.perft_count}")
            if self.perft_magic:
                extra.append(f"-D PERFT_MAGIC={self.perft_magic}")
            if self.perft_leaf:
                extra.append(f"-D PERFT_LEAF={self.perft_leaf}")
            source = perft_source(self.overrides)
            self.perft_source_sha256 = hashlib.sha256(source.encode()).hexdigest()
            self.perft_program = self._build(extra, source)
            # the compiler report reads the last entry of each kernel: the perft program's
            self.build_log = main_log + "\n" + self.build_log
            self.build_seconds += main_seconds
        self._kernels = {}
        mf = cl.mem_flags
        #: the evaluation tables the search kernel reads (layout.eval_table): the program's
        #: evaluation's (EVAL_TERMS)
        self.evaluation = EVALUATIONS[int(self.overrides.get("EVAL_TERMS", 0) or 0)]
        self.eval_values = cl.Buffer(self.context, mf.READ_ONLY | mf.COPY_HOST_PTR,
                                     hostbuf=eval_table(self.evaluation))
        #: the attack tables every kernel reads (layout.line_tables), the last argument of each
        self.line_values = cl.Buffer(self.context, mf.READ_ONLY | mf.COPY_HOST_PTR,
                                     hostbuf=lines_with_magic_tables(self.perft_magic == 2)
                                     if self.perft_magic
                                     else line_tables())

    @property
    def is_pocl(self):
        return "portable computing language" in self.platform_name.lower()

    @property
    def synchronous(self):
        """PoCL's `basic` device (one core, POCL_DEVICES=basic): it runs a kernel in the thread
        that queues it, at once, so the compiled search runs its jobs inline (hostlaunch.hpp)."""
        return self.is_pocl and self.name.lower().startswith("basic")

    def describe(self):
        return f"{self.name} ({self.platform_name})"

    def _cache_key(self, source, options):
        d = self.device
        h = hashlib.sha256()
        for part in (source, " ".join(options), d.platform.name, d.platform.version, d.name,
                     d.driver_version, d.version, self.cl.VERSION_TEXT):
            h.update(part.encode())
            h.update(b"\0")
        return h.hexdigest()[:32]

    def _build(self, extra_options=(), source=None):
        import time
        cl = self.cl
        source = kernel_source(self.overrides) if source is None else source
        options = list(_BUILD_OPTIONS)
        if "nvidia" in self.platform_name.lower():
            options.append("-cl-nv-verbose")   # ptxas reports registers and spills in the log
        options += list(extra_options)
        folder = cache_dir()
        path = folder / f"{self._cache_key(source, options)}.bin"
        t0 = time.perf_counter()
        program = None
        log_path = path.with_suffix(".log")
        if self.binary_cache and path.exists():
            try:
                program = cl.Program(self.context, [self.device], [path.read_bytes()])
                self._run_build(program, options)
                self.from_cache = True
                # the compiler's report of the source build (registers, spills) comes with it
                self.build_log = log_path.read_text() if log_path.exists() else self.build_log
            except (cl.Error, OpenCLError, OSError):
                program = None     # a stale or foreign binary: build from source instead
        if program is None:
            program = cl.Program(self.context, source)
            self._run_build(program, options)
            if self.binary_cache:
                self._store(program, path, log_path)
        self.build_seconds = time.perf_counter() - t0
        return program

    def _store(self, program, path, log_path):
        """The built program's binary and the compiler's report into the cache, each written
        under a temporary name and renamed (pytest-xdist workers share the folder)."""
        try:
            binary = program.get_info(self.cl.program_info.BINARIES)[0]
            path.parent.mkdir(parents=True, exist_ok=True)
            for target, data in ((log_path, self.build_log.encode()), (path, binary)):
                fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem, suffix=".tmp")
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, target)
        except OSError:
            pass               # no cache: the next run builds again

    def _run_build(self, program, options):
        cl = self.cl
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # pyopencl warns on any compiler output
            try:
                program.build(options=options, devices=[self.device])
            except cl.Error as e:
                log = ""
                try:
                    log = program.get_build_info(self.device, cl.program_build_info.LOG)
                except cl.Error:
                    pass
                errors = [line for line in (log or str(e)).splitlines() if "error" in line.lower()]
                first = _compiler_message(errors[0]) if errors else first_line(e)
                raise OpenCLError(f"OpenCL kernel build failed on {self.describe()}: {first}"
                                  f"{_unknown_cpu_hint(first, self.is_pocl)}") from None
        try:
            self.build_log = program.get_build_info(self.device, cl.program_build_info.LOG) or ""
        except cl.Error:
            self.build_log = ""

    def kernel(self, name):
        """The kernel ``name`` of the program (one object per name: setting arguments is cheap,
        creating a kernel is not)."""
        if name not in self._kernels:
            program = self.program
            if self.perft_program is not None and (
                    name in PERFT_PROGRAM_KERNELS
                    or (name in PERFT_EXPANSION_KERNELS and self.perft_leaf & EXPANSION_OWN_PROGRAM
                        and not self.perft_local_lines)):
                program = self.perft_program
            self._kernels[name] = self.cl.Kernel(program, name)
        return self._kernels[name]

    def kernel_info(self, kernel):
        """Per-kernel resource figures the driver reports (private memory per work-item etc.)."""
        cl = self.cl
        info = {}
        for key in ("WORK_GROUP_SIZE", "PRIVATE_MEM_SIZE", "LOCAL_MEM_SIZE",
                    "PREFERRED_WORK_GROUP_SIZE_MULTIPLE"):
            try:
                info[key.lower()] = int(kernel.get_work_group_info(
                    getattr(cl.kernel_work_group_info, key), self.device))
            except (cl.Error, AttributeError):
                pass
        return info


#: Devices opened by this process: one context, queue and program per platform and constants.
_OPEN = {}


def open_device(platform_substring=None, overrides=None, fresh=False, index=None):
    """The Device for ``opencl`` (None), ``opencl:SUBSTRING`` or ``opencl:SUBSTRING:INDEX``
    (``index``); raises OpenCLError.

    A process opens each device once (every backend of it shares the context and the program);
    ``fresh`` opens it again (the program from a cache: ours, or PoCL's own)."""
    key = (platform_substring, index, tuple(sorted((overrides or {}).items())))
    if fresh or key not in _OPEN:
        cl = _import_pyopencl()
        _OPEN[key] = Device(cl, _choose(cl, platform_substring, index), overrides)
    return _OPEN[key]
