"""CLI conventions: one-line command summaries, ``--x/--no-x`` booleans, typed metavars, plural
list options with singular aliases, ``--version`` and shell completion."""

from __future__ import annotations

from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import rfbench
from rfbench.cli import experiments as cli_experiments
from rfbench.cli import groups
from rfbench.cli.app import app
from rfbench.cli.experiments import add_experiment_command
from rfbench.cli.params import flags
from rfbench.compute.experiments import Experiment, get_experiment
from rfbench.compute.experiments.base import first_sentence
from rfbench.compute.experiments.params import ExperimentParams, Values

BUILT_IN = ("classify", "clusters", "cost", "gram", "pointwise", "precision", "qmc", "theory",
            "variance")  # fmt: skip


class ToyParams(ExperimentParams):
    dataset: Values[str] = ["a", "b"]
    regimes: Values[str] = ["x"]
    kernel: str = "softmax"
    kernels: Values[str] = ["gaussian"]
    density_v: Values[float] = [1.0]
    sizes: Values[int] = [1, 2]
    centred: bool = False
    samples: int = 4


class Toy(Experiment):
    """Not registered: only its command is built."""

    name = "toy-cli"
    description = "A toy (see Fig. 3, e.g. its caption). Second sentence."
    params = ToyParams
    profiles = {"quick": {"centred": True, "samples": 2}, "paper": {}}


@pytest.fixture
def captured(monkeypatch) -> list[dict[str, Any]]:
    """The resolved configs the commands would run (nothing is run)."""
    configs: list[dict[str, Any]] = []
    monkeypatch.setattr(
        cli_experiments, "execute", lambda exp, config, options: configs.append(config)
    )
    return configs


def toy(*args: str):
    toy_app = typer.Typer(rich_markup_mode=None)  # as rfbench's app: click's help layout
    add_experiment_command(toy_app, Toy())
    toy_app.command("other")(lambda: None)  # two commands: the toy is a subcommand
    return CliRunner().invoke(toy_app, ["toy-cli", *args])


def test_command_list_shows_whole_summaries() -> None:
    res = CliRunner().invoke(app, ["--help"])
    assert res.exit_code == 0, res.output
    for name in BUILT_IN:
        summary = get_experiment(name).short_description()
        assert f"{name} " in res.output and summary in res.output, (name, res.output)
        assert len(summary) <= 64 and not summary.endswith(("Fig.", "Fig"))
    commands = res.output[res.output.index("Commands:") :]
    assert "..." not in commands  # no summary cut by the help formatter


def test_first_sentence_skips_abbreviations() -> None:
    assert Toy.short_description() == "A toy (see Fig. 3, e.g. its caption)."
    assert first_sentence("HRF Fig. 6 / Table 3: x vs y") == "HRF Fig. 6 / Table 3: x vs y"
    assert first_sentence("Eq. 7 holds. Then") == "Eq. 7 holds."


def test_booleans_metavars_and_defaults_in_help() -> None:
    res = CliRunner().invoke(app, ["classify", "--help"])
    assert res.exit_code == 0, res.output
    expected = (
        "--exact / --no-exact", "[default: exact]", "--pad / --no-pad", "[default: no-pad]",
        "--trials INT", "[default: 500; >= 1]", "--val-trials INT", "--sigma FLOAT[,FLOAT...]",
        "[default: gaussian; one of: gaussian, softmax]", "[default: 1, 2, 4, 10; each >= 1;",
        "--m INT[,INT...]", "--kernel TEXT", "--datasets, --dataset TEXT[,TEXT...]",
        "--data PATH", "--target COLUMN",
    )  # fmt: skip
    flat = " ".join(res.output.split())  # help lines wrap at any space
    for text in expected:
        assert text in flat, text
    assert "<str>" not in res.output and "<bool>" not in res.output


def test_naming_rule() -> None:
    fields = Toy.parameters()
    assert flags("dataset", fields["dataset"].default) == ("--datasets", "--dataset")
    assert flags("regimes", fields["regimes"].default) == ("--regimes", "--regime")
    assert flags("density_v", [1.0]) == ("--density-v",)
    assert flags("crossover_d", [16]) == ("--crossover-d",)
    assert flags("sigma", [0.1]) == ("--sigma",) and flags("subset", [0, 0]) == ("--subset",)
    assert flags("kernel", "softmax") == ("--kernel",)
    res = toy("--help")
    assert "--datasets, --dataset TEXT[,TEXT...]" in res.output
    assert "--regimes, --regime TEXT[,TEXT...]" in res.output
    assert (
        "--density-v FLOAT[,FLOAT...]" in res.output
        and "--sizes, --size INT[,INT...]" in res.output
    )


def test_plural_and_singular_flags_set_the_same_key(captured) -> None:
    for args in (["--dataset", "c"], ["--datasets", "c"]):
        assert toy(*args).exit_code == 0
    assert [c["dataset"] for c in captured] == [["c"], ["c"]]
    assert toy("--regime", "y", "--regimes", "z").exit_code == 0  # the last one given wins
    assert captured[-1]["regimes"] == ["z"]


def test_scalar_and_list_of_one_word_keep_their_own_flags(captured) -> None:
    """A scalar ``kernel`` owns ``--kernel``, so the list ``kernels`` is ``--kernels`` only."""
    help_text = toy("--help").output
    assert "--kernels TEXT[,TEXT...]" in help_text and "--kernels, --kernel" not in help_text
    assert toy("--kernel", "k", "--kernels", "g1,g2").exit_code == 0
    assert captured[-1]["kernel"] == "k" and captured[-1]["kernels"] == ["g1", "g2"]


def test_two_parameters_claiming_one_flag_are_rejected() -> None:
    class ClashParams(ExperimentParams):
        kernel: Values[str] = ["a"]
        kernels: Values[str] = ["b"]

    class Clash(Experiment):
        name = "clash-cli"
        params = ClashParams

    with pytest.raises(ValueError, match="'kernel' and 'kernels' would both be --kernels"):
        add_experiment_command(typer.Typer(), Clash())


def test_only_given_flags_override_the_profile(captured) -> None:
    assert toy("--profile", "quick").exit_code == 0
    assert toy("--profile", "quick", "--no-centred").exit_code == 0
    assert toy("--centred").exit_code == 0
    assert toy().exit_code == 0
    assert [c["centred"] for c in captured] == [True, False, True, False]
    assert [c["samples"] for c in captured] == [2, 2, 4, 4]


def test_bad_list_value_names_the_plural_flag(captured) -> None:
    res = toy("--size", "1,x")
    assert res.exit_code == 2 and "'--sizes': 'x' (expected int)" in res.output
    assert not captured


def test_version_and_completion() -> None:
    res = CliRunner().invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.strip() == f"rfbench {rfbench.__version__}"
    help_text = CliRunner().invoke(app, ["--help"]).output
    assert "--install-completion" in help_text and "--show-completion" in help_text


@pytest.mark.parametrize("group", ["list", "data", "cache"])
def test_groups_use_the_command_layout_with_whole_summaries(group: str) -> None:
    """list, data and cache had rich's boxed panels, their help's source lines wrapped where
    they broke, and (in click's layout) summaries cut to one line."""
    res = CliRunner().invoke(app, [group, "--help"])
    assert res.exit_code == 0, res.output
    assert "╭" not in res.output and "..." not in res.output.split("Commands:")[1], res.output
    for command in typer.main.get_group(getattr(groups, f"{group}_app")).commands.values():
        doc = " ".join(command.callback.__doc__.strip().split("\n\n")[0].split())
        assert " ".join(res.output.split()).count(doc) == 1, (doc, res.output)
        sub = CliRunner().invoke(app, [group, command.name, "--help"])
        assert sub.exit_code == 0 and "╭" not in sub.output, sub.output
