"""A summary table's footnote (pointwise's rank/resolved explanation) is printed once per
command: ``rfbench reproduce`` prints many pointwise tables under one explanation (issue 31)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import typer
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.cli.show import print_frame
from rfbench.present.summaries.pointwise import SUMMARY_FOOTNOTE

HEAD = SUMMARY_FOOTNOTE[:40]
TINY = ('experiment = "pointwise"\nname = "tiny-{i}"\n\n[params]\n'
        'estimators = ["trig@iid", "hyperbolic@iid"]\nr = [1.0]\nm = [8]\nd = 4\nangles = 3\n'
        "samples = 200\n")  # fmt: skip


def test_two_tables_with_one_footnote_print_it_once() -> None:
    frame = pd.DataFrame({"a": [1.0]})
    frame.attrs["footnote"] = "the marks explained"
    tiny = typer.Typer()

    @tiny.command()
    def two() -> None:
        print_frame(frame, "first")
        print_frame(frame, "second")

    @tiny.command()
    def other() -> None:  # two commands: subcommand syntax
        pass

    out = CliRunner().invoke(tiny, ["two"])
    assert out.exit_code == 0, out.output
    assert out.output.count("the marks explained") == 1 and out.output.count("┏") == 2


def test_reproduce_explains_rank_and_resolved_once(tmp_path: Path) -> None:
    configs = tmp_path / "configs"
    configs.mkdir()
    for i in (1, 2):
        (configs / f"c{i}.toml").write_text(TINY.format(i=i), encoding="utf-8")
    out = CliRunner().invoke(app, ["reproduce", "--configs", str(configs), "--out-dir",
                                   str(tmp_path / "runs"), "--backend", "serial"])  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "tiny-1" in out.output and "tiny-2" in out.output
    assert out.output.count(HEAD) == 1, out.output
    # a later command of the same process explains its own table
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "c.toml").write_text(TINY.format(i=3), encoding="utf-8")
    again = CliRunner().invoke(app, ["run", str(tmp_path / "one" / "c.toml"), "--out",
                                     str(tmp_path / "runs" / "pointwise" / "tiny-3.parquet"),
                                     "--backend", "serial"])  # fmt: skip
    assert again.exit_code == 0, again.output
    assert again.output.count(HEAD) == 1, again.output
