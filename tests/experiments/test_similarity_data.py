"""rfbench similarity's data and statistics: the Lee (2005) reader on a synthetic fixture of its two
files, the sha256 pins, Spearman against scipy, and the bootstrap over documents against the
sampling spread it estimates."""

from __future__ import annotations

import hashlib
import importlib.metadata
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from rfbench.compute.checks import UserError
from rfbench.compute.datasets.errors import DataError, DataUnavailable
from rfbench.compute.experiments.attention.similarity import lee
from rfbench.compute.experiments.attention.similarity import stats as st

DOCS = ["Première nouvelle : le café ouvre.", "Second story about rain.", "", "A third one.",
        "And a fourth, longer document about the rain and the café."]  # fmt: skip
#: the upper triangle holds the pair scores; the lower triangle is zero as in gensim's file
MATRIX = [[1, 0.2, 0.5, 0.9], [0, 1, 0.3, 0.4], [0, 0, 1, 0.25], [0, 0, 0, 1]]


def fixture_files(folder: Path) -> dict[str, Path]:
    """lee.cor (latin-1, one document per line, a blank line in between, no final newline) and
    similarities0-1.txt (tab-separated) of four documents."""
    docs = folder / lee.DOCUMENTS
    docs.write_bytes("\n".join(DOCS[:2] + DOCS[3:4] + DOCS[4:]).encode("latin-1"))
    sims = folder / lee.SCORES
    sims.write_text("\n".join("\t".join(f"{x:g}" for x in row) for row in MATRIX) + "\n")
    return {lee.DOCUMENTS: docs, lee.SCORES: sims}


def pin(monkeypatch, paths: dict[str, Path]) -> None:
    """Pin the fixture's files in place of gensim's."""
    hashes = {n: hashlib.sha256(p.read_bytes()).hexdigest() for n, p in paths.items()}
    monkeypatch.setattr(lee, "SHA256", hashes)


def test_reader_decodes_latin1_and_symmetrises_the_upper_triangle(tmp_path, monkeypatch) -> None:
    paths = fixture_files(tmp_path)
    pin(monkeypatch, paths)
    data = lee.read(paths)
    assert data.documents == (DOCS[0], DOCS[1], DOCS[3], DOCS[4])  # é read as latin-1
    upper = np.triu(np.array(MATRIX, float), 1)
    np.testing.assert_array_equal(data.human, upper + upper.T + np.eye(4))
    i, j = data.pairs
    assert len(i) == 6 and (i < j).all()
    np.testing.assert_array_equal(data.human[i, j], [0.2, 0.5, 0.9, 0.3, 0.4, 0.25])


def test_a_file_that_does_not_match_its_pin_is_one_line_naming_the_install(tmp_path) -> None:
    paths = fixture_files(tmp_path)  # gensim's pins, not the fixture's
    with pytest.raises(DataError) as err:
        lee.read(paths)
    message = str(err.value)
    assert isinstance(err.value, UserError) and "\n" not in message  # exit 2, one line
    assert lee.DOCUMENTS in message or str(paths[lee.DOCUMENTS]) in message
    assert lee.INSTALL in message


def test_one_changed_byte_fails_the_pin(tmp_path, monkeypatch) -> None:
    paths = fixture_files(tmp_path)
    pin(monkeypatch, paths)
    raw = bytearray(paths[lee.SCORES].read_bytes())
    raw[4] = ord("7") if raw[4] != ord("7") else ord("8")
    paths[lee.SCORES].write_bytes(bytes(raw))
    with pytest.raises(DataError, match="failed verification"):
        lee.read(paths)


def test_a_matrix_of_the_wrong_size_is_refused(tmp_path, monkeypatch) -> None:
    paths = fixture_files(tmp_path)
    paths[lee.SCORES].write_text("1\t0.5\n0\t1\n")
    pin(monkeypatch, paths)
    with pytest.raises(DataError, match=r"shape \(2, 2\), expected \(4, 4\)"):
        lee.read(paths)


def test_a_missing_wheel_is_unavailable_data_with_the_install_command(monkeypatch) -> None:
    def missing(name: str):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(DataUnavailable) as err:
        lee.locate()
    assert err.value.fix == lee.INSTALL == "pip install --no-deps gensim==4.4.0"
    assert "\n" not in str(err.value) and lee.INSTALL in str(err.value)


def test_the_installed_wheel_holds_the_pinned_set() -> None:
    try:
        paths = lee.locate()
    except DataUnavailable:
        pytest.skip(f"gensim wheel not installed: {lee.INSTALL}")
    data = lee.read(paths)
    assert len(data.documents) == 50 and len(data.pairs[0]) == 1225
    human = data.human[data.pairs]
    assert (human >= 0).all() and (human <= 1).all() and np.allclose(data.human, data.human.T)


# ---------------------------------------------------------------------------------- statistics


def test_spearman_matches_scipy_with_ties_and_batches() -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(0, 6, size=(3, 40)).astype(float)  # many ties
    y = x[0] + rng.normal(size=40)
    got = st.spearman(x, y)
    want = [stats.spearmanr(row, y).statistic for row in x]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.isnan(st.spearman(np.ones(5), np.arange(5.0)))  # constant side: undefined
    assert np.isnan(st.spearman(np.array([1.0, np.nan, 3.0]), np.arange(3.0)))


def resampled_pairs(sample: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The document pairs (i, j) of one resample, the reference of the bootstrap's weights: every
    pair of positions a < b whose documents differ (rfbench's similarity stats module doc)."""
    a, b = np.triu_indices(len(sample), 1)
    i, j = sample[a], sample[b]
    keep = i != j
    return i[keep], j[keep]


def test_resampled_pairs_weigh_a_repeated_document_and_skip_its_copies() -> None:
    i, j = resampled_pairs(np.array([0, 0, 1, 2]))
    pairs = sorted(zip(i.tolist(), j.tolist(), strict=True))
    # positions (0,1) are one document twice: no pair; document 0 then pairs twice with 1 and 2
    assert pairs == [(0, 1), (0, 1), (0, 2), (0, 2), (1, 2)]


def test_resamples_are_the_same_in_every_call() -> None:
    np.testing.assert_array_equal(st.resamples(50, 30), st.resamples(50, 30))
    assert st.resamples(50, 30).shape == (30, 50)


def _documents(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A synthetic similarity task: documents with latent topics z (n, 3); the human score of a
    pair is −‖z_i − z_j‖ plus pair noise, the model's the same of noisy embeddings z + e."""
    z = rng.normal(size=(n, 3))
    e = z + 0.8 * rng.normal(size=(n, 3))
    human = -np.linalg.norm(z[:, None] - z[None], axis=-1) + 0.3 * rng.normal(size=(n, n))
    human = np.triu(human, 1) + np.triu(human, 1).T
    model = -np.linalg.norm(e[:, None] - e[None], axis=-1)
    return model, human


def test_bootstrap_over_documents_estimates_the_spread_over_fresh_documents() -> None:
    """The bootstrap's standard deviation of Spearman over 30 documents against the standard
    deviation over fresh sets of 30 documents (Monte Carlo; measured ratio 0.99). Treating the 435
    pairs as independent (resampling pairs) gives 0.40 of the spread here, and keeping each
    distinct resampled document once 0.80 of it: the tolerance [0.85, 1.18] (about 2.5 standard
    errors of the ratio) tells both apart."""
    rng = np.random.default_rng(7)
    n = 30
    i, j = np.triu_indices(n, 1)
    fresh = [st.pair_spearman(*_documents(rng, n), i, j) for _ in range(400)]
    truth = np.std(fresh, ddof=1)
    boot_sd, pair_sd = [], []
    for rep in range(12):
        model, human = _documents(rng, n)
        boot = st.bootstrap({"m": model[None]}, human, st.resamples(n, 250, seed=rep))["m"]
        boot_sd.append(np.std(boot, ddof=1))
        idx = rng.integers(0, len(i), size=(250, len(i)))  # pairs as if independent
        pair_sd.append(np.std(st.spearman(model[i[idx], j[idx]], human[i[idx], j[idx]]), ddof=1))
    ratio = np.mean(boot_sd) / truth
    assert 0.85 < ratio < 1.18, (ratio, truth)
    assert np.mean(pair_sd) / truth < 0.6  # the naive interval is too narrow


def test_interval_and_gap_recovered() -> None:
    values = np.r_[np.arange(1000.0), np.nan]
    low, high = st.interval(values)
    assert low == pytest.approx(24.975) and high == pytest.approx(974.025)
    assert np.isnan(st.interval(np.full(3, np.nan))[0])
    np.testing.assert_allclose(st.gap_recovered([0.4, 0.5, 0.45], 0.5, 0.4), [0.0, 1.0, 0.5])
    assert np.isnan(st.gap_recovered(0.3, 0.5, 0.5))


def test_the_weighted_bootstrap_equals_scoring_each_resamples_pairs() -> None:
    """All resamples at once (weights c_i c_j) against Spearman of each resample's repeated pairs,
    ties included (the human scores have many)."""
    rng = np.random.default_rng(3)
    n = 12
    human = np.round(rng.uniform(size=(n, n)), 1)  # ties
    human = np.triu(human, 1) + np.triu(human, 1).T
    sims = rng.normal(size=(2, n, n))
    sims = sims + np.swapaxes(sims, 1, 2)
    samples = st.resamples(n, 40)
    got = st.bootstrap({"m": sims}, human, samples)["m"]
    want = []
    for sample in samples:
        i, j = resampled_pairs(sample)
        want.append(np.mean([stats.spearmanr(s[i, j], human[i, j]).statistic for s in sims]))
    np.testing.assert_allclose(got, want, rtol=1e-10)
