"""``model``: the behavioural model (chessaccel.model), the golden reference."""

from chessaccel.contract.evalweights import DEFAULT_EVALUATION, EVALUATIONS, check_evaluation
from chessaccel.model import search as model_search
from chessaccel.model.movegen import legal_moves

from .base import Backend, Capabilities, JobResult, PerftResult

__all__ = ["ModelBackend"]


class ModelBackend(Backend):
    """The model, searching with the static ``evaluation`` ("pst" or "terms")."""

    name = "model"
    #: cheap to start, one job at a time in this process: the engine runs one per worker process
    capabilities = Capabilities(worker_processes=True)
    #: every evaluation of the contract
    evaluations = EVALUATIONS

    def __init__(self, evaluation=DEFAULT_EVALUATION):
        self.evaluation = check_evaluation(evaluation)

    def moves(self, board):
        return legal_moves(board)

    def perft(self, board, depth, divide=False):
        if divide and depth >= 1:
            parts = model_search.perft_divide(board, depth)
            return PerftResult(sum(parts.values()), parts)
        return PerftResult(model_search.perft(board, depth))

    def search(self, board, depth, alpha, beta):
        r = model_search.search(board, depth, alpha, beta, evaluation=self.evaluation)
        return JobResult(r.score, r.best_move, r.pv, r.nodes)
