"""Scores across the host/accelerator boundary.

A job is searched as if its position were the root: a mate it finds at its own ply ``q`` scores
``-(MATE - q)`` (docs/semantics.md, section 5). The host holds the job's position at ply ``p`` of
its own tree, so the same mate is at ply ``p + q`` there. ``from_job`` shifts a job's score into
the host's frame; ``job_window`` shifts a host window into the job's frame. The two maps are
inverse on every score a job can return and monotone, so "score > bound" means the same on both
sides: a host search whose frontier jobs run on the accelerator computes exactly what one long
search of the same depth computes (tests/test_engine_frontier.py).
"""

from chessaccel.contract.defs import INF, MATE, MAX_PLY

__all__ = ["HOST_MAX_PLY", "MATE_BOUND", "from_job", "job_window", "is_mate", "mate_moves",
           "to_tt", "from_tt", "uci_score", "FIFTY_SPAN", "FIFTY_LIMIT", "fifty_scaled",
           "fifty_window"]

#: Deepest host ply the engine ever reaches (iterative deepening stops well before).
HOST_MAX_PLY = 96
#: A score at least this far from zero is a mate (host frame: host plies plus job plies).
MATE_BOUND = MATE - HOST_MAX_PLY - MAX_PLY
#: Scores a job returns for mates lie beyond this (job frame: at most MAX_PLY plies deep).
_JOB_MATE = MATE - MAX_PLY


def from_job(score, ply):
    """The host-frame score of a job result for a job whose root is at host ply ``ply``."""
    if score >= _JOB_MATE:
        return score - ply
    if score <= -_JOB_MATE:
        return score + ply
    return score


def _to_job(bound, ply):
    threshold = _JOB_MATE - ply     # the host-frame image of the job's mate range
    if bound >= threshold:
        return min(bound + ply, INF)
    if bound <= -threshold:
        return max(bound - ply, -INF)
    return bound


def job_window(alpha, beta, ply):
    """The job-frame window (alpha, beta) of a host window for a job rooted at host ply ``ply``.

    Beyond the mate range the bounds clamp to +-INF; a window that lies wholly beyond every
    possible score keeps one point of width (the job then fails low or high, as the host would).
    """
    a, b = _to_job(alpha, ply), _to_job(beta, ply)
    if a >= b:
        if a >= INF:
            a = INF - 1
        else:
            b = a + 1
    return a, b


#: Fifty-move scaling (SearchOptions.fifty_move_scaling): a score of a position whose fifty-move
#: counter stands at h is scaled by (FIFTY_SPAN - h) / FIFTY_SPAN (h at most 100: half at the
#: rule's end), so that the search prefers the line that captures or moves a pawn to one that
#: shuffles a won position into a draw. Scores beyond FIFTY_LIMIT (mates among them) stay.
FIFTY_SPAN = 200
FIFTY_LIMIT = 10000


def fifty_scaled(score, halfmoves):
    """``score`` scaled by the fifty-move counter ``halfmoves`` (toward 0, nondecreasing)."""
    if halfmoves <= 0 or not -FIFTY_LIMIT < score < FIFTY_LIMIT:
        return score
    q = abs(score) * (FIFTY_SPAN - min(halfmoves, 100)) // FIFTY_SPAN
    return q if score >= 0 else -q


def fifty_window(alpha, beta, halfmoves):
    """The window (a, b) of unscaled scores whose results, scaled by ``fifty_scaled``, keep the
    bounds of (alpha, beta): a the greatest score scaled to alpha or below, b the least scaled
    to beta or above (a result at or below a is a fail low, at or above b a fail high)."""
    if halfmoves <= 0:
        return alpha, beta
    # the scaled scores are integers and nondecreasing: the least scaled to beta or above is
    # one past the greatest scaled to beta - 1 or below
    return _last_scaled_to(alpha, halfmoves), _last_scaled_to(beta - 1, halfmoves) + 1


def _last_scaled_to(bound, halfmoves):
    """The greatest score in [-INF, INF] that ``fifty_scaled`` takes to ``bound`` or below
    (bound >= -INF: -INF is its own image)."""
    lo, hi = -INF, INF
    if fifty_scaled(hi, halfmoves) <= bound:
        return hi
    while hi - lo > 1:
        mid = lo + (hi - lo) // 2
        if fifty_scaled(mid, halfmoves) <= bound:
            lo = mid
        else:
            hi = mid
    return lo


def is_mate(score):
    return score >= MATE_BOUND or score <= -MATE_BOUND


def mate_moves(score):
    """Moves to mate (negative when the side to move is mated) for a host-frame mate score."""
    if score >= MATE_BOUND:
        return (MATE - score + 1) // 2
    if score <= -MATE_BOUND:
        return -((MATE + score) // 2)
    return None


def to_tt(score, ply):
    """A score as stored in the transposition table: mates counted from the stored node."""
    if score >= MATE_BOUND:
        return score + ply
    if score <= -MATE_BOUND:
        return score - ply
    return score


def from_tt(score, ply):
    if score >= MATE_BOUND:
        return score - ply
    if score <= -MATE_BOUND:
        return score + ply
    return score


def uci_score(score):
    """``cp N`` or ``mate N`` as UCI's ``info score`` wants it."""
    mate = mate_moves(score)
    return f"mate {mate}" if mate is not None else f"cp {score}"
