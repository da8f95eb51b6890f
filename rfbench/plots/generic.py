"""A figure for any result file, so every run ends in a picture.

The headline metric against the parameter that varies most along a curve, one line per estimator
and per other varying setting, with standard-error bars where the sample resolves the statistic —
the same choice the results site's interactive chart makes (:func:`rfbench.site.charts.chart_spec`).
Paper figures keep their own layouts (``rfbench figures``); this one serves any run, including a
user's own data and parameters. It is written beside the result file as ``<name>.png`` and
replaces only a PNG that rfbench drew.
"""

from __future__ import annotations

import html
from pathlib import Path

from rfbench.plots.style import apply

SOFTWARE = "rfbench"


class NotOurs(Exception):
    """The figure's path holds a file rfbench did not draw: it is left alone."""


def _check_ours(path: Path) -> None:
    if path.is_symlink():
        raise NotOurs(f"{path} is a symbolic link")
    if not path.exists():
        return
    from PIL import Image

    try:
        with Image.open(path) as img:
            software = img.info.get("Software", "")
    except Exception as exc:  # noqa: BLE001 - any unreadable file is not ours
        raise NotOurs(f"{path} exists and is not an image rfbench drew") from exc
    if software != SOFTWARE:
        raise NotOurs(f"{path} exists and was not drawn by rfbench")


def draw_result(path: str | Path) -> Path | None:
    """Draw ``<result>.png`` beside the result file ``path``; its path, or None when nothing
    varies (a single point: the summary table says it all).

    Raises :class:`NotOurs` if a file rfbench did not draw is in the way.
    """
    import matplotlib.pyplot as plt

    from rfbench.results import atomic_write, load_results
    from rfbench.site.charts import chart_spec

    path = Path(path)
    rows = load_results(path)
    spec = chart_spec(rows) if not rows.empty else None
    if spec is None:
        return None
    out = path.with_suffix(".png")
    _check_ours(out)
    apply()
    fig, ax = plt.subplots(figsize=(7.0, 4.2))
    for trace in spec["data"]:
        err = trace.get("error_y", {}).get("array")
        x = [float("nan") if v is None else v for v in trace["x"]]
        y = [float("nan") if v is None else v for v in trace["y"]]
        ax.errorbar(x, y, yerr=err, label=html.unescape(trace["name"]), marker="o", ms=3,
                    lw=1.2, capsize=2)  # fmt: skip
    layout = spec["layout"]
    ax.set_yscale(layout["yaxis"]["type"])
    if layout["yaxis"]["type"] == "log":
        _clip_round_off(ax, [v for t in spec["data"] for v in t["y"] if v is not None])
    ax.set_xlabel(layout["xaxis"]["title"]["text"])
    ax.set_ylabel(layout["yaxis"]["title"]["text"])
    ax.set_title(f"{path.stem}: {layout['title']['text']}", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False,
              ncol=1 + len(spec["data"]) // 25)  # fmt: skip
    fig.tight_layout()
    atomic_write(out, lambda tmp: fig.savefig(tmp, format="png", dpi=130,
                                              metadata={"Software": SOFTWARE}))  # fmt: skip
    plt.close(fig)
    return out


#: on a log axis, values below this fraction of the median are round-off of exact points (an
#: estimator exact at θ = 0, say): the axis stops above them and says so
ROUND_OFF_FRACTION = 1e-9


def _clip_round_off(ax, values: list[float]) -> None:
    """Keep a log axis on the informative range: values that are round-off (far below the
    median, e.g. 1e-16 where an estimator is exact) sit below it, with a note."""
    positive = sorted(v for v in values if v > 0)
    if not positive:
        return
    median = positive[len(positive) // 2]
    tiny = [v for v in positive if v < ROUND_OFF_FRACTION * median]
    if not tiny:
        return
    rest = [v for v in positive if v >= ROUND_OFF_FRACTION * median]
    ax.set_ylim(bottom=min(rest) / 3)
    ax.annotate(
        f"{len(tiny)} value(s) at round-off (≤ {max(tiny):.0e}, exact there) below the axis",
        xy=(0.01, 0.01), xycoords="axes fraction", fontsize=6, color="0.4",
    )  # fmt: skip
