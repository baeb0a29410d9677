"""``exclude``: columns left out of the strata, the adjustment, the ranking and the model,
the same way in the Python API, the workflow and the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import stratpd_xl as sx
from stratpd_xl import PARAMETERS, Settings, StratPDInputError, workflow
from stratpd_xl.cli import main

PARTS = ["casual", "registered"]


def bikeshare(n: int = 4000, seed: int = 0) -> pd.DataFrame:
    """Bikeshare's leak: bikers = casual + registered, both moving with the hour."""
    rng = np.random.default_rng(seed)
    hour = rng.integers(0, 24, n)
    weather = rng.choice(["clear", "rain"], n, p=[0.7, 0.3])
    casual = rng.poisson(5 + 3 * np.sin(hour / 4), n).astype(float)
    registered = rng.poisson(30 + 20 * np.sin(hour / 4) - 8 * (weather == "rain"),
                             n).astype(float)
    return pd.DataFrame({"hour": hour, "weather": weather, "casual": casual,
                         "registered": registered, "temp": rng.normal(size=n),
                         "bikers": casual + registered})


@pytest.fixture(scope="module")
def bikes() -> pd.DataFrame:
    return bikeshare()


# --------------------------------------------------------------------------- the table


def test_exclude_is_a_setting_of_the_one_table():
    p = PARAMETERS["exclude"]
    assert p.is_column and p.many and not p.is_flag and p.default == ()
    assert Settings().exclude == ()
    assert Settings.make(exclude="casual").exclude == ("casual",)
    # A range of cells (rows of cells, blanks among them), numbers as header cells hold them.
    assert Settings.make(exclude=[["casual", None], [" registered ", ""], [2024.0, "casual"]]
                         ).exclude == ("casual", "registered", "2024")
    assert Settings.make(exclude=None).exclude == Settings.make(exclude="  ").exclude == ()
    # A comma list stays whole here: only the table's columns can tell it from a name.
    assert Settings.make(exclude="casual, registered").exclude == ("casual, registered",)
    for bad in (True, 2.5, {"a": 1}, [object()]):
        with pytest.raises(StratPDInputError, match="exclude must be column names"):
            Settings.make(exclude=bad)
    # Hashable, so a formula's cache can key on the settings.
    hash(Settings.make(exclude=["a", "b"]))
    assert Settings.make(exclude=["a"]).as_dict()["exclude"] == ["a"]


# --------------------------------------------------------------------------- Python API


def test_excluding_the_parts_of_the_target_brings_the_hour_back(bikes):
    leaked = sx.stratpd(bikes, "bikers", "hour")
    assert np.ptp(leaked["pd"]) < 0.5  # the parts restate the target: hour comes out ~0
    # The warning names the columns and the fix, in every front end's words.
    (leak,) = [w for w in leaked.attrs["warnings"] if "nearly determine" in w]
    assert ('exclude=["casual", "registered"] in Python, --exclude casual,registered on the '
            "command line, the exclude argument in a spreadsheet") in leak
    curve = sx.stratpd(bikes, "bikers", "hour", exclude=PARTS)
    truth = 23 * np.sin(np.arange(24) / 4)  # casual's + registered's hour effect
    assert np.ptp(curve["pd"]) > 0.8 * np.ptp(truth)
    assert np.corrcoef(np.interp(np.arange(24), curve["x"], curve["pd"]), truth)[0, 1] > 0.95
    a = curve.attrs
    assert a["params"]["exclude"] == PARTS
    assert set(a["left_out"]) == set(PARTS)
    assert all("excluded as asked" in why for why in a["left_out"].values())
    # Asked for, so no warning about them; and the leak warning is gone with the leak.
    assert not any("casual" in w for w in a["warnings"])


def test_excluded_columns_are_never_ranked(bikes):
    leaked = sx.impact(bikes, "bikers")
    assert set(leaked["feature"][:2]) == set(PARTS)
    ranked = sx.impact(bikes, "bikers", exclude="casual,registered")
    assert list(ranked["feature"]) == ["hour", "weather", "temp"]
    assert ranked["impact"].iloc[0] > 5
    assert ranked.attrs["params"]["exclude"] == PARTS
    assert set(ranked.attrs["left_out"]) == set(PARTS)


def test_every_engine_function_takes_exclude(bikes):
    cats = sx.catstratpd(bikes, "bikers", "weather", exclude=PARTS)
    rain = cats.set_index("category").loc["rain", "pd"]
    assert -12 < rain < -4  # registered riders: 8 fewer in the rain
    assert cats.attrs["params"]["exclude"] == PARTS
    by = sx.stratpd(bikes, "bikers", "hour", by="weather", exclude=PARTS)
    assert by.attrs["params"]["exclude"] == PARTS
    assert np.ptp(by.loc[by["group"] == "clear", "pd"]) > 20
    pd_kind = sx.partial_dependence(bikes, "bikers", "weather", exclude=PARTS)
    assert pd_kind.attrs["params"]["exclude"] == PARTS
    pairs = sx.interactions(bikes, "bikers", exclude=PARTS)
    assert not set(pairs[["feature_1", "feature_2"]].to_numpy().ravel()) & set(PARTS)
    assert pairs.attrs["params"]["exclude"] == PARTS and set(pairs.attrs["left_out"]) == set(PARTS)
    surface = sx.stratpd2(bikes, "bikers", "hour", "temp", exclude=PARTS, grid=4)
    assert surface.attrs["params"]["exclude"] == PARTS
    assert np.ptp(surface["pd"]) > 10


@pytest.mark.parametrize(("kwargs", "phrase"), [
    ({"exclude": "casul"}, 'excluded column "casul" not found (did you mean "casual"?)'),
    ({"exclude": "nothing like it"}, "columns are: hour, weather, casual"),
    ({"exclude": "bikers"}, '"bikers" is the target, so it cannot be excluded; take it out'),
    ({"exclude": ["casual", "hour"]}, '"hour" is both the feature and excluded; take it out'),
    ({"exclude": "weather", "by": "weather"}, '"weather" is both the by column and excluded'),
])
def test_a_bad_exclusion_is_one_sentence(bikes, kwargs, phrase):
    with pytest.raises(StratPDInputError) as info:
        sx.stratpd(bikes, "bikers", "hour", **kwargs)
    assert phrase in str(info.value) and "\n" not in str(info.value)


def test_a_named_feature_cannot_be_excluded_from_the_ranking(bikes):
    with pytest.raises(StratPDInputError, match='"casual" is both the feature and excluded'):
        sx.impact(bikes, "bikers", ["hour", "casual"], exclude="casual")


def test_a_column_named_with_a_comma_is_matched_whole():
    data = bikeshare(800).rename(columns={"casual": "casual, occasional"})
    curve = sx.stratpd(data, "bikers", "hour", exclude=["casual, occasional", "registered"])
    assert curve.attrs["params"]["exclude"] == ["casual, occasional", "registered"]


def test_an_excluded_column_is_not_read_at_all(bikes):
    # A column of lists cannot be analysed; excluded, it is dropped before anything reads it.
    data = bikes.assign(tags=[[1, 2]] * len(bikes))
    with pytest.raises(StratPDInputError, match='"tags" holds a list'):
        sx.stratpd(data, "bikers", "hour")
    curve = sx.stratpd(data, "bikers", "hour", exclude=["tags", *PARTS])
    assert curve.attrs["params"]["exclude"] == ["tags", *PARTS]


# --------------------------------------------------------------------------- workflow


def test_the_workflow_matches_names_as_typed_and_says_what_it_left_out(bikes):
    settings = Settings.make(exclude="CASUAL, Registered")
    result = workflow.analysis(bikes, "bikers", settings=settings)
    assert list(result.impact["feature"]) == ["hour", "weather", "temp"]
    assert set(result.left_out) == set(PARTS)
    assert any('left out "casual" and "registered" as asked (exclude)' in n
               for n in result.notes)
    # Said once, not once per curve.
    assert sum("casual" in n for n in result.notes) == 1
    with pytest.raises(StratPDInputError, match='did you mean "casual"'):
        workflow.curve(bikes, "bikers", "hour", settings=Settings.make(exclude="casul"))


def test_the_model_of_a_comparison_sees_the_same_columns(bikes):
    data = bikes.iloc[:2000]
    leaked = workflow.compare(data, "bikers", "hour").table
    kept = workflow.compare(data, "bikers", "hour",
                            settings=Settings.make(exclude=PARTS)).table
    # With the parts, a model predicts bikers from them and the hour's PDP is flat too.
    assert np.ptp(leaked["pdp"]) < 3
    assert np.ptp(kept["pdp"]) > 20 and np.ptp(kept["stratpd"]) > 20
    assert any("as asked (exclude)" in n for n in kept.attrs["notes"])
    # The Python API's compare and ice take the keyword like every other function.
    same = sx.compare(data, "bikers", "hour", exclude=PARTS)
    np.testing.assert_array_equal(same["pdp"].to_numpy(), kept["pdp"].to_numpy())
    curves = sx.ice(data, "bikers", "hour", exclude=PARTS, rows=5)
    assert curves.groupby("row")["prediction"].agg(np.ptp).min() > 10


# --------------------------------------------------------------------------- command line


@pytest.fixture(scope="module")
def bikes_csv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bikes") / "bikes.csv"
    bikeshare(1500).to_csv(path, index=False)
    return path


COMMANDS = {
    "curve": ["-f", "hour"],
    "impact": [],
    "interactions": [],
    "surface": ["-f", "hour", "-f", "temp", "--grid", "4"],
    "compare": ["-f", "hour"],
    "report": ["--out", "{tmp}/report.xlsx"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_analysing_command_takes_exclude(command, bikes_csv, tmp_path, capsys):
    extra = [a.replace("{tmp}", str(tmp_path)) for a in COMMANDS[command]]
    base = [command, str(bikes_csv), "-t", "bikers", *extra]
    assert main([*base, "--exclude", "casual", "--exclude", "Registered"]) == 0
    out, err = capsys.readouterr()
    assert 'left out "casual" and "registered" as asked (exclude)' in err
    if command in ("impact", "interactions", "report"):
        assert "casual" not in out
    # A bad name: exit 2, one sentence naming the column and the close match.
    if command == "report":
        (tmp_path / "report.xlsx").unlink()
    assert main([*base, "--exclude", "casul,registered"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and 'excluded column "casul" not found' in err
    assert 'did you mean "casual"' in err


def test_the_json_of_a_curve_records_the_exclusion(bikes_csv, capsys):
    assert main(["impact", str(bikes_csv), "-t", "bikers", "--exclude", "casual,registered",
                 "--json", "-q"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["attrs"]["params"]["exclude"] == PARTS
    assert [row["feature"] for row in payload["rows"]][0] == "hour"


def test_every_command_that_analyses_offers_exclude():
    from stratpd_xl.cli import build_parser

    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # noqa: SLF001 - argparse has no API
    for name, sub in commands.items():
        options = {o for a in sub._actions for o in a.option_strings}  # noqa: SLF001
        analyses = "--target" in options or name == "demo"
        assert ("--exclude" in options) == analyses, name


# --------------------------------------------------------------------------- every front end


def test_exclude_and_keep_are_declared_by_every_front_end():
    """The two column lists reach every place a setting is typed: the formulas of the shared
    layer, Excel's and xlwings Lite's signatures (``exclude`` then ``keep``, after the older
    arguments, so older formulas keep their meaning), Calc's type library and Function Wizard,
    and both menu commands."""
    import ast
    import inspect

    from stratpd_xl import spreadsheet

    with pytest.MonkeyPatch.context() as env:  # lite.py turns the warm-up off for Pyodide
        env.setenv("STRATPD_XL_WARMUP", "0")
        from stratpd_xl.excel import lite, ribbon, udfs
    from stratpd_xl.libreoffice import extension

    last = ["exclude", "keep"]
    # Arguments added since (``classes``) come after keep, so exclude and keep keep their place.
    later = {"classes"}

    def in_place(names: list[str]) -> bool:
        start = names.index("exclude") if "exclude" in names else len(names)
        return names[start:start + 2] == last and set(names[start + 2:]) <= later

    for name, args in extension.FORMULAS.items():
        assert in_place(list(args)), name
        assert args["exclude"] == spreadsheet.STRATPD_ARGS["exclude"]
        assert args["keep"] == spreadsheet.STRATPD_ARGS["keep"]
        assert "[in] any exclude, [in] any keep" in next(
            line for line in extension.idl().splitlines() if f" {name}(" in line)
        excel = inspect.signature(getattr(udfs, name)).parameters
        assert in_place([p for p in excel if p != "caller"]), name
    for argument in last:
        assert extension.calc_addins_xcu().count(f'<node oor:name="{argument}"') == len(
            extension.FORMULAS)
    for function in (lite.stratpd, lite.stratimpact, lite.stratcompare):
        assert in_place(list(inspect.signature(function).parameters)), function.__name__
    main_py = Path(__file__).resolve().parents[1] / "addin" / "xlwings_lite" / "main.py"
    for node in ast.parse(main_py.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("STRAT"):
            assert in_place([a.arg for a in node.args.args]), node.name
    # Calc's component runs inside LibreOffice (it imports uno): read its source.
    component = (Path(extension.__file__).parent / "calc_component.py").read_text("utf-8")
    assert f'EXCLUDE_NAME = "{ribbon.EXCLUDE_NAME}"' in component
    assert f'KEEP_NAME = "{ribbon.KEEP_NAME}"' in component
    assert "exclude=_columns(doc, EXCLUDE_NAME)" in component
    assert "keep=_columns(doc, KEEP_NAME)" in component
