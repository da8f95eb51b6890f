"""The theory experiment: HRF Fig. 1 and SimRF Figs. 4–6, quick profiles end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rfbench.compute.experiments import ConfigError, get_experiment
from rfbench.compute.features import registry
from rfbench.compute.features.theory import coupled
from rfbench.compute.results import load_results
from rfbench.compute.runner import RunOptions, load_config, run
from rfbench.present.summaries.theory import summary as theory_summary

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
FIGURES = {"hrf-fig1": "hrf/fig1", "simrf-fig4": "simrf/fig4", "simrf-fig5": "simrf/fig5",
           "simrf-fig6": "simrf/fig6"}  # fmt: skip


def _run(figure: str, tmp_path: Path, file: str = "", **overrides) -> pd.DataFrame:
    config = load_config(CONFIGS / f"{FIGURES[figure]}.toml", "quick", overrides)
    out = run(
        "theory",
        config,
        RunOptions(
            seed=0, out=tmp_path / f"{file or figure}.parquet", backend="serial", quiet=True
        ),
    )
    df = load_results(out)
    assert set(df["figure"]) == {figure}
    assert not df["value"].isna().any() and np.isfinite(df["value"]).all()
    return df


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, pd.DataFrame]:
    tmp = tmp_path_factory.mktemp("theory")
    out = {f: _run(f, tmp) for f in FIGURES}
    out["simrf-fig5-fine"] = _run(
        "simrf-fig5", tmp, "simrf-fig5-fine", density_w_points=801, density_w_max=12.0
    )  # another setting: a file of its own (a run never silently replaces another's)
    return out


def test_hrf_fig1_surfaces(results) -> None:
    """HRF Fig. 1 vs the equal-norm forms of docs/methods.md#trig, #hyperbolic, #hrf-angular-hybrid
    (m = 10, n = 1)."""
    df = results["hrf-fig1"]
    assert len(df) == 3 * 11 * 13 * 2 and (df["value"] >= 0).all()
    mse = df[df["metric"] == "theory_mse"].pivot_table(
        index=["r", "theta"], columns="estimator", values="value"
    )
    r = mse.index.get_level_values("r").to_numpy()
    th = mse.index.get_level_values("theta").to_numpy()
    m, p = 10, th / np.pi
    trig = np.exp(2 * r**2) * (1 - np.exp(-4 * r**2 * np.sin(th / 2) ** 2)) ** 2 / (2 * m)
    hyp = (
        np.exp(8 * r**2 * np.cos(th / 2) ** 2 - 2 * r**2)
        * (1 - np.exp(-4 * r**2 * np.cos(th / 2) ** 2)) ** 2
        / (2 * m)
    )
    hybrid = p * hyp + (1 - p) * trig  # n = 1: E[λ̂²] = p, E[(1 - λ̂)²] = 1 - p
    for name, want in (("trig@iid", trig), ("hyperbolic@iid", hyp), ("angular-hybrid@iid", hybrid)):
        np.testing.assert_allclose(
            mse[name].to_numpy(), want, rtol=1e-9, atol=1e-60
        )  # x + y = 1e-16 at θ = π
    # only the hybrid vanishes at both ends (the grey slice of Fig. 1)
    ends = mse[(r > 0) & ((th == 0) | (th == np.pi))]
    assert (ends["angular-hybrid@iid"] < 1e-30).all()
    assert ends["trig@iid"].max() > 0.1 and ends["hyperbolic@iid"].max() > 0.1


def test_simrf_fig6_against_the_spec_table(results) -> None:
    df = results["simrf-fig6"]
    ratio = df.pivot_table(index="v", columns="estimator", values="value")
    assert (ratio["positive@iid"] == 1.0).all()
    # SimRF Sec. 5.1, Fig. 6; docs/experiments.md#simrf-fig6 table (mpmath, d = m = 64)
    assert ratio.loc[0.1, "positive@orf"] == pytest.approx(0.99525, abs=1e-5)
    assert ratio.loc[0.1, "positive@simrf"] == pytest.approx(0.008214, abs=1e-6)
    assert ratio.loc[1.0, "positive@orf"] == pytest.approx(0.73109, abs=1e-5)
    assert ratio.loc[1.0, "positive@simrf"] == pytest.approx(0.17050, abs=1e-5)
    # the v -> 0 limit (row v = 0): 0.0078 (SimRF Sec. 5.1; docs/methods.md#simrf-small-v), ORF -> 1
    assert ratio.loc[0.0, "positive@simrf"] == pytest.approx(0.0077817, abs=1e-7)
    assert ratio.loc[0.0, "positive@simrf"] == pytest.approx(coupled.small_v_ratio(64), rel=1e-6)
    assert ratio.loc[0.0, "positive@orf"] == pytest.approx(1.0, abs=1e-9)
    assert (ratio["positive@simrf"] <= ratio["positive@orf"] + 1e-12).all()
    assert ratio.loc[100.0].to_numpy() == pytest.approx(1.0, abs=1e-9)


def test_simrf_fig5_densities(results) -> None:
    df = results["simrf-fig5-fine"]
    dens = df[df["metric"] == "density"]
    means = {}
    for name, curve in dens.groupby("estimator"):
        w, p = curve["w"].to_numpy(), curve["value"].to_numpy()
        assert np.trapezoid(p, w) == pytest.approx(1.0, abs=1e-4)
        means[name] = np.trapezoid(w * p, w)
    # iid: ω_i + ω_j ~ N(0, 2I), E w = √2 E χ_6; ORF: χ_12 (SimRF Eqs. 18-24;
    # docs/methods.md#rf-conformity)
    assert means["positive@iid"] == pytest.approx(np.sqrt(2) * 2.349964, rel=1e-4)
    assert means["positive@orf"] == pytest.approx(3.392734, rel=1e-4)
    # simplex pairs against Monte Carlo of the SimRF sampler (one pair per draw: independent)
    est = registry.get("positive@simrf", m=6)
    W = est.sample(np.random.default_rng(7), d=6, draws=20_000).projections["omega"].W
    w01 = np.linalg.norm(W[:, 0] + W[:, 1], axis=-1)
    tol = 5 * w01.std() / np.sqrt(w01.size)
    assert abs(w01.mean() - means["positive@simrf"]) < tol
    assert abs(means["positive@orf"] - means["positive@simrf"]) > 10 * tol  # can tell them apart
    f = df[df["metric"] == "conformity_integrand"]
    assert f["value"].iloc[0] == 1.0 and np.all(np.diff(f["value"]) > 0)


def test_simrf_fig4_conformities(results) -> None:
    df = results["simrf-fig4"]
    rho = df[df["metric"] == "rf_conformity"]
    one = rho[rho["passes"].isna()].set_index("weights")["value"]
    plus = rho[rho["passes"].notna()].set_index("passes")["value"]
    assert list(plus.index) == list(range(6))
    assert plus[0] == pytest.approx(one["simrf"], rel=1e-12)  # SimRF+ starts from the simplex
    # the ordering of Fig. 4 (docs/experiments.md#simrf-fig4, #simrf-claims)
    assert one["iid"] > one["orf"] > one["simrf"] > plus.iloc[-1] >= one["optimum"] - 1e-9
    expected = df[df["metric"] == "theory_rf_conformity"].set_index("weights")["value"]
    assert expected["iid"] == pytest.approx(np.e, rel=1e-12)
    # SimRF Eqs. 18-24; docs/methods.md#rf-conformity table, d = 6
    assert expected["orf"] == pytest.approx(2.579561821, rel=1e-8)
    assert expected["simrf"] == pytest.approx(2.181826061, rel=1e-8)


def test_summary_and_bad_configs(results) -> None:
    exp = get_experiment("theory")
    top = theory_summary(pd.concat([results[f] for f in FIGURES], ignore_index=True))
    assert 0 < len(top) <= 15
    small = top[(top["estimator"] == "positive@simrf") & (top["at"] == "v = 0")]
    assert small["value"].iloc[0] == pytest.approx(0.0078, abs=1e-4)
    for bad in (
        {"curves": ["hrf-fig9"]},
        {"hrf_estimators": ["positive@sobol"]},
        {"ratio_v_max": 1e-4},
        {"conformity_d": 1},
        {"hrf_r_max": 0.0},
    ):
        with pytest.raises(ConfigError):
            exp.resolve_config(bad)


def test_default_run_tags_each_curve(tmp_path) -> None:
    exp = get_experiment("theory")
    config = exp.resolve_config(profile="quick")
    df = load_results(
        run(exp, config, RunOptions(out=tmp_path / "all.parquet", backend="serial", quiet=True))
    )
    assert set(df["figure"]) == set(FIGURES)
