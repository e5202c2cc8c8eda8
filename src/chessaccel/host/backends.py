"""Backends: one interface, several implementations of the search contract.

Every backend answers the same three questions for a position (a model ``Board``): its legal
moves in generation order, perft, and a search job. Results carry the same fields whatever
runs them, plus ``cycles`` where the backend is hardware (simulated or real).

- ``model``: the behavioural model (sim/model), the golden reference.
- ``rtl``: the Amaranth RTL simulated by cocotb on Icarus Verilog.
- ``verilator``, ``serial:PORT``: the board top-level behind the link protocol (issue 5).
- ``opencl``, ``opencl:PLATFORM``: OpenCL kernels on a GPU, or on the CPU through PoCL
  (host/opencl, docs/opencl.md); the platform is chosen by a substring of its name.
"""

import importlib

from chessaccel.model import search as model_search
from chessaccel.model.movegen import legal_moves

__all__ = ["BackendError", "Backend", "ModelBackend", "get_backend", "BACKEND_NAMES"]

BACKEND_NAMES = ("model", "rtl", "verilator", "serial:PORT", "opencl[:PLATFORM]")


class BackendError(RuntimeError):
    """A backend that is unknown, not installed, or failed to answer."""


class Backend:
    name = "?"

    def moves(self, board):
        raise BackendError(f"backend {self.name!r} cannot list moves")

    def perft(self, board, depth, divide=False):
        """{"nodes": N, "divide": {move: n} or None, "cycles": N or None}"""
        raise BackendError(f"backend {self.name!r} cannot run perft")

    def search(self, board, depth, alpha, beta):
        """{"score", "best_move", "pv", "nodes", "cycles"}"""
        raise BackendError(f"backend {self.name!r} cannot search")

    def search_many(self, jobs):
        """Run (board, depth, alpha, beta) jobs; hardware backends batch them in one run."""
        return [self.search(*job) for job in jobs]

    def close(self):
        pass


class ModelBackend(Backend):
    name = "model"

    def moves(self, board):
        return legal_moves(board)

    def perft(self, board, depth, divide=False):
        if divide and depth >= 1:
            parts = model_search.perft_divide(board, depth)
            return {"nodes": sum(parts.values()), "divide": parts, "cycles": None}
        return {"nodes": model_search.perft(board, depth), "divide": None, "cycles": None}

    def search(self, board, depth, alpha, beta):
        r = model_search.search(board, depth, alpha, beta)
        return {"score": r.score, "best_move": r.best_move, "pv": r.pv, "nodes": r.nodes,
                "cycles": None}


def _optional(module, what):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise BackendError(f"{what} is not available in this build ({e})") from None


def _simulated(call, *args):
    """Run a simulator call; its failures (tools missing, build broken) become BackendError."""
    try:
        return call(*args)
    except BackendError:
        raise
    except (RuntimeError, AssertionError, OSError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise BackendError(f"RTL simulation failed: {first}") from None


class RtlBackend(Backend):
    """The RTL simulated: the move generator under cocotb + Icarus; the search core under
    Verilator when installed (Icarus manages only tens of cycles per second on the whole core;
    CHESSACCEL_RTL_SIM=icarus|verilator chooses). Exact, with cycle counts."""
    name = "rtl"

    def moves(self, board):
        mod = _optional("chessaccel.sim.rtl_movegen", "the RTL move generator")
        return _simulated(mod.rtl_moves, board)

    def _search_module(self):
        return _optional("chessaccel.sim.rtl_search", "the RTL search core")

    def perft(self, board, depth, divide=False):
        mod = self._search_module()
        if divide and depth >= 1:
            parts, cycles = {}, 0
            for move in legal_moves(board):
                undo = board.make(move)
                nodes, c = _simulated(mod.rtl_perft, board, depth - 1)
                board.unmake(move, undo)
                parts[move] = nodes
                cycles += c
            return {"nodes": sum(parts.values()), "divide": parts, "cycles": cycles}
        nodes, cycles = _simulated(mod.rtl_perft, board, depth)
        return {"nodes": nodes, "divide": None, "cycles": cycles}

    def search(self, board, depth, alpha, beta):
        return self.search_many([(board, depth, alpha, beta)])[0]

    def search_many(self, jobs):
        mod = self._search_module()
        out = []
        for score, best_move, nodes, cycles in _simulated(mod.rtl_search_many, jobs):
            out.append({"score": score, "best_move": best_move,
                        "pv": [best_move] if best_move else [], "nodes": nodes,
                        "cycles": cycles})
        return out


def _board_backend(spec):
    mod = _optional("chessaccel.host.boardcli", "the board link (serial/verilator)")
    return mod.open_backend(spec)


def get_backend(spec):
    """The backend named by ``spec`` (model, rtl, verilator, serial:PORT, opencl[:PLATFORM])."""
    if spec == "model":
        return ModelBackend()
    if spec == "rtl":
        return RtlBackend()
    if spec == "verilator" or spec.startswith("serial:"):
        if spec.startswith("serial:") and not spec[len("serial:"):]:
            raise BackendError("serial backend needs a port: --backend serial:/dev/ttyUSB0")
        return _board_backend(spec)
    if spec == "opencl" or spec.startswith("opencl:"):
        platform = spec[len("opencl:"):] if spec.startswith("opencl:") else None
        if platform is not None and not platform.strip():
            raise BackendError("opencl backend needs a platform name after the colon: "
                               "--backend opencl:NVIDIA or opencl:Portable")
        mod = _optional("chessaccel.host.opencl", "the OpenCL backend")
        return mod.OpenCLBackend(platform)
    raise BackendError(f"unknown backend {spec!r} (choose from: {', '.join(BACKEND_NAMES)})")
