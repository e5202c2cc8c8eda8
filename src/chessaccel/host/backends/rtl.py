"""``rtl``: the RTL simulated: the move generator under cocotb + Icarus; the search core under
Verilator when installed (Icarus manages only tens of cycles per second on the whole core;
CHESSACCEL_RTL_SIM=icarus|verilator chooses). Exact, with cycle counts."""

from chessaccel.contract.evalweights import DEFAULT_EVALUATION, EVALUATIONS, check_evaluation
from chessaccel.model.movegen import legal_moves

from .base import Backend, BackendError, Capabilities, JobResult, PerftResult, first_line
from .base import optional_module

__all__ = ["RtlBackend", "simulated"]


def simulated(call, *args):
    """Run a simulator call; its failures (tools missing, build broken) become BackendError."""
    try:
        return call(*args)
    except BackendError:
        raise
    except (RuntimeError, AssertionError, OSError) as e:
        raise BackendError(f"RTL simulation failed: {first_line(e)}") from None


class RtlBackend(Backend):
    """The RTL simulated; searches run on the core built with the static ``evaluation``
    ("pst" or "terms": SearchCore's parameter, a Verilator build of its own)."""

    name = "rtl"
    #: a batch is one simulator run, its jobs one after another
    capabilities = Capabilities(batch=True, cycles=True)
    #: every evaluation of the contract: the core is built with either
    evaluations = EVALUATIONS

    def __init__(self, evaluation=DEFAULT_EVALUATION):
        self.evaluation = check_evaluation(evaluation)

    def moves(self, board):
        mod = optional_module("chessaccel.sim.rtl_movegen", "the RTL move generator")
        return simulated(mod.rtl_moves, board)

    def _search_module(self):
        return optional_module("chessaccel.sim.rtl_search", "the RTL search core")

    def perft(self, board, depth, divide=False):
        mod = self._search_module()
        if divide and depth >= 1:
            parts, cycles = {}, 0
            for move in legal_moves(board):
                undo = board.make(move)
                nodes, c = simulated(mod.rtl_perft, board, depth - 1)
                board.unmake(move, undo)
                parts[move] = nodes
                cycles += c
            return PerftResult(sum(parts.values()), parts, cycles)
        nodes, cycles = simulated(mod.rtl_perft, board, depth)
        return PerftResult(nodes, None, cycles)

    def search(self, board, depth, alpha, beta):
        return self.search_many([(board, depth, alpha, beta)])[0]

    def search_many(self, jobs):
        mod = self._search_module()
        return [JobResult(score, best_move, [best_move] if best_move else [], nodes, cycles)
                for score, best_move, nodes, cycles in simulated(mod.rtl_search_many, jobs,
                                                                 self.evaluation)]
