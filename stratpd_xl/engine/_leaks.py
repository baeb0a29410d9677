"""Columns that restate the target, found from the whole model, and named.

Two ways a stored column can take the target's own variation and erase every other effect:

* **The others restate it** (``"restated"``).  When the strata and the adjustment's
  straight-line fit on the other columns together leave almost none of the target's
  variation, a feature's effect has nothing left to show (bikers = casual + registered;
  revenue = product + service).  The strata alone miss a sum of parts: a tree splits on one
  column at a time, so rows alike in both parts still differ in their sum, and x1's slope
  came out 5e-9 for a true 3 with ``attrs["adjust_gain"]`` 1.00 and no warning.  The share
  left is measured out of fold (the adjustment's folds of strata), so a fit on many columns
  cannot restate the target by chance; the columns that carry it are the fewest that, added
  one at a time by how much they explain inside the strata, explain nearly all that every
  other column does.
* **One column is a noisy copy of it** (``"copy"``): ``0.55 y + noise``, a price band, a
  figure recorded after the outcome.  Held fixed in the strata it takes a share of every
  other effect (x1 cut to 0.54 of its size at R^2 0.99 with y, 0.80 at 0.96).  It is told
  from a strong driver by what it says once the target is known: a copy depends on the
  other columns only through the target, so given the target they tell nothing more about
  it; a driver of the target is tied to them given the target (explaining away).  A column
  is named when the target explains at least ``COPY_R2`` of it and, once the target is
  known, the other columns explain at most ``COPY_SLACK`` of what is left.

Each finding is a :class:`Leak` (kind, the columns it names, the feature whose number it
moves, the numbers behind it) with its sentence; the fix is worded for every front end
(:func:`how_to_exclude`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from ..schema import Note
from ._adjust import numeric_basis, others_left
from ._table import power_of_two_scale

# Below this share of the target's variance left by the strata and the others' straight-line
# fit, the other columns restate the target: every effect comes out near 0 (Bikeshare's
# bikers = casual + registered: 1e-13 for hour and weather).  Ordinary tables keep 5-90 %
# (docs/method.md: 0 of the real tables measured fall below it).
LEAK_SHARE = 0.005
# The columns named as restating the target explain at least this share of what all the
# other columns explain inside the strata (at most MAX_NAMED of them).
NAMED_SHARE = 0.9
MAX_NAMED = 5
# Features a leak's sentence names (the first ones, then "and N more"); its note has all.
NAMED_FEATURES = 4
# Rows (whole strata) used to name the columns and for the checks made without the
# adjustment's fit, fewer on wide tables (SAMPLE_CELLS rows x columns, at least MIN_ROWS);
# columns looked at for that (those moving most with the target inside the strata).
# Memory stays bounded whatever the table: columns are made one at a time.
SAMPLE_ROWS = 20_000
SAMPLE_CELLS = 4_000_000
MIN_ROWS = 2_000
MAX_CANDIDATES = 50
# A noisy copy: the target explains at least COPY_R2 of the column (straight lines bent at
# the target's quintiles), the other columns explain at least COPY_MIN_R2 of it (else there
# is nothing to tell a copy from a driver), and once the target is known they explain at
# most COPY_SLACK of what it leaves (adjusted R^2 throughout: chance fits of many columns
# to few rows do not count).
COPY_R2 = 0.5
COPY_MIN_R2 = 0.05
COPY_SLACK = 0.02
# Rows the copy check reads (evenly spaced): enough to tell 2 % of what the target leaves
# of a column from chance with 50 other columns (adjusted R^2's spread: about 1e-4 of it).
COPY_ROWS = 5_000


@dataclass(frozen=True)
class Leak:
    """A finding that columns restate the target.

    Attributes
    ----------
    kind : str
        ``"restated"`` (the other columns, with the strata, nearly determine the target) or
        ``"copy"`` (one column is the target with noise).
    columns : tuple of str
        The columns that carry it: the ones to leave out if they restate the target.
    features : tuple of str
        The features whose effects it moves.
    share_left : float
        ``"restated"``: share of the target's variance the strata and the others' fit leave
        (the largest over ``features``).
    r2 : float
        ``"copy"``: share of the column's variance the target explains.
    """

    kind: str
    columns: tuple[str, ...]
    features: tuple[str, ...]
    share_left: float = np.nan
    r2: float = np.nan

    def note(self, target: str) -> Note:
        """The warning as a note (kind "leak"): its sentence, the columns it names, the
        features it moves; ``facts`` hold ``leak`` (this kind), ``share_left`` and ``r2``.
        A restatement can make an effect wholly wrong (moves 1); a noisy copy shrinks
        effects by a share that grows with its R^2 (x1 0.96 / 0.80 / 0.54 of its size at
        R^2 0.80 / 0.96 / 0.99), so it moves them by up to about a half."""
        return Note(self.sentence(target), "leak", columns=self.columns,
                    features=self.features, moves=1.0 if self.kind == "restated" else 0.5,
                    leak=self.kind, share_left=self.share_left, r2=self.r2)

    @classmethod
    def of(cls, note: Note) -> Leak:
        """The finding behind one of :meth:`note`'s notes."""
        return cls(note.facts["leak"], note.columns, note.features,
                   note.facts["share_left"], note.facts["r2"])

    def sentence(self, target: str) -> str:
        """The warning in words, with the fix in every front end's words."""
        cols = self.columns
        feats = _listed(self.features, NAMED_FEATURES)
        plural = len(self.features) > 1
        if self.kind == "copy":
            c = cols[0]
            others = [f for f in self.features if f != c]
            moved = (f' (that of {_listed(others, NAMED_FEATURES)} '
                     f'come{"" if len(others) > 1 else "s"} out '
                     "smaller)" if others else "")
            return (
                f'"{c}" looks like a copy of "{target}" with noise added: "{target}" explains '
                f'{self.r2:.0%} of it, and once "{target}" is known the other columns tell '
                f"nothing more about it, as for a number computed from the target or recorded "
                f"after it; held fixed in the strata it takes a share of every other column's "
                f'effect{moved}: if it is computed from "{target}", leave it '
                f"out{how_to_exclude(list(cols))}"
            )
        left = (f"only {self.share_left:.2%}" if self.share_left >= 5e-5 else "under 0.01%")
        which = (f"; {_listed(cols)} carr{'ies' if len(cols) == 1 else 'y'} it" if cols else "")
        them = "it" if len(cols) == 1 else "them"
        return (
            f'the other columns nearly determine "{target}" (the strata and a straight-line '
            f"fit on those columns leave {left} of its variation), so the effect"
            f"{'s' if plural else ''} of {feats} come{'' if plural else 's'} out near 0{which}: "
            f"if {'it restates' if len(cols) == 1 else 'they restate'} the target (its parts, "
            f"or numbers computed from it), leave {them} out{how_to_exclude(list(cols))}"
        )


def is_leak(note: object) -> bool:
    """A note made by :meth:`Leak.note`."""
    return isinstance(note, Note) and note.kind == "leak" and "leak" in note.facts


def merged(leaks: Iterable[Leak]) -> list[Leak]:
    """One finding per kind and set of columns, naming every feature it moves (a ranking
    says each once, not once per feature).

    That the other columns restate the target is one fact whichever feature it was seen
    from: each feature's search names the columns that carry it without that feature, so the
    sets differ (loans_full_schema: five notes, each of five of 8 columns).  It is said once,
    with every column any search named, the most often named first."""
    out: dict[tuple[str, ...], Leak] = {}
    named: dict[str, int] = {}
    for leak in leaks:
        restated = leak.kind == "restated"
        key = (leak.kind,) if restated else (leak.kind, *leak.columns)
        if restated:
            for c in leak.columns:
                named[c] = named.get(c, 0) + 1
        seen = out.get(key)
        out[key] = leak if seen is None else Leak(
            leak.kind, seen.columns + tuple(c for c in leak.columns if c not in seen.columns),
            seen.features + tuple(f for f in leak.features if f not in seen.features),
            float(np.fmax(seen.share_left, leak.share_left)), seen.r2)
    first = {c: i for i, c in enumerate(named)}
    return [Leak(leak.kind, tuple(sorted(leak.columns, key=lambda c: (-named[c], first[c]))),
                 leak.features, leak.share_left, leak.r2)
            if leak.kind == "restated" else leak for leak in out.values()]


def _listed(names: Iterable[str], most: int | None = None) -> str:
    """The names quoted and joined; past ``most`` the first few and how many more (the
    note's ``features`` carry them all: a wide table's leak moved 50 features)."""
    quoted = [f'"{c}"' for c in names]
    if most is not None and len(quoted) > most:
        return ", ".join(quoted[:most - 1]) + f" and {len(quoted) - most + 1:,} more"
    if len(quoted) <= 2:
        return " and ".join(quoted)
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def how_to_exclude(names: list[str]) -> str:
    """' (exclude=["casual"] in Python, --exclude casual on the command line, ...)': how every
    front end leaves columns out; empty without a name to show."""
    if not names:
        return ""
    python = ", ".join(f'"{c}"' for c in names)
    typed = ",".join(names)
    option = f'"{typed}"' if any(ch in typed for ch in " '\"&|;<>()$`") else typed
    return (f" (exclude=[{python}] in Python, --exclude {option} on the command line, the "
            "exclude argument in a spreadsheet)")


# --------------------------------------------------------------------------- restated


def sample_rows(n_columns: int) -> int:
    """How many rows the checks look at for a table of ``n_columns`` columns."""
    return int(np.clip(SAMPLE_CELLS // max(n_columns, 1), MIN_ROWS, SAMPLE_ROWS))


def sample_strata(leaf: np.ndarray, rng: np.random.Generator, rows: int) -> np.ndarray:
    """Positions of whole strata drawn at random until about ``rows`` rows (all when fewer):
    within-strata variation needs a stratum's rows together."""
    if leaf.size <= rows:
        return np.arange(leaf.size)
    n_leaves = int(leaf.max()) + 1
    counts = np.bincount(leaf, minlength=n_leaves)
    order = rng.permutation(n_leaves)
    keep = np.zeros(n_leaves, bool)
    keep[order[: int(np.searchsorted(np.cumsum(counts[order]), rows)) + 1]] = True
    return np.flatnonzero(keep[leaf])


def _within(a: np.ndarray, leaf: np.ndarray) -> np.ndarray:
    """Columns of ``a`` (rows x k) minus their stratum's mean."""
    n_leaves = int(leaf.max()) + 1 if leaf.size else 0
    counts = np.maximum(np.bincount(leaf, minlength=n_leaves), 1)
    means = np.column_stack([np.bincount(leaf, weights=a[:, j], minlength=n_leaves) / counts
                             for j in range(a.shape[1])]) if a.shape[1] else np.zeros((0, 0))
    return a - means[leaf] if a.shape[1] else a


def _filled(a: np.ndarray) -> np.ndarray:
    """``a`` with gaps at its column's mean, standardised (a fresh array)."""
    a = np.array(a, dtype=np.float64)
    # Each column over a power of two near its largest value first (exact), so the mean and
    # the squares of a column of any finite size stay finite (x near 2**508 overflowed).
    for j in range(a.shape[1]):
        a[:, j] /= power_of_two_scale(a[:, j])
    gaps = np.isnan(a)
    if gaps.any():
        with np.errstate(invalid="ignore"):
            means = np.nan_to_num(np.nanmean(np.where(gaps, np.nan, a), axis=0))
        a[gaps] = np.take(means, np.nonzero(gaps)[1])
    a -= a.mean(axis=0)
    scale = a.std(axis=0)
    a /= np.where(scale > 0, scale, 1.0)
    return a


def candidates(names: list[str], column: Callable[[str], np.ndarray], y: np.ndarray,
               leaf: np.ndarray) -> dict[str, np.ndarray]:
    """The columns (``column(name)``: as the adjustment reads them, for the rows of ``y``)
    that move most with the target inside the strata, at most ``MAX_CANDIDATES``: each
    standardised, gaps filled, centred within the strata."""
    yw = _within(y[:, None], leaf)[:, 0]
    scored = []
    for name in names:
        w = _within(_filled(column(name)), leaf)
        ss = np.sum(w * w, axis=0)
        ok = ss > 0
        if not ok.any():
            continue
        # The most a column's block explains of y inside the strata, one column at a time.
        r = np.max((w[:, ok].T @ yw) ** 2 / ss[ok])
        scored.append((float(r), name, w[:, ok]))
        if len(scored) > 2 * MAX_CANDIDATES:  # keep the memory of a few columns
            scored.sort(key=lambda t: -t[0])
            del scored[MAX_CANDIDATES:]
    scored.sort(key=lambda t: -t[0])
    return {name: w for _, name, w in scored[:MAX_CANDIDATES]}


def share_left_out_of_fold(blocks: dict[str, np.ndarray], y: np.ndarray, leaf: np.ndarray,
                           rng: np.random.Generator) -> float:
    """Share of the within-strata variation of ``y`` a straight-line fit on ``blocks``
    (already centred within the strata) leaves, out of fold over the strata (NaN when it
    cannot be fitted).  The check made where the adjustment's own fit is not at hand."""
    if not blocks:
        return 1.0
    w = np.column_stack([*blocks.values(), _within(y[:, None], leaf)])
    k = w.shape[1] - 1
    if y.size < 10 * (k + 1):
        return np.nan
    fold = rng.integers(0, 2, int(leaf.max()) + 1)[leaf].astype(bool)
    grams = [w[~fold].T @ w[~fold], w[fold].T @ w[fold]]
    return others_left(grams, 0, k)


def restating_columns(blocks: dict[str, np.ndarray], y: np.ndarray, leaf: np.ndarray
                      ) -> list[str]:
    """The fewest columns that explain, inside the strata, at least ``NAMED_SHARE`` of what
    all of ``blocks`` (centred within the strata: :func:`candidates`) explain of ``y``,
    added one at a time by how much each adds (at most ``MAX_NAMED``)."""
    if not blocks:
        return []
    names = list(blocks)
    spans, at = {}, 0
    for c in names:
        spans[c] = np.arange(at, at + blocks[c].shape[1])
        at += blocks[c].shape[1]
    w = np.column_stack([*blocks.values(), _within(y[:, None], leaf)])
    gram = w.T @ w
    ss = float(gram[-1, -1])
    if not ss > 0:
        return []

    def sse(cols: np.ndarray) -> float:
        sub = gram[np.ix_(cols, cols)]
        d = np.diag(sub)
        beta = np.linalg.lstsq(sub + np.diag(1e-9 * d), gram[cols, -1], rcond=1e-10)[0]
        return float(max(ss - beta @ gram[cols, -1], 0.0))

    floor = sse(np.arange(at))
    goal = floor + (1.0 - NAMED_SHARE) * (ss - floor)
    chosen: list[str] = []
    now = ss
    while len(chosen) < min(MAX_NAMED, len(names)):
        tried = [(sse(np.concatenate([spans[c] for c in [*chosen, name]])), name)
                 for name in names if name not in chosen]
        best, name = min(tried)
        if best >= now * (1 - 1e-6):
            break
        chosen.append(name)
        now = best
        if now <= goal:
            break
    return chosen


# --------------------------------------------------------------------------- copies


def _adjusted_r2(x: np.ndarray, c: np.ndarray) -> float:
    """Adjusted R^2 of ``c`` on the columns of ``x`` (with an intercept)."""
    n, p = x.shape
    if n <= p + 2:
        return np.nan
    xc = x - x.mean(axis=0)
    cc = c - c.mean()
    tss = float(cc @ cc)
    if not tss > 0:
        return np.nan
    beta = np.linalg.lstsq(xc, cc, rcond=1e-10)[0]
    rss = float(np.sum((cc - xc @ beta) ** 2))
    return 1.0 - (rss / (n - p - 1)) / (tss / (n - 1))


def noisy_copies(names: list[str], column: Callable[[str], np.ndarray],
                 numeric: set[str], y: np.ndarray) -> list[tuple[str, float]]:
    """Numeric columns that look like the target with noise added: ``[(name, R^2)]``.

    ``names``: every column the strata use; ``column(name)``: its values for the rows of
    ``y`` as the adjustment reads them (numbers with NaN gaps, or a category's indicator
    columns); ``numeric``: the names that are numbers.  See the module's docstring.  Each
    column is made when needed and dropped after, so memory stays that of a few columns.
    """
    basis = _filled(numeric_basis(y))
    yc = (y - y.mean()) / (y.std() or 1.0)
    found = []
    for name in names:
        if name not in numeric:
            continue
        c = column(name)[:, 0]
        c = c / power_of_two_scale(c)  # exact; R^2 does not change, squares stay finite
        have = np.isfinite(c)
        if have.sum() < 30 or np.ptp(c[have]) == 0:
            continue
        # A cheap first look (a copy moves with the target), then the bent fit.
        r = np.corrcoef(c[have], yc[have])[0, 1]
        if not r * r >= COPY_R2 / 2:
            continue
        r2_y = _adjusted_r2(basis[have], c[have])
        if not r2_y >= COPY_R2:
            continue
        x = _most_related(names, name, column, c, have)
        if x is None:
            continue
        r2_x = _adjusted_r2(x, c[have])
        if not r2_x >= COPY_MIN_R2:
            continue
        r2_both = _adjusted_r2(np.column_stack([basis[have], x]), c[have])
        # What the others still explain of the column once the target is known, as a share
        # of what the target leaves of it: about 0 for a copy; a driver of the target, or
        # a column tied to one, keeps much of it (x2 beside driver = x2 + noise: 0.39).
        if r2_both - r2_y <= COPY_SLACK * max(1.0 - r2_y, 0.01):
            found.append((name, float(r2_y)))
    return found


def _most_related(names: list[str], name: str, column: Callable[[str], np.ndarray],
                  c: np.ndarray, have: np.ndarray) -> np.ndarray | None:
    """The other columns' design for the rows ``have``, standardised, limited to the
    ``MAX_CANDIDATES`` moving most with ``c`` (None without any)."""
    cc = c[have] - c[have].mean()
    scored = []
    for other in names:
        if other == name:
            continue
        a = _filled(column(other))[have]
        if not a.size:
            continue
        # einsum, not BLAS: a matrix-vector product of one column wakes every BLAS thread
        scored.append((float(np.max(np.abs(np.einsum("ij,i->j", a, cc)))), other, a))
        if len(scored) > 2 * MAX_CANDIDATES:  # keep the memory of a few columns
            scored.sort(key=lambda t: -t[0])
            del scored[MAX_CANDIDATES:]
    if not scored:
        return None
    scored.sort(key=lambda t: -t[0])
    return np.column_stack([a for _, _, a in scored[:MAX_CANDIDATES]])
