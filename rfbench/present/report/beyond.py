"""The "Beyond the papers" section of REPORT.md: ``rfbench precision`` and ``rfbench cost``
(``configs/beyond/``), then the real-data parts (:mod:`rfbench.present.report.beyond_attention`); a
missing result file leaves its part out.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from rfbench.compute.text import family_of
from rfbench.present.report.beyond_attention import (
    ATTENTION,
    NYSTROM,
    at_top,
    learned_headline,
    real_data_section,
)
from rfbench.present.report.beyond_models import models_headline
from rfbench.present.report.markdown import link_target, load_named, table
from rfbench.present.statistics import projection_budget

PRECISION, COST = "beyond-precision", "beyond-cost"
DTYPES = ("float32", "float16", "bfloat16")
FORMS = ("naive", "stabilised", "logspace")


def _g(value: float, digits: int = 2) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:.{digits}g}" if abs(value) < 1e4 else f"{value:.1e}"


def first_nonfinite(df: pd.DataFrame) -> pd.DataFrame:
    """Component × (dtype, form): the smallest r with a non-finite kernel estimate (NaN: none)."""
    rows = df[(df["metric"] == "nonfinite_fraction") & (df["value"] > 0)]
    rows = rows.assign(component=rows["estimator"].map(family_of))
    return rows.pivot_table(index="component", columns=["dtype", "form"], values="r", aggfunc="min")


def _precision(df: pd.DataFrame) -> list[str]:
    comps = list(dict.fromkeys(df["estimator"].map(family_of)))
    r_max, m, d = df["r"].max(), int(projection_budget(df).max()), int(df["d"].max())
    first = first_nonfinite(df).reindex(index=comps)
    lines = [
        "### Numerical safety per dtype (`rfbench precision`)",
        "",
        f"Softmax kernel exp(xᵀy) with ‖x‖ = ‖y‖ = r ∈ [{df['r'].min():g}, {r_max:g}], M = {m}, "
        f"d = {d}; couplings {', '.join(sorted(df['weights'].dropna().unique()))}. Forms: *naive* "
        "exp(ωᵀx − ‖x‖²/2)-style maps in the dtype, *stabilised* (FAVOR+'s max shift and ε), "
        "*logspace* (rfbench's maps, cast to the dtype at the end).",
        "",
    ]
    cols = [c for c in first.columns if first[c].notna().any()]
    if len(cols) == 1:  # one failing (dtype, form): a sentence, not a one-column table
        listed = ", ".join(f"{c} {_g(first.loc[c, cols[0]])}" for c in comps)
        lines += [
            f"Smallest r with a non-finite kernel estimate in {cols[0][0]} {cols[0][1]}, the only "
            f"form with one (any angle, any coupling; — = none): {listed}.",
            "",
        ]
    elif cols:
        lines += [
            "Smallest r with a non-finite kernel estimate (any angle, any coupling; — = none):",
            "",
        ]
        header = ["component", *[f"{dt} {form}" for dt, form in cols]]
        body = [[c, *[_g(first.loc[c, col]) for col in cols]] for c in comps]
        lines += table(header, body)
    safe = [
        f"{dt} {form}" for dt in ("float64", *DTYPES) for form in FORMS
        if (dt, form) not in cols and ((df["dtype"] == dt) & (df["form"] == form)).any()
    ]  # fmt: skip
    lines += [f"No non-finite kernel estimate at any r ≤ {r_max:g}: {', '.join(safe)}.", ""]
    attn = df[df["metric"] == "attn_nonfinite_fraction"]
    bad = attn[attn["value"] > 0].groupby(["dtype", "form"])["r"].min()
    if len(bad):
        text = "; ".join(f"{dt} {form} from r = {r:g}" for (dt, form), r in bad.items())
        lines += [f"Attention rows D̂⁻¹Â with a non-finite weight: {text}.", ""]
    lines += _error_split(df, comps, r_max)
    tv = df[(df["metric"] == "attn_tv") & (df["r"] == r_max)]
    top = tv.groupby(tv["estimator"].map(family_of))["value"].agg(["min", "max"])
    if len(top):
        text = ", ".join(f"{c} {_g(row['min'])}–{_g(row['max'])}" for c, row in top.iterrows())
        lines += [
            f"Attention-row total variation ½Σ|P̂ − P| against softmax at r = {r_max:g}, range "
            f"over dtypes and forms (finite rows; above 1 where estimated weights are negative, "
            f"as trig's can be): {text}.",
            "",
        ]
    return lines


def _error_split(df: pd.DataFrame, comps: list[str], r_max: float) -> list[str]:
    """The error of a (dtype, form) against the float64 log-space estimate, split into the
    form's part (float64 in that form) and the dtype's part (the dtype against float64, both in
    that form), at the largest r; medians over angles and couplings."""
    at = df[df["r"] == r_max]
    at = at.assign(component=at["estimator"].map(family_of))
    keys = ["metric", "component", "dtype", "form"]
    med = at.groupby(keys)["value"].median()
    nonfinite = at[at["metric"] == "nonfinite_fraction"].groupby(keys[1:])["value"].mean()

    def cell(metric: str, c: str, dt: str, form: str) -> str:
        """The median error, or where estimates are not finite their share: beside the median
        when some are, instead of it when most are (a median of the few finite ones says
        nothing of the form)."""
        value = _g(med.get((metric, c, dt, form), float("nan")))
        bad = float(nonfinite.get((c, dt, form), 0.0))
        if bad >= 0.5:
            return f"— ({bad:.1%} not finite)"
        return f"{value} ({bad:.1%} not finite)" if bad > 0 else value

    dts = [dt for dt in DTYPES if (at["dtype"] == dt).any()]
    header = ["component", "form", "form's part (float64)", *[f"{dt}'s part" for dt in dts]]
    body = [
        [c, form, cell("dtype_to_mc", c, "float64", form),
         *[cell("dtype_to_mc_same_form", c, dt, form) for dt in dts]]
        for c in comps for form in FORMS if form != "logspace"
    ]  # fmt: skip
    if "dtype_to_mc_same_form" not in set(at["metric"]):
        return []
    return [
        f"Error of each form at r = {r_max:g} in units of the Monte Carlo RMSE of the float64 "
        "log-space estimate (median over angles and couplings; < 1: it costs less than "
        "sampling), split into the form's part (the form in float64 against log-space) and the "
        "dtype's part (the dtype against float64, both in that form; log-space's own rows are its "
        "dtype's part alone, below); where estimates are not finite, their share (mean over "
        "angles and couplings) stands beside the median, or instead of it where most are:",
        "",
        *table(header, body),
        "Log-space (rfbench's maps) in "
        + ", ".join(
            f"{dt}: "
            + ", ".join(f"{c} {cell('dtype_to_mc_same_form', c, dt, 'logspace')}" for c in comps)
            for dt in dts
        )  # fmt: skip
        + ".",
        "",
    ]


def get(table: pd.DataFrame, row: str, col: object) -> float:
    """``table.loc[row, col]`` or NaN."""
    ok = row in table.index and col in table.columns
    return float(table.loc[row, col]) if ok else float("nan")


def _by_estimator(rows: pd.DataFrame, columns: str) -> pd.DataFrame:
    """Estimator × ``columns``: the rows' values."""
    return rows.pivot_table(index="estimator", columns=columns, values="value")


def _cost(df: pd.DataFrame) -> list[str]:
    front = df[df["part"] == "frontier"]
    front = front.assign(M=projection_budget(front))
    m_top = front["M"].max()
    top = front[front["M"] == m_top]
    total = _by_estimator(top[top["step"] == "total"], "metric")
    err = _by_estimator(top[top["metric"].isin(["theory_rms_rel_frob", "rms_rel_frob"])], "metric")
    cross = df[df["part"] == "crossover"]
    L = _by_estimator(cross[cross["metric"] == "crossover_L"], "d")
    need = _by_estimator(cross[cross["metric"] == "m_needed"], "d")
    ds = sorted(L.columns)
    d_ref = 64 if 64 in ds else ds[len(ds) // 2]
    target = cross["target"].dropna()
    eps = f"{target.iloc[0]:g}" if len(target) else "?"
    n, d = int(front["points"].max()), int(front["d"].max())
    lines = [
        "### Cost: error against time and FLOPs (`rfbench cost`)",
        "",
        f"A {n}×{n} softmax Gram matrix in d = {d} with ‖x‖ = {front['r'].max():g}, M = {m_top:g} "
        "projections; time is the sum of each step's minimum over the repeats on the machine "
        "that ran it (a measurement, not a reproducible number), FLOPs follow the model stated in "
        "`rfbench/compute/experiments/cost/model.py`. Crossover: the sequence length L* above "
        "which "
        f"random-feature attention with the M needed for an RMS relative error of {eps} costs "
        "fewer FLOPs than exact softmax attention (MSE ∝ 1/M).",
        "",
    ]
    header = ["estimator", "error (closed form)", "error (empirical)", "time [ms]", "MFLOP",
              f"M for {eps} (d={d_ref})", f"L* (d={d_ref})",
              f"L* (d={ds[0]}…{ds[-1]})"]  # fmt: skip
    refused = _not_extrapolated(front, need)
    body = []
    for est in L.index.union(total.index):
        lo, hi = (L.loc[est].min(), L.loc[est].max()) if est in L.index else (math.nan,) * 2
        cross_cells = [_g(get(need, est, d_ref), 3), _g(get(L, est, d_ref), 3),
                       f"{_g(lo, 3)}–{_g(hi, 3)}"]  # fmt: skip
        if est in refused:
            cross_cells = ["— †"] * 3
        body.append([
            f"`{est}`", _g(get(err, est, "theory_rms_rel_frob")), _g(get(err, est, "rms_rel_frob")),
            _g(1e3 * get(total, est, "time_s")), _g(get(total, est, "flops") / 1e6), *cross_cells,
        ])  # fmt: skip
    lines += table(header, body)
    if refused:
        why = "; ".join(f"`{e}` {t}" for e, t in refused.items())
        lines += [f"† No crossover extrapolated: {why}.", ""]
    L = L.drop(index=[e for e in refused if e in L.index])
    if d_ref in L.columns and len(L):
        best = L[d_ref].idxmin()
        folk = 18 * d_ref * math.log(d_ref)
        lines += [
            f"At d = {d_ref}, the smallest crossover is `{best}` (L* ≈ {L.loc[best, d_ref]:.0f}); "
            f"the folk rule L > 18·d·ln d gives {folk:.0f}.",
            "",
        ]
    return lines


def attention_headline(results_dir: Path) -> str:
    """The Findings' bullet on real attention: the feature maps' median output error against uniform
    attention's, then the learned maps' and the models-and-masks clauses.
    """
    df = load_named(results_dir, ATTENTION)
    found = at_top(df) if df is not None and "kind" in df.columns else None
    if found is None:
        return ""
    at, uniform_rows, tokens, top, budget = found
    med = at[at["metric"] == "out_rel_frob"].groupby("estimator")["value"].median()
    uniform = uniform_rows.median()
    positive = [e for e in med.index if family_of(e) in ("positive", "hyperbolic", "gerf")]
    trig = [e for e in med.index if family_of(e) == "trig"]
    if not positive or not math.isfinite(uniform):
        return ""
    lo, hi = med[positive].min(), med[positive].max()
    text = (
        f"Real attention (all-MiniLM-L6-v2, all heads, {tokens} tokens, "
        f"{'F' if budget == 'budget' else 'm'} = {top}): the positive, hyperbolic and GERF "
        f"maps' median output error over heads is {_g(lo, 3)}–{_g(hi, 3)}, about that of "
        f"uniform attention ({_g(uniform, 3)})"
    )
    if trig:
        text += f"; trig's is {_g(med[trig].min(), 3)}–{_g(med[trig].max(), 3)}× a zero output's"
    text += " (the attention section has the per-head tests)"
    return text + learned_headline(results_dir) + models_headline(results_dir) + "."


def stabilised_headline(results_dir: Path) -> str:
    """One sentence for the Findings: a form whose error is already beyond the Monte Carlo error
    in float64 (the form's own part, not the dtype's) is unusable in any dtype."""
    df = load_named(results_dir, PRECISION)
    if df is None or df.empty:
        return ""
    at = df[
        (df["r"] == df["r"].max()) & (df["metric"] == "dtype_to_mc") & (df["dtype"] == "float64")
    ]
    med = at.groupby([at["estimator"].map(family_of), "form"])["value"].median()
    bad = med[med > 1]
    if bad.empty:
        return ""
    parts = ", ".join(f"{c} {form} ({_g(v)}×)" for (c, form), v in bad.items())
    return (
        f"Unusable maps: {parts} — their error at r = {df['r'].max():g} is already that many "
        "Monte Carlo RMSEs in float64, before any reduced precision (the precision section "
        "splits the form's part from the dtype's)."
    )


#: The slowest decrease of the error with M (a log-log slope) from which the 1/√M rule may be
#: extrapolated: half the Monte Carlo rate −½.
MIN_SLOPE = -0.25


def _not_extrapolated(front: pd.DataFrame, need: pd.DataFrame) -> dict[str, str]:
    """Estimator → why its crossover is not extrapolated by MSE ∝ 1/M: its error falls slower than
    :data:`MIN_SLOPE` (log-log, smallest to largest M), or it needs an M beyond the measured ones
    without a closed form of its MSE.
    """
    rows = front[front["metric"] == "rms_rel_frob"]
    err = _by_estimator(rows, "M")
    exact = set(front.loc[front["metric"] == "theory_rms_rel_frob", "estimator"])
    out = {}
    for est, curve in err.iterrows():
        curve = curve.dropna()
        if len(curve) < 2:
            continue
        lo, hi = curve.index.min(), curve.index.max()
        slope = math.log(curve[hi] / curve[lo]) / math.log(hi / lo)
        if not slope <= MIN_SLOPE:
            errs = ", ".join(f"{_g(v)}" for v in curve.to_numpy())
            out[str(est)] = (
                f"its error does not decrease with M ({errs} at M = "
                f"{', '.join(f'{m:g}' for m in curve.index)}; log-log slope {slope:.2f}, the 1/√M "
                f"rule needs −0.5)"
            )
            continue
        beyond = str(est) in need.index and (need.loc[str(est)] > hi).any()
        if beyond and est not in exact:
            out[str(est)] = (
                "no closed form of its MSE (not known to fall as 1/M), and the M it would need "
                f"at some d exceeds the largest measured ({hi:g})"
            )
    return out


def beyond_section(results_dir: Path, out_dir: Path, fig_dir: Path) -> list[str]:
    """Markdown lines of the section, or [] when none of its result files exists."""
    own = []  # precision and cost
    for name, part in ((PRECISION, _precision), (COST, _cost)):
        df = load_named(results_dir, name)
        own += part(df) if df is not None and not df.empty else []
    real = real_data_section(results_dir)
    if not own and not real:
        return []
    figs = sorted(fig_dir.glob("beyond-*.png")) if fig_dir.is_dir() else []
    links = " · ".join(f"[{p.stem}]({link_target(p, out_dir)})" for p in figs)
    intro = "Results of this repository's own experiments (`configs/beyond/`), not paper claims."
    lines = ["## Beyond the papers", "", intro + (f" Figures: {links}" if links else ""), ""]
    return lines + own + real + _landmarks(results_dir)


def _landmarks(results_dir: Path) -> list[str]:
    """Where the Nyström rows' landmarks come from (the rows carry no fit of their own to say
    it): the very points they are scored on."""
    frames = [load_named(results_dir, name) for name in (NYSTROM, ATTENTION)]
    names = [str(e) for df in frames if df is not None for e in df["estimator"].dropna().unique()]
    found = [e for e in names if family_of(e).startswith("nystrom")]
    if not found:
        return []
    shown = ", ".join(f"`{e}`" for e in dict.fromkeys(found))
    return [
        f"*Landmark provenance*: Nyström ({shown}) takes its landmarks from the very points it "
        "is scored on (the Gram rows; in attention from the fitting text's queries and keys "
        "instead, not the measured ones), uniformly without replacement per draw (k-means "
        "centres for `nystrom-kmeans`; rfbench/compute/features/nystrom.py): an in-sample fit, "
        "whereas random features are drawn without seeing the data.",
        "",
    ]
