"""attention: fitted on one part of the tokens, measured on another; the fitted-map cache; the
feature budget; bad input as one line (exit 2)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from cli_helpers import one_line_error
from typer.testing import CliRunner

from rfbench.cli.app import app
from rfbench.compute.experiments.attention import heldout
from rfbench.compute.results import load_results

RUN = ("--draws", 3, "--backend", "serial", "--quiet", "--no-plot")


def _file(tmp_path: Path, tokens: int = 24, seed: int = 3) -> Path:
    rng = np.random.default_rng(seed)
    path = tmp_path / f"qkv{tokens}.npz"
    shape = (2, tokens, 4)
    q, k, v = (
        0.6 * rng.standard_normal(shape),
        0.6 * rng.standard_normal(shape),
        rng.standard_normal(shape),
    )
    np.savez(path, q=q, k=k, v=v)
    return path


def run(path: Path, out: Path, *extra: object, cache: Path):
    args = ["attention", "--data", str(path), "--out", str(out), *map(str, RUN + extra)]
    return CliRunner(env={"RFBENCH_CACHE": str(cache)}).invoke(app, args)


def test_data_is_fitted_on_the_first_half_and_measured_on_the_second(tmp_path: Path) -> None:
    path = _file(tmp_path)
    part = heldout.split("", str(path), 0, 0)
    assert len(part.fit_q) == len(part.fit_k) == 1  # one fitting sequence: the first half
    np.testing.assert_array_equal(np.concatenate([part.fit_q[0], part.q], axis=1),
                                  np.load(path)["q"])  # fmt: skip
    assert part.q.shape[1] == part.fit_q[0].shape[1] == 12 and part.k.shape[1] == 12
    cache = tmp_path / "cache"
    names = "hedgehog,t2r,positive@fitted"
    res = run(path, tmp_path / "a.parquet", "--budget", 8, "--estimators", names, cache=cache)
    assert res.exit_code == 0, res.output
    rows = load_results(tmp_path / "a.parquet")
    assert set(rows["fit_text"]) == {heldout.FIRST_HALF}
    assert set(rows["text"]) == {heldout.SECOND_HALF}
    assert set(rows["tokens"].dropna()) == {12}
    cost = rows[rows["metric"] == "fit_seconds"]
    assert set(cost["estimator"]) == {"hedgehog", "t2r"} and len(cost) == 4  # 2 maps × 2 heads
    assert (cost["value"] > 0).all()
    files = sorted((cache / heldout.FOLDER).glob("*.npz"))
    assert len(files) == 4
    for name in ("hedgehog", "t2r", "positive@fitted"):
        err = rows[(rows["estimator"] == name) & (rows["metric"] == "out_rel_frob")]
        assert len(err) == 2 and np.isfinite(err["value"]).all()
    # a second run reads the fits: the same maps, the same recorded fit cost
    stamps = [f.stat().st_mtime_ns for f in files]
    res = run(path, tmp_path / "b.parquet", "--budget", 8, "--estimators", "hedgehog,t2r",
              "--seed", 5, cache=cache)  # fmt: skip
    assert res.exit_code == 0, res.output
    again = load_results(tmp_path / "b.parquet")
    assert [f.stat().st_mtime_ns for f in sorted((cache / heldout.FOLDER).glob("*.npz"))] == stamps

    def pick(df, metric):
        sub = df[(df["metric"] == metric) & df["estimator"].isin(["hedgehog", "t2r"])]
        return sub.sort_values(["estimator", "head"])["value"].to_numpy()

    np.testing.assert_array_equal(pick(again, "fit_seconds"), pick(rows, "fit_seconds"))
    np.testing.assert_array_equal(pick(again, "out_rel_frob"), pick(rows, "out_rel_frob"))


def test_a_budget_gives_each_map_its_projections(tmp_path: Path) -> None:
    """At budget F = 8: hedgehog (2 features per projection) and trig get 4 projections, positive
    8, window+hedgehog 4 keys and 2 projections; the fit cost rows say which method and m."""
    names = "hedgehog,positive@iid,trig@iid,window+hedgehog"
    res = run(_file(tmp_path), tmp_path / "c.parquet", "--budget", 8, "--estimators", names,
              cache=tmp_path / "cache")  # fmt: skip
    assert res.exit_code == 0, res.output
    rows = load_results(tmp_path / "c.parquet")
    heads = rows[(rows["kind"] == "heads") & (rows["metric"] == "out_rel_frob")]
    m = heads.groupby("estimator")["m"].unique()
    assert {name: list(v) for name, v in m.items()} == {
        "hedgehog": [4], "positive@iid": [8], "trig@iid": [4], "window+hedgehog": [2]}  # fmt: skip
    assert set(heads["features"]) == {8}
    cost = rows[rows["metric"] == "fit_seconds"]
    assert set(zip(cost["estimator"], cost["m"], strict=True)) == {
        ("hedgehog", 4), ("window+hedgehog", 2)}  # fmt: skip


def test_a_feature_count_the_map_cannot_have_is_one_line(tmp_path: Path) -> None:
    res = run(_file(tmp_path), tmp_path / "o.parquet", "--budget", 1, "--estimators", "hedgehog",
              cache=tmp_path / "cache")  # fmt: skip
    one_line_error(res, "budget", "hedgehog", "2 features per projection")
    assert not (tmp_path / "o.parquet").exists()


def test_a_window_beyond_the_measured_half_is_one_line(tmp_path: Path) -> None:
    """24 tokens: 12 are measured, so a 13-key window cannot fit (12 can)."""
    path = _file(tmp_path)
    for window, code in ((13, 2), (12, 0)):
        res = run(path, tmp_path / f"w{window}.parquet", "--budget", 8, "--estimators", "window",
                  "--window", window, cache=tmp_path / "cache")  # fmt: skip
        if code:
            one_line_error(res, "window", "12")
        else:
            assert res.exit_code == 0, res.output


def test_a_file_too_short_to_split_is_one_line(tmp_path: Path) -> None:
    res = run(_file(tmp_path, tokens=3), tmp_path / "o.parquet", "--budget", 8, "--estimators",
              "hedgehog", cache=tmp_path / "cache")  # fmt: skip
    one_line_error(res, "cannot be split", "fitting", "measuring")
    assert not (tmp_path / "o.parquet").exists()


def test_the_fit_cache_lives_under_rfbench_cache(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RFBENCH_CACHE", str(tmp_path))
    assert heldout.cache_dir() == tmp_path / "fitted-maps"


@pytest.mark.slow  # the packaged model's forward pass: not the inner loop
def test_model_heads_are_fitted_on_gpl3_and_measured_on_gfdl(tmp_path: Path) -> None:
    """A tiny BERT folder: every row (baselines too) measures the GFDL-1.3 heads; the learned map's
    fit is of the GPL-3 heads, every sequence of its first --fit-tokens tokens (its fitting loss
    is computed on them, each sequence attending to itself); the swap-in score refuses to fit a
    learned map on the sentences it scores."""
    import tiny_bert

    from rfbench.compute import models
    from rfbench.compute.features import learned_fit as lf
    from rfbench.compute.features import registry
    from rfbench.compute.models import texts

    model = tiny_bert.make_model(tmp_path / "m")
    out, data = tmp_path / "o.parquet", tmp_path / "data"
    args = ["attention", "--model", str(model), "--layers", "0", "--tokens", "32", "--budget", "4",
            "--draws", "2", "--estimators", "hedgehog,positive@iid", "--swap-budget", "4",
            "--swap-sentences", "4", "--swap-trials", "1", "--swap-tokens", "8", "--out", str(out),
            "--fit-tokens", "100", *map(str, RUN)]  # fmt: skip
    env = {"RFBENCH_DATA": str(data), "RFBENCH_CACHE": str(tmp_path / "cache")}
    res = CliRunner(env=env).invoke(app, args)
    assert res.exit_code == 0, res.output
    rows = load_results(out)
    measured = rows[rows["kind"].isin(["heads", "baselines"])]
    assert set(measured["fit_text"]) == {"GPL-3"} and set(measured["text"]) == {"GFDL-1.3"}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RFBENCH_CACHE", str(tmp_path / "cache"))
        gfdl = models.activations(str(model), texts.text("GFDL-1.3"), 32)
        all_q, all_k, lengths = models.sequences(str(model), texts.text("GPL-3"), 32, 100)
        first = models.activations(str(model), texts.text("GPL-3"), 32)
    # 100 tokens in sequences of at most 30 (+ [CLS] and [SEP]), cut where a word starts
    assert len(lengths) == 4 and max(lengths) == 32 and sum(lengths) == 100 + 2 * len(lengths)
    cuts = np.cumsum(lengths)[:-1]
    gpl3 = [(q, k) for q, k in zip(np.split(all_q[0], cuts, axis=1),
                                   np.split(all_k[0], cuts, axis=1), strict=True)]  # fmt: skip
    uniform = measured[
        (measured["estimator"] == "uniform") & (measured["metric"] == "out_rel_frob")
    ]
    for h, value in zip(uniform["head"], uniform["value"], strict=True):
        q, k, v = gfdl.q[0][h], gfdl.k[0][h], gfdl.v[0][h]
        w = np.exp(q @ k.T - (q @ k.T).max(1, keepdims=True))
        exact = (w / w.sum(1, keepdims=True)) @ v
        assert value == pytest.approx(
            np.linalg.norm(exact - v.mean(0)) / np.linalg.norm(exact), rel=1e-10
        )
    # the cached fits are of the GPL-3 heads: their recorded loss is the KL there, not on GFDL-1.3
    est = registry.get("hedgehog", m=2)  # budget 4: 2 projections
    kl = rows[(rows["estimator"] == "hedgehog") & (rows["metric"] == "fit_kl")]
    files = sorted((tmp_path / "cache" / heldout.FOLDER).glob("hedgehog-*.npz"))
    assert len(files) == len(kl) == 2  # the tiny model's two heads of layer 0
    for path in files:
        with np.load(path) as f:
            h = int(f["head"])
            theta = np.concatenate([f[n].ravel() for n in ("Wq", "bq", "Wk", "bk")])
        value = float(kl[kl["head"] == h]["value"].iloc[0])
        on = {name: lf.sequences_kl(theta, [lf.Target.of(q[h], k[h]) for q, k in pairs],
                                    est.fmap, 2, 0.0)[0]
              for name, pairs in (("GPL-3", gpl3), ("GFDL-1.3", [(gfdl.q[0], gfdl.k[0])]),
                                  ("first", [(first.q[0], first.k[0])]))}  # fmt: skip
        assert value == pytest.approx(on["GPL-3"], rel=1e-9)
        assert value != pytest.approx(on["GFDL-1.3"], rel=1e-3)
        assert value != pytest.approx(on["first"], rel=1e-3)  # not its first sequence alone
    swap_rows = rows[rows["kind"] == "swap"]
    skipped = swap_rows[swap_rows["estimator"] == "hedgehog"]
    assert list(skipped["metric"]) == ["skipped"] and "learned map" in skipped["note"].iloc[0]


def test_the_fit_cache_keys_on_the_map_its_options_the_count_and_the_head(
    monkeypatch, tmp_path: Path
) -> None:
    """One file per (map and options, projections, head); a second fitter reads them back with
    the cost recorded when they were fitted."""
    from rfbench.compute.features import registry

    monkeypatch.setenv("RFBENCH_CACHE", str(tmp_path / "cache"))
    part = heldout.split("", str(_file(tmp_path)), 0, 0)
    names = [("hedgehog", 2), ("hedgehog", 3), ("hedgehog(iters=5)", 2), ("t2r", 2)]
    first = heldout.Fitter(part)
    for name, m in names:
        for h in (0, 1):
            first.sample(registry.get(name, m=m), np.random.default_rng(0), h, 1)
    files = sorted((tmp_path / "cache" / heldout.FOLDER).glob("*.npz"))
    assert len(files) == 8
    stamps = [f.stat().st_mtime_ns for f in files]
    again = heldout.Fitter(part)
    for name, m in names:
        for h in (0, 1):
            est = registry.get(name, m=m)
            a = again.sample(est, np.random.default_rng(1), h, 1)
            # the same map as a fit in place (m ≤ d: the start is the identity, seed-free)
            b = est.sample(np.random.default_rng(1), 4, fit=(part.fit_q[0][h], part.fit_k[0][h]))
            q, k = part.q[h], part.k[h]
            np.testing.assert_allclose(est.estimate(a, q, k), est.estimate(b, q, k), rtol=1e-9)
    assert again.costs == first.costs
    assert [f.stat().st_mtime_ns for f in files] == stamps


def test_under_causal_a_learned_map_copies_the_masked_attention(tmp_path: Path) -> None:
    """--causal: the fit is to causal attention on the fitting half (its own cache entry), and its
    recorded loss is the causal KL of the cached weights."""
    from rfbench.compute.features import learned_fit as lf
    from rfbench.compute.features import registry

    path, cache = _file(tmp_path), tmp_path / "cache"
    for extra in ((), ("--causal",)):
        out = tmp_path / f"o{len(extra)}.parquet"
        res = run(path, out, "--budget", 4, "--estimators", "hedgehog",
                  *extra, cache=cache)  # fmt: skip
        assert res.exit_code == 0, res.output
    files = sorted((cache / heldout.FOLDER).glob("hedgehog-*.npz"))
    assert len(files) == 4  # 2 heads, bidirectional and causal
    rows = load_results(tmp_path / "o1.parquet")
    part = heldout.split("", str(path), 0, 0)
    est = registry.get("hedgehog", m=2)  # budget 4: 2 projections
    kl = rows[rows["metric"] == "fit_kl"].set_index("head")["value"]
    for f in files:
        with np.load(f) as arrays:
            if str(arrays["causal"]) != "True":
                continue
            h = int(arrays["head"])
            theta = np.concatenate([arrays[n].ravel() for n in ("Wq", "bq", "Wk", "bk")])
        target = lf.Target.of(part.fit_q[0][h], part.fit_k[0][h], causal=True)
        assert kl[h] == pytest.approx(lf.attention_kl(theta, target, est.fmap, 2, 0.0)[0], rel=1e-9)


def test_the_fit_key_names_the_encoder_and_the_fitting_sequences(
    monkeypatch, tmp_path: Path
) -> None:
    """Issue 44 item 1: after a change of the encoder's code or libraries (its digest) the fit is
    computed again, never served from the fit of other activations; so after another cut of the
    fitting text (fit_tokens)."""
    import tiny_bert

    from rfbench.compute import models
    from rfbench.compute.features import registry

    model = str(tiny_bert.make_model(tmp_path / "m"))
    monkeypatch.setenv("RFBENCH_CACHE", str(tmp_path / "cache"))
    est = registry.get("hedgehog(iters=3)", m=2)

    def fit_files(fit_tokens: int) -> set[Path]:
        part = heldout.split(model, "", 16, 0, fit_tokens)
        heldout.Fitter(part).sample(est, np.random.default_rng(0), 0, 1)
        return set((tmp_path / "cache" / heldout.FOLDER).glob("*.npz"))

    first = fit_files(40)
    assert len(first) == 1
    assert fit_files(40) == first  # the same encoder and text: read back
    monkeypatch.setattr(models, "encoder_digest", lambda: "0" * 64)  # another encoder
    second = fit_files(40)
    assert len(second) == 2
    assert len(fit_files(60)) == 3  # other fitting sequences


def test_a_fit_file_with_the_wrong_shapes_is_damage_and_replaced(
    monkeypatch, tmp_path: Path
) -> None:
    """Issue 44 item 5: a cached fit whose arrays do not have the estimator's shapes (today: served,
    and the head becomes a skipped row with numpy's broadcast error) is computed again."""
    from rfbench.compute.features import registry

    monkeypatch.setenv("RFBENCH_CACHE", str(tmp_path / "cache"))
    part = heldout.split("", str(_file(tmp_path)), 0, 0)
    est = registry.get("hedgehog", m=2)
    good = heldout.Fitter(part).sample(est, np.random.default_rng(0), 0, 1)
    (path,) = (tmp_path / "cache" / heldout.FOLDER).glob("*.npz")
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files}
    arrays["Wq"] = np.zeros((4, 3))  # an identity that matches, weights of another shape
    np.savez(path, **arrays)
    again = heldout.Fitter(part).sample(est, np.random.default_rng(0), 0, 1)
    q, k = part.q[0], part.k[0]
    np.testing.assert_allclose(est.estimate(again, q, k), est.estimate(good, q, k), rtol=1e-12)
    with np.load(path) as f:
        assert f["Wq"].shape == (4, 2)  # the file was repaired


def test_a_file_where_the_fit_cache_folder_belongs_is_named_once(tmp_path: Path) -> None:
    """Issue 44 item 6: ``fitted-maps`` a file (today: internal NotADirectoryError): the maps are
    fitted without the cache, the file is named once with the command that removes it, and left
    alone."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / heldout.FOLDER).write_text("mine")
    res = run(_file(tmp_path), tmp_path / "o.parquet", "--budget", 8, "--estimators",
              "hedgehog,t2r", cache=cache)  # fmt: skip
    assert res.exit_code == 0, res.output
    assert res.output.count(f"remove it with: rm '{cache / heldout.FOLDER}'") == 1
    assert (cache / heldout.FOLDER).read_text() == "mine"
    rows = load_results(tmp_path / "o.parquet")
    assert len(rows[rows["metric"] == "fit_seconds"]) == 4


@pytest.mark.slow  # whole-text fitting or a full model pass: not the inner loop
def test_the_data_folder_receives_no_caches(tmp_path: Path) -> None:
    """Issue 44 item 6: with RFBENCH_DATA set (and RFBENCH_CACHE not), activations and fitted
    maps go to the per-user cache folder, never into the user's data folder."""
    import tiny_bert

    model = tiny_bert.make_model(tmp_path / "m")
    data, xdg = tmp_path / "data", tmp_path / "xdg"
    data.mkdir()
    args = ["attention", "--model", str(model), "--layers", "0", "--tokens", "16", "--budget", "4",
            "--estimators", "hedgehog", "--fit-tokens", "40", "--no-swap",
            "--out", str(tmp_path / "o.parquet"), *map(str, RUN)]  # fmt: skip
    env = {"RFBENCH_DATA": str(data), "RFBENCH_CACHE": None, "XDG_CACHE_HOME": str(xdg)}
    res = CliRunner(env=env).invoke(app, args)
    assert res.exit_code == 0, res.output
    assert not any(data.iterdir())
    assert list((xdg / "rfbench" / heldout.FOLDER).glob("*.npz"))
    assert list((xdg / "rfbench" / "activations").glob("*.npz"))


def test_one_layer_of_the_fitting_sequences_is_read_alone(monkeypatch, tmp_path: Path) -> None:
    """models.sequences(..., layer) reads that layer's members only, equal to the full read; a
    damaged file is computed again through the cache."""
    import tiny_bert

    from rfbench.compute import models
    from rfbench.compute.models import texts

    model = str(tiny_bert.make_model(tmp_path / "m"))
    monkeypatch.setenv("RFBENCH_CACHE", str(tmp_path / "cache"))
    text = texts.text("GPL-3")
    q, k, lengths = models.sequences(model, text, 16, 50)
    assert q.shape[0] >= 2 and q.shape[2] == sum(lengths)
    for layer in range(q.shape[0]):
        ql, kl, same = models.sequences(model, text, 16, 50, layer)
        np.testing.assert_array_equal(ql, q[layer])
        np.testing.assert_array_equal(kl, k[layer])
        assert same == lengths
    (path,) = (tmp_path / "cache" / "activations").glob("*sequences*.npz")
    with np.load(path) as f:
        arrays = {key: f[key] for key in f.files}
    arrays["q1"] = arrays["q1"][:, :-1]  # a member cut short: not served
    np.savez(path, **arrays)
    ql, _, _ = models.sequences(model, text, 16, 50, 1)
    np.testing.assert_array_equal(ql, q[1])


@pytest.mark.slow  # whole-text fitting or a full model pass: not the inner loop
def test_methods_that_fit_nothing_run_without_the_fitting_text(tmp_path: Path) -> None:
    """Random features alone: the fitting text is not run, and every head is measured (not a
    skipped row for want of fitting heads)."""
    import tiny_bert

    model = tiny_bert.make_model(tmp_path / "m")
    args = ["attention", "--model", str(model), "--layers", "0", "--tokens", "16", "--budget", "4",
            "--estimators", "positive@iid,window", "--no-swap",
            "--out", str(tmp_path / "o.parquet"), *map(str, RUN)]  # fmt: skip
    res = CliRunner(env={"RFBENCH_CACHE": str(tmp_path / "cache")}).invoke(app, args)
    assert res.exit_code == 0, res.output
    rows = load_results(tmp_path / "o.parquet")
    assert "skipped" not in set(rows["metric"])
    heads = rows[(rows["kind"] == "heads") & (rows["metric"] == "out_rel_frob")]
    assert set(heads["estimator"]) == {"positive@iid", "window"} and len(heads) == 4
    assert not list((tmp_path / "cache" / "activations").glob("*sequences*"))


def test_a_window_that_takes_the_whole_budget_blames_window(tmp_path: Path) -> None:
    """Issue 39: ``--window 10000`` blamed ``budget``; the window left the map no feature."""
    res = run(_file(tmp_path), tmp_path / "o.parquet", "--budget", 8, "--window", 10000,
              "--estimators", "window+positive@iid", cache=tmp_path / "cache")  # fmt: skip
    line = one_line_error(res, "'window': 10000", "at most 7")
    assert "'budget'" not in line
