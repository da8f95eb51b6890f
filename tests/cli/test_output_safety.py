"""``rfbench figures``, ``report``, ``site`` and ``compare --markdown`` write only where nothing is
or over files rfbench wrote itself: a user's file at an output path, a symbolic link in the way
or an output folder that is a file is refused with exit status 2 and one line, before anything
is written, and what the link points to is never touched."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_helpers import one_line_error
from PIL import Image
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.present.outputs import written_by_rfbench

RESULTS = Path(__file__).resolve().parents[2] / "results"
FIGURE = "hrf-fig1"  # a quick figure, from theory/hrf-fig1.parquet


@pytest.fixture
def results(tmp_path: Path) -> Path:
    folder = tmp_path / "results"
    (folder / "theory").mkdir(parents=True)
    shutil.copyfile(
        RESULTS / "theory" / f"{FIGURE}.parquet", folder / "theory" / f"{FIGURE}.parquet"
    )
    return folder


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_report_never_replaces_a_users_file_or_a_link(results: Path, tmp_path: Path) -> None:
    mine = tmp_path / "notes.md"
    mine.write_text("my notes\n")
    one_line_error(run("report", "--results", str(results), "--out", str(mine)), str(mine),
                   "not written by rfbench")  # fmt: skip
    assert mine.read_text() == "my notes\n" and not (tmp_path / "REPORT-tables.md").exists()
    target = tmp_path / "target.txt"
    target.write_text("secret")
    (results / "REPORT.md").symlink_to(target)
    one_line_error(run("report", "--results", str(results)), "symbolic link")
    assert target.read_text() == "secret" and (results / "REPORT.md").is_symlink()
    (results / "REPORT.md").unlink()
    for _ in range(2):  # its own report it replaces
        done = run("report", "--results", str(results))
        assert done.exit_code == 0, done.output
    assert written_by_rfbench(results / "REPORT.md")
    assert written_by_rfbench(results / "REPORT-tables.md")


def test_figures_refuse_a_foreign_file_before_drawing_any(results: Path, tmp_path: Path) -> None:
    out = tmp_path / "figs"
    out.mkdir()
    Image.new("RGB", (4, 4)).save(out / f"{FIGURE}.png")  # a PNG of the user's
    blob = (out / f"{FIGURE}.png").read_bytes()
    one_line_error(run("figures", "--results", str(results), "--out", str(out), "--only", FIGURE),
                   f"{FIGURE}.png", "not written by rfbench")  # fmt: skip
    assert (out / f"{FIGURE}.png").read_bytes() == blob and not (out / f"{FIGURE}.pdf").exists()
    (out / f"{FIGURE}.png").unlink()
    target = tmp_path / "target.txt"
    target.write_text("secret")
    (out / f"{FIGURE}.pdf").symlink_to(target)
    one_line_error(run("figures", "--results", str(results), "--out", str(out), "--only", FIGURE),
                   "symbolic link")  # fmt: skip
    assert target.read_text() == "secret" and not (out / f"{FIGURE}.png").exists()
    (out / f"{FIGURE}.pdf").unlink()
    for _ in range(2):  # its own figures it replaces
        done = run("figures", "--results", str(results), "--out", str(out), "--only", FIGURE)
        assert done.exit_code == 0 and "1 of 1 figures drawn" in done.output, done.output
    assert all(written_by_rfbench(out / f"{FIGURE}.{ext}") for ext in ("png", "pdf"))


@pytest.mark.parametrize("command", ["figures", "site"])
def test_an_output_folder_that_is_a_file(results: Path, tmp_path: Path, command: str) -> None:
    afile = tmp_path / "afile"
    afile.write_text("mine")
    for out in (afile, afile / "sub"):
        one_line_error(run(command, "--results", str(results), "--out", str(out)), str(afile))
    assert afile.read_text() == "mine"


def test_site_only_into_a_new_empty_or_own_folder(results: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mysite"
    mine.mkdir()
    (mine / "index.html").write_text("<h1>my homepage</h1>")
    one_line_error(run("site", "--results", str(results), "--out", str(mine)), "no site rfbench")
    assert [p.name for p in mine.iterdir()] == ["index.html"]
    site = tmp_path / "site"
    done = run("site", "--results", str(results), "--out", str(site))
    assert done.exit_code == 0, done.output
    target = tmp_path / "target.txt"
    target.write_text("secret")
    (site / "verdicts.html").unlink()
    (site / "verdicts.html").symlink_to(target)
    one_line_error(run("site", "--results", str(results), "--out", str(site)), "symbolic link")
    assert target.read_text() == "secret"
    (site / "verdicts.html").unlink()
    done = run("site", "--results", str(results), "--out", str(site))  # over its own site
    assert done.exit_code == 0 and written_by_rfbench(site / "verdicts.html"), done.output


def test_compare_markdown_never_replaces_a_users_file(results: Path, tmp_path: Path) -> None:
    mine = tmp_path / "notes.md"
    mine.write_text("my notes\n")
    one_line_error(run("compare", str(results), str(results), "--markdown", str(mine)),
                   "not written by rfbench")  # fmt: skip
    assert mine.read_text() == "my notes\n"
    own = tmp_path / "compare.md"
    for _ in range(2):
        done = run("compare", str(results), str(results), "--markdown", str(own))
        assert done.exit_code == 0, done.output


def test_figures_drawn_before_they_were_signed_are_replaced(tmp_path: Path) -> None:
    """The committed figures were drawn by matplotlib before rfbench signed its own."""
    assert written_by_rfbench(RESULTS / "figures" / f"{FIGURE}.png")
    assert written_by_rfbench(RESULTS / "figures" / f"{FIGURE}.pdf")
    (tmp_path / "x.pdf").write_bytes(b"%PDF-1.4 not a figure")
    (tmp_path / "x.md").write_text("# my report\n")
    assert not written_by_rfbench(tmp_path / "x.pdf") and not written_by_rfbench(tmp_path / "x.md")


def test_a_markdown_output_must_end_in_md(results: Path) -> None:
    """A report written as ``<results>/<experiment>/x.parquet`` made every later command refuse
    the results folder (an unreadable result file)."""
    bad = results / "theory" / "x.parquet"
    one_line_error(run("report", "--results", str(results), "--out", str(bad)), "ending in .md")
    one_line_error(run("compare", str(results), str(results), "--markdown", str(bad)),
                   "ending in .md")  # fmt: skip
    assert not bad.exists() and not (results / "theory" / "REPORT-tables.md").exists()


def test_report_writes_nothing_into_a_folder_without_results(tmp_path: Path) -> None:
    """``rfbench report --results ~`` (a mistyped folder) wrote REPORT.md and REPORT-tables.md of
    nothing into it, as the site refuses to."""
    one_line_error(run("report", "--results", str(tmp_path)), "no result files")
    assert list(tmp_path.iterdir()) == []
