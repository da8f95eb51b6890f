"""Write the site: assets, the index, a page per figure and per result file, the verdicts (the
report's, one row per published number and per claim: :func:`verdict_rows`)."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from html import unescape
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from rfbench.compute.checks import UserError
from rfbench.present.outputs import copy_file
from rfbench.present.site import charts, html
from rfbench.present.site.html import esc

if TYPE_CHECKING:
    from rfbench.present.report import Report

PROVENANCE = (
    "created", "command_line", "git_commit", "seed", "rfbench_version", "python", "numpy",
    "scipy", "backend",
)  # fmt: skip
ASSETS = resources.files("rfbench.present.site").joinpath("assets")
#: the files of ``assets/`` copied from the package (beside plotly's own script)
ASSET_FILES = ("site.css", "filter.js")
SETTING_SKIP = {"experiment", "metric", "value", "stderr", "n_trials"}


def _write(path: Path, text: str) -> Path:
    from rfbench.present.outputs import write_text

    return write_text(path, text)


#: the longest page name made from a result file's name (a file system takes 255 bytes)
SLUG_LENGTH = 100


def _slug(path: Path) -> str:
    """``<experiment>-<name>`` of a result file, as the name of its page: kept when it is plain
    ASCII letters, digits and ``._+-`` and short, else those characters of it (others as ``_``,
    at most :data:`SLUG_LENGTH`) and a digest of the whole, so that a ``#``, ``?`` or ``%`` in a
    file name breaks no link and a long one no file system."""
    name = f"{path.parent.name}-{path.stem}"
    safe = re.sub(r"[^A-Za-z0-9._+-]", "_", name)
    if safe == name and len(name) <= SLUG_LENGTH:
        return name
    return f"{safe[:SLUG_LENGTH]}-{hashlib.sha256(name.encode()).hexdigest()[:10]}"


def wide_numbers(df: pd.DataFrame) -> pd.DataFrame:
    """One row per parameter point, one column per metric (the values)."""
    settings = [c for c in df.columns if c not in SETTING_SKIP and df[c].nunique(dropna=True) > 0]
    keyed = df.assign(**{c: df[c].astype(object).where(df[c].notna(), "") for c in settings})
    wide = keyed.pivot_table(
        index=settings, columns="metric", values="value", aggfunc="first", sort=False
    )
    return wide.reset_index().rename_axis(columns=None)


def result_section(path: Path, results: Path) -> str:
    """Chart, config, provenance and numbers of one result file."""
    from rfbench.compute.results import load_provenance, load_results

    df = load_results(path)
    prov = load_provenance(path)
    config = prov.get("config", {})
    facts = {k: prov.get(k) for k in PROVENANCE}
    spec = charts.chart_spec(df) if not df.empty else None
    chart = (
        charts.chart_html(spec, f"chart-{_slug(path)}")
        if spec
        else ('<p class="muted">No varying parameter to chart; see the numbers below.</p>')
    )
    rel = path.relative_to(results).as_posix()
    prov_rows = [(esc(k), f"<code>{esc(v)}</code>") for k, v in facts.items() if v is not None]
    return (
        f"<h2>{esc(rel)}</h2><p class='muted'>{len(df)} rows · experiment "
        f"<b>{esc(prov.get('experiment', ''))}</b></p>{chart}"
        f"<h3>Config</h3><pre>{esc(json.dumps(config, indent=2, default=str))}</pre>"
        f"<h3>Provenance</h3>{html.table(('field', 'value'), prov_rows)}"
        f"<h3>Numbers</h3>{html.frame_table(wide_numbers(df)) if not df.empty else ''}"
    )


def figure_page(spec, results: Path, out: Path) -> Path | None:
    """The page of one paper figure: picture, then each result file it reads."""
    from rfbench.compute.results import find_result

    png = results / "figures" / f"{spec.id}.png"
    found = [find_result(results, name) for name in spec.needs]
    if not png.is_file() and not any(found):
        return None
    body = f"<h1>{esc(spec.title)}</h1>"
    if png.is_file():
        copy_file(png, out / "img" / png.name)
        body += f'<img class="figure" src="../img/{esc(png.name)}" alt="{esc(spec.title)}">'
    for path in found:
        if path is not None:
            body += result_section(path, results)
    return _write(
        out / "figures" / f"{spec.id}.html", html.page(spec.title, body, "../", ["plotly.min.js"])
    )


def result_page(path: Path, results: Path, out: Path) -> Path:
    body = f"<h1>{esc(path.relative_to(results).as_posix())}</h1>" + result_section(path, results)
    page = html.page(path.stem, body, "../", ["plotly.min.js"])
    return _write(out / "results" / f"{_slug(path)}.html", page)


def verdicts_page(results: Path, out: Path) -> tuple[Path, dict[str, int]]:
    """The report's verdicts with filters by paper, kind and verdict."""
    from rfbench.present.report import build_report

    rows = verdict_rows(build_report(results))
    selects = ""
    for col, label in (("paper", "Paper"), ("kind", "Kind"), ("verdict", "Verdict")):
        values = sorted({r[col] for r in rows})
        opts = "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in values)
        selects += (
            f'<label>{label} <select data-col="{col}" id="filter-{col}">'
            f'<option value="">all</option>{opts}</select></label>'
        )
    body_rows = []
    for r in rows:
        data = "".join(f' data-{c}="{esc(r[c])}"' for c in ("paper", "kind", "verdict"))
        cells = [esc(r[k]) for k in VERDICT_KEYS]
        cells[2], cells[7] = f"<code>{cells[2]}</code>", html.verdict_badge(r["verdict"])
        body_rows.append(f"<tr{data}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    header = [key.replace("_", " ") for key in VERDICT_KEYS]
    table = (
        '<table id="verdicts"><thead><tr>'
        + "".join(f"<th>{h}</th>" for h in header)
        + "</tr></thead><tbody>"
        + "\n".join(body_rows)
        + "</tbody></table>"
    )
    body = (
        "<h1>Verdicts: the papers' numbers and claims against ours</h1>"
        f'<div class="card">{selects} <span class="muted"><span id="shown">{len(rows)}</span>'
        f" of {len(rows)} shown</span></div>{table}"
    )
    counts = Counter(r["verdict"] for r in rows)
    page = html.page("Verdicts", body, "", ["filter.js"])
    return _write(out / "verdicts.html", page), counts


def index_page(results: Path, out: Path, figures: list, files: list[Path], counts: dict) -> Path:
    from rfbench.compute.results import load_provenance

    tiles = "".join(
        f'<a href="figures/{esc(s.id)}.html"><img src="img/{esc(s.id)}.png" alt="{esc(s.id)}">'
        f"<b>{esc(s.id)}</b><br><span class='muted'>{esc(s.title)}</span></a>"
        if (out / "img" / f"{s.id}.png").is_file()
        else f'<a href="figures/{esc(s.id)}.html"><b>{esc(s.id)}</b><br>'
        f"<span class='muted'>{esc(s.title)} (no picture drawn)</span></a>"
        for s in figures
    )
    rows = []
    for p in files:
        prov = load_provenance(p)
        rows.append((
            f'<a href="results/{esc(_slug(p))}.html">{esc(p.relative_to(results).as_posix())}</a>',
            esc(prov.get("experiment", "")), esc(prov.get("config", {}).get("profile", "")),
            esc(prov.get("created", "")), f"<code>{esc(prov.get('command_line', ''))}</code>",
        ))  # fmt: skip
    summary = " · ".join(f"{html.verdict_badge(v)} {n}" for v, n in sorted(counts.items()))
    body = (
        f"<h1>rfbench results</h1><p class='muted'>From <code>{esc(results)}</code>. Every page "
        "works offline; charts: hover for values, click a legend entry to hide or show it.</p>"
        f'<div class="card"><b>Verdicts</b> (<a href="verdicts.html">filter them</a>): '
        f"{summary}</div>"
        f'<h2 id="figures">Figures</h2><div class="grid">{tiles}</div>'
        f'<h2 id="results">Result files</h2>'
        + html.table(("file", "experiment", "profile", "created", "command"), rows)
    )
    return _write(out / "index.html", html.page("Results", body, ""))


#: the folders of a site, under its top folder
SITE_FOLDERS = ("assets", "img", "figures", "results")


def check_site_folder(out: Path, files: list[Path], results: Path) -> None:
    """Refuse, before any page is written, a site folder rfbench must not write into: a link, a
    file, a folder holding anything but a site rfbench wrote (its ``index.html``), one whose
    sub-folders are links, or one with a file in the way that rfbench did not write."""
    from rfbench.present.outputs import check_file, check_folder, written_by_rfbench
    from rfbench.present.plots import list_figures

    check_folder(out)
    if out.is_dir() and any(out.iterdir()) and not written_by_rfbench(out / "index.html"):
        raise UserError(
            f"--out {out} holds files and no site rfbench wrote; rfbench writes a site only into "
            "a new or empty folder or over its own site (choose another --out)"
        )
    for name in SITE_FOLDERS:
        check_folder(out / name)
    pages = [out / "index.html", out / "verdicts.html"]
    pages += [out / "figures" / f"{spec.id}.html" for spec in list_figures()]
    pages += [out / "results" / f"{_slug(p)}.html" for p in files]
    for page in pages:
        check_file(page)
    # the assets and the copies of the figures (a figure's own signature is not checked when it
    # is copied): any regular file in a site of rfbench's own
    copies = [out / "assets" / name for name in ("plotly.min.js", *ASSET_FILES)]
    copies += [out / "img" / f"{spec.id}.png" for spec in list_figures()]
    for path in copies:
        check_file(path, ours=Path.is_file)


def build_site(results: str | Path = "results", out: str | Path | None = None) -> list[Path]:
    """Write the site of ``results`` into ``out`` (default ``<results>/site``); the pages."""
    from plotly.offline import get_plotlyjs

    from rfbench.compute.results import result_paths
    from rfbench.present.plots import list_figures

    results = Path(results)
    out = Path(out) if out is not None else results / "site"
    files = result_paths(results)
    if not files:
        raise UserError(f"no result files (*/*.parquet) under {results}")
    check_site_folder(out, files, results)
    (out / "img").mkdir(parents=True, exist_ok=True)
    _write(out / "assets" / "plotly.min.js", get_plotlyjs())  # shipped with the plotly package
    for name in ASSET_FILES:
        _write(out / "assets" / name, ASSETS.joinpath(name).read_text(encoding="utf-8"))
    written = [(spec, figure_page(spec, results, out)) for spec in list_figures()]
    drawn = [spec for spec, page in written if page is not None]
    pages = [page for _, page in written if page is not None]
    pages += [result_page(p, results, out) for p in files]
    verdicts, counts = verdicts_page(results, out)
    pages += [verdicts, index_page(results, out, drawn, files, counts)]
    return pages


#: the keys of a row of :func:`verdict_rows` (``kind``: "number" or "claim")
VERDICT_KEYS = ("paper", "kind", "id", "figure", "what", "paper_value", "ours", "verdict", "reason")


def _fmt(value: float | None, se: float | None = None, scale: float = 1.0) -> str:
    """``value ± se`` in the paper's printed units (our value divided by the entry's scale)."""
    if value is None or not math.isfinite(value):
        return ""
    text = f"{value / scale:.4g}"
    return text + (f" ± {se / abs(scale):.2g}" if se is not None and math.isfinite(se) else "")


def verdict_rows(report: Report) -> list[dict[str, str]]:
    """Every number and claim of the report, in report order, as plain text (the report's are
    for markdown: a name read from a result file has its ``&``, ``<`` and ``>`` as entities,
    which the page would show as written when it escapes them again)."""
    from rfbench.present.report.render import paper_value

    rows = []
    for r in report.numbers:
        e = r.entry
        paper = paper_value(e)
        reason = getattr(r, "reason", "") or r.detail
        ours, what = _fmt(r.ours, r.stderr, e.scale), e.source or e.quantity
        values = (e.paper, "number", e.id, e.figure, what, paper, ours, r.verdict, reason)
        rows.append(dict(zip(VERDICT_KEYS, values, strict=True)))
    for c in report.claims:
        e = c.entry
        reason = getattr(c, "reason", "") or c.detail
        values = (e.paper, "claim", e.id, e.figure, e.statement, "", "", c.verdict, reason)
        rows.append(dict(zip(VERDICT_KEYS, values, strict=True)))
    return [{k: unescape(v) if isinstance(v, str) else v for k, v in r.items()} for r in rows]
