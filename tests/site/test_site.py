"""The results site: every page, link and image resolves offline, and in headless Chromium the
pages log no errors, the charts draw and the verdict filter changes the rows shown."""

from __future__ import annotations

import shutil
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse

import pytest

from rfbench.present.site import build_site

RESULTS = Path(__file__).resolve().parents[2] / "results"
SAMPLE = ("pointwise/hrf-fig2.parquet", "classify/simrf-table3.parquet", "gram/simrf-fig7.parquet")
# Headless, offline: no background networking (this machine's network is closed).
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
)  # fmt: skip
CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site built from a few committed result files and their figures."""
    results = tmp_path_factory.mktemp("results")
    for rel in SAMPLE:
        (results / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(RESULTS / rel, results / rel)
    (results / "figures").mkdir()
    for fig in ("hrf-fig2", "simrf-fig7"):
        shutil.copyfile(RESULTS / "figures" / f"{fig}.png", results / "figures" / f"{fig}.png")
    out = results / "site"
    build_site(results, out)
    return out


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.links.append(value)


@pytest.mark.slow
def test_every_local_link_and_image_resolves(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert {"index.html", "verdicts.html"} <= {p.name for p in pages}
    assert (site / "figures/hrf-fig2.html").is_file() and (site / "img/hrf-fig2.png").is_file()
    checked = 0
    for page in pages:
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        for link in parser.links:
            url = urlparse(link)
            assert url.scheme in ("", "file"), f"{page.name} needs the network: {link}"
            if url.path:
                assert (page.parent / url.path).resolve().is_file(), f"{page.name}: {link}"
                checked += 1
    assert checked > 3 * len(pages)


@pytest.mark.slow
def test_figure_page_has_config_provenance_numbers_and_a_chart(site: Path) -> None:
    text = (site / "figures/hrf-fig2.html").read_text(encoding="utf-8")
    for part in ("<h3>Config</h3>", "<h3>Provenance</h3>", "<h3>Numbers</h3>", "Plotly.newPlot"):
        assert part in text
    assert "&quot;angles&quot;: 25" in text and "theory_rel_rmse" in text  # the config, escaped


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM and CHROMEDRIVER):
        pytest.skip("headless Chromium not installed (Debian packages chromium, chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(CHROMEDRIVER))
    yield driver
    driver.quit()


def _errors(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


@pytest.mark.slow  # a headless browser
def test_pages_in_chromium(site: Path, browser) -> None:
    for page in ("index.html", "figures/hrf-fig2.html", "figures/simrf-fig7.html"):
        browser.get((site / page).as_uri())
        assert _errors(browser) == [], page
        broken = browser.execute_script(
            "return [...document.images].filter(i => !(i.complete && i.naturalWidth > 0))"
            ".map(i => i.src)"
        )
        assert broken == [], page
    charts = browser.execute_script("return document.querySelectorAll('.js-plotly-plot').length")
    assert charts >= 1  # Plotly drew the chart


@pytest.mark.slow  # a headless browser
def test_verdict_filter_changes_the_rows(site: Path, browser) -> None:
    from selenium.webdriver.support.ui import Select

    browser.get((site / "verdicts.html").as_uri())
    assert _errors(browser) == []
    visible = "return [...document.querySelectorAll('#verdicts tbody tr')].filter(r => r.style.display !== 'none').length"  # noqa: E501
    total = browser.execute_script(visible)
    select = Select(browser.find_element("id", "filter-verdict"))
    choice = next(o.get_attribute("value") for o in select.options if o.get_attribute("value"))
    select.select_by_value(choice)
    wanted = browser.execute_script(
        "return document.querySelectorAll('#verdicts tbody tr[data-verdict=\"' + arguments[0] + '\"]').length",  # noqa: E501
        choice,
    )
    shown = browser.execute_script(visible)
    assert 0 < shown == wanted < total
    assert browser.find_element("id", "shown").text == str(shown)


HOSTILE = '"><img src=x onerror="window.__pwned=1"></script><script>window.__pwned=1</script>'


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A site of a result file with a hostile string in every field a user or plugin controls:
    estimator alias, kernel, data set name, config values, command line and the file name."""
    import pandas as pd

    from rfbench.compute.results import make_provenance, write_results

    results = tmp_path_factory.mktemp("hostile")
    rows = pd.DataFrame({
        "experiment": "pointwise", "figure": "", "estimator": [HOSTILE, HOSTILE, "trig@iid"],
        "kernel": HOSTILE, "metric": "rel_rmse", "value": [0.1, 0.2, 0.3], "stderr": 0.01,
        "n_trials": 10, "theta": [0.1, 0.5, 0.5], "dataset": HOSTILE,
    })  # fmt: skip
    prov = make_provenance(
        config={"name": "x", "description": HOSTILE, "estimators": [HOSTILE]},
        seed=0,
        command_line=["rfbench", "pointwise", "--data", HOSTILE],
        experiment="pointwise",
    )
    write_results(rows, results / "pointwise" / f"{HOSTILE.replace('/', '_')}.parquet", prov)
    out = results / "site"
    build_site(results, out)
    return out


def test_hostile_strings_are_escaped_everywhere(hostile_site: Path) -> None:
    for page in hostile_site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "<img src=x" not in text and "<script>window.__pwned" not in text, page.name


@pytest.mark.slow  # a headless browser
def test_no_hostile_script_runs_in_chromium(hostile_site: Path, browser) -> None:
    pages = sorted(hostile_site.rglob("*.html"))
    assert len(pages) >= 3
    for page in pages:
        browser.get(page.as_uri())
        time.sleep(0.2)  # give an injected onerror handler the time to fire
        assert browser.execute_script("return window.__pwned === undefined"), page.name
    browser.get(next(p for p in pages if p.parent.name == "results").as_uri())
    drawn = "return document.querySelectorAll('.js-plotly-plot').length"
    assert browser.execute_script(drawn) == 1  # the chart still draws, hostile names and all


def test_verdicts_show_a_name_from_the_results_escaped_once(tmp_path: Path) -> None:
    """The report's texts are markdown (a result's ``<`` as ``&lt;``); the verdicts page showed
    those entities as written (``&amp;lt;``) when it escaped them again."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rfbench.present.report import build_report
    from rfbench.present.site.build import verdict_rows

    path = tmp_path / "pointwise" / "cse-fig1.parquet"
    path.parent.mkdir()
    table = pq.read_table(RESULTS / "pointwise" / "cse-fig1.parquet")  # with its provenance
    names = ["a<b>&c" if n == "trig@iid" else n for n in table["estimator"].to_pylist()]
    i = table.schema.get_field_index("estimator")
    pq.write_table(table.set_column(i, "estimator", pa.array(names)), path)
    texts = " ".join(v for r in verdict_rows(build_report(tmp_path)) for v in r.values())
    assert "a<b>&c" in texts and "&lt;" not in texts and "&amp;" not in texts


def test_odd_result_file_names_give_pages_the_index_links_to(tmp_path: Path) -> None:
    """A ``#``, ``?`` or ``%`` in a file name broke its link (read as a fragment, a query, an
    escape) and a long name stopped the site with an internal error (no such file name)."""
    names = ["a#b?c%20d", "x" * 245, "plain"]
    for name in names:
        (tmp_path / "theory").mkdir(exist_ok=True)
        shutil.copyfile(
            RESULTS / "theory" / "hrf-fig1.parquet", tmp_path / "theory" / f"{name}.parquet"
        )
    out = tmp_path / "site"
    build_site(tmp_path, out)
    parser = _Links()
    parser.feed((out / "index.html").read_text(encoding="utf-8"))
    pages = [urlparse(link) for link in parser.links if link.startswith("results/")]
    assert len(pages) == len(names) and all(not (p.fragment or p.query) for p in pages)
    assert all((out / p.path).is_file() for p in pages)
    assert (out / "results" / "theory-plain.html").is_file()  # a plain name is kept
