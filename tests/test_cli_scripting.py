"""The command line for people who script it: --quiet is silent on success, --json is on
every analysing command, the help's example exists, and counts read as words do (issue 28)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import stratpd_xl
from stratpd_xl.cli import build_parser, main
from tests.test_cli import houses


@pytest.fixture
def csv_path(tmp_path):
    path = tmp_path / "houses.csv"
    houses().to_csv(path, index=False)
    return str(path)


def test_quiet_prints_nothing_on_success(csv_path, tmp_path, capsys):
    out = tmp_path / "area.csv"
    code = main(["curve", csv_path, "-t", "price", "-f", "area", "-o", str(out), "--quiet"])
    printed, said = capsys.readouterr()
    assert code == 0 and out.is_file()
    assert printed == "" and said == ""  # no "wrote area.csv", as cp, curl -s -o, pip -q


@pytest.mark.parametrize("command", [
    ["surface", "-f", "area", "-f", "garden", "--grid", "4"],
    ["compare", "-f", "area"],
    ["report", "-f", "area", "-f", "garden", "--trials", "1", "-o", "{tmp}/r.xlsx"],
    ["interactions", "-f", "area", "-f", "garden", "-f", "rooms"],
    ["impact"],
    ["curve", "-f", "garden"],
])
def test_every_analysing_command_prints_json(command, csv_path, tmp_path, capsys):
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    code = main([args[0], csv_path, "-t", "price", *args[1:], "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0 and payload["rows"] and {"columns", "attrs", "notes"} <= set(payload)


def test_the_help_example_names_the_demo_s_file():
    epilog = build_parser().epilog
    assert "stratpd-xl demo" in epilog and "stratpd-demo/diamonds.csv" in epilog


def test_max_points_none_means_every_point_as_its_help_says(csv_path, capsys):
    assert "None" in build_parser()._subparsers._group_actions[0].choices[
        "curve"].format_help()
    code = main(["curve", csv_path, "-t", "price", "-f", "area", "--max-points", "None",
                 "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0 and payload["attrs"]["params"]["max_points"] is None
    assert len(payload["rows"]) == payload["attrs"]["n_points_full"]


def test_dir_lists_the_engine_s_functions():
    assert {"stratpd", "catstratpd", "impact", "analyse", "interactions"} <= set(
        dir(stratpd_xl))


def test_one_row_is_said_in_the_singular():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": np.r_[1.0, [np.nan] * 39], "z": rng.normal(size=40),
                          "y": rng.normal(size=40)})
    with pytest.raises(stratpd_xl.StratPDInputError, match=r"only 1 row has values"):
        stratpd_xl.stratpd(frame, "y", "x", min_samples_leaf=5)
