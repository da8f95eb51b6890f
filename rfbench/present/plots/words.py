"""Words for result columns in chart titles and axis labels (the raw name when none is known)."""

from __future__ import annotations

import math

METRICS = {
    "rel_rmse": "relative RMSE √MSE / K",
    "theory_rel_rmse": "relative RMSE √MSE / K (closed form)",
    "accuracy": "test accuracy",
    "log_rel_var": "log relative variance",
    "rel_frob": "relative Frobenius error ‖K̂ − K‖_F / ‖K‖_F",
    "frob_sq": "squared Frobenius error ‖K̂ − K‖²_F",
    "frob_sq_per_entry": "squared Frobenius error per entry",
    "mse": "MSE",
    "theory_mse": "MSE (closed form)",
    "rel_mae": "relative mean absolute error",
    "nonfinite_fraction": "fraction of non-finite estimates",
    "time_s": "wall time (s)",
    "rms_rel_frob": "RMS relative Frobenius error",
    "out_rel_frob": "relative output error ‖ΔO‖_F / ‖O‖_F",
    "dtype_to_mc": "error the dtype adds / Monte Carlo RMSE",
    "mse_ratio": "MSE ratio",
    "rf_conformity": "RF-conformity",
}
PARAMETERS = {
    "theta": "angle θ (rad)",
    "sigma": "bandwidth σ",
    "m_per_d": "m / d",
    "r": "norm r",
    "m": "projections m",
    "budget": "feature budget F",
    "projection_budget": "projection budget M",
    "n": "n",
    "d": "dimension d",
    "L": "sequence length L",
    "layer": "layer",
    "head": "head",
    "passes": "passes",
    "v": "v",
    "time_s": "wall time (s)",
    "estimator": "estimator",
}
#: settings written as a symbol and a value in titles ("r = 1.5"); others as "name value"
SYMBOLS = {"theta": "θ", "sigma": "σ", "r": "r", "m": "m", "n": "n", "d": "d", "L": "L",
           "m_per_d": "m/d", "budget": "F"}  # fmt: skip


def metric_words(metric: str) -> str:
    """``rel_rmse`` → ``relative RMSE √MSE / K``; an unknown metric is its own name."""
    return METRICS.get(metric, metric)


def short_metric(metric: str) -> str:
    """The metric's words before any formula: ``relative RMSE``."""
    words = metric_words(metric)
    cut = [i for i, ch in enumerate(words) if ch in "√‖(" and i > 0]
    return words[: cut[0]].strip() if cut else words


def parameter_words(column: str) -> str:
    return PARAMETERS.get(column, column)


def number(value: object) -> str:
    """A setting's value as a reader writes it: 1.5, 64, 0.353, π/4."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.3g}"
    return str(value)


def data_name(label: str) -> str:
    """A data set as a title names it: a user's file (``/home/me/qkv.npz@0123abcd``) by its file
    name (``qkv.npz``), never its folders; a registry set or model label as it is."""
    if "/" not in label and "\\" not in label:
        return label
    head, _, pin = label.rpartition("@")
    path = head if head and len(pin) == 16 and all(c in "0123456789abcdef" for c in pin) else label
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


def setting(column: str, value: object) -> str:
    """``r = 1.5``, ``kernel softmax``, ``data set wine``."""
    if column == "kernel":
        return f"{str(value).capitalize()} kernel"
    if column == "dataset":
        return data_name(str(value))
    if column == "theta" and isinstance(value, float) and math.isfinite(value):
        return f"θ = {value / math.pi:.3g}π"
    symbol = SYMBOLS.get(column)
    return f"{symbol} = {number(value)}" if symbol else f"{column} {number(value)}"
