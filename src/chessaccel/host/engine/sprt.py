"""The sequential probability ratio test that decides a match early (``match --sprt``).

H0: the Elo difference is ``elo0``; H1: it is ``elo1`` (elo0 < elo1), Elo being logistic: an
Elo difference e expects the score mu(e) = 1 / (1 + 10^(-e/400)). The test is the generalized
SPRT (GSPRT) on the trinomial of single games, as fishtest ran it before its pentanomial model
(M. Van den Bergh, "A practical introduction to the GSPRT", 2016): the log-likelihood ratio is

    LLR = max log L(p | W, D, L) over p with score mu(elo1)
        - max log L(p | W, D, L) over p with score mu(elo0),

    log L(p | W, D, L) = W log p_w + D log p_d + L log p_l,

each maximum over the trinomials (p_w, p_d, p_l) whose expected score p_w + p_d / 2 is the
hypothesis' mu. Such a trinomial has one free parameter, the draw rate d: p_w = mu - d/2,
p_l = (1 - mu) - d/2, 0 <= d <= 2 min(mu, 1 - mu). The log likelihood is concave in d; its
derivative D/d - W/(2 mu - d) - L/(2 (1 - mu) - d) vanishes where

    N d^2 - 2 (D + (1 - mu) W + mu L) d + 4 mu (1 - mu) D = 0      (N = W + D + L),

and the smaller root is the maximum (the quadratic is 4 mu (1 - mu) D >= 0 at d = 0 and
4 mu W (2 mu - 1) <= 0 at d = 2 mu when mu <= 1/2; symmetrically above). Without draws d = 0
and the LLR is the Bernoulli SPRT's, W log(mu1/mu0) + L log((1 - mu1)/(1 - mu0)).

Wald's bounds: with false-positive rate alpha (accepting H1 when H0 holds) and false-negative
rate beta, the test stops at LLR >= log((1 - beta) / alpha) (H1 accepted) or at
LLR <= log(beta / (1 - alpha)) (H0 accepted), and is inconclusive at the game limit between.
The trinomial ignores that a match's games come in pairs sharing an opening (the pentanomial
model counts pairs): it overstates the variance of the score a little, so it decides somewhat
later than fishtest does today, never wrongly more often.
"""

import math
from dataclasses import dataclass

from .elo import score_of_elo

__all__ = ["Sprt", "SprtState", "score_of_elo", "llr", "parse_bounds"]

H1, H0, UNDECIDED = "H1 accepted", "H0 accepted", None


def _draw_rate(wins, draws, losses, mu):
    """The draw rate of the most likely trinomial with expected score mu."""
    games = wins + draws + losses
    half = (draws + (1 - mu) * wins + mu * losses)
    root = math.sqrt(max(half * half - 4 * mu * (1 - mu) * draws * games, 0.0))
    if half <= 0:
        return 0.0
    # the smaller root, (half - root) / games, written so that it does not cancel
    return 4 * mu * (1 - mu) * draws / (half + root)


def _log_likelihood(wins, draws, losses, mu):
    d = _draw_rate(wins, draws, losses, mu)
    total = 0.0
    for count, p in ((wins, mu - d / 2), (draws, d), (losses, 1 - mu - d / 2)):
        if count:
            total += count * math.log(p) if p > 0 else -math.inf
    return total


def llr(wins, draws, losses, elo0, elo1):
    """The GSPRT's log-likelihood ratio of H1 (elo1) against H0 (elo0) for a W/D/L tally."""
    if wins + draws + losses == 0:
        return 0.0
    return (_log_likelihood(wins, draws, losses, score_of_elo(elo1))
            - _log_likelihood(wins, draws, losses, score_of_elo(elo0)))


@dataclass(frozen=True)
class SprtState:
    llr: float
    lower: float
    upper: float
    verdict: str        # H1, H0 or None while undecided

    def text(self):
        return f"LLR {self.llr:+.2f} [{self.lower:+.2f}, {self.upper:+.2f}]"


@dataclass(frozen=True)
class Sprt:
    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self):
        if not self.elo0 < self.elo1:
            raise ValueError(f"--sprt {self.elo0:g},{self.elo1:g}: ELO0 must be below ELO1")
        for name, rate in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0 < rate < 1:
                raise ValueError(f"--{name} {rate:g}: an error rate strictly between 0 and 1")
        if self.alpha + self.beta >= 1:
            raise ValueError(f"--alpha {self.alpha:g} and --beta {self.beta:g}: their sum must "
                             "be below 1")

    @property
    def lower(self):
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self):
        return math.log((1 - self.beta) / self.alpha)

    def state(self, wins, draws, losses):
        value = llr(wins, draws, losses, self.elo0, self.elo1)
        verdict = H1 if value >= self.upper else H0 if value <= self.lower else UNDECIDED
        return SprtState(value, self.lower, self.upper, verdict)


def parse_bounds(text):
    """'0,5' -> (0.0, 5.0); ValueError with one line otherwise."""
    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        elo0, elo1 = float(parts[0]), float(parts[1])
    except ValueError:
        raise ValueError(f"--sprt {text!r}: expected ELO0,ELO1, e.g. 0,5") from None
    if not (math.isfinite(elo0) and math.isfinite(elo1)):
        raise ValueError(f"--sprt {text!r}: bounds must be finite")
    if not elo0 < elo1:
        raise ValueError(f"--sprt {text!r}: ELO0 must be below ELO1")
    return elo0, elo1
