"""Elo from a match score, with its error bar.

With W wins, D draws and L losses in N games the score is s = (W + D/2) / N and the Elo
difference is -400 log10(1/s - 1). The error bar comes from the spread of the per-game results
(1, 1/2, 0): the standard error of s is sqrt(var / N) with var = (W (1-s)^2 + D (1/2-s)^2 +
L s^2) / N, and the 95 % interval is the Elo of s -+ 1.96 standard errors. A score of 0 or 1
has no finite Elo: the estimate is then a bound, taken from half a game's worth of score.
"""

import math
from dataclasses import dataclass

__all__ = ["EloEstimate", "estimate", "elo_of_score", "score_of_elo"]

Z95 = 1.959964


def elo_of_score(score):
    """The Elo difference that expects ``score`` (0 < score < 1)."""
    return -400 * math.log10(1 / score - 1)


def score_of_elo(elo):
    """The score an Elo difference expects (logistic Elo): the inverse of ``elo_of_score``."""
    return 1 / (1 + 10 ** (-elo / 400))


@dataclass
class EloEstimate:
    games: int
    wins: int
    draws: int
    losses: int
    score: float            # points per game
    elo: float              # None without games
    low: float              # 95 % interval (None when unbounded)
    high: float
    bound: str = None       # "<" or ">" when the score is 0 or 1: elo is then a bound

    @property
    def error(self):
        """Half the width of the 95 % interval, in Elo (None when unbounded)."""
        if self.low is None or self.high is None:
            return None
        return (self.high - self.low) / 2

    def text(self):
        if self.games == 0:
            return "no games"
        head = f"+{self.wins} ={self.draws} -{self.losses}, score {self.score:.3f}"
        if self.bound:
            return (f"{head}, Elo {self.bound} {_signed(self.elo)} (every game "
                    f"{'lost' if self.bound == '<' else 'won'}: a bound from half a point)")
        low = "-inf" if self.low is None else _signed(self.low)
        high = "+inf" if self.high is None else _signed(self.high)
        if self.error is None:
            return f"{head}, Elo {_signed(self.elo)}, 95 % interval [{low}, {high}]"
        return (f"{head}, Elo {_signed(self.elo)} +- {self.error:.0f} "
                f"(95 % interval [{low}, {high}])")


def _signed(value):
    rounded = round(value)
    return f"{rounded:+d}" if rounded else "0"


def estimate(wins, draws, losses):
    games = wins + draws + losses
    if games == 0:
        return EloEstimate(0, 0, 0, 0, 0.0, None, None, None)
    score = (wins + draws / 2) / games
    if score in (0.0, 1.0):
        edge = 0.5 / games      # half a game's worth of score
        if score == 0.0:
            return EloEstimate(games, wins, draws, losses, score, elo_of_score(edge), None,
                               elo_of_score(edge), "<")
        return EloEstimate(games, wins, draws, losses, score, elo_of_score(1 - edge),
                           elo_of_score(1 - edge), None, ">")
    variance = (wins * (1 - score) ** 2 + draws * (0.5 - score) ** 2
                + losses * score ** 2) / games
    spread = Z95 * math.sqrt(variance / games)
    low_score, high_score = score - spread, score + spread
    low = elo_of_score(low_score) if low_score > 0 else None
    high = elo_of_score(high_score) if high_score < 1 else None
    return EloEstimate(games, wins, draws, losses, score, elo_of_score(score), low, high)
