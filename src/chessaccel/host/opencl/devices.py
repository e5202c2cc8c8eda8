"""``opencl:PLATFORM:I,J,...`` and ``opencl:PLATFORM:all``: several OpenCL devices as one backend.

Each launch goes whole to one device: the one with the fewest of this backend's launches in
flight (ties: the lower index), so that two GPUs each run the launches the engine keeps in
flight (the compiled search keeps up to 16, the batch executor 2) and a launch is never split
over two devices' queues. What is not a search launch (perft, move lists, one job with its PV)
runs on the first device. Every device searches with the same program, so each job's result is
the same whichever device runs it (tests/test_opencl_devices.py).
"""

import threading

from chessaccel.contract.evalweights import DEFAULT_EVALUATION, EVALUATIONS
from chessaccel.host.backends.base import Backend, BackendError, Capabilities

from .backend import OpenCLBackend
from .device import OpenCLError, device_count

__all__ = ["OpenCLDevices"]


class _Counted:
    """A launch of one device, counted in flight until its results are read."""

    def __init__(self, owner, index, launch):
        self._owner, self._index, self._launch = owner, index, launch
        self.started = launch.started
        self._open = True

    def __len__(self):
        return len(self._launch)

    def done(self):
        return self._launch.done()

    def stop(self, start, end):
        self._launch.stop(start, end)

    def _finish(self):
        if self._open:
            self._open = False
            self._owner._landed(self._index)

    def arrays(self):
        try:
            return self._launch.arrays()
        finally:
            self._finish()

    def results(self):
        try:
            return self._launch.results()
        finally:
            self._finish()


class OpenCLDevices(Backend):
    """Several devices of one platform (``indices`` None: every device of it)."""

    capabilities = OpenCLBackend.capabilities
    count_modes = OpenCLBackend.count_modes
    evaluations = EVALUATIONS

    def __init__(self, platform, indices=None, evaluation=DEFAULT_EVALUATION):
        if indices is not None and len(set(indices)) != len(indices):
            raise BackendError(f"opencl:{platform}: a device is named twice in {list(indices)}")
        self.platform, self.evaluation = platform, evaluation
        self._indices = list(indices) if indices is not None else None
        self.name = f"opencl:{platform}:" + (",".join(map(str, indices)) if indices else "all")
        self._devices = None
        self._in_flight = []
        self._lock = threading.Lock()

    @property
    def devices(self):
        """The OpenCLBackend of each device, opened."""
        if self._devices is None:
            indices = self._indices
            if indices is None:
                try:
                    indices = list(range(device_count(self.platform)))
                except OpenCLError as error:
                    raise BackendError(str(error)) from None
            devices = [OpenCLBackend(self.platform, device_index=i, evaluation=self.evaluation)
                       for i in indices]
            for device in devices:
                device.open()
            self.capabilities = devices[0].capabilities
            self._in_flight = [0] * len(devices)
            self._devices = devices
        return self._devices

    def open(self):
        self.devices
        return self

    def describe(self):
        return " + ".join(d.describe() or d.name for d in self.devices)

    def close(self):
        for device in self._devices or ():
            device.close()
        self._devices = None

    def _least_busy(self):
        devices = self.devices
        with self._lock:
            index = min(range(len(devices)), key=self._in_flight.__getitem__)
            self._in_flight[index] += 1
        return index, devices[index]

    def _landed(self, index):
        with self._lock:
            self._in_flight[index] -= 1

    def _start(self, how, *args):
        index, device = self._least_busy()
        try:
            return _Counted(self, index, getattr(device, how)(*args))
        except BaseException:
            self._landed(index)
            raise

    def start_search(self, jobs):
        return self._start("start_search", jobs)

    def native_launches(self):
        """Every device's handles (OpenCLBackend.native_launches): the compiled host search
        starts each launch on the device with the fewest in flight."""
        return "opencl", [device._native_handles() for device in self.devices]

    def start_packed(self, positions, params):
        return self._start("start_packed", positions, params)

    def search_many(self, jobs, pv=False):
        jobs = list(jobs)
        if pv or not jobs:
            return self.devices[0].search_many(jobs, pv=pv)
        return self.start_search(jobs).results()

    def search(self, board, depth, alpha, beta):
        return self.devices[0].search(board, depth, alpha, beta)

    def moves(self, board):
        return self.devices[0].moves(board)

    def perft(self, board, depth, divide=False, count_mode="bulk"):
        return self.devices[0].perft(board, depth, divide=divide, count_mode=count_mode)
