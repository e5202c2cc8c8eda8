"""The SPRT of ``chessaccel match --sprt`` (host/engine/sprt.py): its log-likelihood ratio
against values worked out here independently, its bounds and its stopping rule."""

import math

import pytest

from chessaccel.host.engine.sprt import Sprt, llr, parse_bounds, score_of_elo


def _mu(elo):
    """Logistic Elo, written out: 400 Elo is odds of 10 to 1."""
    odds = 10 ** (elo / 400)
    return odds / (1 + odds)


def _best_log_likelihood(wins, draws, losses, mu):
    """max W log p_w + D log p_d + L log p_l over trinomials of expected score mu, found by a
    golden-section search over the draw rate (not the module's closed form): p_w = mu - d/2,
    p_l = 1 - mu - d/2, 0 <= d <= 2 min(mu, 1 - mu), and the function is concave in d."""
    def f(d):
        total = 0.0
        for count, p in ((wins, mu - d / 2), (draws, d), (losses, 1 - mu - d / 2)):
            if count:
                total += count * math.log(p) if p > 0 else -1e300
        return total
    low, high = 0.0, 2 * min(mu, 1 - mu)
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(200):
        a, b = high - ratio * (high - low), low + ratio * (high - low)
        if f(a) < f(b):
            low = a
        else:
            high = b
    return f((low + high) / 2)


def test_logistic_elo():
    assert score_of_elo(0) == 0.5
    assert score_of_elo(400) == pytest.approx(10 / 11)
    assert score_of_elo(-191) == pytest.approx(1 - score_of_elo(191))


def test_without_draws_the_llr_is_the_bernoulli_sprts():
    """No draws: the most likely trinomial of score mu is (mu, 0, 1 - mu), so 10 wins 5 losses
    between 0 and 10 Elo give 10 log(mu1 / 0.5) + 5 log((1 - mu1) / 0.5), mu1 = 0.514387
    (1 / (1 + 10^-0.025)): 10 x 0.028367 + 5 x (-0.029802) = +0.1377."""
    mu1 = _mu(10)
    assert mu1 == pytest.approx(0.514387, abs=1e-6)
    by_hand = 10 * math.log(mu1 / 0.5) + 5 * math.log((1 - mu1) / 0.5)
    assert by_hand == pytest.approx(0.1377, abs=1e-4)
    assert llr(10, 0, 5, 0, 10) == pytest.approx(by_hand, rel=1e-12)


def test_only_draws_and_a_symmetric_tally():
    """Five draws: the likeliest trinomial of score mu draws as often as it can, d = 2 min(mu,
    1 - mu), so LLR = 5 log((1 - mu1) / 0.5) for 0 against 5 Elo (1 - mu1 = 0.492805):
    5 x (-0.014495) = -0.0725. Equal wins and losses between -5 and +5 Elo: the two maxima
    mirror each other, LLR 0."""
    assert llr(0, 5, 0, 0, 5) == pytest.approx(5 * math.log(2 * (1 - _mu(5))), rel=1e-12)
    assert llr(0, 5, 0, 0, 5) == pytest.approx(-0.0725, abs=1e-4)
    assert llr(20, 20, 20, -5, 5) == pytest.approx(0, abs=1e-12)
    assert llr(0, 0, 0, 0, 5) == 0


@pytest.mark.parametrize("wins, draws, losses, elo0, elo1", [
    (30, 40, 10, 0, 5), (12, 50, 20, -3, 1), (1, 0, 0, 0, 5), (0, 0, 7, 0, 10),
    (300, 1000, 280, 0, 2), (5, 1, 0, -10, 10),
])
def test_the_llr_is_the_difference_of_the_constrained_maxima(wins, draws, losses, elo0, elo1):
    expected = (_best_log_likelihood(wins, draws, losses, _mu(elo1))
                - _best_log_likelihood(wins, draws, losses, _mu(elo0)))
    assert llr(wins, draws, losses, elo0, elo1) == pytest.approx(expected, abs=1e-7)


def test_the_bounds_and_the_stopping_rule():
    """alpha = beta = 0.05: log(0.05 / 0.95) = -2.944 and +2.944. Between 0 and 5 Elo, every
    game drawn moves the LLR by log(2 (1 - mu(5))) = -0.0145: 203 draws stay above -2.944,
    204 fall below (203 x 0.014495 = 2.9425); an unbroken run of wins, log(mu(5) / 0.5) =
    +0.01428 a game, crosses +2.944 at the 207th (2.944 / 0.014288 = 206.1)."""
    test = Sprt(0, 5)
    assert (test.lower, test.upper) == (pytest.approx(math.log(0.05 / 0.95)),
                                        pytest.approx(math.log(0.95 / 0.05)))
    assert test.state(0, 203, 0).verdict is None
    assert test.state(0, 204, 0).verdict == "H0 accepted"
    assert test.state(206, 0, 0).verdict is None
    assert test.state(207, 0, 0).verdict == "H1 accepted"
    state = test.state(3, 4, 1)
    assert state.text() == f"LLR {llr(3, 4, 1, 0, 5):+.2f} [-2.94, +2.94]"
    loose = Sprt(0, 5, alpha=0.2, beta=0.1)
    assert (loose.lower, loose.upper) == (pytest.approx(math.log(0.1 / 0.8)),
                                          pytest.approx(math.log(0.9 / 0.2)))


@pytest.mark.parametrize("make, problem", [
    (lambda: Sprt(5, 0), "ELO0 must be below ELO1"),
    (lambda: Sprt(0, 5, alpha=0), "--alpha 0: an error rate strictly between 0 and 1"),
    (lambda: Sprt(0, 5, beta=1), "--beta 1: an error rate strictly between 0 and 1"),
    (lambda: Sprt(0, 5, alpha=0.6, beta=0.5), "their sum must be below 1"),
    (lambda: parse_bounds("5"), "expected ELO0,ELO1"),
    (lambda: parse_bounds("a,b"), "expected ELO0,ELO1"),
    (lambda: parse_bounds("5,5"), "ELO0 must be below ELO1"),
    (lambda: parse_bounds("0,inf"), "bounds must be finite"),
])
def test_bad_settings_name_the_problem(make, problem):
    with pytest.raises(ValueError, match=problem):
        make()
    assert parse_bounds(" -1.5, 3") == (-1.5, 3.0)
