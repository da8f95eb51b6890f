"""Result folders for ``rfbench compare``'s tests."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rfbench.compute.results import make_provenance, write_results

N_ROWS = 400


def rows(n: int = N_ROWS) -> pd.DataFrame:
    """``n`` result rows of a toy experiment: values N(0, 1), standard error 0.1, r = 0, 0.1, …"""
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "experiment": "toy", "figure": "", "estimator": "hyperbolic@iid", "kernel": "softmax",
        "metric": "mean", "value": rng.standard_normal(n), "stderr": 0.1, "n_trials": 100,
        "r": np.arange(n) / 10.0,
    })  # fmt: skip


def write(
    folder: Path,
    table: pd.DataFrame,
    cpu: float = 10.0,
    name: str = "a",
    config: Mapping[str, Any] | None = None,
) -> Path:
    """``table`` as ``<folder>/toy/<name>.parquet``, run with ``config`` in ``cpu`` seconds."""
    prov = make_provenance(config={"name": name, **(config or {})}, seed=0, command_line="test",
                           experiment="toy")  # fmt: skip
    prov["timing"] = {"jobs_wall_s": cpu, "jobs_cpu_s": cpu}
    return write_results(table, folder / "toy" / f"{name}.parquet", prov)


def one_line(capsys, *needles: str) -> str:
    """The single ``rfbench: error:`` line on stderr, holding ``needles``."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rfbench: error:"), err
    for needle in needles:
        assert needle in err, err
    return err
