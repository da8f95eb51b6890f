"""Paired comparisons (``--paired``): estimators of one job share their base randomness.

Each chunk of draws starts from one Gaussian array G of shape (draws, B·d, d) (B blocks of d rows):
- ``iid`` takes the first m rows of G;
- ``orf`` and ``simrf`` take, per d×d block G_b = L·Q (the LQ decomposition: Q from the QR of G_bᵀ
  with the signs fixed so that diag L > 0), rows ‖g_i‖·e_iᵀQ (ORF) and ‖g_i‖·s_iᵀQ (SimRF, s_i the
  simplex directions of SimRF Eq. 9), first m rows of the stacked blocks;
- every component (trig, positive, hyperbolic, …) with the same coupling and m uses the same rows.

**When pairing is exact.** By the Bartlett decomposition Q is Haar distributed and independent of
L, and the row norms ‖g_i‖ = ‖L_i‖ are i.i.d. χ_d and functions of L only; so (‖g_i‖)_i and Q are
independent, and each coupling above has exactly its own law (iid rows; ORF = D R and SimRF = D S R
with D χ_d, R Haar: SimRF Eq. 8). Every estimator's marginal law is therefore unchanged; only the
joint law across estimators changes, and each estimator's own metrics have their unpaired meaning.
Estimators this construction does not cover (hybrids, GERF/DERF, other couplings) are drawn
independently from the same generator: their differences are still correctly estimated, with the
independent-pairs standard error. The standard error of a difference of sample MSEs is the sample
standard deviation of the per-draw differences (K̂_a - K)² - (K̂_ref - K)² over √N, exact for any
joint law of the pairs (paired or independent).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from rfbench.compute.experiments.chunks import chunks
from rfbench.compute.experiments.shared import row
from rfbench.compute.features.base import Draw, Estimator, Projections
from rfbench.compute.features.weights.blocks import n_blocks
from rfbench.compute.stats import standard_error

DIFF_MSE = "diff_mse"
REFERENCE = "reference"
#: a small shared Gaussian array: a coupling that builds draws from it can be paired
_PROBE = np.random.default_rng(0).standard_normal((1, 4, 4))


def pairable(est: Estimator) -> bool:
    """An estimator drawn from one coupling's rows (``Estimator.pairing_weights``) whose coupling
    builds them from a shared Gaussian array
    (:meth:`~rfbench.compute.features.base.WeightsSampler.from_gaussian`)."""
    weights = est.pairing_weights
    return weights is not None and weights.from_gaussian(_PROBE, 1) is not None


def paired_estimates(
    ests: Sequence[Estimator],
    x: np.ndarray,
    y: np.ndarray,
    samples: int,
    rng: np.random.Generator,
) -> dict[int, tuple[np.ndarray, Draw]]:
    """{index: (estimates (samples, A), the last draw)} of the pairable estimators, from one
    shared G per chunk (all angles use each draw)."""
    chosen = [i for i, est in enumerate(ests) if pairable(est)]
    if not chosen:
        return {}
    d = x.shape[-1]
    rows = max(n_blocks(ests[i].m, d) for i in chosen) * d
    k = 2 if d > 2 else d  # inputs live in span(e1, e2); the rows are computed in full
    out = {i: np.empty((samples, len(y))) for i in chosen}
    last: dict[int, Draw] = {}
    for start, stop in chunks(samples, 8 * rows * d):  # the shared Gaussian array G
        size = stop - start
        G = rng.standard_normal((size, rows, d))
        built: dict[tuple[str, int], Projections] = {}
        for i in chosen:
            est, weights = ests[i], ests[i].pairing_weights
            key = (weights.name, repr(sorted(vars(weights).items())), est.m)
            if key not in built:
                W = weights.from_gaussian(G, est.m)
                built[key] = Projections(W[..., :k].copy(), np.sum(W**2, axis=-1), d)
            last[i] = est.draw_from(built[key])
            out[i][start : start + size] = est.estimate(last[i], x[:1, :k], y[:, :k])[:, 0, :]
    return {i: (out[i], last[i]) for i in chosen}


#: The keys of one curve inside a paired job's ``points``.
POINT = ("estimator", "m", "n", "variant", "sigma")


def curve_specs(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The per-curve specs of a paired job (its shared keys plus each point)."""
    shared = {k: v for k, v in spec.items() if k not in ("points", "reference")}
    return [{**shared, **dict(zip(POINT, point, strict=True))} for point in spec["points"]]


def diff_rows(
    bases: Sequence[Mapping[str, Any]],
    values: Sequence[np.ndarray],
    flags: Sequence[Sequence[bool | None]],
    true: np.ndarray,
    thetas: np.ndarray,
    reference: str,
) -> list[dict[str, Any]]:
    """``diff_mse`` rows of every curve against the reference curve, paired per draw; resolved
    when both MSEs are (``flags``: the per-angle ``resolved`` of each curve's ``mse`` rows)."""
    name = str(reference).split(":")[0]  # the first curve of the reference entry's estimator
    ref = next((i for i, b in enumerate(bases) if b["estimator"] == name), 0)
    rows = []
    for j, base in enumerate(bases):
        if j == ref:
            continue
        delta = (values[j] - true) ** 2 - (values[ref] - true) ** 2  # per paired draw
        mean, se = delta.mean(axis=0), standard_error(delta, axis=0)
        for i, theta in enumerate(thetas):
            point = {**base, "theta": float(theta), REFERENCE: reference}
            ok = _both(flags[j][i], flags[ref][i])
            rows.append(row(DIFF_MSE, mean[i], float(se[i]), len(values[j]), **point, resolved=ok))
    return rows


def _both(a: bool | None, b: bool | None) -> bool | None:
    """Resolved when both are; None (not assessed) when either is and neither is False."""
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def unpaired_diffs(rows: pd.DataFrame, reference: str) -> pd.DataFrame:
    """``diff_mse`` of independently drawn curves vs the reference curve at the same r and θ:
    difference of the ``mse`` rows, standard error √(se² + se_ref²)."""
    mse = rows[rows["metric"] == "mse"]
    if mse.empty:
        return mse
    name = str(reference).split(":")[0]
    curve = [c for c in ("estimator", "m", "n", "variant", "sigma", "weights") if c in mse]
    parts = []
    for _, at_r in mse.groupby("r", sort=False):
        keys = [repr(tuple(v)) for v in at_r[curve].astype(object).to_numpy()]
        keyed = pd.Series(keys, index=at_r.index)
        refs = keyed[at_r["estimator"] == name]
        if refs.empty:
            continue
        ref = at_r[keyed == refs.iloc[0]].set_index("theta")
        others = at_r[keyed != refs.iloc[0]]
        matched = ref.reindex(others["theta"].to_numpy())
        flags = [
            _both(_flag(a), _flag(b))
            for a, b in zip(
                others.get("resolved", [None] * len(others)),
                matched.get("resolved", [None] * len(others)),
                strict=True,
            )
        ]
        parts.append(
            others.assign(
                metric=DIFF_MSE,
                value=others["value"].to_numpy() - matched["value"].to_numpy(),
                stderr=np.hypot(others["stderr"].to_numpy(), matched["stderr"].to_numpy()),
                resolved=flags,
                **{REFERENCE: reference},
            )
        )
    return pd.concat(parts, ignore_index=True) if parts else mse.iloc[:0]


def _flag(value: Any) -> bool | None:
    return None if value is None or value is pd.NA or value != value else bool(value)
