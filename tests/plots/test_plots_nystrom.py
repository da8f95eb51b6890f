"""beyond-nystrom: every estimator its own colour and marker (trig@iid and trig@pnc shared one),
and the legend lists what the panels draw: the closed form, and the bound only when drawn."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from rfbench.present.plots.nystrom import beyond_nystrom


def _rows(bound: bool) -> pd.DataFrame:
    rows = []
    for i, est in enumerate(("trig@iid", "trig@pnc", "trig@orf", "nystrom")):
        for m in (8, 16):
            base = {"kernel": "gaussian", "dataset": "wine", "d": 13, "n_points": 178, "m": m,
                    "estimator": est, "stderr": 1e-4, "features": m}  # fmt: skip
            rows.append({**base, "metric": "frob_sq_per_entry", "value": (i + 1) * 1e-3 / m})
            if est == "trig@iid":
                rows.append({**base, "metric": "theory_frob_sq_per_entry", "value": 2e-3 / m})
            if bound:
                rows.append({**base, "metric": "oracle_frob_sq_per_entry", "value": 1e-5 / m})
    return pd.DataFrame(rows)


def test_each_estimator_has_its_own_look_and_the_legend_lists_what_is_drawn() -> None:
    fig = beyond_nystrom({"beyond-nystrom": _rows(bound=True)})
    ax = fig.axes[0]
    looks = {
        bars.get_label(): (bars.lines[0].get_color(), bars.lines[0].get_marker())
        for bars in ax.containers if bars.get_label() in ("trig@iid", "trig@pnc", "trig@orf")
    }  # fmt: skip
    assert len(set(looks.values())) == 3
    labels = [t.get_text() for t in fig.axes[-1].get_legend().get_texts()]
    assert any(label.startswith("closed form") for label in labels)
    assert "best rank-m matrix (bound)" in labels
    plt.close(fig)
    fig = beyond_nystrom({"beyond-nystrom": _rows(bound=False)})
    labels = [t.get_text() for t in fig.axes[-1].get_legend().get_texts()]
    assert "best rank-m matrix (bound)" not in labels
    plt.close(fig)
