"""The finding across models and masks: the report's table reads every number from the runs'
rows (medians with intervals, Holm shares, the verdict), and names the runs that are missing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from attention_runs import MAPS, run_rows

from rfbench.compute.skipped import record_skipped
from rfbench.present.attention_stats import (
    RUNS,
    beats_uniform_corrected,
    median_ci_text,
    relative_to_uniform,
)
from rfbench.present.report.beyond_models import MOST, models_part

ROOT = Path(__file__).resolve().parents[2]
L6, L6C, L3, L3C = RUNS


def frames(**changes: dict) -> dict[str, pd.DataFrame | None]:
    """The four runs (each run's keywords changed by ``changes[name]``; None: not run)."""
    kwargs = {L6: {"model": "big"}, L6C: {"model": "big", "causal": True},
              L3: {"model": "small", "layers": 1, "seed": 1},
              L3C: {"model": "small", "layers": 1, "causal": True, "seed": 2}}  # fmt: skip
    out: dict[str, pd.DataFrame | None] = {}
    for name, kw in kwargs.items():
        change = changes.get(name, {})
        out[name] = None if change is None else run_rows(**{**kw, **change})
    return out


def _row(text: str, model: str, mask: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"| {model} | {mask} |"))


def test_each_run_row_quotes_its_medians_intervals_and_holm_share() -> None:
    runs = frames()
    text = "\n".join(models_part(runs))
    for name, model, mask in ((L6, "big", "bidirectional"), (L3C, "small", "causal")):
        df = runs[name]
        at = df[(df["kind"] == "heads") & (df["budget"] == 256)]
        uniform = df[df["kind"] == "baselines"]
        medians = {m: at[at["estimator"] == m]["value"].median() for m in MAPS}
        best = min(medians, key=medians.get)
        rows = at[at["estimator"] == best]
        row = _row(text, model, mask)
        assert median_ci_text(uniform["value"].to_numpy()) in row
        assert f"`{best}` {median_ci_text(rows['value'].to_numpy())}" in row
        assert median_ci_text(relative_to_uniform(rows, uniform)) in row
        assert f"| {beats_uniform_corrected(rows).mean():.0%} (" in row
        window = at[at["estimator"] == "window"]
        assert median_ci_text(window["value"].to_numpy()) in row
        assert f"F = 256, {uniform.shape[0]} heads × 10" in row


def test_the_text_follows_the_rows_and_the_verdict_follows_the_holm_share() -> None:
    text = "\n".join(models_part(frames()))
    assert "It holds on 4 of the 4 runs" in text
    # the L3 causal run's maps now beat uniform by 0.3 (z ≈ 30) on every head
    moved = "\n".join(models_part(frames(**{L3C: {"gain": 0.3}})))
    assert moved != text
    row = _row(moved, "small", "causal")
    assert "| 100% (" in row and row.endswith("| does not hold |")
    assert 1.0 >= MOST and "It holds on 3 of the 4 runs" in moved
    assert _row(moved, "big", "bidirectional") == _row(text, "big", "bidirectional")


def test_the_best_map_is_chosen_among_the_maps_every_run_has() -> None:
    runs = frames()
    extra = runs[L6].query("estimator == 'positive@orf'").assign(estimator="trig@orf", value=0.01)
    runs[L6] = pd.concat([runs[L6], extra], ignore_index=True)
    text = "\n".join(models_part(runs))
    assert "trig@orf" not in text  # measured by one run only: never its best map
    runs = {name: runs[name] for name in (L6,)}
    assert "`trig@orf` 0.01" in "\n".join(models_part(runs))  # alone, it is in common


def test_missing_runs_are_named_with_their_command_and_any_skipped_model(tmp_path: Path) -> None:
    assert models_part(dict.fromkeys(RUNS)) == []
    record_skipped(tmp_path, [{"config": RUNS[L3], "name": L3, "dataset": "paraphrase-minilm-l3",
                               "fix": "pip install something"}])  # fmt: skip
    text = "\n".join(models_part(frames(**{L3: None, L3C: None}), tmp_path))
    assert "| small |" not in text and "on 2 of the 2 runs" in text
    assert f"`{L3}` (`rfbench run configs/beyond/attention-l3.toml`; skipped: " in text
    assert "get it with `pip install something`" in text
    assert f"`{L3C}` (`rfbench run configs/beyond/attention-l3-causal.toml`)" in text


def test_every_run_has_its_config_and_the_configs_load() -> None:
    from rfbench.compute.runner import resolve_file

    for name, config in RUNS.items():
        for profile in ("quick", "paper"):
            experiment, resolved = resolve_file(ROOT / config, profile)
            assert experiment.name == "attention" and resolved["name"] == name
        if name != L6:  # the new runs: 512 tokens, F = 64 and 256, the main maps and locals
            assert resolved["tokens"] == [512] and resolved["budget"] == [64, 256]
            assert set(MAPS) | {"window", "top-k"} <= set(resolved["estimators"])
            assert resolved["causal"] == name.endswith("-causal")
            assert (resolved["model"] == "paraphrase-minilm-l3") == ("-l3" in name)
            assert resolved["draws"] >= 10 and not resolved["swap"]
    assert np.isfinite(MOST)
