"""Byte transports to a board: one interface, whatever carries the bytes.

``Transport`` is what the board client (host/backends/board/client.py) needs: ``write(bytes)``,
``read(timeout) -> bytes`` (what has arrived, possibly nothing), ``close()``.

- ``SerialTransport``: a serial port through pyserial (a real board's FTDI, or a pty).
- ``PtyTransport``: a terminal device opened directly (the simulated board's pty), no pyserial.
- ``FaultyTransport``: wraps another transport and damages the bytes in both directions at set
  rates (bit flips, drops, duplicates, stalls), from a seeded generator: the fault-injection
  tests run the same client over it.
"""

import os
import random
import select
import termios
import time
import tty

__all__ = ["TransportError", "Transport", "SerialTransport", "PtyTransport", "FaultyTransport",
           "open_transport"]

_READ_CHUNK = 4096
#: Nominal bit rate asked of a serial port (a pty ignores it).
DEFAULT_BAUD = 115_200


class TransportError(OSError):
    """The port cannot be opened or has gone away."""


class Transport:
    name = "?"

    def write(self, data):
        raise NotImplementedError

    def read(self, timeout):
        """Bytes that arrive within ``timeout`` seconds (returns as soon as some have)."""
        raise NotImplementedError

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class SerialTransport(Transport):
    def __init__(self, port, baud=DEFAULT_BAUD):
        try:
            import serial
        except ImportError:
            raise TransportError("pyserial is not installed (pip install pyserial)") from None
        self.name = port
        try:
            self._port = serial.Serial(port, baud, timeout=0)
        except (serial.SerialException, OSError, ValueError) as error:
            raise TransportError(f"cannot open serial port {port}: {error}") from None

    def write(self, data):
        self._port.write(data)
        self._port.flush()

    def read(self, timeout):
        self._port.timeout = timeout
        first = self._port.read(1)
        if not first:
            return b""
        self._port.timeout = 0
        return first + self._port.read(self._port.in_waiting or 0)

    def close(self):
        self._port.close()


class PtyTransport(Transport):
    """A terminal device (the simulated board's pty) in raw mode, through plain file descriptors."""

    def __init__(self, path):
        self.name = path
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError as error:
            raise TransportError(f"cannot open {path}: {error.strerror}") from None
        if os.isatty(self._fd):
            tty.setraw(self._fd, termios.TCSANOW)

    def write(self, data):
        view = memoryview(bytes(data))
        while view:
            try:
                n = os.write(self._fd, view)
            except BlockingIOError:
                select.select([], [self._fd], [], 0.1)
                continue
            except OSError as error:        # EIO: the board's end has closed
                raise TransportError(f"{self.name}: {error.strerror}") from None
            view = view[n:]

    def read(self, timeout):
        """As ``Transport.read``; TransportError once the far end has closed (a simulated
        board that exited: the terminal reads as at its end, not as empty)."""
        ready, _, _ = select.select([self._fd], [], [], max(timeout, 0))
        if not ready:
            return b""
        try:
            data = os.read(self._fd, _READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError as error:
            raise TransportError(f"{self.name}: {error.strerror}") from None
        if not data:
            raise TransportError(f"{self.name}: the board's end of the terminal has closed")
        return data

    def close(self):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class FaultyTransport(Transport):
    """Damages the bytes of ``inner`` in both directions, each fault at its own rate.

    Per byte: ``flip`` (one random bit inverted), ``drop`` (lost), ``duplicate`` (sent twice);
    per write or read call: ``stall`` (the call waits ``stall_seconds`` first). ``counts`` says
    how many of each happened.
    """

    def __init__(self, inner, *, flip=0.0, drop=0.0, duplicate=0.0, stall=0.0,
                 stall_seconds=0.05, seed=0):
        self.inner = inner
        self.name = f"faulty({inner.name})"
        self.rates = {"flip": flip, "drop": drop, "duplicate": duplicate, "stall": stall}
        self.stall_seconds = stall_seconds
        self._rng = random.Random(seed)
        self.counts = dict.fromkeys(self.rates, 0)

    def _damage(self, data):
        out = bytearray()
        for byte in data:
            if self._rng.random() < self.rates["drop"]:
                self.counts["drop"] += 1
                continue
            if self._rng.random() < self.rates["flip"]:
                self.counts["flip"] += 1
                byte ^= 1 << self._rng.randrange(8)
            out.append(byte)
            if self._rng.random() < self.rates["duplicate"]:
                self.counts["duplicate"] += 1
                out.append(byte)
        return bytes(out)

    def _maybe_stall(self):
        if self._rng.random() < self.rates["stall"]:
            self.counts["stall"] += 1
            time.sleep(self.stall_seconds)

    def write(self, data):
        self._maybe_stall()
        self.inner.write(self._damage(data))

    def read(self, timeout):
        self._maybe_stall()
        return self._damage(self.inner.read(timeout))

    def close(self):
        self.inner.close()


def open_transport(port, baud=DEFAULT_BAUD):
    """A pty path opens as PtyTransport (no pyserial needed), anything else through pyserial."""
    if port.startswith("/dev/pts/"):
        return PtyTransport(port)
    return SerialTransport(port, baud)
