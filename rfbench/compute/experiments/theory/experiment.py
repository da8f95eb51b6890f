"""Closed-form curves of the papers' theory figures, one job per curve (``curves``), each row tagged
with its figure id (docs/experiments.md#hrf-fig1, #simrf-fig4, #simrf-fig5, #simrf-fig6).

The formulas live in rfbench.compute.features.theory (basic, hybrid, coupled, conformity); this
module only lays them out as tidy rows. Only SimRF Fig. 4 draws (its χ_d norms, from the job's
generator); HRF Fig. 1 gives r ≥ 0 (the paper mirrors it) and leaves d empty (the MSEs do not depend
on it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from rfbench.compute.experiments import register_experiment
from rfbench.compute.experiments.base import ConfigError, Experiment, JobSpec
from rfbench.compute.experiments.params import ExperimentParams, Values
from rfbench.compute.features import registry, theory
from rfbench.compute.features.theory import conformity, coupled
from rfbench.compute.features.weights.blocks import chi_norms

#: the figures drawn from closed forms (each curve reads the keys with its prefix)
CURVES = ("hrf-fig1", "simrf-fig4", "simrf-fig5", "simrf-fig6")


class Params(ExperimentParams):
    """Closed-form curves of HRF Fig. 1 and SimRF Figs 4-6 (no sampling)."""

    curves: Values[Literal[CURVES]] = Field(
        list(CURVES), min_length=1, description=f"which figures: {', '.join(CURVES)}"
    )
    hrf_estimators: Values[str] = Field(
        ["trig@iid", "hyperbolic@iid", "angular-hybrid@iid"],
        min_length=1,
        description="HRF Fig. 1 estimators (closed-form MSE needed)",
    )
    hrf_m: int = Field(10, ge=1, description="HRF Fig. 1: projections per base estimator")
    hrf_n: int = Field(1, ge=1, description="HRF Fig. 1: λ projections of a hybrid")
    hrf_r_max: float = Field(5.0, gt=0, description="HRF Fig. 1: largest input norm r")
    hrf_r_points: int = Field(51, ge=2, description="HRF Fig. 1: grid points in r")
    hrf_theta_points: int = Field(61, ge=2, description="HRF Fig. 1: grid points in θ ∈ [0, π]")
    conformity_d: int = Field(6, ge=2, description="SimRF Fig. 4: d = m")
    conformity_v: float = Field(1.0, gt=0, description="SimRF Fig. 4: v = ‖x + y‖")
    conformity_iid_couplings: int = Field(
        100, ge=2, description="SimRF Fig. 4: random iid direction sets averaged"
    )
    conformity_passes: int = Field(
        15, ge=0, description="SimRF Fig. 4: SimRF+ full passes shown (0..passes)"
    )
    conformity_norm_draws: int = Field(
        1, ge=1, description="SimRF Fig. 4: independent draws of the norms (repetitions)"
    )
    density_d: int = Field(6, ge=2, description="SimRF Fig. 5: d")
    density_w_max: float = Field(10.0, gt=0, description="SimRF Fig. 5: largest w_ij")
    density_w_points: int = Field(201, ge=2, description="SimRF Fig. 5: grid points in w")
    density_v: Values[Annotated[float, Field(ge=0)]] = Field(
        [1.0], description="SimRF Fig. 5: v values of the integrand f(w, v)"
    )
    ratio_d: int = Field(64, ge=2, description="SimRF Fig. 6: d")
    ratio_m: int = Field(64, ge=1, description="SimRF Fig. 6: m (one block if m <= d)")
    ratio_v_min: float = Field(1e-3, gt=0, description="SimRF Fig. 6: smallest v > 0 (log grid)")
    ratio_v_max: float = Field(100.0, description="SimRF Fig. 6: largest v")
    ratio_v_points: int = Field(
        101, ge=2, description="SimRF Fig. 6: grid points in v (plus the v -> 0 limit at v = 0)"
    )


COUPLINGS = ("iid", "orf", "simrf")
#: bytes of one result row while a job builds it (a dict of about a dozen entries) and after
ROW_BYTES = 1024
#: quadrature nodes in φ of the coupled closed forms (SimRF Figs. 5 and 6)
QUADRATURE_NODES = len(coupled.half_rule()[0])
#: the config keys of each curve: every key with this prefix (the norm draws make repetitions)
_PREFIX = {
    "hrf-fig1": "hrf_",
    "simrf-fig4": "conformity_",
    "simrf-fig5": "density_",
    "simrf-fig6": "ratio_",
}


def _row(figure: str, estimator: str, kernel: str, metric: str, value: float, **params) -> dict:
    """One closed-form row (no draws: n_trials = 0) unless params override stderr/n_trials."""
    return {"figure": figure, "estimator": estimator, "kernel": kernel, "metric": metric,
            "value": float(value), "stderr": None, "n_trials": 0, **params}  # fmt: skip


def hrf_fig1(spec: Mapping[str, Any], rng: np.random.Generator) -> list[dict]:
    """MSE and relative error surfaces on the sphere (HRF Fig. 1)."""
    theta = np.linspace(0.0, np.pi, spec["hrf_theta_points"])
    r = np.linspace(0.0, spec["hrf_r_max"], spec["hrf_r_points"])
    x, y = theory.equal_norm_pair(r[:, None], theta[None, :], 2)
    sm = np.exp(r[:, None] ** 2 * np.cos(theta[None, :]))
    rows = []
    for name in spec["hrf_estimators"]:
        hybrid = registry.estimator_class(name).kind == "hybrid"
        n = spec["hrf_n"] if hybrid else None
        est = registry.get(name, kernel="softmax", m=spec["hrf_m"], n=n)
        mse = theory.mse(est, x, y)
        for (i, j), value in np.ndenumerate(mse):
            point = {"m": est.m, "n": n, "r": r[i], "theta": theta[j]}
            rows.append(_row("hrf-fig1", name, "softmax", "theory_mse", value, **point))
            rel = np.sqrt(value) / sm[i, j]
            rows.append(_row("hrf-fig1", name, "softmax", "theory_rel_rmse", rel, **point))
    return rows


def simrf_fig4(spec: Mapping[str, Any], rng: np.random.Generator) -> list[dict]:
    """ρ of one draw of norms under each coupling; SimRF+ per pass; the optimum (Fig. 4)."""
    d, v = spec["conformity_d"], spec["conformity_v"]
    norms = chi_norms(rng, (d,), d)
    res = conformity.fig4_conformities(
        norms, v, rng, spec["conformity_iid_couplings"], spec["conformity_passes"]
    )
    point = {"d": d, "m": d, "v": v, "rep": spec["rep"]}

    def row(weights: str, metric: str, value: float, **extra) -> dict:
        name = f"positive@{weights}" if weights != "optimum" else "numerical-optimum"
        return _row(
            "simrf-fig4", name, "gaussian", metric, value, weights=weights, **point, **extra
        )

    count = spec["conformity_iid_couplings"]
    mean, sd = res["iid"]
    # Given the norms, ORF's and SimRF's ρ (fixed Gram matrices), SimRF+'s passes and the optimum
    # are computed, not sampled: standard error 0 (the norm draw is common to every coupling).
    rows = [
        row("iid", "rf_conformity", mean, stderr=sd / np.sqrt(count - 1), n_trials=count),
        row("iid", "rf_conformity_sd", sd, n_trials=count),
        row("orf", "rf_conformity", res["orf"], stderr=0.0, n_trials=1),
        row("simrf", "rf_conformity", res["simrf"], stderr=0.0, n_trials=1),
        row("optimum", "rf_conformity", res["optimum"], stderr=0.0, n_trials=1),
    ]
    rows += [
        row("simrf-plus", "rf_conformity", value, stderr=0.0, n_trials=1, passes=k)
        for k, value in enumerate(res["simrf-plus"])
    ]
    rows += [
        row(c, "theory_rf_conformity", coupled.rf_conformity(c, d, v), n_trials=0)
        for c in COUPLINGS
    ]
    return rows


def simrf_fig5(spec: Mapping[str, Any], rng: np.random.Generator) -> list[dict]:
    """Densities of w_ij per coupling and the conformity integrand f(w, v) (Fig. 5)."""
    d = spec["density_d"]
    w = np.linspace(0.0, spec["density_w_max"], spec["density_w_points"])
    rows = []
    for c in COUPLINGS:
        dens = conformity.pair_norm_density(c, d, w)
        rows += [
            _row("simrf-fig5", f"positive@{c}", "gaussian", "density", p, d=d, w=wi, weights=c)
            for wi, p in zip(w, dens, strict=True)
        ]
    for v in spec["density_v"]:
        f = conformity.pair_conformity_integrand(d, w, v)
        rows += [
            _row("simrf-fig5", "", "gaussian", "conformity_integrand", fi, d=d, w=wi, v=v)
            for wi, fi in zip(w, f, strict=True)
        ]
    return rows


def simrf_fig6(spec: Mapping[str, Any], rng: np.random.Generator) -> list[dict]:
    """MSE ratios vs v (Fig. 6); v = 0 holds the v → 0 limit."""
    d, m = spec["ratio_d"], spec["ratio_m"]
    lo, hi = np.log10(spec["ratio_v_min"]), np.log10(spec["ratio_v_max"])
    v = np.concatenate([[0.0], np.logspace(lo, hi, spec["ratio_v_points"])])
    rows = []
    for c in COUPLINGS:
        ratio = coupled.mse_ratio(c, d, m, v)
        rows += [
            _row("simrf-fig6", f"positive@{c}", "gaussian", "mse_ratio", q, d=d, m=m, v=vi,
                 weights=c)
            for vi, q in zip(v, ratio, strict=True)
        ]  # fmt: skip
    return rows


CURVE_FUNCTIONS: dict[str, Callable[[Mapping[str, Any], np.random.Generator], list[dict]]] = {
    "hrf-fig1": hrf_fig1,
    "simrf-fig4": simrf_fig4,
    "simrf-fig5": simrf_fig5,
    "simrf-fig6": simrf_fig6,
}


@register_experiment
class TheoryCurves(Experiment):
    """Closed-form theory curves of HRF Fig. 1 and SimRF Figs. 4–6."""

    name = "theory"
    description = "closed-form curves: HRF Fig. 1 MSE surfaces; SimRF Figs. 4-6"
    tagline = "Closed-form MSE curves (HRF Fig. 1, SimRF Figs. 4-6)."
    params = Params
    spec_only = True
    profiles = {
        "quick": {"hrf_r_points": 11, "hrf_theta_points": 13, "density_w_points": 41,
                  "ratio_v_points": 21, "conformity_iid_couplings": 20},
        "paper": {},
    }  # fmt: skip

    memory_parameters = ("hrf_r_points", "hrf_theta_points", "density_w_points",
                         "ratio_v_points", "conformity_iid_couplings", "conformity_d")  # fmt: skip
    range_parameters = ("hrf_r_max", "ratio_d")  # Fig. 6's closed form overflows in d ≳ 400
    probe_overrides = {"hrf_r_points": 3, "hrf_theta_points": 5}

    def peak_memory(self, config: Mapping[str, Any]) -> int:
        """The largest curve: its rows (one Python dict each, about :data:`ROW_BYTES`) and its
        float64 arrays: HRF Fig. 1's r × θ grid of pairs and MSEs per estimator; Figs. 5 and 6
        integrate over a quadrature in φ at every w or v (about eight arrays of grid × nodes);
        Fig. 4's direction sets (couplings × d × d)."""
        curves = set(config["curves"])
        grid = config["hrf_r_points"] * config["hrf_theta_points"]
        estimators = len(config["hrf_estimators"])
        sizes = {
            "hrf-fig1": grid * (8 * (4 + 8 * estimators) + ROW_BYTES * 2 * estimators),
            "simrf-fig4": 8 * 8 * config["conformity_iid_couplings"] * config["conformity_d"] ** 2
            + ROW_BYTES * (12 + config["conformity_passes"]),
            "simrf-fig5": config["density_w_points"]
            * (8 * 8 * QUADRATURE_NODES + ROW_BYTES * (3 + len(config["density_v"]))),
            "simrf-fig6": config["ratio_v_points"] * (8 * 8 * QUADRATURE_NODES + ROW_BYTES * 3),
        }
        return max(size for curve, size in sizes.items() if curve in curves)

    def validate_config(self, config: Mapping[str, Any]) -> None:
        for name in config["hrf_estimators"]:
            if not theory.has_theory(name):
                raise ConfigError.bad_value("hrf_estimators", name, "a name with a closed form")
        if not config["ratio_v_max"] > config["ratio_v_min"]:
            raise ConfigError.bad_value("ratio_v_max", config["ratio_v_max"], "> ratio_v_min")

    def grid(self, config: Mapping[str, Any]) -> list[JobSpec]:
        jobs = []
        for curve in dict.fromkeys(config["curves"]):
            params = {
                key: value
                for key, value in config.items()
                if key.startswith(_PREFIX[curve]) and key != "conformity_norm_draws"
            }
            reps = config["conformity_norm_draws"] if curve == "simrf-fig4" else 1
            jobs += [JobSpec(params, curve=curve, rep=rep) for rep in range(reps)]
        return jobs

    def run_job(self, spec: JobSpec, rng: np.random.Generator) -> list[dict]:
        return CURVE_FUNCTIONS[spec["curve"]](spec, rng)
