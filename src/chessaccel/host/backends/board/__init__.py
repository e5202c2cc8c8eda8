"""``verilator`` and ``serial:PORT``: a board behind the link protocol (docs/protocol.md).

- transport.py: the byte link (a serial port, a pseudo-terminal, a faulty one for the tests);
- client.py: the link protocol's requests and replies, jobs handed to cores and polled;
- here: ``BoardBackend``, the ``Backend`` that runs search and perft jobs on a board, and
  ``open_simulated_board``, the one way a simulated board (sim/boardsim.py) is started.

``serial:PORT`` talks to a real board (or to a ``chessaccel board-sim`` pty); ``verilator``
starts a simulated board and talks to it over its pseudo-terminal in exactly the same way.
"""

import os

from chessaccel.contract.defs import INF, Mode
from chessaccel.contract.protocol import MAX_CORES
from chessaccel.model.movegen import legal_moves
from chessaccel.sim.boardsim import SIM_REPLY_TIMEOUT, BoardSim, BoardSimError

from ..base import Backend, BackendError, Capabilities, JobResult, PerftResult, first_line
from .client import DEFAULT_TIMEOUT, BoardClient, BoardError
from .transport import TransportError, open_transport

__all__ = ["BoardBackend", "open_simulated_board", "SIM_CORES_ENV"]

#: The simulated board's cores where no caller says (``chessaccel ... --backend verilator``).
SIM_CORES_ENV = "CHESSACCEL_SIM_CORES"


class BoardBackend(Backend):
    """Jobs on a board behind a transport; ``sim`` is the simulated board it started, if any."""

    #: cores that take one job each, fed over the link; cycle counts in every answer
    capabilities = Capabilities(link_cores=True, cycles=True)

    @classmethod
    def usage(cls, scheme):
        return "serial:PORT" if scheme == "serial" else scheme

    @classmethod
    def from_spec(cls, spec, *, accelerators=None, log=None):
        """``verilator``: a simulated board of ``accelerators`` cores (open_simulated_board);
        ``serial:PORT``: the board on PORT (its own cores; ``accelerators`` is not asked)."""
        if spec.scheme == "serial":
            if not spec.argument:
                raise BackendError("serial backend needs a port: --backend serial:/dev/ttyUSB0")
            try:
                transport = open_transport(spec.argument)
            except TransportError as error:
                raise BackendError(str(error)) from None
            return cls(transport, spec.text)
        if spec.argument is not None:
            raise BackendError(f"backend {spec.scheme!r} takes no argument: {spec.text!r}")
        return open_simulated_board(accelerators, log)

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
        return [outcome.result() for outcome in outcomes]

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
            return PerftResult(sum(parts.values()), parts, sum(o.cycles for o in outcomes))
        [outcome] = self._run([(board, depth, -INF, INF, Mode.PERFT)])
        return PerftResult(outcome.nodes, None, outcome.cycles)

    def close(self):
        self.transport.close()
        if self.sim is not None:
            self.sim.close()
            self.sim = None


def open_simulated_board(cores=None, log=None):
    """A BoardBackend on a simulated board (sim/boardsim.py) of ``cores`` search cores, built
    if need be (minutes), over its pseudo-terminal. ``cores`` None: CHESSACCEL_SIM_CORES, else
    1 (the command line's ``--backend verilator``; the engine passes its Accelerators).
    ``log``: where the build's progress lines go (None: nowhere). BackendError, one line."""
    if cores is None:
        text = os.environ.get(SIM_CORES_ENV, "1")
        try:
            cores = int(text)
        except ValueError:
            cores = -1
        if not 0 <= cores <= MAX_CORES:     # checked before a build of minutes starts
            raise BackendError(f"{SIM_CORES_ENV} must be a number of cores in 0..{MAX_CORES}, "
                               f"got {text!r}")
    elif not 0 <= cores <= MAX_CORES:
        raise BackendError(f"a simulated board has 0..{MAX_CORES} cores, not {cores}")
    try:
        sim = BoardSim(cores=cores, log=log)
    except BoardSimError as error:
        raise BackendError(first_line(error)) from None
    try:
        transport = open_transport(sim.port)
    except TransportError as error:
        sim.close()
        raise BackendError(str(error)) from None
    return BoardBackend(transport, "verilator", sim=sim, timeout=SIM_REPLY_TIMEOUT)
