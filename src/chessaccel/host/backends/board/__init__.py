"""``verilator[:BOARDS]`` and ``serial:PORT[,PORT...]``: boards behind the link protocol
(docs/protocol.md).

- transport.py: the byte link (a serial port, a pseudo-terminal, a faulty one for the tests);
- client.py: the link protocol's requests and replies, jobs handed to cores and polled;
- here: ``BoardBackend``, the ``Backend`` that runs search and perft jobs on a board,
  ``BoardSet``, several boards as one backend, and ``open_simulated_board``, the one way a
  simulated board (sim/boardsim.py) is started.

``serial:PORT`` talks to a real board (or to a ``chessaccel board-sim`` pty); ``verilator``
starts a simulated board and talks to it over its pseudo-terminal in exactly the same way.
``serial:PORT1,PORT2`` and ``verilator:BOARDS`` are several boards at once (a ``BoardSet``):
the engine's executor (engine/executors/link.py) feeds every core of every board, and goes on
without a board that fails; the command line's jobs go to the board with the most free cores.
"""

import os

from chessaccel.contract.defs import INF, Mode
from chessaccel.contract.evalweights import DEFAULT_EVALUATION, EVALUATIONS
from chessaccel.contract.protocol import MAX_CORES
from chessaccel.model.movegen import legal_moves
from chessaccel.sim.boardsim import MAX_SIM_BOARDS, SIM_REPLY_TIMEOUT, BoardSim, BoardSimError

from ..base import Backend, BackendError, Capabilities, PerftResult, first_line
from .client import DEFAULT_TIMEOUT, BoardClient, BoardError, run_on_boards
from .transport import TransportError, open_transport

__all__ = ["BoardBackend", "SimulatedBoardBackend", "BoardSet", "open_simulated_board",
           "SIM_CORES_ENV", "MAX_SIM_BOARDS"]

#: The simulated board's cores where no caller says (``chessaccel ... --backend verilator``).
SIM_CORES_ENV = "CHESSACCEL_SIM_CORES"


class _Boards(Backend):
    """Search and perft on ``boards`` (BoardBackends), each job to the board with the most free
    cores (client.py's ``run_on_boards``)."""

    #: cores that take one job each, fed over the link; cycle counts in every answer
    capabilities = Capabilities(link_cores=True, cycles=True)
    boards = ()

    def _run(self, jobs):
        try:
            return run_on_boards([(b.client, b.info.cores) for b in self.boards], jobs)
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


class BoardBackend(_Boards):
    """Jobs on a board behind a transport; ``sim`` is the simulated board it started, if any."""

    @classmethod
    def usage(cls, scheme):
        return "serial:PORT[,PORT...]" if scheme == "serial" else f"{scheme}[:BOARDS]"

    @classmethod
    def from_spec(cls, spec, *, accelerators=None, log=None):
        """``verilator``: a simulated board of ``accelerators`` cores (open_simulated_board),
        ``verilator:BOARDS`` that many; ``serial:PORT``: the board on PORT (its own cores;
        ``accelerators`` is not asked), ``serial:PORT1,PORT2,...`` the boards on those ports.
        Several boards are a BoardSet. BackendError, one line, naming what is wrong."""
        if spec.scheme == "serial":
            ports = serial_ports(spec)
            if len(ports) == 1:
                return cls.on_port(ports[0], spec.text, log)
            return BoardSet.open(spec.text, [lambda port=port: cls.on_port(port, f"serial:{port}")
                                             for port in ports], log)
        return SimulatedBoardBackend.from_spec(spec, accelerators=accelerators, log=log)

    @classmethod
    def on_port(cls, port, name, log=None):
        """The board on ``port`` (a serial port or a pty), called ``name``."""
        try:
            transport = open_transport(port)
        except TransportError as error:
            raise BackendError(str(error)) from None
        return cls(transport, name, log=log)

    def __init__(self, transport, name, sim=None, timeout=DEFAULT_TIMEOUT, log=None):
        self.name = name
        self.sim = sim
        self.log = log
        self.transport = transport
        try:
            self.client = BoardClient(transport, timeout=timeout)
            self.info = self.client.info()
            self.client.abort()          # a fresh session: no job id of another survives
        except BoardError as error:
            self.close()
            raise BackendError(str(error)) from None
        if self.info.cores == 0:
            self.close()
            raise BackendError(f"the board on {transport.name} has no search core")

    @property
    def boards(self):
        """This board alone (what the link executor feeds)."""
        return (self,)

    def close(self):
        self.transport.close()
        if self.sim is not None:
            self.sim.close()
            self.sim = None


class SimulatedBoardBackend(BoardBackend):
    """``verilator[:BOARDS]``: simulated boards whose cores are built with the evaluation the
    caller asks for (``get_backend(..., evaluation=)``); pst unless asked, as the boards'
    bitstreams (so ``Evaluation auto`` stays pst here: the simulated board stands for a real
    one). A real board's evaluation is its bitstream's: ``serial`` offers pst alone."""

    evaluations = EVALUATIONS
    auto_evaluation = DEFAULT_EVALUATION

    def __init__(self, transport, name, sim=None, timeout=DEFAULT_TIMEOUT, log=None,
                 evaluation=DEFAULT_EVALUATION):
        self.evaluation = evaluation        # what its cores were built with (BoardSim checked it)
        super().__init__(transport, name, sim=sim, timeout=timeout, log=log)

    @classmethod
    def from_spec(cls, spec, *, accelerators=None, log=None, evaluation=DEFAULT_EVALUATION):
        count = simulated_boards(spec)
        if spec.argument is None:
            return open_simulated_board(accelerators, log, evaluation=evaluation)
        return BoardSet.open(spec.text, [
            lambda number=number: open_simulated_board(accelerators, log, f"verilator#{number}",
                                                       evaluation=evaluation)
            for number in range(1, count + 1)], log)


class BoardSet(_Boards):
    """Several boards as one backend: ``boards``, the BoardBackend of each, in the spec's
    order (``serial:PORT1,PORT2``, ``verilator:BOARDS``). The link executor feeds all their
    cores; ``log`` hears of a board it goes on without."""

    def __init__(self, name, boards, log=None):
        self.name = name
        self.boards = list(boards)
        self.log = log

    @classmethod
    def open(cls, name, openers, log=None):
        """A BoardSet of the boards ``openers`` (callables) open, in order; when one cannot
        open, those opened before it are closed and its BackendError is raised."""
        boards = []
        try:
            for opener in openers:
                boards.append(opener())
        except BaseException:
            for board in boards:
                board.close()
            raise
        return cls(name, boards, log)

    def close(self):
        for board in self.boards:
            board.close()


def serial_ports(spec):
    """The ports of ``serial:PORT[,PORT...]``; BackendError, one line, for none, an empty one,
    or one named twice (also under another name: a link to the same device)."""
    if not spec.argument:
        raise BackendError("serial backend needs a port: --backend serial:/dev/ttyUSB0")
    ports = spec.argument.split(",")
    if "" in ports:
        raise BackendError(f"{spec.text}: an empty port in the list "
                           f"(serial:PORT1,PORT2,... with no empty name)")
    seen = {}
    for port in ports:
        device = os.path.realpath(port)
        if device in seen:
            same = f"{port} is named twice" if seen[device] == port else \
                f"{seen[device]} and {port} are the same port"
            raise BackendError(f"{spec.text}: {same}")
        seen[device] = port
    return ports


def simulated_boards(spec):
    """How many simulated boards ``verilator[:BOARDS]`` asks for; BackendError, one line."""
    if spec.argument is None:
        return 1
    if not spec.argument.isdigit() or not 1 <= int(spec.argument) <= MAX_SIM_BOARDS:
        raise BackendError(f"{spec.text}: the simulated boards are a number in "
                           f"1..{MAX_SIM_BOARDS}, not {spec.argument!r}")
    return int(spec.argument)


def open_simulated_board(cores=None, log=None, name="verilator", evaluation=DEFAULT_EVALUATION):
    """A BoardBackend called ``name`` on a simulated board (sim/boardsim.py) of ``cores``
    search cores evaluating with ``evaluation``, built if need be (minutes), over its
    pseudo-terminal. ``cores`` None:
    CHESSACCEL_SIM_CORES, else 1 (the command line's ``--backend verilator``; the engine passes
    its Accelerators). ``log``: where the build's progress lines go (None: nowhere).
    BackendError, one line."""
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
        sim = BoardSim(cores=cores, log=log, evaluation=evaluation)
    except BoardSimError as error:
        raise BackendError(first_line(error)) from None
    try:
        transport = open_transport(sim.port)
    except TransportError as error:
        sim.close()
        raise BackendError(str(error)) from None
    return SimulatedBoardBackend(transport, name, sim=sim, timeout=SIM_REPLY_TIMEOUT, log=log,
                                 evaluation=evaluation)
