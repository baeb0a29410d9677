"""``exclude`` on the real tables whose columns restate the target (issue 18's leaks).

Bikeshare: ``bikers = casual + registered``; Wage: ``logwage = log(wage)``.  With those
columns among the others every other effect comes out near 0; excluded, the others' effects
show.  Prints one markdown table: each table's ranking shares and the hour's effects with and
without the exclusion, beside the raw differences of the hour's means for scale.

Needs the ISLP data package (``pip install --no-deps ISLP``: only its data files and loader
are used); not a dependency of stratpd-xl.  Run: ``python benchmarks/exclude_leaks.py``.
"""

from __future__ import annotations

import sys
import time

import stratpd_xl as sx


def _load(name: str):
    try:
        from ISLP import load_data
    except ImportError:
        sys.exit("exclude_leaks: pip install --no-deps ISLP to run it (its data only)")
    return load_data(name)


def _shares(ranking, names: list[str]) -> str:
    share = dict(zip(ranking["feature"], ranking["share"], strict=True))
    return " / ".join(f"{share[n]:.3f}" if n in share else "-" for n in names)


def main() -> None:
    rows = ["| table | exclude | seconds | top of the ranking | shares | hour effects 3h / 8h / "
            "17h (vs 0h) | light rain vs clear |", "|---|---|---:|---|---|---|---|"]
    bike = _load("Bikeshare")
    means = bike.groupby("hr", observed=True)["bikers"].mean()
    for exclude in (None, ["casual", "registered"]):
        start = time.perf_counter()
        ranking = sx.impact(bike, "bikers", random_state=0, exclude=exclude)
        seconds = time.perf_counter() - start
        hours = sx.catstratpd(bike, "bikers", "hr", random_state=0, exclude=exclude)
        hour = dict(zip(hours["category"], hours["pd"], strict=True))
        weather = sx.catstratpd(bike, "bikers", "weathersit", random_state=0, exclude=exclude)
        rain = dict(zip(weather["category"], weather["pd"], strict=True))
        rows.append(
            f"| Bikeshare | {', '.join(exclude or ['none'])} | {seconds:.1f} | "
            f"{', '.join(ranking['feature'][:3])} | "
            f"{_shares(ranking, ['registered', 'casual', 'hr', 'weathersit'])} "
            "(registered / casual / hr / weathersit) | "
            + " / ".join(f"{hour[h] - hour[0]:.1f}" for h in (3, 8, 17))
            + f" | {rain['light rain/snow'] - rain['clear']:.1f} |"
        )
    rows.append("| Bikeshare: raw means, for scale | | | | | "
                + " / ".join(f"{means[h] - means[0]:.1f}" for h in (3, 8, 17)) + " | |")
    wage = _load("Wage")
    for exclude in (None, ["logwage"]):
        start = time.perf_counter()
        ranking = sx.impact(wage, "wage", random_state=0, exclude=exclude)
        seconds = time.perf_counter() - start
        rows.append(
            f"| Wage | {', '.join(exclude or ['none'])} | {seconds:.1f} | "
            f"{', '.join(ranking['feature'][:3])} | "
            f"{_shares(ranking, ['logwage', 'education', 'age'])} "
            "(logwage / education / age) | | |"
        )
    print("\n".join(rows))


if __name__ == "__main__":
    main()
