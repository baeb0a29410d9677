"""The ribbon button's logic against a recording fake workbook (no Excel needed).

The fake sheet refuses to write over a non-empty cell, so every test also checks that the new
sheet's blocks (ranking, curve tables) never overlap and that existing sheets stay untouched.
"""

from __future__ import annotations

import csv
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from stratpd_xl import spreadsheet, workflow
from stratpd_xl.errors import StratPDInputError
from stratpd_xl.excel import ribbon
from stratpd_xl.input import sheet
from stratpd_xl.params import Settings
from stratpd_xl.presentation import words
from stratpd_xl.presentation.notes import SHOWN, shown
from stratpd_xl.presentation.tables import BAND_LOW
from stratpd_xl.spreadsheet import EVERY_NOTE

ROOT = Path(__file__).resolve().parents[1]
COLUMN_PT, ROW_PT = 64.0, 20.0


def _diamonds(n: int = 400, last: str = "price") -> list[list[Any]]:
    """Diamonds rows as Excel hands a selection over: floats for numbers, header first."""
    with (ROOT / "stratpd_xl" / "data" / "diamonds.csv").open(newline="") as f:
        rows = list(csv.reader(f))[: n + 1]
    header = rows[0]
    order = [c for c in header if c != last] + [last]
    idx = [header.index(c) for c in order]

    def cell(text: str) -> Any:
        try:
            return float(text)
        except ValueError:
            return text

    return [order] + [[cell(r[i]) for i in idx] for r in rows[1:]]


class FakeRange:
    def __init__(self, sheet: FakeSheet, row: int, col: int) -> None:
        self.sheet, self.row, self.col = sheet, row, col

    @property
    def column_width(self) -> float:
        raise AssertionError("not read")

    @column_width.setter
    def column_width(self, chars: float) -> None:
        self.sheet.widths[self.col] = chars

    @property
    def left(self) -> float:
        return (self.col - 1) * COLUMN_PT

    @property
    def top(self) -> float:
        return (self.row - 1) * ROW_PT

    @property
    def value(self) -> Any:
        return self.sheet.cells.get((self.row, self.col))

    @value.setter
    def value(self, block: list[list[Any]]) -> None:
        assert isinstance(block, list) and all(isinstance(r, list) for r in block)
        self.sheet.log.append(("write", self.row, self.col, len(block)))
        for i, row in enumerate(block):
            for j, v in enumerate(row):
                key = (self.row + i, self.col + j)
                assert self.sheet.cells.get(key) in (None, ""), f"overwrites cell {key}"
                self.sheet.cells[key] = v


class FakePictures:
    def __init__(self, sheet: FakeSheet) -> None:
        self.sheet, self.items = sheet, {}

    def add(self, path: str, *, name: str, left: float, top: float) -> None:
        assert name not in self.items, f"picture {name!r} twice"
        png = Path(path).read_bytes()
        assert png.startswith(b"\x89PNG")
        self.items[name] = (left, top)
        self.sheet.log.append(("picture", name))


class FakeSheet:
    def __init__(self, name: str, cells: dict | None = None) -> None:
        self.name = name
        self.cells: dict[tuple[int, int], Any] = dict(cells or {})
        self.log: list[tuple] = []
        self.formats: list[tuple] = []
        self.widths: dict[int, float] = {}
        self.wrapped: list[tuple] = []
        self.pictures = FakePictures(self)

    def range(self, first: tuple[int, int], last: tuple[int, int] | None = None) -> Any:
        if last is None:
            return FakeRange(self, *first)
        sheet = self

        class Block:  # a multi-cell range: only formats are set on those
            @property
            def number_format(self):
                raise AssertionError("not read")

            @number_format.setter
            def number_format(self, fmt):
                sheet.formats.append((first, last, fmt))

            @property
            def wrap_text(self):
                raise AssertionError("not read")

            @wrap_text.setter
            def wrap_text(self, on):
                sheet.wrapped.append((first, last, on))

        return Block()


class FakeSheets:
    def __init__(self, sheets: list[FakeSheet]) -> None:
        self.items = sheets

    def __iter__(self):
        return iter(list(self.items))

    def add(self, name: str, after: FakeSheet | None = None) -> FakeSheet:
        assert name.casefold() not in {s.name.casefold() for s in self.items}
        assert len(name) <= 31
        new = FakeSheet(name)
        position = self.items.index(after) + 1 if after is not None else 0
        self.items.insert(position, new)
        return new

    def __getitem__(self, name: str) -> FakeSheet:
        return next(s for s in self.items if s.name == name)


class FakeName:
    def __init__(self, name: str, refers_to: str, cell_value: Any = None) -> None:
        self.name, self.refers_to, self._value = name, refers_to, cell_value

    @property
    def refers_to_range(self) -> Any:
        return type("R", (), {"value": self._value})()


class FakeBook:
    def __init__(self, names: list[FakeName] | None = None, sheets: list[FakeSheet] | None = None):
        self.sheets = FakeSheets(sheets or [FakeSheet("Data")])
        self.names = names or []


def _table_at(sheet: FakeSheet, row: int, col: int = 1) -> list[list[Any]]:
    """Read back a block written at (row, col): until the first empty row."""
    out = []
    while (row, col) in sheet.cells:
        r, c, line = row, col, []
        while (r, c) in sheet.cells:
            line.append(sheet.cells[(r, c)])
            c += 1
        out.append(line)
        row += 1
    return out


@pytest.fixture(scope="module")
def analysed():
    book = FakeBook()
    statuses: list[str | None] = []
    name = ribbon.analyse_selection(
        book, _diamonds(), source="Data!$A$1:$J$401", status=statuses.append
    )
    return book, name, statuses


def test_new_sheet_named_after_the_last_column(analysed):
    book, name, _ = analysed
    assert name == "StratPD price"
    assert [s.name for s in book.sheets] == ["Data", "StratPD price"]
    assert book.sheets["Data"].log == [], "the data sheet must not be written to"


def test_ranking_and_one_curve_block_per_feature(analysed):
    book, name, _ = analysed
    new = book.sheets[name]
    assert "price" in new.cells[(1, 1)] and "Data!$A$1:$J$401" in new.cells[(2, 1)]
    (top,) = [r for (r, c), v in new.cells.items() if v == "Impact ranking"]
    ranking = _table_at(new, top + 1)
    assert ranking[0] == ["feature", "kind", "impact", "share", "rows", "thin", "evidence"]
    # Shares show as percentages: the format covers exactly the share cells.
    n = len(ranking) - 1
    first = (top + 2, 4)
    assert (first, (first[0] + n - 1, 4), "0.0%") in new.formats
    # Impacts are rounded as the report workbook rounds them (about four significant
    # digits), rows shown whole with separators; not 9 or 10 decimals.
    formats = {(a, b): f for a, b, f in new.formats}
    impact = formats[((top + 2, 3), (top + 1 + n, 3))]
    places = len(impact.partition(".")[2])
    largest = max(abs(r[2]) for r in ranking[1:])
    assert impact.startswith("#,##0") and 3 <= places + len(str(int(largest))) <= 5, impact
    assert formats[((top + 2, 5), (top + 1 + n, 5))] == "#,##0"
    features = [r[0] for r in ranking[1:]]
    assert sorted(features) == sorted(c for c in _diamonds(1)[0] if c != "price")
    titles = {v: k for k, v in new.cells.items() if isinstance(v, str) and ": partial" in v}
    for feature in features:
        (row, col) = titles[f"{feature}: partial dependence of price"]
        table = _table_at(new, row + 1, col)
        assert table[0][:2] == [feature, "partial dependence"]
        assert len(table) > 2
    # Blocks come in ranking order, top to bottom.
    rows = [titles[f"{f}: partial dependence of price"][0] for f in features]
    assert rows == sorted(rows)
    # Each table's curve and band columns share one format; columns fit their headers
    # (several words wrap) and values; every table's header row wraps.
    for feature in features:
        (row, col) = titles[f"{feature}: partial dependence of price"]
        shown = {f for (a, _), f in formats.items() if a[0] == row + 2 and a[1] > 1}
        assert shown and all(f.startswith("#,##0") for f in shown), (feature, shown)
    assert set(new.widths) == set(range(1, 1 + max(new.widths)))
    assert all(4 <= w <= spreadsheet.MAX_WIDTH for w in new.widths.values())
    assert new.widths[3] >= len("impact") + 2
    assert ((top + 1, 1), (top + 1, 7), True) in new.wrapped


def test_conclusion_in_words_and_every_note_above_the_ranking(analysed):
    """The sentences and notes of the command line's report (presentation.words), in the
    same order: each top feature's sentence with its warnings under it, then the rest."""
    book, name, _ = analysed
    new = book.sheets[name]
    # The button's default is the report's: a band from ten trials.
    result = workflow.analysis(sheet.frame_from_cells(_diamonds()), "price",
                               settings=Settings.for_report(random_state=0))
    said, notes = words.summary(result.findings, result.notes, "price")
    expected = [["What the data say"]]
    for text, caveats in said:
        expected += [[text]] + [[f"note: {c}"] for c in caveats]
    expected += [["Notes"]] + [[f"note: {n}"] for n in shown(
        notes, f'every one is under "{EVERY_NOTE}" at the end of this sheet')]
    (top,) = [r for (r, c), v in new.cells.items() if v == "What the data say"]
    assert _table_at(new, top) == expected
    # carat and x, y, z would lead on impact alone, tied: the first sentence says so, then
    # goes on with the first feature the data show.
    lead, rest = said[0][0].split(" Of the other features, ")
    assert len(said) == 3 and " together would lead: " in lead and '"carat"' in lead
    assert rest.startswith("price ")
    # The diamonds' dimensions x, y, z nearly determine carat: the sheet says so, once for
    # the group of tied columns.
    tied = [line[0] for line in expected if " are tied: " in line[0]]
    assert len(tied) == 1 and '"carat"' in tied[0] and "inside the strata" in tied[0]
    (ranking,) = [r for (r, c), v in new.cells.items() if v == "Impact ranking"]
    assert ranking > top + len(expected)


def test_a_wide_selection_shows_the_few_notes_that_matter_and_every_note_at_the_end():
    # Ames in the button printed 50 note lines above the ranking; the sheet now says what the
    # report's summary says, and keeps the Notes sheet's table at its end.
    from tests.test_notes import _wide

    frame = _wide()
    rng = np.random.default_rng(3)
    lean = frame[[f"x{i}" for i in range(6)]].sum(axis=1).to_numpy()
    for i, name in enumerate(("deck", "fence", "shed", "loft")):  # more columns with gaps
        column = np.where(lean + rng.normal(size=len(frame)) > 0, "yes", "no").astype(object)
        column[rng.random(len(frame)) < 0.6 + 0.05 * i] = None
        frame.insert(0, name, column)
    result = spreadsheet.report_sheet(sheet.cells_from_frame(frame), target="y",
                                      n_trials=1, min_samples_leaf=10)
    notes = result.result.notes
    assert len(notes) > SHOWN + 2
    blocks = {b.cells[0][0]: b for b in result.items
              if isinstance(b, spreadsheet.Cells) and b.cells and b.cells[0]}
    lines = [line[0] for line in blocks["What the data say"].cells]
    below = lines[lines.index("Notes") + 1:]
    assert len(below) == SHOWN + 1 and below[-1].endswith(
        f'more notes: every one is under "{EVERY_NOTE}" at the end of this sheet'), below
    said = sum(1 for line in lines if line.startswith("note: "))
    assert said < len(notes)
    # Every note once, ranked, with what it is about: the report's Notes sheet.
    heading = blocks[EVERY_NOTE]
    (table,) = [b for b in result.items if isinstance(b, spreadsheet.Cells)
                and b.row == heading.row + 1 and b.col == heading.col]
    assert table.cells[0] == ["rank", "kind", "columns", "features", "moves", "note"]
    assert [r[5] for r in table.cells[1:]] == [str(n) for n in notes]
    assert heading.row > max(b.row + b.height for b in result.items
                             if isinstance(b, spreadsheet.Cells) and b is not heading
                             and b is not table)


def test_id_like_columns_are_left_out_with_a_note():
    book = FakeBook()
    rows = _diamonds(200)
    with_id = [[*rows[0][:-1], "lot", rows[0][-1]]] + [
        [*r[:-1], f"L{i:04d}", r[-1]] for i, r in enumerate(rows[1:])
    ]
    name = ribbon.analyse_selection(book, with_id)
    new = book.sheets[name]
    assert any(isinstance(v, str) and v.startswith('note: left out "lot": it looks like an '
                                                     'identifier') for v in new.cells.values())
    assert not any(isinstance(v, str) and v.startswith("lot: partial") for v in new.cells.values())


def test_pictures_sit_beside_their_tables(analysed):
    book, name, _ = analysed
    new = book.sheets[name]
    pictures = new.pictures.items
    features = _diamonds(1)[0][:-1]
    assert set(pictures) == {"StratPD ranking"} | {f"StratPD curve {c}" for c in features}
    for cell, value in new.cells.items():
        if isinstance(value, str) and value.endswith(": partial dependence of price"):
            feature = value.split(":")[0]
            left, top = pictures[f"StratPD curve {feature}"]
            width = len(_table_at(new, cell[0] + 1)[0])
            assert left == (width + 1) * COLUMN_PT  # one empty column after the table
            assert top == (cell[0] - 1) * ROW_PT


def test_progress_goes_to_the_status_bar_and_is_reset(analysed):
    _, _, statuses = analysed
    assert statuses[0] == "StratPD: feature 1 of 9 (carat)..."
    assert "StratPD: feature 9 of 9 (z)..." in statuses
    assert statuses[-1] is None


def test_existing_result_sheet_gets_a_new_name_and_stays_untouched():
    taken = FakeSheet("StratPD price", {(1, 1): "my notes"})
    book = FakeBook(sheets=[FakeSheet("Data"), taken])
    name = ribbon.analyse_selection(book, _diamonds(200))
    assert name == "StratPD price (2)"
    assert taken.cells == {(1, 1): "my notes"} and taken.log == []


def test_workbook_name_sets_the_target():
    book = FakeBook(names=[FakeName("StratPD_target", '="carat"')])
    assert ribbon.analyse_selection(book, _diamonds(200)) == "StratPD carat"
    by_cell = FakeBook(names=[FakeName("Data!stratpd_TARGET", "=Data!$L$1", "depth")])
    assert ribbon.target_name(by_cell) == "depth"
    assert ribbon.target_name(FakeBook(names=[FakeName("other", '="x"')])) is None
    empty = FakeBook(names=[FakeName("StratPD_target", "=Data!$L$1", None)])
    with pytest.raises(StratPDInputError, match="empty"):
        ribbon.target_name(empty)


def test_workbook_name_leaves_columns_out():
    # Cells holding the names (a column of three, one blank), as xlwings reads the range.
    book = FakeBook(names=[FakeName("StratPD_exclude", "=Data!$L$1:$L$3", ["X", "y", None])])
    new = book.sheets[ribbon.analyse_selection(book, _diamonds(300))]
    (top,) = [r for (r, c), v in new.cells.items() if v == "Impact ranking"]
    ranked = [r[0] for r in _table_at(new, top + 1)[1:]]
    assert "x" not in ranked and "y" not in ranked and "z" in ranked
    assert "carat" in ranked
    left = [v for v in new.cells.values() if isinstance(v, str) and "left out" in v]
    # Said once above the ranking, and once in the table of every note at the end.
    assert len(left) == 2 and left[0].startswith(
        'note: left out "x" and "y" as asked (exclude)') and left[1] == left[0][len("note: "):]
    # A text constant gives the same exclusion; the dimensions no longer hide carat.
    text = FakeBook(names=[FakeName("StratPD_exclude", '="x, y, z"')])
    assert ribbon.excluded_names(text) == "x, y, z"
    new = text.sheets[ribbon.analyse_selection(text, _diamonds(300))]
    notes = " ".join(v for v in new.cells.values() if isinstance(v, str))
    assert "barely varies inside the strata" not in notes
    # A name that is no column: one sentence, and nothing written.
    bad = FakeBook(names=[FakeName("StratPD_exclude", '="colour"')])
    with pytest.raises(StratPDInputError, match='excluded column "colour" not found .*"color"'):
        ribbon.analyse_selection(bad, _diamonds(300))
    assert [s.name for s in bad.sheets] == ["Data"]


def test_workbook_name_keeps_a_column_that_looks_like_an_id():
    from tests.test_identifiers import _credit

    frame = _credit()
    credit = [list(frame.columns), *frame.to_numpy().tolist()]

    def ranked(book):
        new = book.sheets[ribbon.analyse_selection(book, credit, n_trials=1)]
        (top,) = [r for (r, c), v in new.cells.items() if v == "Impact ranking"]
        return {r[0] for r in _table_at(new, top + 1)[1:]}, new

    plain, new = ranked(FakeBook())
    assert plain == {"income", "limit"}
    # Said once above the ranking ("note: ..."), and in the table of every note at the end.
    notes = [v for v in new.cells.values() if isinstance(v, str) and "identifiers" in v]
    assert len(notes) == 2 and notes[0] == f"note: {notes[1]}"
    assert "in the workbook name StratPD_keep" in notes[0]
    # Cells holding names (one blank), as xlwings reads the range; or a text constant.
    cells = FakeBook(names=[FakeName("StratPD_keep", "=Data!$L$1:$L$3", ["ID", None, "ROWNAMES"])])
    assert ribbon.kept_names(cells) == ["ID", None, "ROWNAMES"]
    assert ranked(cells)[0] == {"income", "limit", "ID", "rownames"}
    text = FakeBook(names=[FakeName("StratPD_keep", '="ID"')])
    assert ribbon.kept_names(text) == "ID"
    assert ranked(text)[0] == {"income", "limit", "ID"}
    assert ribbon.kept_names(FakeBook()) is None


def test_bad_selection_writes_nothing():
    book = FakeBook()
    with pytest.raises(StratPDInputError, match='target "cut" is not numeric'):
        ribbon.analyse_selection(book, _diamonds(200, last="cut"))
    with pytest.raises(StratPDInputError, match="needs at least"):
        ribbon.analyse_selection(book, _diamonds(8))
    assert [s.name for s in book.sheets] == ["Data"]


class FakeSelection:
    """A selection on a sheet whose used range ends at (last_row, last_col)."""

    def __init__(self, row, col, n_rows, n_cols, last_row=10, last_col=2, log=None):
        self.row, self.column, self.n_rows, self.n_cols = row, col, n_rows, n_cols
        self.last = (last_row, last_col)
        self.log = [] if log is None else log
        self.sheet = types.SimpleNamespace(
            name="Data",
            used_range=types.SimpleNamespace(
                last_cell=types.SimpleNamespace(row=last_row, column=last_col)
            ),
        )

    @property
    def count(self):
        return self.n_rows * self.n_cols

    @property
    def rows(self):
        return types.SimpleNamespace(count=self.n_rows)

    @property
    def columns(self):
        return types.SimpleNamespace(count=self.n_cols)

    @property
    def address(self):
        def cell(r, c):
            return f"${chr(64 + c)}${r}"

        last = cell(self.row + self.n_rows - 1, self.column + self.n_cols - 1)
        return cell(self.row, self.column) + ("" if self.count == 1 else f":{last}")

    @property
    def current_region(self):
        return FakeSelection(1, 1, *self.last, *self.last, log=self.log)

    def resize(self, n_rows, n_cols):
        return FakeSelection(self.row, self.column, n_rows, n_cols, *self.last, log=self.log)

    def options(self, **kw):
        self.log.append((self.address, kw))
        return types.SimpleNamespace(value=[["a", "b"], [1.0, "#N/A"]])


def test_read_selection_expands_one_cell_and_reads_errors_as_text():
    one_cell = FakeSelection(3, 2, 1, 1)
    values, source = ribbon.read_selection(one_cell)
    assert source == "Data!$A$1:$B$10" and values[1][1] == "#N/A"
    assert one_cell.log == [("$A$1:$B$10", {"ndim": 2, "err_to_str": True})]
    with pytest.raises(StratPDInputError, match="nothing is selected"):
        ribbon.read_selection(None)


def test_read_selection_cuts_whole_columns_to_the_used_range():
    whole_columns = FakeSelection(1, 1, 1_048_576, 2)  # A:B
    assert ribbon.read_selection(whole_columns)[1] == "Data!$A$1:$B$10"
    whole_rows = FakeSelection(1, 1, 10, 16_384)  # 1:10
    assert ribbon.read_selection(whole_rows)[1] == "Data!$A$1:$B$10"
    exact = FakeSelection(2, 1, 5, 2)  # A2:B6 lies inside: read as selected
    assert ribbon.read_selection(exact)[1] == "Data!$A$2:$B$6"


def test_package_main_is_the_ribbon_entry_point():
    import stratpd_xl

    assert callable(stratpd_xl.main)
    assert "excel.ribbon import main" in Path(stratpd_xl.__file__).read_text()


def test_text_that_looks_like_a_formula_stays_text():
    rows = _diamonds(300)
    header = rows[0]
    cut = header.index("cut")
    bands = {"Ideal": "=best", "Premium": "+good", "Very Good": "-ok", "Good": "@fine"}
    for r in rows[1:]:
        r[cut] = bands.get(r[cut], r[cut])
    book = FakeBook()
    name = ribbon.analyse_selection(book, rows)
    written = {v for v in book.sheets[name].cells.values() if isinstance(v, str)}
    assert {"'=best", "'+good", "'-ok", "'@fine"} <= written
    assert not any(v[:1] in "=+-@" for v in written if v)  # "": an empty evidence cell


def test_a_chart_that_cannot_be_placed_is_reported_and_tables_are_written():
    class ProtectedPictures(FakePictures):
        def add(self, path, *, name, left, top):
            raise RuntimeError("The sheet is protected.")

    class ProtectedSheets(FakeSheets):
        def add(self, name, after=None):
            new = super().add(name, after)
            new.pictures = ProtectedPictures(new)
            return new

    book = FakeBook()
    book.sheets = ProtectedSheets(list(book.sheets))
    warnings: list[str] = []
    name = ribbon.analyse_selection(book, _diamonds(200), warn=warnings.append)
    new = book.sheets[name]
    (top,) = [r for (r, c), v in new.cells.items() if v == "Impact ranking"]
    assert _table_at(new, top + 1)[0][0] == "feature"
    assert len(warnings) == 10  # the ranking chart and nine curves
    assert warnings[0] == (
        'the chart "StratPD ranking" could not be placed (RuntimeError: The sheet is protected.)'
    )


def _columns(rows: list[list[Any]], *names: str) -> list[list[Any]]:
    """The selection narrowed to the named columns, in that order."""
    idx = [rows[0].index(name) for name in names]
    return [[row[i] for i in idx] for row in rows]


def test_workbook_names_set_trials_and_positive():
    # StratPD_trials: 1 gives no band (the button's default, the report's, gives one);
    # StratPD_positive: the value of a text target that counts.  Four columns, not ten: the
    # names act on every feature alike, and each of the 9 features costs a picture.
    rows = _columns(_diamonds(300), "carat", "cut", "depth", "price")
    one = FakeBook(names=[FakeName("StratPD_trials", "=1")])
    new = one.sheets[ribbon.analyse_selection(one, rows)]
    assert not any(v == BAND_LOW for v in new.cells.values())
    three = FakeBook(names=[FakeName("StratPD_trials", "=Data!$L$1", 3.0)])
    new = three.sheets[ribbon.analyse_selection(three, rows)]
    assert any(v == BAND_LOW for v in new.cells.values())
    colours = FakeBook(names=[FakeName("StratPD_positive", '="E"')])
    name = ribbon.analyse_selection(
        colours, _columns(_diamonds(300), "carat", "cut", "depth", "color"))
    assert name == "StratPD color"
    told = FakeBook()
    with pytest.raises(StratPDInputError, match="with the name StratPD_positive, e.g. "):
        ribbon.analyse_selection(told, _diamonds(300, last="color"))
    bad = FakeBook(names=[FakeName("StratPD_trials", '="lots"')])
    with pytest.raises(StratPDInputError, match="the name StratPD_trials must be a whole"):
        ribbon.analyse_selection(bad, _diamonds(300))
