"""Explain a model without the model: StratPD on a scoring table (docs/scale.md).

A scoring table is what a model leaves behind in a warehouse: each row's features and the
model's prediction (often the label too).  StratPD with the prediction as the target shows
how the *model's* output moves with one feature, other features held alike, from the table
alone: no model object, no call to it per row and grid value, so the table can be any size
(a Parquet folder read in chunks, or a Dask DataFrame).  Beside it, the same curve with the
label as the target shows what the *data* say; where the two differ, the model learned
something the data do not support there (or the reverse).

Run: ``python docs/explain_a_model.py [folder]`` (writes ``scores.parquet`` there; needs the
parquet extra).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor

import stratpd_xl as sx
from stratpd_xl.demo import demo_data


def scoring_table(folder: Path, rows: int | None = None) -> Path:
    """A model's scoring table: diamonds' features, the price, and a fitted model's
    prediction of it (as a warehouse would hold them), written as Parquet."""
    data = demo_data().drop(columns=["x", "y", "z"])
    if rows is not None:
        data = data.sample(rows, random_state=0).reset_index(drop=True)
    features = ["carat", "depth", "table"]
    model = HistGradientBoostingRegressor(max_iter=200, random_state=0)
    model.fit(data[features], data["price"])
    data["prediction"] = model.predict(data[features])
    path = folder / "scores.parquet"
    data.to_parquet(path, row_group_size=10_000)
    return path


def main(folder: Path, rows: int | None = None) -> None:
    path = scoring_table(folder, rows)
    # The model's own carat effect, read from its predictions in chunks (a path is streamed;
    # a Dask DataFrame of the same table runs on the cluster its client points at).  The
    # label is left out: it is not an input of the model.
    model_curve = sx.stratpd(path, "prediction", "carat", exclude="price", quiet=True)
    data_curve = sx.stratpd(path, "price", "carat", exclude="prediction", quiet=True)
    # Which inputs move the model's output most; cut, color and clarity were not its inputs,
    # so their impact on its predictions is what they share with its inputs (near none).
    ranking = sx.impact(path, "prediction", exclude="price", quiet=True)
    at = np.array([0.5, 1.0, 1.5, 2.0])
    model_at = np.interp(at, model_curve["x"], model_curve["pd"])
    data_at = np.interp(at, data_curve["x"], data_curve["pd"])
    print("carat   model's effect   the data's effect")
    for c, m, d in zip(at, model_at - model_at[0], data_at - data_at[0], strict=True):
        print(f"{c:5.1f}   {m:14,.0f}   {d:17,.0f}")
    print(ranking[["feature", "impact", "share"]].to_string(index=False))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()))
