"""The experiment interface: a config expands into a grid of pure jobs, each a function of its spec
and a generator seeded from :func:`job_key` (docs/architecture.md#seeding, #result-schema).
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from rfbench.compute.experiments.params import (
    ConfigError,
    ExperimentParams,
    Param,
    describe,
    renamed,
    resolve,
)
from rfbench.compute.seeding import canonical_json
from rfbench.compute.text import first_sentence

#: Profiles every experiment and config file may name (docs/architecture.md#cli).
PROFILES: tuple[str, ...] = ("quick", "paper")
#: Config keys that describe a run rather than parametrise its jobs.
RESERVED_KEYS: tuple[str, ...] = ("experiment", "name", "figure", "profile")
#: a config's ``name`` and ``figure`` become file names: letters, digits, '.', '_', '-' only
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*")
SAFE_NAME_RULE = (
    "a name of at most 100 letters, digits, '_', '-' and single dots, starting with a letter "
    "or digit (it becomes a file name inside the results folder)"
)


def _freeze(key: str, value: Any) -> Any:
    """A hashable, JSON-serialisable copy of a job parameter value."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list | tuple):
        return tuple(_freeze(key, v) for v in value)
    raise TypeError(
        f"job parameter {key!r} = {value!r}: values must be str, int, float, bool, None "
        "or lists of these"
    )


class JobSpec(Mapping[str, Any]):
    """One job's key (docs/architecture.md#seeding): an immutable mapping of parameters plus the
    repetition ``rep``.

    ``JobSpec(estimator="trig@iid", r=1.5, m=128, rep=3)``. Values are scalars or tuples of them,
    so a spec is hashable and JSON-serialisable; ``rep`` defaults to 0.
    """

    __slots__ = ("_items", "_json")

    def __init__(self, params: Mapping[str, Any] | None = None, /, **kwargs: Any) -> None:
        merged = {"rep": 0, **(params or {}), **kwargs}
        for key in merged:
            if not isinstance(key, str) or key == "experiment":
                raise TypeError(
                    f"job parameter names must be strings other than 'experiment': {key!r}"
                )
        rep = merged["rep"]
        if isinstance(rep, bool) or not isinstance(rep, int | np.integer) or rep < 0:
            raise TypeError(f"job repetition 'rep' must be a non-negative integer, got {rep!r}")
        items = {k: _freeze(k, merged[k]) for k in sorted(merged)}
        object.__setattr__(self, "_items", items)
        object.__setattr__(self, "_json", canonical_json(items))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("JobSpec is immutable")

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._json)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, JobSpec):
            return self._json == other._json
        return NotImplemented

    def __repr__(self) -> str:
        return f"JobSpec({', '.join(f'{k}={v!r}' for k, v in self._items.items())})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (JobSpec, (dict(self._items),))

    @property
    def rep(self) -> int:
        """The repetition index."""
        return int(self._items["rep"])

    def to_json(self) -> str:
        """Canonical JSON of the spec (sorted keys; 1.0 and 1 are the same point)."""
        return self._json

    def replace(self, **changes: Any) -> JobSpec:
        """A copy with some parameters changed."""
        return JobSpec({**self._items, **changes})


def job_key(experiment: str, spec: JobSpec, unkeyed: Collection[str] = ()) -> dict[str, Any]:
    """The key whose stable hash seeds the job's generator: ``{"experiment": name, **spec}``
    without the ``unkeyed`` entries (:attr:`Experiment.unkeyed`: which methods a job measures,
    each drawing from its own keyed substream, so adding one leaves the others' draws alone)."""
    return {"experiment": experiment, **{k: v for k, v in spec.items() if k not in unkeyed}}


#: the largest number whose square is a finite float64
SQRT_MAX_FLOAT = math.sqrt(sys.float_info.max)


class ResolvedConfig(dict):
    """A config its experiment resolved and validated (:meth:`Experiment.check_config`).

    Read-only, so a run can trust it: the runner and the CLI pass it along and the config is
    validated once per run. Build a new dict (``{**config, "m": [64]}``) to change a value; it is
    validated again when resolved.
    """

    __slots__ = ()

    def _read_only(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("a resolved config is read-only: build a new dict and resolve it")

    __setitem__ = __delitem__ = __ior__ = _read_only  # type: ignore[assignment]
    clear = pop = popitem = setdefault = update = _read_only  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (ResolvedConfig, (dict(self),))


@dataclass(frozen=True)
class DataFile:
    """What ``--data PATH`` means for an experiment with a ``data`` parameter (README "Your own
    data"): by default a file of points, with the CLI's help text."""

    #: the parameter a labelled table replaces (its ``--target`` column holds the labels); empty:
    #: the file holds points and every column is used
    table_for: str = ""
    #: config values the file needs (gram reads its points from the file)
    sets: Mapping[str, Any] = field(default_factory=dict)
    #: defaults the file changes unless given (a user's N points cost N² per draw)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    #: the help of ``--data`` is the help of the experiment's ``data`` (attention: Q, K, V heads)
    own_help: bool = False


class Experiment:
    """Base class of experiments (docs/extending.md#experiment). Subclasses set ``name`` and
    ``params`` and implement ``grid`` and ``run_job``."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    #: one line for command lists (``rfbench --help``); empty: the description's first sentence
    tagline: ClassVar[str] = ""
    #: job-spec entries that do not seed the job's generator (:func:`job_key`): the list of
    #: methods one job measures, each of which draws from ``seeding.substream(rng, its key)``
    unkeyed: ClassVar[tuple[str, ...]] = ()
    #: the parameter model: the one declaration of every parameter
    params: ClassVar[type[ExperimentParams]] = ExperimentParams
    profiles: ClassVar[Mapping[str, Mapping[str, Any]]] = {"quick": {}, "paper": {}}
    #: what ``--data PATH`` means, for an experiment with a ``data`` parameter
    data_file: ClassVar[DataFile] = DataFile()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Refuse the ``defaults`` and ``help`` dictionaries of earlier releases: ``params`` is the
        one declaration of the parameters."""
        super().__init_subclass__(**kwargs)
        if "defaults" in cls.__dict__ or "help" in cls.__dict__:
            raise TypeError(
                f"{cls.__name__} declares defaults/help: declare its parameters in a params model "
                "(docs/extending.md#experiment)"
            )

    @classmethod
    def parameters(cls) -> dict[str, Param]:
        """key -> :class:`~rfbench.compute.experiments.params.Param` of every parameter, in
        declaration order."""
        return describe(cls.params)

    # ----------------------------------------------------------------------- configuration

    def resolve_config(
        self,
        params: Mapping[str, Any] | None = None,
        profile: str | None = None,
        *,
        name: str | None = None,
        figure: str | None = None,
    ) -> ResolvedConfig:
        """defaults ⊕ profile overrides ⊕ ``params``, type-checked and validated.

        The result also holds the reserved keys ``experiment``, ``name``, ``figure``, ``profile``.
        """
        if profile is not None and profile not in PROFILES:
            raise ConfigError.bad_value("profile", profile, ", ".join(PROFILES))
        merged: dict[str, Any] = {}  # old names renamed layer by layer: a later layer wins
        own = self.profile_values(profile, params or {}) if profile else {}
        merged.update(renamed(self.params, own, self.name))
        merged.update(renamed(self.params, params or {}, self.name))
        if name is not None:
            merged["name"] = name
        if figure is not None:
            merged["figure"] = figure
        merged["profile"] = profile
        return self.check_config(merged)

    def profile_values(self, profile: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
        """The overrides ``profile`` brings to a run given ``params`` (default: all of them)."""
        return self.profiles.get(profile, {})

    def check_config(self, config: Mapping[str, Any]) -> ResolvedConfig:
        """Fill missing defaults and validate: reserved keys, then the values (``params``: unknown
        keys, types, bounds), then ``validate_config``.

        A config this experiment already resolved (a :class:`ResolvedConfig`) passes unchanged,
        unvalidated: each run validates its config once.
        """
        if isinstance(config, ResolvedConfig) and config.get("experiment") == self.name:
            return config
        experiment = config.get("experiment", self.name)
        if experiment != self.name:
            raise ConfigError(f"config is for experiment {experiment!r}, not {self.name!r}")
        reserved: dict[str, Any] = {
            "experiment": self.name,
            "name": config.get("name") or self.name,
            "figure": config.get("figure") or "",
            "profile": config.get("profile"),
        }
        for key in ("name", "figure"):
            if not isinstance(reserved[key], str):
                raise ConfigError.bad_value(key, reserved[key], "a string")
            if reserved[key] and (
                len(reserved[key]) > 100 or not SAFE_NAME.fullmatch(reserved[key])
            ):
                raise ConfigError.bad_value(key, reserved[key], SAFE_NAME_RULE)
        values = {k: v for k, v in config.items() if k not in RESERVED_KEYS}
        resolved = {**reserved, **resolve(self.params, values, self.name)}
        resolved.update(self._pinned_files(resolved))
        for key in self.range_parameters:
            found = resolved.get(key)
            for value in found if isinstance(found, list) else [found]:
                if isinstance(value, float) and abs(value) > SQRT_MAX_FLOAT:
                    raise ConfigError.bad_value(
                        key, value, f"a number whose square float64 holds (|{key}| < 1e154)"
                    )
        self.validate_config(resolved)
        return ResolvedConfig(resolved)

    def _pinned_files(self, resolved: Mapping[str, Any]) -> dict[str, Any]:
        """The user files a config names (``data``; a labelled table also among the data sets
        it replaces) as pinned references ``PATH[#TARGET]@SHA256PREFIX``
        (rfbench.compute.datasets.user.pinned), wherever the config names them (a list's entry,
        a table's key: classify's trials_by_dataset, subset_datasets)."""
        from rfbench.compute.datasets import user

        table = self.data_file.table_for
        names = [resolved.get("data")]
        names += resolved.get(table) or [] if table else []
        pins = {n: user.pinned(n) for n in names if isinstance(n, str) and user.is_reference(n)}
        pins = {name: ref for name, ref in pins.items() if name != ref}

        def pin(value: Any) -> Any:
            if isinstance(value, str):
                return pins.get(value, value)
            if isinstance(value, list):
                return [pin(v) for v in value]
            if isinstance(value, dict):
                return {pins.get(k, k): v for k, v in value.items()}
            return value

        return {k: pin(v) for k, v in resolved.items() if k not in RESERVED_KEYS} if pins else {}

    #: integer parameters (scalars or lists) that :meth:`peak_memory` grows with, in the order a
    #: refusal names them (the runner finds the largest value of each that fits)
    memory_parameters: ClassVar[tuple[str, ...]] = ()

    #: float parameters whose size float64 bounds (input norms, scales): the runner probes each
    #: estimator at their extreme values before any job and refuses values that overflow
    #: (:mod:`rfbench.compute.runner.ranges`)
    range_parameters: ClassVar[tuple[str, ...]] = ()
    #: spec values that make a range probe cheap (fewer samples or repetitions)
    probe_overrides: ClassVar[Mapping[str, Any]] = {}

    def peak_memory(self, config: Mapping[str, Any]) -> int:
        """Estimated peak bytes of the largest job of a resolved ``config`` (0: no estimate).

        The runner refuses a run whose jobs cannot fit the memory budget before any job starts
        (:mod:`rfbench.compute.runner.memory`); an estimate errs on the high side by a small factor.
        """
        return 0

    def validate_config(self, config: Mapping[str, Any]) -> None:
        """Semantic checks of a resolved config; raise :class:`ConfigError` naming the bad value."""

    def begin_run(self, force: bool) -> None:
        """Called by the runner before the grid of every run. An experiment that keeps caches of
        its own (the attention experiment's model activations) computes them again during a run
        with ``force`` (``--force`` recomputes every cache a run reads). Default: nothing."""

    #: ``run_job`` reads only its spec: :meth:`cache_context` is empty, so a grown grid (more
    #: points or repetitions) reuses the finished jobs
    spec_only: ClassVar[bool] = False

    def cache_context(self, config: Mapping[str, Any]) -> Mapping[str, Any]:
        """What a job's rows depend on besides its spec, its seed and the code (for the cache):
        nothing if :attr:`spec_only`, else the whole config (safe)."""
        return {} if self.spec_only else {k: v for k, v in config.items() if k not in RESERVED_KEYS}

    # ----------------------------------------------------------------------- computation

    def grid(self, config: Mapping[str, Any]) -> list[JobSpec]:
        """The jobs of a resolved config, in the order their rows appear in the output."""
        raise NotImplementedError

    def run_job(
        self, spec: JobSpec, rng: np.random.Generator
    ) -> Sequence[Mapping[str, Any]] | pd.DataFrame:
        """The rows of one job: a pure function of ``spec`` and ``rng`` (no I/O, no printing)."""
        raise NotImplementedError

    def job_cost(self, spec: JobSpec) -> float | None:
        """A rough relative estimate of the job's CPU time (any unit), or None if unknown.

        When every job of a run has one, the runner starts them longest first, so that no long
        job runs alone at the end while the other workers idle (LPT scheduling). Only the order
        of work changes: a job's rows depend on its key, and the output is in grid order.
        """
        return None

    def finalize(self, rows: pd.DataFrame, config: Mapping[str, Any]) -> pd.DataFrame:
        """Aggregate the rows of all jobs (in grid order); default: keep them as they are."""
        return rows

    @classmethod
    def short_description(cls) -> str:
        """``tagline``, else the first sentence of ``description``."""
        return cls.tagline or first_sentence(cls.description)

    def __repr__(self) -> str:
        return f"<experiment {self.name!r}>"
