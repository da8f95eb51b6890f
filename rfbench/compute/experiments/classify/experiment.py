"""Kernel-regression classification: SimRF Fig. 8, Tables 2-3, Fig. 10 and DERF Fig. 3
(docs/experiments.md#simrf-fig8, #simrf-table2, #simrf-table3, #simrf-fig10, #derf-fig3,
#classify-sigma; the parameters' help says what each option does).

Protocol ``simrf``: the authors' 95/5 split, accuracy on test over ``trials`` draws ± std/√trials.
Protocol ``derf``: 90/5/5; with ``tune``, σ is chosen per (data set, estimator, M) by the mean
validation accuracy (``val_accuracy`` rows), then tested (``accuracy`` row at the chosen σ), the
same ω reused across σ and on test. Every row says where its σ came from (``sigma_rule``).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from rfbench.compute.datasets import DataError, user
from rfbench.compute.datasets import check as dataset_info
from rfbench.compute.datasets.preprocess import min_rows
from rfbench.compute.experiments import register_experiment
from rfbench.compute.experiments.base import ConfigError, DataFile, Experiment, JobSpec
from rfbench.compute.experiments.chunks import CHUNK_BYTES
from rfbench.compute.experiments.classify import bandwidth
from rfbench.compute.experiments.classify.data import SIMRF_SIGMA, default_sigma, prepared
from rfbench.compute.experiments.classify.data import fit_sets as fit_on
from rfbench.compute.experiments.classify.kernel_regression import (
    CHUNK,
    exact_accuracy,
    mean_pair_norm,
    rf_accuracies,
    slice_draws,
)
from rfbench.compute.experiments.classify.params import DTYPES, Params, budget_given
from rfbench.compute.experiments.classify.sequential import cell_rows, cell_specs, sigma_rows
from rfbench.compute.experiments.classify.simrf_replay import (
    RELEASED,
    RELEASED_FAST,
    released_jobs,
    released_rows,
)
from rfbench.compute.experiments.classify.simrf_replay import check_config as check_stream
from rfbench.compute.features import registry
from rfbench.compute.features.base import Estimator
from rfbench.compute.stats import mean_se

EXACT = "exact"
#: the refusal of an estimator without per-projection log terms (Estimator.projection_log_terms)
NO_TERMS = (
    "estimator {name!r} lacks per-projection log terms (Estimator.projection_log_terms), "
    "which the kernel-regression classifier streams; use a component@weights estimator"
)


def fitted_params(est: Estimator, rng, d: int, X: np.ndarray, Y: np.ndarray) -> dict:
    """Parameters of a data-dependent estimator fitted on (X, Y) (DERF eq. 8); {} otherwise."""
    if not est.data_dependent:
        return {}
    return est.sample(rng, d, draws=1, fit=(X, Y)).params


def projections(spec: Mapping[str, Any], d: int) -> int:
    """M, the projections of a random-feature job on d inputs: ⌈F/l⌉ at a feature budget F (l
    the estimator's features per projection: a [sin, cos] map gets F/2), else m (times d with
    ``m_per_d``)."""
    if "budget" in spec:
        probe = registry.get(spec["estimator"], kernel=spec["kernel"], m=1)
        return -(-spec["budget"] // probe.features_per_projection)
    return spec["m"] * d if spec["m_per_d"] else spec["m"]


def datasets(config: Mapping[str, Any]) -> list[str]:
    """The data sets a config runs on: the user's table (``data``) if given, else ``dataset``."""
    return [config["data"]] if config["data"] else list(config["dataset"])


def prepared_for(config: Mapping[str, Any], name: str):
    """The split a config's jobs on data set ``name`` use (its subset if it has one)."""
    subset = config["subset"] if name in config["subset_datasets"] else [0, 0]
    return prepared(
        name, config["protocol"], config["split_seed"], config["compat"],
        tuple(subset) if subset != [0, 0] else (), config["pad"],
    )  # fmt: skip


def sigma_rule(spec: Mapping[str, Any], data, metric: str) -> str:
    """Where a row's σ came from (docs/experiments.md#classify-sigma): the σ given or the one
    tuned from them, else the documented σ it equals (published, searched, or gamma-scale)."""
    if "sigmas" in spec:
        return bandwidth.TUNED if metric == "accuracy" else bandwidth.GIVEN
    name, sigma = spec["dataset"], spec["sigma"]
    rule = default_rule(name)
    if rule == bandwidth.GAMMA_SCALE:
        default = bandwidth.gamma_scale_sigma(data.train.X, spec["kernel"])
    else:
        default = default_sigma(name)
    return rule if sigma == default else bandwidth.GIVEN


def default_rule(name: str) -> str:
    """Where the σ of ``sigma = [0]`` comes from on data set ``name``."""
    if name in SIMRF_SIGMA:
        return bandwidth.PUBLISHED
    return bandwidth.SEARCHED if default_sigma(name) is not None else bandwidth.GAMMA_SCALE


@register_experiment
class Classify(Experiment):
    """Kernel-regression classification with random features vs the exact kernel."""

    name = "classify"
    description = (
        "Kernel-regression classification (SimRF Fig. 8, Tables 2-3, Fig. 10; DERF Fig. 3): "
        "accuracy of random-feature estimators of the Gaussian kernel vs the exact kernel."
    )
    tagline = "Kernel-regression classification accuracy (SimRF, DERF)."
    params = Params
    spec_only = True
    profiles = {
        "quick": {"dataset": ["wine", "banknote"], "m": [1, 2], "trials": 20, "val_trials": 5},
        "paper": {},
    }
    data_file = DataFile(table_for="dataset")

    def profile_values(self, profile: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
        """The profile's overrides; its m sizes runs in projections only, so a run given a
        ``budget`` takes the rest of the profile."""
        own = super().profile_values(profile, params)
        return {k: v for k, v in own.items() if k != "m"} if budget_given(params) else own

    @staticmethod
    def _check_rows(name: str, protocol: str) -> None:
        """A user table too small for the split (a part without a row) is a one-line error."""
        rows, least = user.load_table(name).n, min_rows(protocol)
        if rows < least:
            path, _, _ = user.parse(name)
            raise ConfigError(
                f"data file {path}: {rows} rows, too few for the {protocol} split of classify "
                f"(at least {least} rows: its smallest part takes {100 // least} %)"
            )

    @staticmethod
    def _check_features(name: str, estimators: Sequence[str], kernel: str) -> None:
        """An estimator whose projections a user table's few features cannot carry (simplex
        couplings need two) is a one-line error, not a failed job."""
        d = user.load_table(name).X.shape[1]
        for estimator in estimators:
            weights = getattr(registry.get(estimator, kernel=kernel, m=1), "weights", None)
            if weights is None or weights.data_dependent:
                continue
            try:
                weights.sample(np.random.default_rng(0), d, 1, 1)
            except ValueError as exc:
                path, _, _ = user.parse(name)
                raise ConfigError(f"data file {path}: estimator {estimator!r}: {exc}") from None

    def validate_config(self, config: Mapping[str, Any]) -> None:
        def check(key: str, ok: bool, allowed: str) -> None:
            if not ok:
                raise ConfigError.bad_value(key, config[key], allowed)

        check("dataset", bool(datasets(config)), "one or more data sets")
        for name in datasets(config):
            try:
                dataset_info(name)
            except DataError as exc:
                raise ConfigError(str(exc)) from None
            if user.is_reference(name):
                self._check_rows(name, config["protocol"])
                self._check_features(name, config["estimators"], config["kernel"])
        check("estimators", bool(config["estimators"]) or config["exact"], "component@weights")
        for name in config["estimators"]:
            try:
                est = registry.get(name, kernel=config["kernel"], m=1)
            except (ValueError, TypeError) as exc:
                raise ConfigError.bad_value("estimators", name, str(exc)) from None
            if not est.projection_terms:
                raise ConfigError(NO_TERMS.format(name=name))
        sig = config["sigma"]
        by_set = config["trials_by_dataset"]
        unknown = sorted(set(by_set) - set(datasets(config)))
        check("trials_by_dataset", not unknown,
              f"names of the run's data sets ({', '.join(datasets(config))}); "
              f"not {', '.join(map(repr, unknown))}")  # fmt: skip
        check("tune", not config["tune"] or config["protocol"] == "derf",
              "false unless protocol = derf (tuning needs a validation split)")  # fmt: skip
        check("tune", not config["tune"] or len(sig) > 1 or sig != [0.0], "a σ grid to tune")
        check_stream(config)
        if config["stop"] == "resolved":
            check("stop", config["stream"] == "rfbench", "fixed with stream = released")
            check("compare", config["compare"] in ("", *config["estimators"]),
                  f"one of estimators ({', '.join(config['estimators'])}) or empty")  # fmt: skip
            check("alternatives", set(config["alternatives"]) <= set(config["estimators"]),
                  "names of the run's estimators")  # fmt: skip
            grid = len(sig) > 1 and not config["tune"]
            check("select_sigma", not config["select_sigma"] or grid,
                  "false unless sigma is a grid of two or more (and tune is false)")  # fmt: skip

    def grid(self, config: Mapping[str, Any]) -> list[JobSpec]:
        keys = ("protocol", "kernel", "pad", "fit", "compat", "dtype", "split_seed")
        common = {k: config[k] for k in keys}
        if not config["budget"]:  # m_per_d reads m, not a budget
            common["m_per_d"] = config["m_per_d"]
        sizes = [{"budget": f} for f in config["budget"]] or [{"m": m} for m in config["m"]]
        if config["tune"]:
            common["val_trials"] = config["val_trials"]
        jobs = []
        for name in datasets(config):
            subset = config["subset"] if name in config["subset_datasets"] else [0, 0]
            trials = config["trials_by_dataset"].get(name, config["trials"])
            base = {**common, "dataset": name, "subset": [] if subset == [0, 0] else subset,
                    "trials": trials}  # fmt: skip
            sigmas = [self.sigma_of(config, name)] if config["sigma"] == [0.0] else config["sigma"]
            points = [{"sigmas": sigmas}] if config["tune"] else [{"sigma": s} for s in sigmas]
            for point in points:
                if config["exact"]:
                    jobs.append(JobSpec(base, estimator=EXACT, **point))
                for est in config["estimators"]:
                    for size in sizes:
                        jobs.append(JobSpec(base, estimator=est, **size, **point))
        if config["stream"] == "released":
            return released_jobs(jobs, config["estimators"])
        return cell_specs(jobs, config) if config["stop"] == "resolved" else jobs

    @staticmethod
    def sigma_of(config: Mapping[str, Any], name: str) -> float:
        """The σ of ``sigma = [0]``: the published (or searched) one, else SVC's gamma='scale'
        rule on the training split of the run (bandwidth.gamma_scale_sigma)."""
        sigma = default_sigma(name)
        if sigma is None:
            sigma = bandwidth.gamma_scale_sigma(
                prepared_for(config, name).train.X, config["kernel"]
            )
        return sigma

    def run_job(self, spec: JobSpec, rng: np.random.Generator) -> list[dict[str, Any]]:
        data = prepared(
            spec["dataset"], spec["protocol"], spec["split_seed"], spec["compat"],
            tuple(spec["subset"]), spec["pad"],
        )  # fmt: skip
        if spec.get("estimator") == EXACT:
            rows = self._exact(spec, data)
        elif "estimators" in spec or "sigma_grid" in spec:  # a sequential cell
            rows = (sigma_rows if "sigma_grid" in spec else cell_rows)(
                spec, data, rng, lambda s, part: self._sets(data, s, part),
                lambda name: projections(spec.replace(estimator=name), data.d), fitted_params,
            )  # fmt: skip
        elif spec["estimator"] in (RELEASED, RELEASED_FAST):
            rows = released_rows(spec, data, rng)
        else:
            rows = self._random_features(spec, data, rng)
        note = []
        if spec["pad"]:
            note.append(f"zero-padded from d = {data.d_raw} to {data.d}")
        if spec["subset"]:
            note.append(f"first {spec['subset'][0]} train / {spec['subset'][1]} eval rows")
        common = {
            "kernel": spec["kernel"], "dataset": spec["dataset"], "d": data.d,
            "protocol": spec["protocol"], "note": "; ".join(note),
            "sigma_published": SIMRF_SIGMA.get(spec["dataset"]),
        }  # fmt: skip

        def at(row: dict[str, Any]) -> JobSpec:  # a σ-selection cell's row names its σ
            return spec.replace(sigma=row["sigma"]) if "sigma_grid" in spec else spec

        return [{**common, **row, "sigma_rule": sigma_rule(at(row), data, row["metric"])}
                for row in rows]  # fmt: skip

    # ------------------------------------------------------------------ jobs

    @staticmethod
    def _sets(data, sigma: float, part: str):
        """σ-scaled (train X, Y, query X, query y) for the evaluation ``part``."""
        q = getattr(data, part)
        return sigma * data.train.X, data.Y, sigma * q.X, q.y

    def _exact(self, spec: JobSpec, data) -> list[dict[str, Any]]:
        kernel = spec["kernel"]
        base = {"estimator": EXACT, "stderr": None, "n_trials": 1}
        if "sigmas" not in spec:
            Xtr, Y, Xq, yq = self._sets(data, spec["sigma"], "test")
            acc = exact_accuracy(kernel, Xtr, Y, Xq, yq)
            return [
                {**base, "sigma": spec["sigma"], "metric": "accuracy", "value": acc},
                {**base, "sigma": spec["sigma"], "metric": "v_mean",
                 "value": mean_pair_norm(Xq, Xtr)},
            ]  # fmt: skip
        rows = []
        for sigma in spec["sigmas"]:
            acc = exact_accuracy(kernel, *self._sets(data, sigma, "val"))
            rows.append({**base, "sigma": sigma, "metric": "val_accuracy", "value": acc})
        best = spec["sigmas"][int(np.argmax([r["value"] for r in rows]))]
        acc = exact_accuracy(kernel, *self._sets(data, best, "test"))
        return rows + [{**base, "sigma": best, "metric": "accuracy", "value": acc}]

    def _random_features(self, spec: JobSpec, data, rng) -> list[dict[str, Any]]:
        d = data.d
        M = projections(spec, d)
        est = registry.get(spec["estimator"], kernel=spec["kernel"], m=M)
        n_test = spec["trials"]
        base = {"estimator": spec["estimator"], "m": M, "m_per_d": M / d}
        if "budget" in spec:
            base["budget"] = spec["budget"]

        fit_sets = partial(fit_on, data, spec["fit"])

        def evaluate(proj, sigma: float, part: str, metric: str) -> dict[str, Any]:
            params = fitted_params(est, rng, d, *fit_sets(sigma, part))
            sets = self._sets(data, sigma, part)
            acc = rf_accuracies(est, proj, params, *sets, dtype=DTYPES[spec["dtype"]])
            mean, se = mean_se(acc)
            return {**base, "sigma": sigma, "metric": metric, "value": mean,
                    "stderr": se, "n_trials": len(acc)}  # fmt: skip

        if "sigmas" not in spec:
            sigma = spec["sigma"]
            draw = est.sample(rng, d, draws=n_test, fit=fit_sets(sigma, "test"))
            return [evaluate(draw.projections["omega"], sigma, "test", "accuracy")]
        n_val = spec["val_trials"]
        first = spec["sigmas"][0]
        proj = est.sample(rng, d, draws=max(n_val, n_test), fit=fit_sets(first, "val"))
        proj = proj.projections["omega"]
        val_proj = slice_draws(proj, 0, n_val)
        rows = [evaluate(val_proj, s, "val", "val_accuracy") for s in spec["sigmas"]]
        best = spec["sigmas"][int(np.argmax([r["value"] for r in rows]))]
        return rows + [evaluate(slice_draws(proj, 0, n_test), best, "test", "accuracy")]

    def job_cost(self, spec: JobSpec) -> float | None:
        """Longest-first scheduling: training rows × features × draws evaluated (every σ of a
        search included); the exact classifier, query × training pairs × d per σ (measured ~5×
        cheaper per pair). None for a user table or the released replay (grid order)."""
        from rfbench.compute.datasets.registry import DATASETS, get

        if "estimators" in spec:  # a sequential cell: its estimators at the cap
            one = {k: v for k, v in spec.items() if k != "estimators"}
            return sum(self.job_cost(JobSpec(one, estimator=e)) or 0.0 for e in spec["estimators"])
        name, estimator = spec["dataset"], spec["estimator"]
        if name not in DATASETS or estimator in (RELEASED, RELEASED_FAST):
            return None
        rows, d = get(name).n_rows, get(name).n_features
        if rows is None or d is None:
            return None
        rows = sum(spec["subset"]) if spec["subset"] else rows
        sigmas = len(spec.get("sigmas", spec.get("sigma_grid", [0])))
        if estimator == EXACT:
            return rows * rows * d * (sigmas + 1) / 100
        features = projections(spec, d)
        draws = spec["trials"] + (spec["val_trials"] * sigmas if "sigmas" in spec else 0)
        draws *= sigmas if "sigma_grid" in spec else 1
        return float(rows * features * draws)

    memory_parameters = ("m", "budget", "trials", "val_trials")
    range_parameters = ("sigma",)
    probe_overrides = {"trials": 2, "val_trials": 2}

    def peak_memory(self, config: Mapping[str, Any]) -> int:
        """All trials' projections (trials × M × d) with a working copy, and three row chunks of
        the 2M-column feature matrix (at least 64 rows; kernel_regression.CHUNK entries), in
        float64, for the widest of the run's data sets, a user's tables included (0 for data sets
        of unknown width)."""
        from rfbench.compute.datasets.registry import DATASETS, get

        def width(name: str) -> int | None:  # a user's table: its columns but the label
            if user.is_reference(name):
                return user.declared_shape(name)[1] - 1
            return get(name).n_features

        names = [config["data"]] if config["data"] else config["dataset"]
        widths = [width(n) for n in names if n in DATASETS or user.is_reference(n)]
        if not widths or None in widths:
            return 0
        d = max(widths)
        if config["pad"]:
            d = 1 << (d - 1).bit_length()
        if config["budget"]:  # ⌈F/l⌉ ≤ F projections
            big_m = max(config["budget"])
        else:
            big_m = max(config["m"]) * (d if config["m_per_d"] else 1)
        trials = max(
            [config["trials"], config["val_trials"], *config["trials_by_dataset"].values()]
        )
        chunk = max(64 * 2 * big_m, CHUNK)
        return 4 * CHUNK_BYTES + 8 * (2 * trials * big_m * d + 3 * chunk)

    def finalize(self, rows: pd.DataFrame, config: Mapping[str, Any]) -> pd.DataFrame:
        """The rows as they are; warns (one line on stderr) when a σ that scored the test
        accuracy leaves the kernel degenerate (bandwidth.degenerate; a tuned σ is the
        validation's choice and is not judged)."""
        if not config["tune"] and len(rows) and "sigma" in rows:
            problems = []
            test = rows[rows["metric"] == "accuracy"]
            for (name, sigma), _ in test.groupby(["dataset", "sigma"], sort=False):
                data = prepared_for(config, name)
                share = bandwidth.degenerate(config["kernel"], data.test.X, data.train.X, sigma)
                if share is not None:
                    problems.append((name, float(sigma), share))
            if problems:
                name, sigma, _ = problems[0]
                default = self.sigma_of(config, name)
                hint = (
                    f"the default (--sigma 0) is σ = {default:.3g} on {name} ({default_rule(name)})"
                    if default != sigma
                    else "a smaller σ spreads the kernel"
                )
                print(bandwidth.warning_line(config["kernel"], problems, hint), file=sys.stderr)
        return rows
