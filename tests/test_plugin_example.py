"""The worked plugin package (examples/rfbench-example-plugin): its estimator, and installing it.

The install test puts the package into a temporary folder with pip (``--target``; no
dependencies, offline when the interpreter can build it without build isolation) and runs the CLI
with that folder on PYTHONPATH: the entry point group ``rfbench.plugins`` must make ``gerf-fixed``
appear in ``rfbench list estimators`` and run in ``rfbench pointwise``.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from data_facts import EXAMPLE_PLUGIN

from rfbench.compute.features import registry
from rfbench.compute.features.theory import equal_norm_pair
from rfbench.compute.results import load_results

PLUGIN = EXAMPLE_PLUGIN

NAME = "gerf-fixed"


@pytest.mark.parametrize("A", [-0.125, -0.6, 0.05])
@pytest.mark.parametrize("weights", ["iid", "orf"])
def test_fixed_gerf_is_unbiased_with_the_papers_variance(plugin_module, A, weights) -> None:
    """Mean within 5 s.e. of SM (s.e. from DERF Eq. 7); MSE within 5 s.e. of Var/m (iid)."""
    m, draws, d = 8, 20_000, 4
    x, y = equal_norm_pair(1.0, 1.0, d)
    est = registry.get(f"{NAME}@{weights}", m=m, A=A)
    k = est.estimate(est.sample(np.random.default_rng(7), d, draws), x[None], y[None])[:, 0, 0]
    var = plugin_module.single_variance(A, x, y) / m  # iid; ORF only lowers it
    true = float(np.exp(x @ y))
    assert abs(k.mean() - true) < 5 * np.sqrt(var / draws)
    if weights == "iid" and A <= 0:  # (A > 0: a heavy-tailed MSE, its s.e. unreliable)
        sq = (k - true) ** 2
        assert abs(sq.mean() - var) < 5 * sq.std(ddof=1) / np.sqrt(draws)


def test_fixed_gerf_at_zero_is_the_positive_features(plugin_module) -> None:
    x, y = equal_norm_pair(1.2, 0.7, 5)
    a, b = registry.get(f"{NAME}@iid", m=6, A=0.0), registry.get("positive@iid", m=6)
    draw = a.sample(np.random.default_rng(3), 5, 4)
    np.testing.assert_allclose(
        a.estimate(draw, x[None], y[None]), b.estimate(draw, x[None], y[None])
    )
    assert registry.describe(f"{NAME}@orf").options == {"A": -0.125}
    with pytest.raises(ValueError, match="A < 1/8"):
        registry.get(f"{NAME}@iid", A=0.2)


def _precision_rows(name: str) -> pd.DataFrame:
    """One small ``rfbench precision`` job of ``name`` (float64 and float16, r = 1.5)."""
    from rfbench.compute.experiments import JobSpec
    from rfbench.compute.experiments.precision.experiment import Precision

    spec = JobSpec(estimator=name, r=1.5, dtypes=["float64", "float16"], forms=["naive",
                   "stabilised", "logspace"], m=16, n=8, d=8, angles=3, samples=40,
                   attention_points=8, attention_draws=3, stabiliser=1e-6)  # fmt: skip
    return Precision().run_job(spec, np.random.default_rng(0))


def test_precision_runs_the_plugins_declared_dtype_map(plugin_module) -> None:
    """The plugin declares its reduced-precision form (``dtype_parts``): ``describe`` reports it,
    its float64 naive map matches its log-space map, and the precision experiment runs it."""
    from rfbench.compute.experiments.precision import maps as pm

    assert registry.describe(f"{NAME}@orf").estimator.precision_form
    est = registry.get(f"{NAME}@iid", m=16, A=-0.3)
    x, y = equal_norm_pair(1.5, np.linspace(0.0, np.pi, 4), 8)
    draw = est.sample(np.random.default_rng(1), 8, 5)
    queries, keys = pm.pair_forms(est, draw, x[:1], y, "float64")
    logspace = pm.kernel_estimate(*(side["logspace"] for side in (queries, keys)))
    for form in ("naive", "stabilised"):
        k_hat = pm.kernel_estimate(queries[form], keys[form])
        np.testing.assert_allclose(k_hat, logspace, rtol=1e-12)
    np.testing.assert_allclose(logspace, est.estimate(draw, x[:1], y), rtol=1e-12)
    rows = _precision_rows(f"{NAME}@iid")
    assert "skipped" not in set(rows["metric"]) and set(rows["dtype"]) == {"float64", "float16"}


def test_precision_skips_an_estimator_without_the_form_and_says_why(plugin_module) -> None:
    """A component that does not implement ``dtype_parts`` (here a plugin subclass that opts
    out) gets one skipped row per job, the reason in ``note`` — never a guessed map."""
    from rfbench.compute.features.base import Component
    from rfbench.compute.features.registry import register_component

    @register_component
    class NoDtypeMap(plugin_module.FixedGERF):
        name = "rfb-test-gerf-fixed-no-dtype"
        dtype_parts = Component.dtype_parts

    assert not registry.describe(f"{NoDtypeMap.name}@iid").estimator.precision_form
    rows = _precision_rows(f"{NoDtypeMap.name}@iid")
    assert list(rows["metric"]) == ["skipped"]
    assert "no reduced-precision form" in rows["note"].iloc[0]


def _can_build_offline() -> bool:
    """Whether this interpreter's setuptools builds wheels itself (≥ 70.1, or with ``wheel``)."""
    if importlib.util.find_spec("wheel") is not None:
        return True
    try:
        import setuptools
    except ImportError:
        return False
    major, minor = (int(p) for p in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (70, 1)


@pytest.mark.slow
def test_installed_plugin_is_listed_and_runs(tmp_path) -> None:
    target = tmp_path / "site"
    install = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target"]
    install += [str(target), str(PLUGIN)]
    if _can_build_offline():
        install.insert(4, "--no-build-isolation")
    done = subprocess.run(install, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    env = {**os.environ, "PYTHONPATH": str(target), "COLUMNS": "200"}
    cli = [sys.executable, "-c", "from rfbench.entry import main; main()"]

    listed = subprocess.run([*cli, "list", "estimators"], capture_output=True, text=True, env=env)
    assert listed.returncode == 0, listed.stderr
    assert f"{NAME}@iid" in listed.stdout and f"{NAME}@orf" in listed.stdout
    assert "failed" not in listed.stderr  # the plugin loaded without a warning

    out = tmp_path / "pw.parquet"
    run = [*cli, "pointwise", "--estimators", f"{NAME}@iid", "--profile", "quick"]
    run += ["--out", str(out), "--workers", "1", "--backend", "serial", "--quiet"]
    done = subprocess.run(run, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = load_results(out)
    assert set(rows["estimator"]) == {f"{NAME}@iid"} and len(rows) > 0

    # a capability through the CLI: the plugin's declared dtype map runs in ``rfbench precision``
    prec = tmp_path / "prec.parquet"
    run_prec = [*cli, "precision", "--components", NAME, "--couplings", "iid", "--profile"]
    run_prec += ["quick", "--out", str(prec), "--workers", "1", "--backend", "serial", "--quiet"]
    done = subprocess.run(run_prec, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = load_results(prec)
    assert set(rows["estimator"]) == {f"{NAME}@iid"} and "skipped" not in set(rows["metric"])

    # the plugin's source is part of the job key and of the provenance: an edit recomputes
    from rfbench.compute.results import load_provenance
    from rfbench.compute.runner.cache import cache_dir

    first = load_provenance(out)
    assert f"{NAME}@iid" in first["estimators"]
    (plugin,) = [p for p in first["plugins"] if p["module"].startswith("rfbench_example_plugin")]
    assert len(plugin["source_sha256"]) == 64
    source = next(target.glob("rfbench_example_plugin/gerf_fixed.py"))
    source.write_text(source.read_text() + "\n# edited\n")
    done = subprocess.run(run, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    (edited,) = [p for p in load_provenance(out)["plugins"] if p["name"] == plugin["name"]]
    assert edited["source_sha256"] != plugin["source_sha256"]
    tags = [p for p in cache_dir(out).iterdir() if p.is_dir()]
    assert len(tags) == 2  # the edited plugin's jobs were computed again, under a new tag
