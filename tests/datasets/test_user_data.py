"""The user's own data: pinned file references, one-line errors for bad files, and gram,
pointwise and classify running on a user's points and table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rfbench.compute.datasets import DataError, load, user
from rfbench.compute.experiments import get_experiment
from rfbench.compute.experiments.pointwise.experiment import canonical
from rfbench.compute.features import registry, theory
from rfbench.compute.results import load_provenance, load_results
from rfbench.compute.runner import RunOptions, run


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4))
    table = pd.DataFrame(X, columns=list("abcd")).assign(label=np.where(X[:, 0] > 0, "p", "n"))
    table.to_csv(tmp_path / "t.csv", index=False)
    table.to_parquet(tmp_path / "t.parquet")
    np.savez(
        tmp_path / "qk.npz", Q=0.3 * rng.normal(size=(12, 6)), K=0.3 * rng.normal(size=(12, 6))
    )
    np.save(tmp_path / "x.npy", 0.3 * rng.normal(size=(10, 6)))
    return {p.name: p for p in tmp_path.iterdir()}


def test_reference_pins_the_content(files) -> None:
    ref = user.reference(files["t.csv"], "label")
    assert ref.startswith(f"{files['t.csv']}#label@") and user.is_reference(ref)
    ds = load(ref)
    assert (ds.n, ds.d, ds.n_classes) == (600, 4, 2) and ds.metadata["sha256"].startswith(ref[-16:])
    files["t.csv"].write_text(files["t.csv"].read_text().replace("p\n", "n\n", 1))
    user.load_table.cache_clear()
    with pytest.raises(DataError, match="the file changed"):
        load(ref)


@pytest.mark.parametrize(
    "content, name, message",
    [
        ("a,b\n1,2\n3,x\n", "bad.csv", "column 'b' is not numeric"),
        ("a,b\n1,2\n3,\n", "nan.csv", "NaN or infinite"),
        ("not an array", "fake.npy", "not a NumPy .npy file"),
        ("PK\x03\x04 broken", "fake.npz", "not a NumPy .npz file"),
        ("\x00\x01garbage", "fake.parquet", "not a readable parquet file"),
    ],
)
def test_bad_point_files_give_one_line(tmp_path: Path, content: str, name: str, message: str):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(DataError) as exc:
        user.load_points(user.reference(path))
    assert message in str(exc.value) and "\n" not in str(exc.value) and str(path) in str(exc.value)


def test_bad_shapes_and_tables(tmp_path: Path, files) -> None:
    np.save(tmp_path / "flat.npy", np.ones(5))
    with pytest.raises(DataError, match=r"shape \(5,\)"):
        user.load_points(user.reference(tmp_path / "flat.npy"))
    np.savez(tmp_path / "qk.npz", Q=np.ones((3, 2)), K=np.ones((3, 5)))
    with pytest.raises(DataError, match="Q has 2 features but K has 5"):
        user.load_points(user.reference(tmp_path / "qk.npz"))
    with pytest.raises(DataError, match="no column 'nope'"):
        load(user.reference(files["t.csv"], "nope"))
    with pytest.raises(DataError, match="--target"):
        load(user.reference(files["t.csv"]))
    with pytest.raises(DataError, match="no such file"):
        user.reference(tmp_path / "missing.csv")


def test_points_take_q_k_and_x_in_either_case(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    q, k, x = rng.normal(size=(5, 3)), rng.normal(size=(4, 3)), rng.normal(size=(6, 3))
    for name, arrays, expected in (
        ("lower.npz", {"q": q, "k": k}, (q, k)),
        ("mixed.npz", {"q": q, "K": k}, (q, k)),
        ("x.npz", {"x": x}, (x, x)),
    ):
        np.savez(tmp_path / name, **arrays)
        got = user.load_points(user.reference(tmp_path / name))
        assert all(np.array_equal(a, b) for a, b in zip(got, expected, strict=True))
    np.savez(tmp_path / "both.npz", q=q, Q=q, K=k)
    with pytest.raises(DataError, match="holds both 'q' and 'Q'"):
        user.load_points(user.reference(tmp_path / "both.npz"))


def test_gram_on_user_queries_and_keys(files, tmp_path: Path) -> None:
    exp = get_experiment("gram")
    ref = user.reference(files["qk.npz"])
    config = exp.resolve_config(
        {"inputs": "file", "data": ref, "kernels": ["softmax"], "m": [64], "reps": 2000,
         "estimators": ["trig@iid"]}
    )  # fmt: skip
    path = run(exp, config, RunOptions(out=tmp_path / "g.parquet", backend="serial", quiet=True))
    rows = load_results(path).set_index("metric")
    assert rows.loc["frob_sq", "d"] == 6 and rows.loc["frob_sq", "n_points"] == 12
    mc, th = rows.loc["frob_sq", ["value", "stderr"]], rows.loc["theory_frob_sq", "value"]
    assert abs(mc["value"] - th) < 5 * mc["stderr"] and 5 * mc["stderr"] < th / 2
    assert load_provenance(path)["config"]["data"] == ref  # path and sha256 prefix


def test_pointwise_on_user_pairs_matches_the_closed_form(
    files, tmp_path: Path, monkeypatch
) -> None:
    exp = get_experiment("pointwise")
    # a relative path: the reference (and so every job's random stream) is the same in every
    # run, not one stream per pytest temporary folder
    monkeypatch.chdir(tmp_path)
    ref = user.reference(files["x.npy"].name)  # pairs (X[0], X[1]), (X[2], X[3]), ...
    config = exp.resolve_config(
        {
            "data": ref,
            "estimators": ["positive@iid", "trig@orf"],
            "projection_budget": [16],
            "samples": 4000,
        }
    )
    rows = load_results(
        run(exp, config, RunOptions(out=tmp_path / "p.parquet", backend="serial", quiet=True))
    )
    mse = rows[rows["metric"] == "mse"].set_index(["estimator", "pair_index"])
    th = rows[rows["metric"] == "theory_mse"].set_index(["estimator", "pair_index"])["value"]
    assert len(mse) == 2 * 5 and mse["r"].isna().all() and (mse["norm_q"] > 0).all()
    z = (mse["value"] - th.loc[mse.index]) / mse["stderr"]
    assert (z.abs() < 5).all(), z


def test_canonical_pairs_keep_the_kernel_and_the_closed_form() -> None:
    rng = np.random.default_rng(1)
    x, y = 0.4 * rng.normal(size=(5, 7)), 0.4 * rng.normal(size=(5, 7))
    cx, cy = canonical(x, y)
    np.testing.assert_allclose(np.einsum("ij,ij->i", cx, cy), np.einsum("ij,ij->i", x, y))
    est = registry.get("hyperbolic@orf", m=8)
    np.testing.assert_allclose(theory.mse(est, cx, cy), theory.mse(est, x, y), rtol=1e-10)


def test_classify_on_a_user_table(files, tmp_path: Path) -> None:
    exp = get_experiment("classify")
    ref = user.reference(files["t.parquet"], "label")
    config = exp.resolve_config({"data": ref, "m": [4], "trials": 30})
    rows = load_results(
        run(exp, config, RunOptions(out=tmp_path / "c.parquet", backend="serial", quiet=True))
    )
    acc = rows[rows["metric"] == "accuracy"]
    assert set(acc["dataset"]) == {ref} and acc["value"].between(0, 1).all()
    exact = acc[acc["estimator"] == "exact"]["value"].iloc[0]
    assert exact > 0.7  # the label is a linear rule of the features
