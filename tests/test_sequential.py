"""Anytime-valid confidence sequences (rfbench.compute.sequential): coverage over many seeded runs,
with a binomial tolerance that catches a doubled error rate, and the stopping rule."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rfbench.compute import sequential as seq

RUNS, DRAWS, BATCH = 4000, 500, 50
ALPHA = seq.ALPHA


def misses_allowed(runs: int = RUNS, alpha: float = ALPHA) -> int:
    """The most runs (of ``runs``) whose sequence may miss the truth: above α·runs by a margin that
    a correct sequence exceeds with probability < 1e-6, and below what a sequence missing at 2α
    reaches with probability > 1 - 1e-6 (so the test fails on a doubled error rate)."""
    limit = int(stats.binom.isf(1e-6, runs, alpha))
    assert stats.binom.cdf(limit, runs, 2 * alpha) < 1e-6, "too few runs to catch a doubling"
    return limit


def ever_missed(
    lower: np.ndarray, upper: np.ndarray, truth: float, looks: np.ndarray
) -> np.ndarray:
    """Per run: whether the interval at any look excludes ``truth``."""
    lo, hi = lower[:, looks - 1], upper[:, looks - 1]
    return ((lo > truth) | (hi < truth)).any(axis=1)


LOOKS = np.arange(BATCH, DRAWS + 1, BATCH)  # the runner looks after every batch


@pytest.mark.parametrize(
    "draw, truth",
    [
        (lambda rng, shape: rng.normal(0.3, 2.0, shape), 0.3),
        (lambda rng, shape: rng.exponential(1.0, shape), 1.0),  # skewed
        (lambda rng, shape: (rng.random(shape) < 0.1).astype(float), 0.1),  # rare successes
    ],
    ids=["normal", "exponential", "bernoulli-0.1"],
)
def test_asymptotic_cs_misses_at_most_alpha_at_any_look(draw, truth):
    rng = np.random.default_rng(20240)
    x = draw(rng, (RUNS, DRAWS))
    lower, upper = seq.asymptotic_cs(x, t_opt=200)
    misses = int(ever_missed(lower, upper, truth, LOOKS).sum())
    assert misses <= misses_allowed(), f"{misses}/{RUNS} runs missed the mean at some look"


def test_peeking_at_fixed_z_intervals_is_caught():
    """The tolerance has power: 95 % z-intervals read after every batch miss far more than α."""
    rng = np.random.default_rng(7)
    x = rng.normal(0.0, 1.0, (RUNS, DRAWS))
    t = np.arange(1, DRAWS + 1)
    mean = np.cumsum(x, axis=1) / t
    half = 1.96 * np.sqrt(np.cumsum(x * x, axis=1) / t - mean**2) / np.sqrt(t)
    misses = int(ever_missed(mean - half, mean + half, 0.0, LOOKS).sum())
    assert misses > misses_allowed()


def test_bernstein_cs_is_exact_from_the_first_draw():
    rng = np.random.default_rng(3)
    x = rng.beta(0.5, 2.0, (RUNS, DRAWS)) * 3.0 - 1.0  # in [-1, 2], mean 3·0.2 - 1
    lower, upper = seq.bernstein_cs(x, -1.0, 2.0)
    every = np.arange(1, DRAWS + 1)
    misses = int(ever_missed(lower, upper, -0.4, every).sum())
    assert misses <= misses_allowed()
    assert np.all(upper[:, -1] - lower[:, -1] < 0.6)  # and it narrows


def test_bernstein_cs_refuses_data_outside_its_bounds():
    with pytest.raises(ValueError, match="outside"):
        seq.bernstein_cs(np.array([0.5, 1.5]), 0.0, 1.0)


def test_rho2_makes_the_margin_narrowest_at_t_opt():
    rho2 = seq.rho2_for(300)
    best = seq.mixture_margin(300, rho2)
    for factor in (0.5, 0.8, 1.25, 2.0):
        assert seq.mixture_margin(300, rho2 * factor) > best
    # the width at t_opt is within a factor 2.5 of the fixed-n z-interval's (1.96/√t)
    assert 1.96 / np.sqrt(300) < best < 2.5 * 1.96 / np.sqrt(300)


def test_p_value_crosses_alpha_when_the_sequence_excludes_zero():
    rng = np.random.default_rng(11)
    x = rng.normal(0.15, 1.0, (200, 400))
    lower, upper = seq.asymptotic_cs(x, t_opt=100)
    p = seq.anytime_p_value(x, t_opt=100)
    excluded = ((lower > 0) | (upper < 0))[:, 1:]  # from t = 2 (one draw has no spread)
    assert np.array_equal(p[:, 1:] <= ALPHA, np.maximum.accumulate(excluded, axis=1))
    assert np.all(np.diff(p, axis=1) <= 0)  # running minimum


def test_holm_steps_down():
    p = {"a": 0.001, "b": 0.02, "c": 0.03, "d": 0.5}
    assert seq.holm(p, 0.05) == {"a": True, "b": False, "c": False, "d": False}
    assert seq.holm({"a": 0.01, "b": 0.02}, 0.05) == {"a": True, "b": True}


def test_decide_resolves_clear_comparisons_and_caps_ties():
    rng = np.random.default_rng(5)
    clear = rng.normal(0.5, 1.0, 100)
    tie = rng.normal(0.0, 1.0, 100)
    reason, readings = seq.decide({"clear": clear}, cap=500, t_opt=100)
    assert reason == seq.RESOLVED and readings["clear"].low > 0
    assert seq.decide({"clear": clear, "tie": tie}, cap=500, t_opt=100)[0] is None
    assert seq.decide({"clear": clear, "tie": tie}, cap=100, t_opt=100)[0] == seq.CAP
    # a tolerance band a clear difference does not clear
    assert seq.decide({"clear": clear}, cap=500, t_opt=100, tol=1.0)[0] is None


def _keyed_draw(shift: float):
    """A batch sampler drawing batch i from its own keyed stream (as the experiments do)."""

    def draw(i: int, size: int, arms=None) -> dict[str, np.ndarray]:
        rng = np.random.default_rng([17, i])
        return {"a": rng.normal(shift, 1.0, size), "b": rng.normal(0.0, 1.0, size)}

    return draw


def test_sample_until_resolved_stops_at_a_batch_boundary_and_is_deterministic():
    one = seq.sample_until_resolved(_keyed_draw(0.8), {"a - b": ("a", "b")}, cap=500, batch=25)
    two = seq.sample_until_resolved(_keyed_draw(0.8), {"a - b": ("a", "b")}, cap=500, batch=25)
    assert one.reason == seq.RESOLVED and one.n < 500 and one.n % 25 == 0
    assert one.n == two.n and np.array_equal(one.values["a"], two.values["a"])
    assert one.readings["a - b"].low > 0
    # at the same tuning (ρ follows the cap unless t_opt is given) a larger cap changes nothing
    more = seq.sample_until_resolved(
        _keyed_draw(0.8), {"a - b": ("a", "b")}, cap=5000, batch=25, t_opt=100
    )
    assert more.n == one.n and np.array_equal(more.values["b"], one.values["b"])


def test_sample_until_resolved_caps_a_tie_and_honours_the_first_batch():
    tie = seq.sample_until_resolved(
        _keyed_draw(0.0), {"a - b": ("a", "b")}, cap=120, batch=50, first=30
    )
    assert tie.reason == seq.CAP and tie.n == 120  # 30 + 50 + 40: the last batch is cut at the cap
    against_number = seq.sample_until_resolved(_keyed_draw(0.0), {"a": ("a", -1.0)}, 500, 50)
    assert against_number.reason == seq.RESOLVED and against_number.n == 50
    nothing = seq.sample_until_resolved(_keyed_draw(0.0), {}, cap=100, batch=50)
    assert nothing.reason == seq.CAP and nothing.n == 100 and nothing.readings == {}


def test_an_arm_stops_drawing_once_its_comparisons_are_settled():
    """Each comparison stops on its own: a clearly worse rival draws no further, the close one
    runs on, and the arms that keep drawing get the same draws as without the retired one."""
    means = {"best": 0.5, "far": -1.0, "close": 0.45}

    def draw(i, size, arms=None):
        return {
            arm: np.random.default_rng([23, i, j]).normal(mu, 1.0, size)
            for j, (arm, mu) in enumerate(means.items())
            if arms is None or arm in arms
        }

    rivals = {"best - far": ("best", "far"), "best - close": ("best", "close")}
    res = seq.sample_until_resolved(draw, rivals, cap=400, batch=25, question=seq.BEST)
    assert res.reason == seq.CAP and res.n == 400
    assert len(res.values["far"]) < 100 and res.retired == {"far"}
    assert res.reason_of("far") == seq.RESOLVED and res.reason_of("close") == seq.CAP
    assert res.readings["best - far"].n == len(res.values["far"])
    assert res.readings["best - far"].low > 0
    alone = seq.sample_until_resolved(
        draw, {"best - close": ("best", "close")}, cap=400, batch=25, question=seq.BEST
    )
    assert np.array_equal(alone.values["best"], res.values["best"])


def test_settled_reads_the_question_comparison_by_comparison():
    win, loss, tie = (seq.Interval(50, m, m - 0.1, m + 0.1, 0.5) for m in (0.5, -0.5, 0.0))
    assert seq.settled({"w": win, "t": tie}) == {"w"}
    assert seq.settled({"w": win, "t": tie}, question=seq.BEST) == {"w"}
    assert seq.settled({"w": win, "l": loss, "t": tie}, question=seq.BEST) == {"w", "l", "t"}
    both = {"w": win, "l": loss, "t": tie}
    assert seq.settled(both, question=seq.BEST, groups=[["w", "l"], ["w", "t"]]) == {"w", "l"}


def test_a_reading_once_resolved_stays_resolved():
    earlier = seq.Interval(50, 0.3, 0.05, 0.55, 0.01)
    later = seq.Interval(100, 0.1, -0.05, 0.25, 0.3).meet(earlier)
    assert later.low == 0.05 and later.high == 0.25 and later.p == 0.01 and later.excludes()


def test_the_best_question_resolves_on_one_clear_loss_or_every_clear_win():
    rng = np.random.default_rng(9)
    win, loss, tie = rng.normal(0.5, 1, 100), rng.normal(-0.5, 1, 100), rng.normal(0, 1, 100)
    best = {"question": seq.BEST, "cap": 500, "t_opt": 100}
    assert seq.decide({"w": win, "l": loss, "t": tie}, **best)[0] == seq.RESOLVED  # not the best
    assert seq.decide({"w": win, "w2": win + 0.1}, **best)[0] == seq.RESOLVED  # the best
    assert seq.decide({"w": win, "t": tie}, **best)[0] is None  # a tie with a rival: open
    assert seq.decide({"w": win, "l": loss}, cap=500, t_opt=100)[0] == seq.RESOLVED
    assert seq.decide({"w": win, "t": tie}, cap=500, t_opt=100)[0] is None


def test_select_best_drops_clear_losers_early_and_agrees_with_the_argmax():
    rng = np.random.default_rng(21)
    shared = rng.normal(0.0, 1.0, 50)  # the draws every arm shares (common random numbers)
    means = {"a": 0.0, "b": 1.0, "c": 1.05, "d": -3.0}
    noise = {arm: rng.normal(0.0, 0.3, 50) for arm in means}
    calls: dict[str, int] = {}

    def evaluate(arm, start, stop):
        calls[arm] = calls.get(arm, 0) + stop - start
        return means[arm] + shared[start:stop] + noise[arm][start:stop]

    best, drawn = seq.select_best(evaluate, list(means), 50, 10)
    full = {arm: (means[arm] + shared + noise[arm]).mean() for arm in means}
    assert best == max(full, key=full.get)
    assert calls["d"] == 10 and calls["a"] < 50  # far behind: dropped at the first looks
    assert all(len(drawn[arm]) == calls[arm] for arm in means)


def test_select_best_breaks_exact_ties_by_order():
    best, drawn = seq.select_best(lambda arm, a, b: np.full(b - a, 0.65), ["x", "y"], 50, 10)
    assert best == "x" and len(drawn["y"]) == 50  # a tie is never dropped
    assert seq.select_best(lambda arm, a, b: np.ones(b - a), ["only"], 7, 3)[1]["only"].size == 7


def test_the_best_question_is_resolved_for_every_reading():
    """Two readings of one rival (DERF Fig. 3's TrigRFs): a clear loss to one of them resolves its
    reading only; the other reading needs its own answer."""
    rng = np.random.default_rng(4)
    win, loss, tie = rng.normal(0.5, 1, 100), rng.normal(-0.5, 1, 100), rng.normal(0, 1, 100)
    diffs = {"vs trig": loss, "vs phase": tie, "vs gerf": win}
    readings = [["vs trig", "vs gerf"], ["vs phase", "vs gerf"]]
    best = {"question": seq.BEST, "cap": 500, "t_opt": 100}
    assert seq.decide(diffs, **best)[0] == seq.RESOLVED  # one reading: the loss settles it
    assert seq.decide(diffs, **best, groups=readings)[0] is None  # the phase reading is open
    diffs["vs phase"] = win
    assert seq.decide(diffs, **best, groups=readings)[0] == seq.RESOLVED
