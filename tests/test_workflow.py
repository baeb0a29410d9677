"""The workflow layer: one path, one set of sentences, for every front end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stratpd_xl import PARAMETERS, Settings, workflow
from stratpd_xl.cli import main
from stratpd_xl.errors import StratPDInputError
from stratpd_xl.input.sheet import cells_from_frame, frame_from_cells
from stratpd_xl.schema import curve_points

ROOT = Path(__file__).resolve().parents[1]


def shop(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """Sales = 3 per visitor + 40 on weekends; an order ID, an empty and a constant column."""
    rng = np.random.default_rng(seed)
    visitors = rng.uniform(10, 100, n).round(1)
    weekend = rng.choice(["yes", "no"], n)
    sales = 3 * visitors + 40 * (weekend == "yes") + rng.normal(0, 1, n)
    return pd.DataFrame({
        "order": [f"A{i:05d}" for i in range(n)],
        "visitors": visitors,
        "weekend": weekend,
        "store": rng.integers(1, 4, n),
        "empty": [None] * n,
        "same": ["x"] * n,
        "sales": sales.round(2),
    })


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return frame_from_cells(cells_from_frame(shop()))


def test_analysis_leaves_out_unusable_columns_and_says_why(frame):
    result = workflow.analysis(frame, "Sales", settings=Settings.make(random_state=0))
    assert result.target == "sales"
    assert set(result.left_out) == {"order", "empty", "same"}
    assert "looks like an identifier" in result.left_out["order"]
    assert set(result.impact["feature"]) == {"visitors", "weekend", "store"}
    assert set(result.curves) == set(result.impact["feature"])
    assert any(note.startswith('left out "order"') for note in result.notes)
    assert result.n_rows == len(frame)


def test_a_named_identifier_is_analysed_and_a_feature_named_twice_once(frame):
    result = workflow.analysis(
        frame, "sales", ["visitors", " VISITORS", "weekend"], settings=Settings.make(random_state=0)
    )
    assert sorted(result.impact["feature"]) == ["visitors", "weekend"]
    one = workflow.curve(frame, "sales", "order", settings=Settings.make(min_samples_leaf=2))
    assert one.kind == "categorical"


def test_curve_recovers_the_effects_and_carries_the_reading_notes():
    cells = cells_from_frame(shop())
    cells[5][1] = "n/a?"  # a stray text in the numeric column
    table = frame_from_cells(cells)
    result = workflow.curve(table, "sales", "visitors", settings=Settings.make(random_state=0))
    curve = result.curve
    # The stray text is one blank: counted, and too few for a row of its own.
    assert "missing" not in curve.columns
    points = curve_points(curve)
    slope = np.polyfit(points["x"], points["pd"], 1)[0]
    assert slope == pytest.approx(3, rel=0.05)
    assert any('column "visitors": 1 cell' in n for n in result.notes)
    weekend = workflow.curve(table, "sales", "weekend", settings=Settings.make(random_state=0))
    effect = weekend.curve.set_index("category")["pd"]
    assert effect["yes"] - effect["no"] == pytest.approx(40, abs=2)


def test_categorical_turns_number_codes_into_categories(frame):
    result = workflow.curve(frame, "sales", "store", categorical=["Store"])
    assert result.kind == "categorical"
    with pytest.raises(StratPDInputError, match="must stay numeric"):
        workflow.curve(frame, "sales", "store", categorical=["sales"])


@pytest.mark.parametrize(
    ("target", "feature", "phrase"),
    [
        ("salez", "visitors", 'target column "salez" not found (did you mean "sales"?)'),
        ("sales", "sales", '"sales" is both the target and the feature'),
        ("order", "visitors", 'target "order" is not numeric and has 600 different values'),
        ("sales", "visitorz", 'column "visitorz" not found (did you mean "visitors"?)'),
    ],
)
def test_every_front_end_gives_the_same_sentence(frame, tmp_path, capsys, target, feature,
                                                  phrase):
    with pytest.raises(StratPDInputError) as api:
        workflow.curve(frame, target, feature)
    assert phrase in str(api.value)
    path = tmp_path / "shop.csv"
    shop().to_csv(path, index=False)
    assert main(["curve", str(path), "-t", target, "-f", feature]) == 2
    assert phrase in capsys.readouterr().err
    from stratpd_xl.excel import udfs

    cell = udfs.STRATPD(cells_from_frame(shop()), target, feature)
    assert len(cell) == 1 and phrase in cell[0][0]


def test_too_few_rows_names_the_parameter_and_its_value(frame):
    settings = Settings.make(min_samples_leaf=400)
    with pytest.raises(StratPDInputError, match=r"2 x min_samples_leaf \(800\)"):
        workflow.analysis(frame, "sales", settings=settings)


def test_settings_come_from_one_table():
    assert Settings() == Settings.make()
    for name, p in PARAMETERS.items():
        assert getattr(Settings(), name) == p.default
        if p.is_flag or p.is_column:
            continue
        assert getattr(Settings.make(**{name: p.maximum}), name) == p.maximum
        assert getattr(Settings.make(**{name: float(p.minimum)}), name) == p.minimum
        for bad in (p.minimum - 1, p.maximum + 1, 2.5, "many", True):
            with pytest.raises(StratPDInputError, match=name):
                Settings.make(**{name: bad})
    assert Settings.make(max_points=0).max_points is None
    assert Settings.make(max_points=None).max_points is None
    assert Settings.make(min_samples_leaf=None).min_samples_leaf == 10
    with pytest.raises(TypeError):
        Settings.make(min_sample_leaf=3)


def test_cli_help_shows_the_tables_defaults(capsys):
    with pytest.raises(SystemExit):
        from stratpd_xl.cli import build_parser

        build_parser().parse_args(["curve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    options = (("--min-samples-leaf", "min_samples_leaf"), ("--max-points", "max_points"))
    for option, name in options:
        assert option in text
        assert f"(default {PARAMETERS[name].default})" in text


def test_light_modules_load_no_drawing_or_compiler_library():
    code = (
        "import sys, json; import stratpd_xl, stratpd_xl.workflow, stratpd_xl.input.sheet, "
        "stratpd_xl.presentation.tables, stratpd_xl.presentation.labels, stratpd_xl.params, "
        "stratpd_xl.schema, "
        "stratpd_xl.input.files; "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'matplotlib', 'xlsxwriter', 'numba', 'openpyxl', 'scipy'})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert json.loads(out.stdout) == []


def test_a_csv_answer_loads_no_drawing_library(tmp_path):
    # matplotlib and xlsxwriter cost about a second to import; a .csv answer needs neither.
    data = tmp_path / "data.csv"
    out = tmp_path / "curve.csv"
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 10, 400)
    pd.DataFrame({"x": x, "z": rng.uniform(0, 1, 400), "y": 2 * x}).to_csv(data, index=False)
    code = (
        "import sys, json; from stratpd_xl.cli import main; "
        f"rc = main(['curve', {str(data)!r}, '-t', 'y', '-f', 'x', '-o', {str(out)!r}]); "
        "print(json.dumps([rc, sorted({m.split('.')[0] for m in sys.modules} & "
        "{'matplotlib', 'xlsxwriter'})]))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert json.loads(run.stdout.splitlines()[-1]) == [0, []]
    assert pd.read_csv(out).shape[0] > 10


def test_warm_up_runs_a_numeric_and_a_categorical_curve_through_the_workflow(monkeypatch):
    # The formulas' background warm-up goes through the workflow, as the formulas do.
    import stratpd_xl.engine as engine

    seen = []
    real = engine.partial_dependence

    def recording(data, target, feature, **kw):
        result = real(data, target, feature, **kw)
        seen.append((feature, result.attrs["kind"], kw["min_samples_leaf"]))
        return result

    monkeypatch.setattr(engine, "partial_dependence", recording)
    curve = workflow.warm_up()
    assert seen == [("x", "numeric", 5), ("c", "categorical", 5)]
    assert curve.attrs["kind"] == "numeric" and len(curve) > 2
