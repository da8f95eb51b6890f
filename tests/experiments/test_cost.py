"""The cost experiment: the FLOP model's algebra and the error against its closed form."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rfbench.compute.experiments import get_experiment
from rfbench.compute.experiments.cost import model as cm
from rfbench.compute.experiments.cost.experiment import RMS, THEORY_RMS, errors
from rfbench.compute.experiments.shared import make, random_directions
from rfbench.present.statistics import projection_crossover as cm_cross


def exact_attention_flops(L: float, d: int, d_v: int) -> float:
    """FLOPs of exact softmax attention (QKᵀ, exps, row sums, AV), as the cost model states."""
    return L * L * (2 * d + 2 * d_v + 2)


def rf_attention_flops(L: float, d_v: int, draw: float, per_point: float, width: float) -> float:
    """FLOPs of random-feature attention: one draw, both feature maps, the two linear products."""
    return draw + 2 * L * per_point + L * width * (4 * d_v + 4)


@pytest.mark.parametrize("draw", [0.0, 1e6, 1e9])
def test_crossover_length_equalises_the_flops(draw):
    d, per_point, width = 64, 2 * 128 * 64 + 2 * 256.0, 256.0
    L = cm.crossover_length(d, d, draw, per_point, width, fit_rate=10.0)
    exact = exact_attention_flops(L, d, d)
    rf = rf_attention_flops(L, d, draw, per_point, width) + 10.0 * L
    assert rf == pytest.approx(exact, rel=1e-9)
    # shorter sequences favour exact attention, longer ones random features
    assert (
        exact_attention_flops(L / 2, d, d)
        < rf_attention_flops(L / 2, d, draw, per_point, width) + 5.0 * L
    )


def test_draw_flops_follow_the_stated_model():
    d = 16
    iid, orf = make("hyperbolic@iid", 40, 8), make("hyperbolic@orf", 40, 8)
    assert cm.draw_flops(iid, [40], d, 0) == 40 * d
    assert cm.draw_flops(orf, [40], d, 0) == pytest.approx(3 * (d**2 + 4 / 3 * d**3))
    sorf = make("hyperbolic@sorf", 40, 8)
    assert cm.draw_flops(sorf, [40], 12, 0) == 3 * 3 * 16 * 12 * 4  # d' = 16, 3 blocks, log2 16
    # the projections: the structured transform once it is cheaper than the dense product
    assert cm.feature_flops(sorf, [1024], 1024, 0) == 3 * 1024 * 10 + 4 * 1024
    assert cm.feature_flops(sorf, [4], 4, 0) == 2 * 4 * 4


@pytest.mark.parametrize("name", ["hyperbolic@iid", "positive@orf", "gerf@iid"])
def test_empirical_error_matches_the_closed_form(name):
    """√(mean ‖K̂ − K‖²_F)/‖K‖_F from 2000 draws (‖x‖ = 0.5: light tails) agrees with the
    closed form √(Σ MSE)/‖K‖_F within 5 s.e. (a factor 2 in the MSE moves the RMS by 41%)."""
    rng = np.random.default_rng(5)
    X, Y = random_directions(rng, 12, 8, 0.5), random_directions(rng, 12, 8, 0.5)
    err = errors(make(name, 16, 8), X, Y, 2000, rng)
    (emp, se), (th, _) = err[RMS], err[THEORY_RMS]
    assert abs(emp - th) < 5 * se, (emp, th, se)
    assert se < 0.02 * th  # so 5 s.e. is far below the 41% of a factor 2


def test_quick_run_writes_time_and_flops():
    exp = get_experiment("cost")
    config = exp.resolve_config(
        {
            "estimators": ["trig@iid", "hyperbolic@sorf", "angular-hybrid@iid"],
            "projection_budget": [8],
        },
        profile="quick",
    )
    jobs = exp.grid(config)
    rows = pd.concat([exp.run_job(s, np.random.default_rng(i)) for i, s in enumerate(jobs)])
    front = rows[rows["part"] == "frontier"]
    steps = set(front.loc[front["metric"] == "flops", "step"])
    assert steps == {"draw", "features", "gram", "total"}
    assert (front.loc[front["metric"] == "time_s", "value"] > 0).all()
    cross = rows[(rows["part"] == "crossover") & (rows["metric"] == "crossover_L")]
    assert len(cross) == 3 * len(config["crossover_d"]) and (cross["value"] > 0).all()
    # no closed form for SORF: its error is the empirical one only
    sorf = front[front["estimator"] == "hyperbolic@sorf"]
    assert RMS in set(sorf["metric"]) and THEORY_RMS not in set(sorf["metric"])


def test_projection_part_times_both_paths_and_reports_the_crossover():
    exp = get_experiment("cost")
    config = exp.resolve_config(
        {
            "estimators": ["hyperbolic@sorf"],
            "projection_budget": [8],
            "projection_weights": ["sorf", "fastfood"],
        },  # fmt: skip
        profile="quick",
    )
    jobs = [s for s in exp.grid(config) if s["part"] == "projection"]
    assert len(jobs) == 2 * len(config["projection_d"])
    rows = pd.concat([exp.run_job(s, np.random.default_rng(i)) for i, s in enumerate(jobs)])
    times = rows[rows["metric"] == "time_s"]
    assert set(times["step"]) == {"structured", "dense"} and (times["value"] > 0).all()
    assert set(times["m"]) == {32, 256}  # m = d'


def test_projection_crossover_is_the_first_d_from_which_structured_wins():
    t = {16: (2.0, 1.0), 32: (0.5, 1.0), 64: (2.0, 1.0), 128: (1.0, 3.0), 256: (1.0, 8.0)}
    rows = pd.DataFrame(
        [{"part": "projection", "metric": "time_s", "weights": "sorf", "d": d, "step": s,
          "value": v}
         for d, (fast, dense) in t.items()
         for s, v in (("structured", fast), ("dense", dense))]
    )  # fmt: skip
    out = cm_cross(rows)
    assert out.loc[0, "crossover_d"] == 128 and out.loc[0, "speedup_at_max_d"] == 8.0


def test_a_coupling_without_a_cost_model_gets_a_skipped_row_not_a_guess() -> None:
    """Costs are asked of the coupling (WeightsSampler.draw_flops): PNC is costed as the
    orthogonal blocks it is, and a coupling that gives no cost is skipped with the reason."""
    import numpy as np

    from rfbench.compute.experiments import get_experiment
    from rfbench.compute.experiments.cost import model as cm
    from rfbench.compute.features import registry

    d = 16
    orf, pnc = (registry.get(f"trig@{w}", m=d) for w in ("orf", "pnc"))
    assert cm.draw_flops(pnc, [d], d, 0) == cm.draw_flops(orf, [d], d, 0) == d**2 + 4 / 3 * d**3
    exp = get_experiment("cost")
    config = exp.check_config({"estimators": ["trig@mm"], "projection_budget": [32], "d": d,
                               "points": 8, "samples": 4, "repeats": 1,
                               "crossover_d": [d]})  # fmt: skip
    spec = next(s for s in exp.grid(config) if s["part"] == "frontier")
    rows = exp.run_job(spec, np.random.default_rng(0))
    assert list(rows["metric"]) == ["skipped"]
    assert "no FLOP model" in rows["note"].iloc[0] and "'mm'" in rows["note"].iloc[0]


def test_fit_and_feature_costs_are_the_estimators_own(isolated_registry) -> None:
    """The fit and per-point FLOPs come from the estimator (fit_flops, feature_overhead_flops):
    GERF 4Nd, the dense DERFs 4Nd² + 10d³ and 4d² per point, k-means for the cluster hybrid; a
    data-dependent component without a fit model is skipped with the reason, not costed as 0."""
    from rfbench.compute.features.components import Positive
    from rfbench.compute.features.registry import register_component

    d, n = 8, 50
    gerf, sderf = make("gerf@iid", 16, 8), make("sderf@iid", 16, 8)
    assert cm.draw_flops(gerf, [16], d, n) == 16 * d + 4 * n * d
    assert cm.draw_flops(sderf, [16], d, n) == 16 * d + 4 * n * d**2 + 10 * d**3
    assert cm.feature_flops(sderf, [16], d, 16) - cm.feature_flops(gerf, [16], d, 16) == 4 * d**2
    cluster = make("cluster-hybrid@iid", 16, 8)
    assert cm.draw_flops(cluster, [16], d, n) == 16 * d + 10 * 20 * 2 * n * 4 * d

    @register_component
    class Unpriced(Positive):  # fits (nothing), but says nothing about the fit's cost
        name = "rfb-test-unpriced"
        data_dependent = True

        def fit(self, X, Y, d):
            return {}

    exp = get_experiment("cost")
    config = {"estimators": [f"{Unpriced.name}@iid"], "projection_budget": [16], "d": d,
              "points": 8, "samples": 4, "repeats": 1, "crossover_d": [d]}  # fmt: skip
    config = exp.check_config(config)
    spec = next(s for s in exp.grid(config) if s["part"] == "frontier")
    rows = exp.run_job(spec, np.random.default_rng(0))
    assert list(rows["metric"]) == ["skipped"] and "fit_flops" in rows["note"].iloc[0]
