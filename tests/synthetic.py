"""Synthetic data sets of Parr & Wilson (2020), generated with fixed seeds.

Shared by the engine tests and ``benchmarks/accuracy.py``; every function returns a
DataFrame and, where useful, the true partial dependence.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def body_weight(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Paper Eq. 5: weight = 120 + 10 (height - min height) + 40 pregnant - 1.5 education."""
    rng = np.random.default_rng(seed)
    female = rng.integers(0, 2, n).astype(bool)
    pregnant = np.where(female, rng.integers(0, 2, n), 0)
    height = np.where(female, 65 + rng.uniform(-4.5, 5, n), 68 + rng.uniform(-7, 8, n))
    education = np.where(female, 12 + rng.uniform(0, 8, n), 10 + rng.uniform(0, 8, n))
    weight = 120 + 10 * (height - height.min()) + 40 * pregnant - 1.5 * education
    return pd.DataFrame(
        {
            "sex": np.where(female, "F", "M"),
            "pregnant": pregnant,
            "height": height,
            "education": education,
            "weight": weight,
        }
    )


def interaction(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    """y = x1^2 + x1*x2 + 5*x1*sin(3*x2) + 10 with x1, x2, x3 ~ U(0, 10); x3 is unused."""
    rng = np.random.default_rng(seed)
    x1, x2, x3 = rng.uniform(0, 10, (3, n))
    y = x1**2 + x1 * x2 + 5 * x1 * np.sin(3 * x2) + 10
    return pd.DataFrame({"x1": x1, "x2": x2, "x3": x3, "y": y})


def interaction_truth_x1(x1: np.ndarray) -> np.ndarray:
    """Partial dependence of ``interaction`` on x1: x1^2 + x1 E[x2] + 5 x1 E[sin(3 x2)]."""
    e_x2 = 5.0
    e_sin = (1 - np.cos(30.0)) / 30.0  # mean of sin(3 x2) for x2 ~ U(0, 10)
    return x1**2 + x1 * e_x2 + 5 * x1 * e_sin


def noisy_quadratic(n: int = 2000, sigma: float = 0.0, seed: int = 0) -> pd.DataFrame:
    """y = x1^2 + x2 + 10 + N(0, sigma) with x1, x2 ~ U(-2, 2) (paper Figure 4)."""
    rng = np.random.default_rng(seed)
    x1, x2 = rng.uniform(-2, 2, (2, n))
    y = x1**2 + x2 + 10 + rng.normal(0, sigma, n)
    return pd.DataFrame({"x1": x1, "x2": x2, "y": y})


def convex_codependent(seed: int = 0, n: int = 2000, bend: float = 2.0) -> pd.DataFrame:
    """Levels a < b < c (effects 0, 1, 2) and a column z = level + N(0, 0.7) that acts on y
    through exp(bend z), beside a uniform w: y = effect + exp(bend z) + w + N(0, 0.5).

    Far from any straight line: inside the strata a linear fit of z's part misses most
    where z is high, and the miss travels with the level.
    """
    rng = np.random.default_rng(seed)
    level = rng.integers(0, 3, n)
    z = level + rng.normal(0, 0.7, n)
    w = rng.uniform(0, 10, n)
    y = np.array([0.0, 1.0, 2.0])[level] + np.exp(bend * z) + w + rng.normal(0, 0.5, n)
    return pd.DataFrame({"level": np.array(["a", "b", "c"])[level], "z": z, "w": w, "y": y})


STATE_BASE = {"AZ": 90.0, "CA": 70.0, "CO": 40.0, "NV": 80.0, "WA": 60.0}


def stored_parts(n: int = 3000, seed: int = 1) -> pd.DataFrame:
    """revenue = product + service with both stored: product = 3 x1 + x2 + N(0, 1),
    service = 2 x3 + N(0, 1), x1, x2, x3 ~ U(0, 10).  x1's true slope on revenue is 3."""
    rng = np.random.default_rng(seed)
    x1, x2, x3 = rng.uniform(0, 10, (3, n))
    product = 3 * x1 + x2 + rng.normal(0, 1, n)
    service = 2 * x3 + rng.normal(0, 1, n)
    return pd.DataFrame({"x1": x1, "x2": x2, "x3": x3, "product": product,
                         "service": service, "revenue": product + service})


def noisy_target_copy(n: int = 3000, seed: int = 1, noise: float = 0.2) -> pd.DataFrame:
    """y = 3 x1 + x2 + 2 x3 + N(0, 1), x1, x2, x3 ~ U(0, 10), and copy = 0.55 y + noise of
    ``noise`` times 0.55 y's sd stored beside them (R^2 with y 0.99 / 0.96 / 0.80 for noise
    0.1 / 0.2 / 0.5).  x1's true slope is 3."""
    rng = np.random.default_rng(seed)
    x1, x2, x3 = rng.uniform(0, 10, (3, n))
    y = 3 * x1 + x2 + 2 * x3 + rng.normal(0, 1, n)
    copy = 0.55 * y + rng.normal(0, noise * 0.55 * y.std(), n)
    return pd.DataFrame({"x1": x1, "x2": x2, "x3": x3, "copy": copy, "y": y})


def interaction_proxy(seed: int = 0, n: int = 5000) -> pd.DataFrame:
    """y = 2 x1 x2 + x3 + N(0, 0.3), x1, x2, x3 ~ U(-1, 1), and x4 = 0.85 x1 + N(0, 0.29)
    (correlation 0.86 with x1), which has no effect: only x1 x x2 interacts."""
    rng = np.random.default_rng(seed)
    x1, x2, x3 = rng.uniform(-1, 1, (3, n))
    x4 = 0.85 * x1 + rng.normal(0, 0.29, n)
    y = 2 * x1 * x2 + x3 + rng.normal(0, 0.3, n)
    return pd.DataFrame({"x1": x1, "x2": x2, "x3": x3, "x4": x4, "y": y})


def weather(years: int = 3, seed: int = 0) -> pd.DataFrame:
    """Temperature = state baseline + 10 sin(2 pi day / 365 + pi) + N(0, 4), daily."""
    rng = np.random.default_rng(seed)
    rows = []
    for state, base in STATE_BASE.items():
        for year in range(2018, 2018 + years):
            day = np.arange(1, 366)
            temp = base + 10 * np.sin(2 * np.pi * day / 365 + np.pi) + rng.normal(0, 4, day.size)
            rows.append(pd.DataFrame({"state": state, "year": year, "dayofyear": day,
                                      "temperature": temp}))
    return pd.concat(rows, ignore_index=True)


def centred_rmse(x: np.ndarray, estimate: np.ndarray, truth: np.ndarray) -> float:
    """RMSE between two curves after removing each one's mean (curves start anywhere)."""
    e = estimate - estimate.mean()
    t = truth - truth.mean()
    return float(np.sqrt(np.mean((e - t) ** 2)))


def rare_yes_no(seed: int = 0, n: int = 20_000, rate: float = 0.02, rho: float = 0.55
                ) -> tuple[pd.DataFrame, float]:
    """A rare yes/no outcome: P(y) = logistic(a + x + z), ``a`` set for a share ``rate`` of
    "yes"; z moves with x (correlation ``rho``), w1 and w2 do nothing.  Returns the table and
    the true rise of the chance, in percentage points, from the 10th to the 90th percentile
    of x (the partial dependence: the mean over the rows' z)."""
    from scipy.optimize import brentq

    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    z = rho * x + np.sqrt(1 - rho**2) * rng.normal(size=n)
    w = rng.normal(size=(n, 2))

    def chance(a: float, v: np.ndarray, zz: np.ndarray) -> np.ndarray:
        return 1 / (1 + np.exp(-(a + v + zz)))

    a = brentq(lambda a: float(np.mean(chance(a, x, z))) - rate, -30, 10)
    y = rng.uniform(size=n) < chance(a, x, z)
    lo, hi = np.percentile(x, [10, 90], method="inverted_cdf")
    truth = 100 * float(np.mean(chance(a, hi, z)) - np.mean(chance(a, lo, z)))
    df = pd.DataFrame({"x": x, "z": z, "w1": w[:, 0], "w2": w[:, 1],
                       "y": np.where(y, "yes", "no")})
    return df, truth


def linear_beside_copies(seed: int = 0, n: int = 2000) -> tuple[pd.DataFrame, float]:
    """Ames in small: a house's ``year`` acts linearly (400 a year) beside near-copies that
    do nothing (``garage`` = year + N(0, 4), ``remod``), curved effects of quality, area and
    lot that move with it, 12 noise columns drifting with the year and 4 columns of rare
    categories.  Returns the table (target ``price``) and the true change of price from the
    10th to the 90th percentile of ``year``."""
    rng = np.random.default_rng(seed)
    year = rng.integers(1900, 2011, n).astype(float)
    garage = np.round(year + rng.normal(0, 4, n))
    remod = np.maximum(year, np.round(year + rng.exponential(15, n)))
    qual = np.clip(np.round(3 + (year - 1900) / 22 + rng.normal(0, 1.3, n)), 1, 10)
    area = np.exp(rng.normal(7.2, 0.3, n) + 0.05 * (qual - 5))
    lot = np.exp(rng.normal(9.1, 0.4, n))
    d = {"year": year, "garage": garage, "remod": remod, "qual": qual, "area": area,
         "lot": lot}
    for j in range(12):
        d[f"n{j}"] = rng.normal(size=n) + 0.3 * (year - 1955) / 32
    shares = [.5, .2, .1, .08, .04, .03, .02, .01, .01, .01]
    for j in range(4):
        d[f"c{j}"] = rng.choice(list("abcdefghij"), n, p=shares)
    price = (400 * (year - 1900) + 12_000 * np.maximum(qual - 5, 0) ** 1.5 + 70 * area
             - 0.01 * (area - 1500) ** 2 + 20_000 * np.log(lot / 10_000)
             + rng.normal(0, 15_000, n))
    lo, hi = np.percentile(year, [10, 90], method="inverted_cdf")
    return pd.DataFrame(d).assign(price=price), 400 * float(hi - lo)


def category_beside_copies(seed: int = 0, n: int = 2000) -> tuple[pd.DataFrame, float]:
    """The categorical :func:`linear_beside_copies`: a kitchen's quality (Po < Fa < TA < Gd
    < Ex, 8,000 a step) beside near-copies that do nothing (``copy1`` = level + N(0, 0.35),
    ``copy2`` rounded with twice that noise), 12 noise columns drifting with it, 4 columns of
    rare categories, and curved effects of quality, area and lot that do not move with it
    (the plain comparison inside the strata is unbiased).  Returns the table (target
    ``price``) and the true effect of one step."""
    rng = np.random.default_rng(seed)
    level = rng.choice(5, n, p=[.1, .25, .35, .2, .1])
    qual = np.clip(np.round(5 + rng.normal(0, 1.3, n)), 1, 10)
    area = np.exp(rng.normal(7.2, 0.3, n) + 0.05 * (qual - 5))
    lot = np.exp(rng.normal(9.1, 0.4, n))
    d = {"kitchen": np.array(["Po", "Fa", "TA", "Gd", "Ex"])[level],
         "copy1": level + rng.normal(0, 0.35, n),
         "copy2": np.round(level + rng.normal(0, 0.7, n)), "qual": qual, "area": area,
         "lot": lot}
    for j in range(12):
        d[f"n{j}"] = rng.normal(size=n) + 0.3 * (level - 2)
    shares = [.5, .2, .1, .08, .04, .03, .02, .01, .01, .01]
    for j in range(4):
        d[f"c{j}"] = rng.choice(list("abcdefghij"), n, p=shares)
    price = (8000 * level + 12_000 * np.maximum(qual - 5, 0) ** 1.5 + 70 * area
             - 0.01 * (area - 1500) ** 2 + 20_000 * np.log(lot / 10_000)
             + rng.normal(0, 15_000, n))
    return pd.DataFrame(d).assign(price=price), 8000.0


def three_classes(n: int = 3000, seed: int = 0, g_text: bool = True
                  ) -> tuple[pd.DataFrame, np.ndarray]:
    """Classes a, b, c of ``y`` with softmax chances of logits (0, 3 x + z / 2, z - 2 x), x
    uniform on [0, 1], z standard normal, and a column g that does nothing (text p/q, or
    normal numbers with ``g_text=False``); returns the table and z."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    z = rng.normal(size=n)
    logits = np.column_stack([np.zeros(n), 3 * x + 0.5 * z, -2 * x + z])
    chance = np.exp(logits)
    chance /= chance.sum(axis=1, keepdims=True)
    pick = (rng.random(n)[:, None] > chance.cumsum(axis=1)).sum(axis=1)
    g = rng.choice(["p", "q"], n) if g_text else rng.normal(size=n)
    data = pd.DataFrame({"x": x, "z": z, "g": g, "y": np.array(["a", "b", "c"])[pick]})
    return data, z


def three_class_truth(grid: np.ndarray, x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Each class's partial dependence on x in points (z averaged over the rows) at
    ``grid``, centred on the rows' ``x``: one column per class.

    Every value is paired with every row's z: ``STEP`` values at a time keeps the arrays
    (values x rows x 3) at about 150 MB for 12,000 rows, not 3.5 GB."""

    def chance(values: np.ndarray) -> np.ndarray:
        parts = []
        for start in range(0, values.size, STEP):
            v = values[start : start + STEP, None]
            logits = np.stack([np.zeros((v.size, z.size)), 3 * v + 0.5 * z, -2 * v + z],
                              axis=-1)
            p = np.exp(logits)
            parts.append((p / p.sum(axis=-1, keepdims=True)).mean(axis=1))
        return 100 * np.concatenate(parts or [np.zeros((0, 3))])

    return chance(grid) - chance(x).mean(axis=0)


STEP = 500  # values of x paired with every row at a time in three_class_truth


def blanks_carry(seed: int = 0, n: int = 3000, effect: float = 5.0, depends: bool = False
                 ) -> pd.DataFrame:
    """y = 2 x1 + 3 x2 + N(0, 1) + ``effect`` where x1 is blank (about a fifth of the rows):
    blank at random, or (``depends``) mostly where x2 is high (a logistic in 2.5 x2), so the
    raw difference of means adds x2's effect to the blanks'.  The blanks' truth, against
    the typical level of the rows with x1, is ``effect``."""
    rng = np.random.default_rng(seed)
    x1 = rng.uniform(0, 10, n)
    x2 = rng.normal(size=n)
    chance = 0.4 / (1 + np.exp(-2.5 * x2)) if depends else np.full(n, 0.2)
    blank = rng.random(n) < chance
    y = 2 * x1 + 3 * x2 + rng.normal(size=n) + effect * blank
    return pd.DataFrame({"x1": np.where(blank, np.nan, x1), "x2": x2, "y": y})


def blank_category(seed: int = 0, n: int = 3000) -> pd.DataFrame:
    """A 3-level column x1 (a, b, c: effects 0, 4, 0) blank in 15 % of the rows, where y is
    5 higher, beside y = 3 x2 + N(0, 1): the blanks' truth against level a is 5 + 4/3 (the
    blanks are a mix of the levels, a third of them b)."""
    rng = np.random.default_rng(seed)
    x2 = rng.normal(size=n)
    level = rng.choice(["a", "b", "c"], n)
    blank = rng.random(n) < 0.15
    y = 3 * x2 + 4 * (level == "b") + 5 * blank + rng.normal(size=n)
    return pd.DataFrame({"x1": np.where(blank, None, level), "x2": x2, "y": y})
