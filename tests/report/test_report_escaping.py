"""Strings read from result files reach REPORT.md as text, never as HTML (issue 44 item 6: a
``<script>`` in ``fit_text`` and a ``"><script>`` provenance field were copied unescaped, where
the site escapes them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import rfbench.compute.experiments.attention.experiment  # noqa: F401 (its metric names)
from rfbench.compute.results import make_provenance, write_results
from rfbench.present.report.beyond_attention import LEARNED as NAME
from rfbench.present.report.build import write_report
from rfbench.present.report.markdown import escape_frame, escape_markup

SCRIPT = "<script>alert(1)</script>"


def _rows() -> pd.DataFrame:
    common = {"experiment": "attention", "figure": NAME, "kernel": "softmax", "tokens": 512,
              "fit_text": SCRIPT, "text": "GFDL & co", "n_trials": 10}  # fmt: skip
    out = []
    for head in range(6):
        at = {**common, "layer": 0, "head": head}
        out.append({**at, "kind": "baselines", "estimator": "uniform", "metric": "out_rel_frob",
                    "value": 0.8, "stderr": None})  # fmt: skip
        out.append({**at, "kind": "heads", "estimator": "hedgehog", "metric": "out_rel_frob",
                    "value": 0.3 + 0.01 * head, "stderr": 0.01, "budget": 64, "z_uniform": 9.0,
                    "beats_uniform": True})  # fmt: skip
    return pd.DataFrame(out)


def test_report_escapes_strings_from_result_files(tmp_path: Path) -> None:
    prov = make_provenance(config={"name": NAME}, seed=0, command_line="test")
    prov["created"] = '"><script>alert(2)</script>'
    prov["git_commit"] = "<img src=x onerror=alert(3)>"
    write_results(_rows(), tmp_path / "attention" / f"{NAME}.parquet", prov)
    path, _ = write_report(tmp_path, tmp_path / "REPORT.md", tmp_path / "figures")
    text = path.read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text  # the fit_text, as text
    assert "&lt;script&gt;alert(2)" in text  # the provenance's created field
    assert "&lt;img" in text  # the commit, cut to 10 characters
    assert "<script" not in text and "<img" not in text
    assert "GFDL &amp; co" in text


def test_escaping_reaches_through_containers_and_leaves_numbers() -> None:
    assert escape_markup({"a": ["<b>", ("&",)], "n": 3}) == {"a": ["&lt;b&gt;", ("&amp;",)], "n": 3}
    df = pd.DataFrame({"s": ["plain", "<x>", None], "v": [1.0, np.nan, 2.0]})
    out = escape_frame(df)
    assert list(out["s"][:2]) == ["plain", "&lt;x&gt;"] and pd.isna(out["s"][2])
    assert out["v"].equals(df["v"]) and list(df["s"][:2]) == ["plain", "<x>"]  # a copy
    plain = df[["v"]]
    assert escape_frame(plain) is plain  # nothing to escape: the frame itself


def test_an_unreadable_files_name_is_plain_on_the_terminal(tmp_path: Path) -> None:
    """Escaped for REPORT.md only: the warning line showed ``&lt;b&gt;`` for ``<b>``."""
    from typer.testing import CliRunner

    from rfbench.cli.app import app

    (tmp_path / "pointwise").mkdir()
    (tmp_path / "pointwise" / "x<b>&.parquet").write_text("not parquet")
    done = CliRunner().invoke(app, ["report", "--results", str(tmp_path)])
    assert done.exit_code == 0, done.output
    assert "unreadable result file pointwise/x<b>&.parquet" in done.output
    assert "pointwise/x&lt;b&gt;&amp;.parquet" in (tmp_path / "REPORT.md").read_text()
