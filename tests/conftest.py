"""Shared fixtures: the data folder (the real files, else the synthetic fixtures) and generators.

``data_dir`` is the real data folder when there is one (``RFBENCH_DATA``, else ../shared/data
beside the checkout), otherwise ``tests/fixtures/data``: small synthetic files in every raw
format the loaders read, whose checksums replace the registry's pins for the session. So every
loader and parser runs on a fresh clone; ``RFBENCH_TEST_DATA=fixtures`` forces the fixtures.
Tests of the papers' published numbers take ``real_data_dir`` and skip without the real files.
"""

from __future__ import annotations

import sys
import tomllib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from data_facts import FIXTURE_DATA, real_data


def _pin_fixtures() -> None:
    """Point the registry's pins at the fixture files (checksums from PINS.toml)."""
    import rfbench.datasets as D

    pins = tomllib.loads((FIXTURE_DATA / "PINS.toml").read_text())
    for name, info in list(D.DATASETS.items()):
        variants = {
            key: tuple(
                replace(f, sha256=pins[f.path]["sha256"], size=pins[f.path]["size"])
                if f.path in pins
                else f
                for f in files
            )
            for key, files in info.variants.items()
        }
        D.DATASETS[name] = replace(info, variants=variants)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The folder holding the raw data files: the real ones if present, else the fixtures."""
    real = real_data()
    if real is not None:
        return real
    _pin_fixtures()
    return FIXTURE_DATA


@pytest.fixture(scope="session")
def real_data_dir() -> Path:
    """The real data folder, for checks against the papers' numbers; skip without it."""
    real = real_data()
    if real is None:
        pytest.skip("published-number check: needs the real data files (set RFBENCH_DATA)")
    return real


@pytest.fixture
def isolated_registry(monkeypatch, tmp_path):
    """Estimator tables and plugin state restored after the test; ``tmp_path`` importable.

    Modules the test imports whose name starts with ``rfb_test_`` or ``rfbench_example_plugin``
    are forgotten afterwards, so their registrations do not leak into other tests.
    """
    from rfbench import plugins
    from rfbench.experiments import list_experiments
    from rfbench.features import registry, theory
    from rfbench.plots import list_figures

    registry.estimator_names()  # the built-ins are in before the copies are taken
    theory.has_theory("trig@iid"), list_experiments(), list_figures()
    saved = plugins.snapshot()
    monkeypatch.setattr(plugins, "_loaded", None)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    plugins.restore(saved)
    for name in list(sys.modules):
        if name.startswith(("rfb_test_", "rfbench_example_plugin")):
            del sys.modules[name]


#: Tests of more than about a second each on 2 cores (Monte Carlo at scale, subprocesses, whole
#: quick runs, reports of the committed results): marked ``slow`` here, in one place, so that
#: ``make test-fast`` (``pytest -m "not slow"``) is the inner loop; ``make test`` runs everything.
SLOW_TESTS = frozenset(
    {
        "tests/test_beyond_outputs.py::test_figures_draw",
        "tests/test_cache_code.py::test_an_edited_copy_of_the_source_misses_the_cache",
        "tests/test_dask_cluster.py::test_a_killed_worker_loses_nothing",
        "tests/test_dask_cluster.py::test_a_restarted_client_reuses_finished_jobs",
        "tests/test_derf.py::test_sderf_matches_theorem_4_3_and_is_optimal",
        "tests/test_derf.py::test_variance_experiment_anchors",
        "tests/test_exp_clusters.py::test_quick_profile_end_to_end",
        "tests/test_exp_clusters.py::test_rfbench_protocol_matches_theory",
        "tests/test_exp_clusters.py::test_s_values_equal_the_papers",
        "tests/test_exp_clusters.py::test_table3_more_rows_equal_to_published",
        "tests/test_exp_clusters.py::test_table3_s1_m20_equal_to_published",
        "tests/test_exp_clusters.py::test_theory_equals_spec_reference",
        "tests/test_exp_gram.py::test_fig7_rows",
        "tests/test_exp_gram.py::test_grid_covers_every_component_and_weights",
        "tests/test_exp_pointwise.py::test_gaussian_kernel_and_data_dependent_estimators",
        "tests/test_exp_pointwise.py::test_quick_profile_schema_and_ranges",
        "tests/test_exp_pointwise.py::test_theory_matches_spec_table",
        "tests/test_exp_qmc.py::test_quick_profile_end_to_end",
        "tests/test_exp_variance.py::test_quick_profile_schema_and_rows",
        "tests/test_hybrid.py::test_determinism",
        "tests/test_hybrid.py::test_shared_all_bias",
        "tests/test_lifetime.py::test_ctrl_c_ends_at_once_and_a_second_never_hangs",
        "tests/test_lifetime.py::test_no_worker_survives_the_main_process",
        "tests/test_plots_pointwise.py::test_cse_fig4_bars_and_the_papers_count",
        "tests/test_plots_pointwise.py::test_figure_files_are_written",
        "tests/test_plots_pointwise.py::test_hrf_grid_has_a_row_and_a_summary_per_radius",
        "tests/test_plots_theory_gram.py::test_files_written",
        "tests/test_plots_theory_gram.py::test_hrf_fig1",
        "tests/test_plots_variance_classify.py::test_derf_fig2_panels_curves_and_mc",
        "tests/test_plots_variance_classify.py::test_derf_fig2_skipped_regimes_are_empty_panels",
        "tests/test_plots_variance_classify.py::test_files_written",
        "tests/test_plugin_example.py::test_installed_plugin_is_listed_and_runs",
        "tests/test_pnc.py::test_pair_correlation_matches_the_reading",
        "tests/test_pnc.py::test_unbiased_and_variance_matches_the_closed_form",
        "tests/test_precision.py::test_logspace_map_is_finite_everywhere",
        "tests/test_precision.py::test_naive_positive_overflows_in_float16_as_the_gaussian_law_says",
        "tests/test_report.py::test_cli_report",
        "tests/test_report.py::test_report_on_quick_results",
        "tests/test_report_errors.py::test_a_bug_in_a_check_is_exit_1_not_a_verdict",
        "tests/test_report_features.py::test_derf_fig3_claims_are_judged_at_equal_features",
        "tests/test_report_links.py::test_the_report_links_nothing_a_clone_lacks",
        "tests/test_report_verdicts.py::test_every_discrepancy_in_the_committed_report_has_a_measured_reason",
        "tests/test_runner.py::test_resume_after_a_crash",
        "tests/test_runner.py::test_stale_cache_is_not_reused",
        "tests/test_safety.py::test_a_changed_cached_job_is_detected_and_recomputed",
        "tests/test_simrf_replay.py::test_classify_stream_released_end_to_end",
        "tests/test_site.py::test_every_local_link_and_image_resolves",
        "tests/test_sklearn.py::test_raw_digits_work_with_the_default_bandwidth",
        "tests/test_stats.py::test_closed_form_standard_errors_match_replications",
        "tests/test_bad_inputs.py::test_bad_input_is_one_line_and_exit_2"
        "[pointwise --backend dask --scheduler tcp://127.0.0.1:9]",
        "tests/test_exp_gram.py::test_fig7_matches_the_closed_form",
        "tests/test_exp_gram.py::test_summary_has_headline_rows",
        "tests/test_plots_theory_gram.py::test_simrf_fig4",
        "tests/test_site.py::test_figure_page_has_config_provenance_numbers_and_a_chart",
        "tests/test_plots_variance_classify.py::test_derf_fig1_gap_matches_results",
        "tests/test_exp_classify.py::test_quick_derf_fig3",
        "tests/test_precision.py::test_rows_have_dtype_and_form",
        "tests/test_exp_variance.py::test_headline_gaps",
        "tests/test_exp_pointwise.py::test_negative_counts_cse_fig4",
        "tests/test_plots_pointwise.py::test_curves_pivot_the_long_rows",
        "tests/test_beyond_outputs.py::test_precision_rows_have_a_dtype_and_cost_rows_flops",
        "tests/test_exp_classify.py::test_quick_simrf_fig8",
    }
)


def pytest_collection_modifyitems(config, items) -> None:
    root = Path(__file__).resolve().parents[1]
    for item in items:
        path = item.path.relative_to(root).as_posix()
        names = {f"{path}::{item.name}", f"{path}::{getattr(item, 'originalname', item.name)}"}
        if names & SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
