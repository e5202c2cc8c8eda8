"""The search controller and SearchStack: the model of hdl/searchstack.py and hdl/search.py.

Fail-soft negamax alpha-beta on a fixed depth with quiescence, exactly as docs/semantics.md
("Search") states, written as the hardware runs it: an explicit stack of per-ply frames and a
loop of named steps (ENTER a node, pick the NEXT move, make it and TEST it, RETURN a value),
never Python recursion. Perft uses the same move picker, make and TestCheck.
"""

from dataclasses import dataclass, field

from chessaccel.contract.defs import MATE, INF, MAX_PLY, MAX_DEPTH
from .movegen import MovePicker
from .testcheck import in_check
from .evalterms import evaluator

__all__ = ["Frame", "SearchResult", "search", "perft", "perft_divide", "mate_distance",
           "SearchError", "job_problem"]


class SearchError(ValueError):
    """A job outside the contract (depth or window out of range, a position without kings)."""


@dataclass
class Frame:
    """One SearchStack entry: what a ply needs to continue and to undo."""
    depth: int
    alpha: int
    beta: int
    best: int = -INF
    best_move: tuple = None
    in_check: bool = False
    captures_only: bool = False
    legal: int = 0
    picker: MovePicker = None
    move: tuple = None      # move being searched from this node (made on the board)
    undo: object = None     # its Undo record
    pv: list = field(default_factory=list)


@dataclass
class SearchResult:
    score: int
    best_move: tuple
    pv: list
    nodes: int
    trace: list = None      # (ply, move) of every node entered, when asked for


def mate_distance(score):
    """Moves to mate for a mate score (negative when the side to move is mated), else None."""
    if score >= MATE - MAX_PLY:
        return (MATE - score + 1) // 2
    if score <= -(MATE - MAX_PLY):
        return -((MATE + score) // 2)
    return None


def job_problem(board, depth, alpha=-INF, beta=INF, perft=False):
    """Why the accelerator refuses this job (its BAD_JOB), or None when it takes it.

    The core checks the depth, the window (search only) and that each side has exactly one king
    (its king-square registers and TestCheck need one); the host's link client asks this before
    sending, so a refused job is named on the host, not only answered BAD_JOB by the board.
    """
    if not isinstance(depth, int) or not 0 <= depth <= MAX_DEPTH:
        return f"depth {depth} out of range 0..{MAX_DEPTH}"
    if not perft and not -INF <= alpha < beta <= INF:
        return f"window ({alpha}, {beta}) must satisfy {-INF} <= alpha < beta <= {INF}"
    for color, name in ((0, "white"), (1, "black")):
        kings = board.king_count(color)
        if kings != 1:
            return f"the position has {kings} {name} kings (the accelerator needs exactly one)"
    return None


def _check_job(board, depth, alpha=-INF, beta=INF, perft=False):
    problem = job_problem(board, depth, alpha, beta, perft)
    if problem:
        raise SearchError(problem)


def _check_max_ply(max_ply):
    if not isinstance(max_ply, int) or not 1 <= max_ply <= MAX_PLY:
        raise SearchError(f"max_ply {max_ply} out of range 1..{MAX_PLY}")


def search(board, depth, alpha=-INF, beta=INF, trace=False, max_ply=MAX_PLY, evaluation="pst"):
    """Search ``board`` to ``depth`` plies plus quiescence inside the window (alpha, beta).

    Returns a SearchResult: fail-soft score from the side to move's view, best move (None when
    the root has no move searched), principal variation and node count. The board is restored.
    ``max_ply`` is the stack's size (the SearchCore's parameter of the same name): a node at
    that ply is evaluated, never expanded. ``evaluation`` names the static evaluation
    (contract/evalweights.py's EVALUATIONS: "pst", the default, or "terms").
    """
    _check_job(board, depth, alpha, beta)
    _check_max_ply(max_ply)
    try:
        evaluate = evaluator(evaluation)
    except ValueError as error:
        raise SearchError(str(error)) from None
    nodes = 0
    walk = [] if trace else None
    stack = [Frame(depth, alpha, beta)]
    entering = True
    value = None
    while True:
        ply = len(stack) - 1
        f = stack[-1]
        if entering:
            # ENTER: count the node, stand pat or prepare a full-width node
            entering = False
            nodes += 1
            if walk is not None:
                walk.append((ply, stack[-2].move if ply else None))
            if ply == max_ply:
                value = evaluate(board)
            else:
                f.in_check = in_check(board, board.side)
                if f.depth == 0 and not f.in_check:
                    f.captures_only = True
                    f.best = evaluate(board)
                    if f.best >= f.beta:
                        value = f.best
                    elif f.best > f.alpha:
                        f.alpha = f.best
                if value is None:
                    f.picker = MovePicker(board, f.captures_only)
        if value is None:
            # NEXT: pick, make, test; descend on the first legal move
            while True:
                move = f.picker.next()
                if move is None:
                    if f.legal == 0 and not f.captures_only:
                        value = -(MATE - ply) if f.in_check else 0
                    else:
                        value = f.best
                    break
                mover = board.side
                undo = board.make(move)
                if in_check(board, mover):
                    board.unmake(move, undo)
                    continue
                f.legal += 1
                f.move, f.undo = move, undo
                stack.append(Frame(max(f.depth - 1, 0), -f.beta, -f.alpha))
                entering = True
                break
            if entering:
                continue
        # RETURN: pop the value to the parent and update its window
        while True:
            child = stack.pop()
            if not stack:
                return SearchResult(value, child.best_move, child.pv, nodes, walk)
            parent = stack[-1]
            board.unmake(parent.move, parent.undo)
            score = -value
            value = None
            if score > parent.best:
                parent.best = score
                parent.best_move = parent.move
                parent.pv = [parent.move] + child.pv
                if score > parent.alpha:
                    parent.alpha = score
                    if score >= parent.beta:
                        value = parent.best   # cutoff: return at once
            parent.move = parent.undo = None
            if value is None:
                break
        # back in the parent: continue with its next move


def perft(board, depth):
    """Leaf count at ``depth`` plies with the accelerator's generator (legal moves only)."""
    _check_job(board, depth, perft=True)
    return _perft(board, depth)


def _perft(board, depth):
    if depth == 0:
        return 1
    count = 0
    picker = MovePicker(board)
    while (move := picker.next()) is not None:
        mover = board.side
        undo = board.make(move)
        if not in_check(board, mover):
            count += 1 if depth == 1 else _perft(board, depth - 1)
        board.unmake(move, undo)
    return count


def perft_divide(board, depth):
    """{move: leaf count below it} in generation order, for depth >= 1."""
    if not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        raise SearchError(f"divide needs a depth in 1..{MAX_DEPTH}, got {depth}")
    _check_job(board, depth, perft=True)
    out = {}
    picker = MovePicker(board)
    while (move := picker.next()) is not None:
        mover = board.side
        undo = board.make(move)
        if not in_check(board, mover):
            out[move] = _perft(board, depth - 1)
        board.unmake(move, undo)
    return out
