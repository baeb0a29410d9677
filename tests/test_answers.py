"""Answers an analyst can use as they stand: repeatable by default, in words, every note kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from stratpd_xl.cli import main
from stratpd_xl.params import DEFAULT_SEED, PARAMETERS, Settings
from tests.test_cli import houses


@pytest.fixture
def csv_path(tmp_path: Path) -> Path:
    path = tmp_path / "houses.csv"
    houses().to_csv(path, index=False)
    return path


def test_one_documented_default_seed_for_every_front_end():
    from stratpd_xl import spreadsheet
    from stratpd_xl.excel import ribbon

    assert PARAMETERS["random_state"].default == DEFAULT_SEED
    assert Settings().random_state == DEFAULT_SEED
    assert spreadsheet.RANDOM_STATE == ribbon.RANDOM_STATE == DEFAULT_SEED
    # None given on purpose still means fresh random halves.
    assert Settings.make(random_state=None).random_state is None
    report = Settings.for_report(n_trials=None, random_state=5)
    assert report.n_trials == PARAMETERS["n_trials"].report_default > 1
    assert report.random_state == 5


def test_two_runs_without_a_seed_write_the_same_bytes(csv_path, tmp_path, capsys):
    written: list[list[bytes]] = []
    for run in ("a", "b"):
        outs = [tmp_path / f"{run}.{ext}" for ext in ("csv", "xlsx", "png")]
        args = ["curve", csv_path, "-t", "price", "-f", "area"]
        assert main([str(a) for a in args + [x for o in outs for x in ("-o", o)]]) == 0
        report = tmp_path / f"{run}-report.xlsx"
        assert main([str(a) for a in ["report", csv_path, "-t", "price", "-o", report]]) == 0
        written.append([p.read_bytes() for p in [*outs, report]])
    capsys.readouterr()
    assert written[0] == written[1]
    # ...and another seed changes the answer (the halves really are random).
    other = tmp_path / "other.csv"
    assert main(["curve", str(csv_path), "-t", "price", "-f", "area", "--seed", "9",
                 "-o", str(other)]) == 0
    assert other.read_bytes() != written[0][0]
