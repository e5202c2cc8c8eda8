"""The board from the command line and as a backend: ``--backend verilator`` / ``serial:PORT``.

- ``open_backend(spec)``: a ``Backend`` (host/backends.py) that runs search and perft jobs on a
  board through the link protocol. ``verilator`` starts a simulated board itself (sim/boardsim.py;
  ``CHESSACCEL_SIM_CORES`` sets its cores, default 1) and talks to it over its pseudo-terminal,
  exactly as ``serial:PORT`` talks to a real board (or to a ``chessaccel board-sim`` pty).
- ``board_info_main(args)``: ``chessaccel board info --port PORT``.
- ``board_sim_main(args)``: ``chessaccel board-sim`` (from sim/boardsim.py).
"""

import os
import sys

from chessaccel.contract.defs import INF, Mode
from chessaccel.contract.protocol import MAX_CORES
from chessaccel.sim.boardsim import (SIM_REPLY_TIMEOUT, BoardSim, BoardSimError,
                                     add_board_sim_arguments, board_sim_main)
from chessaccel.model.movegen import legal_moves

from .backends import Backend, BackendError
from .client import DEFAULT_RETRIES, DEFAULT_TIMEOUT, BoardClient, BoardError
from .transport import TransportError, open_transport

__all__ = ["BoardBackend", "open_backend", "board_info_main", "board_sim_main",
           "add_board_info_arguments", "add_board_sim_arguments", "SIM_CORES_ENV"]

SIM_CORES_ENV = "CHESSACCEL_SIM_CORES"
EXIT_FAILURE = 2


class BoardBackend(Backend):
    """Jobs on a board behind a transport; ``sim`` is the simulated board it started, if any."""

    def __init__(self, transport, name, sim=None, timeout=DEFAULT_TIMEOUT):
        self.name = name
        self.sim = sim
        self.transport = transport
        self.client = BoardClient(transport, timeout=timeout)
        try:
            self.info = self.client.info()
            self.client.abort()          # a fresh session: no job id of another survives
        except BoardError as error:
            self.close()
            raise BackendError(str(error)) from None
        if self.info.cores == 0:
            self.close()
            raise BackendError(f"the board on {transport.name} has no search core")

    def _run(self, jobs):
        try:
            return self.client.run_jobs(jobs, self.info.cores)
        except BoardError as error:
            raise BackendError(str(error)) from None

    def search(self, board, depth, alpha, beta):
        return self.search_many([(board, depth, alpha, beta)])[0]

    def search_many(self, jobs):
        outcomes = self._run([(b, d, a, be, Mode.SEARCH) for b, d, a, be in jobs])
        return [{"score": o.score, "best_move": o.best_move,
                 "pv": [o.best_move] if o.best_move else [], "nodes": o.nodes,
                 "cycles": o.cycles} for o in outcomes]

    def perft(self, board, depth, divide=False):
        if divide and depth >= 1:
            moves = legal_moves(board)
            children = []
            for move in moves:
                child = board.copy()
                child.make(move)
                children.append((child, depth - 1, -INF, INF, Mode.PERFT))
            outcomes = self._run(children)
            parts = {move: o.nodes for move, o in zip(moves, outcomes)}
            return {"nodes": sum(parts.values()), "divide": parts,
                    "cycles": sum(o.cycles for o in outcomes)}
        [outcome] = self._run([(board, depth, -INF, INF, Mode.PERFT)])
        return {"nodes": outcome.nodes, "divide": None, "cycles": outcome.cycles}

    def close(self):
        self.transport.close()
        if self.sim is not None:
            self.sim.close()
            self.sim = None


def open_backend(spec):
    """The backend of ``verilator`` or ``serial:PORT``; BackendError with one line otherwise."""
    if spec == "verilator":
        text = os.environ.get(SIM_CORES_ENV, "1")
        try:
            cores = int(text)
        except ValueError:
            cores = -1
        if not 0 <= cores <= MAX_CORES:     # checked before a build of minutes starts
            raise BackendError(f"{SIM_CORES_ENV} must be a number of cores in 0..{MAX_CORES}, "
                               f"got {text!r}")
        try:
            sim = BoardSim(cores=cores, log=lambda line: print(line, file=sys.stderr, flush=True))
        except BoardSimError as error:
            raise BackendError(str(error).splitlines()[0]) from None
        try:
            transport = open_transport(sim.port)
        except TransportError as error:
            sim.close()
            raise BackendError(str(error)) from None
        return BoardBackend(transport, spec, sim=sim, timeout=SIM_REPLY_TIMEOUT)
    if spec.startswith("serial:") and spec[len("serial:"):]:
        port = spec[len("serial:"):]
        try:
            transport = open_transport(port)
        except TransportError as error:
            raise BackendError(str(error)) from None
        return BoardBackend(transport, spec)
    raise BackendError(f"not a board backend: {spec!r} (verilator or serial:PORT)")


def add_board_info_arguments(parser):
    parser.add_argument("--port", required=True, help="serial port or pty of the board")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"seconds to wait for each reply (default {DEFAULT_TIMEOUT})")
    parser.add_argument("--retries", type=int, default=DEFAULT_RETRIES,
                        help=f"times a request is sent again (default {DEFAULT_RETRIES})")


def board_info_main(args):
    """``chessaccel board info --port PORT``: print what the board reports; exit status."""
    try:
        with open_transport(args.port) as transport:
            client = BoardClient(transport, timeout=args.timeout, retries=args.retries)
            info = client.info()
            status = client.status()
    except (TransportError, BoardError) as error:
        print(f"chessaccel board info: {error}", file=sys.stderr)
        return EXIT_FAILURE
    for line in info.lines():
        print(line)
    print(f"busy cores: {status['busy']:0{max(info.cores, 1)}b}")
    print(f"frames received: {status['good_frames']} good, {status['bad_frames']} bad")
    return 0
