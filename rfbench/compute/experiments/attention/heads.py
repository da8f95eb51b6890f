"""The rows of one ``heads`` or ``baselines`` job of the attention experiment
(docs/experiments.md#attention).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from rfbench.compute import sequential
from rfbench.compute.experiments import JobSpec
from rfbench.compute.experiments.attention import budget, heldout
from rfbench.compute.experiments.attention import metrics as am
from rfbench.compute.experiments.attention.local import (
    LocalMethod,
    hybrid_estimate,
    is_local,
    masked_softmax_estimate,
    top_k_mask,
    window_mask,
)
from rfbench.compute.experiments.chunks import chunks
from rfbench.compute.features import registry
from rfbench.compute.seeding import substream
from rfbench.compute.stats import mean_se, standard_error

FAILURES = (ValueError, ArithmeticError, NotImplementedError)


_PER_DRAW = ("out_rel_frob", "out_rel_spec", "attn_rel_frob", "attn_kl", "kl_rows",
             "bad_normaliser")  # fmt: skip


def _coupling(name: str) -> str:
    return registry.describe(name).coupling


def _mean_se(values: np.ndarray) -> tuple[float, float | None, int, str | None]:
    """Mean, standard error (or None) and count of the finite values of (draws,) ``values``; a
    note (or None) when some are not."""
    ok = np.isfinite(values)
    v = values[ok]
    note = None if ok.all() else f"{int((~ok).sum())} of {values.size} draws not finite"
    if v.size == 0:  # nan: undefined in every draw (attn_kl); inf: diverged in every draw
        return float("nan" if np.isnan(values).all() else "inf"), None, 0, note
    mean, se = mean_se(v)
    return mean, se, int(v.size), note


def baseline_rows(
    base: dict[str, Any],
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    budgets: list[int],
    measured: np.ndarray,
    forms: Any = am,
) -> list[dict[str, Any]]:
    """Uniform, zero and best-rank baselines of one head plus its statistics; matrix metrics on
    the ``measured`` query rows (those of every estimator's), outputs on all rows. ``forms``: as
    :func:`head_rows` (causal: the running mean, the masked-rank bound and the masked oracle)."""
    truth = forms.HeadTruth.of(q, k, v)
    t = len(q)
    rows = []

    def row(estimator: str, metric: str, value: float, **extra: Any) -> None:
        rows.append({**base, "estimator": estimator, "metric": metric, "value": float(value),
                     "stderr": None, "n_trials": 0, **extra})  # fmt: skip

    errs = forms.output_errors(truth, forms.uniform_output(v, t)[None])
    for metric, value in errs.items():
        row("uniform", metric, value[0])
    for metric, value in forms.uniform_matrix_metrics(truth, measured).items():
        row("uniform", metric, value)
    row("zero", "out_rel_frob", 1.0)
    row("zero", "out_rel_spec", 1.0)
    ranks = sorted(set(budgets))
    for r, value in forms.rank_bound(truth.A, measured, ranks).items():
        row("best-rank", "attn_rel_frob", value, rank=r, budget=r, features=r, bound=True,
            note=forms.BOUND_NOTE)  # fmt: skip
    for r, A_r in am.best_rank(truth.A, ranks).items():
        out = forms.output_errors(truth, (forms.rank_oracle(A_r) @ v)[None])
        for metric, value in out.items():
            row("best-rank", metric, value[0], rank=r, budget=r, features=r, bound=False,
                note=forms.ORACLE_NOTE)  # fmt: skip
    for metric, value in forms.head_statistics(q, k, truth).items():
        row("exact", metric, value)
    return rows


def _draw_bytes(r: int, s: int, t: int, features: int, local: bool) -> int:
    dense = 6 * t * s if local else 0  # window+map: a few (T, S) matrices per draw
    return 8 * (8 * r * s + 3 * (t + s) * features + dense)


@dataclass
class _Measured:
    """One method's per-draw metrics on every head of a job and what its rows print."""

    heads: list[dict[str, np.ndarray]]
    columns: dict[str, Any]
    projections: np.ndarray | None = None  # the first draw's ω (to pair estimators)
    note: str | None = None
    #: stop = resolved: per head, why its draws stopped and the reading of uniform − error
    stops: list[tuple[str, sequential.Interval]] | None = None


def _visible(spec: JobSpec, t: int, s: int) -> np.ndarray | None:
    """The keys each query may see: the causal mask under ``--causal``, else None (all)."""
    return np.tril(np.ones((t, s), bool)) if spec.get("causal") else None


def _local_only(
    local: LocalMethod, spec: JobSpec, q: np.ndarray, k: np.ndarray, v: np.ndarray,
    truths: list[am.HeadTruth], measured: np.ndarray, forms: Any,
) -> _Measured:  # fmt: skip
    """``window`` or ``top-k`` on every head (deterministic: one evaluation, repeated); under
    ``--causal`` over the keys each query sees (the window: the w most recent)."""
    t, s = q.shape[1], k.shape[1]
    keys = min(local.keys(spec["budget"], spec["window"]), s)
    visible = _visible(spec, t, s)
    heads = []
    for h, truth in enumerate(truths):
        if local.kind == "window":
            mask = window_mask(t, s, keys, visible is not None, spec.get("sinks", 0))
        else:
            mask = top_k_mask(q[h] @ k[h].T, keys, visible)
        estimate = masked_softmax_estimate(q[h], k[h], v[h], mask, measured)
        metrics = forms.draw_metrics(truth, estimate)
        heads.append({key: np.repeat(val, spec["draws"]) for key, val in metrics.items()})
    column = "window" if local.kind == "window" else "top_k"
    sinks = {"sinks": spec["sinks"]} if local.kind == "window" and spec.get("sinks") else {}
    oracle = "oracle: chooses its keys from every logit (the cost of exact attention)"
    notes = [_covers(local, spec, s), oracle if local.oracle else None]
    note = "; ".join(n for n in notes if n) or None
    return _Measured(heads, {"features": keys, column: keys, **sinks}, note=note)


def _covers(local: LocalMethod | None, spec: JobSpec, s: int) -> str | None:
    """A note when the budget's keys cover the whole sequence (the method is exact there)."""
    if local is None or local.keys(spec["budget"], spec["window"]) < s:
        return None
    return f"{local.keys(spec['budget'], spec['window'])} keys cover all {s}: exact attention"


def _feature_map(
    name: str, local: LocalMethod | None, spec: JobSpec, rng: np.random.Generator, q: np.ndarray,
    k: np.ndarray, v: np.ndarray, truths: list[am.HeadTruth], measured: np.ndarray, forms: Any,
    fitter: heldout.Fitter, uniform: list[float],
) -> _Measured:  # fmt: skip
    """A registry estimator, or a window+map hybrid, at the job's feature budget (``forms``: the
    per-draw forms, bidirectional or causal; ``fitter``: fits on the fitting heads; ``uniform``:
    each head's uniform-attention error, the comparison of ``stop = "resolved"``)."""
    features, draws = spec["budget"], spec["draws"]
    t, s = q.shape[1], k.shape[1]
    map_name = local.feature_map if local is not None else name
    keys = min(local.keys(features, spec["window"]), s) if local is not None else 0
    est = budget.estimator(map_name, features - keys)
    # one stream per coupling, keyed on it (not on the job's other methods): every estimator of
    # a coupling draws the same ω, and adding a method leaves the others' draws bit-identical
    key = name if local is not None else _coupling(name)
    gen = substream(rng, {"coupling": key})
    visible = _visible(spec, t, s)
    mask = (
        window_mask(t, s, keys, visible is not None, spec.get("sinks", 0))
        if local is not None
        else None
    )
    out = _Measured([], {"m": est.m})

    def metrics_of(draw, h: int) -> dict[str, np.ndarray]:
        if mask is None:
            estimate = forms.estimate_head(est, draw, q[h], k[h], v[h], measured)
        else:
            estimate = hybrid_estimate(est, draw, q[h], k[h], v[h], mask, measured, visible)
        return forms.draw_metrics(truths[h], estimate)

    if spec.get("stop") == "resolved" and not est.deterministic:
        out.stops = []
        positive = _positive(est)
        for h, truth in enumerate(truths):

            def batch(i: int, size: int, h: int = h) -> dict[str, np.ndarray]:
                draw = fitter.sample(
                    est, substream(gen, ("head", h, "batch", i)), h, size, label=name
                )
                if h == 0 and i == 0:
                    out.projections = next(iter(draw.projections.values())).W
                    out.columns["features"] = keys + est.feature_width(draw, q[h])
                return metrics_of(draw, h)

            bound = output_bound(truth) if positive else None
            family = len(truths) * spec.get("family_layers", 1)
            per_head, reason, reading = _until_resolved(batch, spec, uniform[h], bound, family)
            out.heads.append(per_head)
            out.stops.append((reason, reading))
        if local is not None:
            out.columns["window"] = keys
        out.note = _covers(local, spec, s)
        return out
    for h in range(len(truths)):
        parts: dict[str, list[np.ndarray]] = {key: [] for key in _PER_DRAW}
        per_draw = _draw_bytes(len(measured), s, t, 4 * max(features, 1), mask is not None)
        # a deterministic map (taylor2) has the same metrics in every draw: one, repeated
        spans = [(0, 1)] if est.deterministic else chunks(draws, per_draw, share=0.0)
        for start, stop in spans:
            draw = fitter.sample(est, gen, h, stop - start, label=name)
            if h == 0 and start == 0:
                out.projections = next(iter(draw.projections.values())).W
                out.columns["features"] = keys + est.feature_width(draw, q[h])
            for key, value in metrics_of(draw, h).items():
                parts[key].append(value)
        per_head = {key: np.concatenate(val) for key, val in parts.items()}
        if est.deterministic:
            per_head = {key: np.repeat(val, draws) for key, val in per_head.items()}
        out.heads.append(per_head)
    if local is not None:
        out.columns["window"] = keys
        if spec.get("sinks"):
            out.columns["sinks"] = spec["sinks"]
    out.note = _covers(local, spec, s)
    return out


def head_rows(
    spec: JobSpec,
    base: dict[str, Any],
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    rng: np.random.Generator,
    fitter: heldout.Fitter,
    forms: Any = am,
) -> list[dict[str, Any]]:
    """Every method on every head of one layer at one feature budget (module docstring);
    ``forms`` holds the per-draw forms: rfbench.compute.experiments.attention.metrics, or their
    causal forms (causal.FORMS)."""
    truths = [forms.HeadTruth.of(q[h], k[h], v[h]) for h in range(q.shape[0])]
    measured = forms.matrix_rows(q.shape[1], spec["matrix_rows"])
    uniform = [
        forms.output_errors(tr, forms.uniform_output(v[h], q.shape[1])[None])["out_rel_frob"][0]
        for h, tr in enumerate(truths)
    ]
    results: dict[str, _Measured] = {}
    failures: dict[str, str] = {}
    for name in spec["estimators"]:
        local = LocalMethod.parse(name)
        try:
            if local is not None and local.feature_map is None:
                results[name] = _local_only(local, spec, q, k, v, truths, measured, forms)
            else:
                results[name] = _feature_map(
                    name, local, spec, rng, q, k, v, truths, measured, forms, fitter, uniform
                )
        except FAILURES as exc:
            failures[name] = f"{type(exc).__name__}: {exc}"
    rows: list[dict[str, Any]] = []
    common = {**base, "budget": spec["budget"]}
    for name, why in failures.items():
        rows.append({**common, "estimator": name, "metric": "skipped", "value": 1.0,
                     "stderr": None, "n_trials": 0, "note": why})  # fmt: skip
    references: dict[str, str] = {}
    for name in results:
        if not is_local(name):
            references.setdefault(_coupling(name), name)
    for name, res in results.items():
        ref = references.get(_coupling(name)) if not is_local(name) else None
        paired = (
            ref is not None
            and ref != name
            and np.array_equal(res.projections, results[ref].projections)
        )
        for h, metrics in enumerate(res.heads):
            row0 = {**common, "estimator": name, "head": h, **res.columns}
            for key, values in metrics.items():
                value, se, n, note = _mean_se(values)
                if np.isnan(value):
                    continue  # undefined in every draw (attn_kl; kl_rows = 0 says so)
                note = "; ".join(x for x in (res.note, note) if x) or None
                row = {**row0, "metric": key, "value": value, "stderr": se, "n_trials": n,
                       "note": note}  # fmt: skip
                if key == "out_rel_frob":
                    z = _z(uniform[h], values)
                    row.update(z_uniform=z, beats_uniform=bool(z > spec["significance"]))
                if res.stops is not None:
                    row.update(_stop_columns(key, uniform[h], *res.stops[h]))
                rows.append(row)
            if paired:
                mine, theirs = metrics["out_rel_frob"], results[ref].heads[h]["out_rel_frob"]
                n = min(len(mine), len(theirs))  # resolved: a common prefix of the same ω
                diff = mine[:n] - theirs[:n]
                value, se, n, note = _mean_se(diff)
                rows.append({**row0, "metric": "out_rel_frob_diff", "value": value, "stderr": se,
                             "n_trials": n, "note": note, "reference": ref})  # fmt: skip
    return rows + fitter.cost_rows(common, {n: r.columns for n, r in results.items()})


def _stop_columns(
    metric: str, uniform: float, reason: str, reading: sequential.Interval
) -> dict[str, Any]:
    """The sequential columns of a row drawn with ``stop = "resolved"``: every metric its stop
    reason; ``out_rel_frob`` also the anytime-valid intervals of its mean and of uniform − it,
    the p-value, and — resolved — the verdict the interval gives (at the cap: today's z test)."""
    if metric != "out_rel_frob":
        return {"stop": reason}
    out: dict[str, Any] = {"stop": reason, "versus": "uniform", "cs_low": uniform - reading.high,
                           "cs_high": uniform - reading.low, "diff_low": reading.low,
                           "diff_high": reading.high, "p_anytime": reading.p}  # fmt: skip
    if reason == sequential.RESOLVED:
        out["beats_uniform"] = bool(reading.low > 0)
    return out


def _z(uniform: float, values: np.ndarray) -> float:
    """(uniform − mean)/SE of per-draw errors; −inf if any draw is not finite, ±inf if SE = 0."""
    if not np.isfinite(values).all():
        return float("-inf")
    se = standard_error(values)
    diff = uniform - values.mean()
    if se == 0:
        return float(np.sign(diff) * np.inf) if diff else 0.0
    return float(diff / se)


def _positive(est: Any) -> bool:
    """Whether every weight of D̂⁻¹Â is ≥ 0 in every draw: a feature map whose component is
    positive (its features are; the estimator answers through its component). A window+map
    hybrid of such a map too (exact weights and the map's under one normaliser)."""
    component = getattr(est, "component", None)
    return component is not None and component.positive and not getattr(est, "bipolar", False)


def output_bound(truth: Any) -> float:
    """An upper bound on ``out_rel_frob`` of any estimate whose rows are convex combinations of
    the rows of V (nonnegative weights summing to one: a positive map), known before any draw.

    Row i of such an Ô lies in the convex hull of V's rows, and the distance to O_i is convex, so
    ‖Ô_i − O_i‖ ≤ max_j ‖v_j − O_i‖; hence ‖Ô − O‖_F ≤ (Σ_i max_j ‖v_j − O_i‖²)^½. Under a
    causal mask a row's hull is smaller, so the bound over every key still holds.

    Parameters
    ----------
    truth : HeadTruth
        ``out`` (T, d_v) and ``v`` (S, d_v).

    Returns
    -------
    float
        The bound divided by ‖O‖_F.
    """
    out, v = truth.out, truth.v
    sq = (out * out).sum(1)[:, None] - 2.0 * out @ v.T + (v * v).sum(1)[None, :]
    worst = np.maximum(sq.max(axis=1), 0.0)
    return float(np.sqrt(worst.sum()) / np.linalg.norm(out))


def _until_resolved(
    batch: Any, spec: JobSpec, uniform: float, bound: float | None, family: int = 1
) -> tuple[dict[str, np.ndarray], str, sequential.Interval]:
    """One head's draws in batches until its test against uniform attention is resolved.

    After every ``spec["batch"]`` draws, the anytime-valid sequence of the mean of
    ``uniform − out_rel_frob`` is read (intersected with the earlier looks; two-sided at
    ``2Φ(−significance)``, so a lower bound above zero is the one-sided test at
    ``Φ(−significance)``): the exact empirical-Bernstein sequence on ``[uniform − bound,
    uniform]`` for a positive map (:func:`output_bound`), else — or if a draw were outside the
    bound — the asymptotic one (docs/architecture.md#sequential-draws). It stops when the
    interval excludes zero (``resolved``) or at ``spec["draws"]`` (``cap``). A draw whose error
    is not finite decides the head (it does not beat uniform attention, as with
    ``stop = fixed``): resolved there. "Beats uniform" is resolved only at the level
    ``2Φ(−significance)/family`` (Bonferroni over the ``family`` heads of the report's Holm
    step-down, so a head stopped there survives it); "does not beat" at the per-head level.

    Returns
    -------
    (metrics, reason, reading)
        Every per-draw metric, (n,) each; ``resolved`` or ``cap``; the last reading.
    """
    cap, size = spec["draws"], spec["batch"]
    t_opt = max(cap / 5.0, 2.0)
    # two-sided at 2Φ(−significance): a lower bound above 0 is the one-sided test at Φ(−z)
    alpha = 2.0 * NormalDist().cdf(-spec["significance"])
    parts: dict[str, list[np.ndarray]] = {}
    reading: sequential.Interval | None = None
    strict: sequential.Interval | None = None  # at alpha / family: "beats" survives Holm
    n, i = 0, 0
    while True:
        step = min(size, cap - n)
        for key, value in batch(i, step).items():
            parts.setdefault(key, []).append(value)
        n, i = n + step, i + 1
        errors = np.concatenate(parts["out_rel_frob"])
        broken = not np.isfinite(errors).all()
        reading = _read(errors, uniform, bound, t_opt, alpha).meet(reading)
        strict = (
            _read(errors, uniform, bound, t_opt, alpha / family).meet(strict)
            if family > 1
            else reading
        )
        if broken or reading.high < 0 or strict.low > 0:
            reason = sequential.RESOLVED
            reading = strict if strict.low > 0 else reading
        elif n >= cap:
            reason = sequential.CAP
        else:
            continue
        return {k: np.concatenate(v) for k, v in parts.items()}, reason, reading


def _read(
    errors: np.ndarray, uniform: float, bound: float | None, t_opt: float, level: float
) -> sequential.Interval:
    """The reading of ``uniform − errors`` ((n,) per-draw errors) at ``level``: exact
    (empirical-Bernstein on ``[uniform − bound, uniform]``) when ``bound`` is given and holds for
    every draw, else asymptotic; ``−inf`` throughout if some error is not finite."""
    n = len(errors)
    if not np.isfinite(errors).all():
        return sequential.Interval(n, -math.inf, -math.inf, -math.inf, 0.0)
    x = uniform - errors
    if bound is not None and np.all(errors <= bound * (1 + 1e-9)):
        low = uniform - bound
        return sequential.bounded_interval(np.clip(x, low, uniform), low, uniform, level)
    return sequential.interval(x, t_opt, level)
