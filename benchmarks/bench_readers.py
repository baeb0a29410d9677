"""Read time of ``read_table`` (file read + typing), old readers vs new, on generated files.

Old = ``stratpd_xl/files.py`` at a git revision (default ``main``: csv module, openpyxl, odfpy);
new = the working tree (pandas' C reader, python-calamine).  Both type through the same sheet
layer, so the difference is the readers'.  Files go to a temporary folder.

    PYTHONPATH=. python benchmarks/bench_readers.py --rows 200000 [--old main] [--skip-old-ods]
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd

import stratpd_xl
from stratpd_xl.input import files as new_files


def make_table(rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    data = {f"x{i}": rng.normal(size=rows).round(4) for i in range(7)}
    data["n"] = rng.integers(0, 1000, rows)
    data["city"] = rng.choice(["Paris", "Lyon", "Köln", "Bonn"], rows)
    data["y"] = rng.normal(size=rows).round(3)
    return pd.DataFrame(data)


def write_files(table: pd.DataFrame, folder: Path) -> dict[str, Path]:
    paths = {"csv": folder / "t.csv", "csv ; decimal comma": folder / "t_de.csv"}
    table.to_csv(paths["csv"], index=False)
    table.to_csv(paths["csv ; decimal comma"], index=False, sep=";", decimal=",")
    paths["xlsx"] = folder / "t.xlsx"
    with pd.ExcelWriter(paths["xlsx"], engine="xlsxwriter") as writer:
        table.to_excel(writer, index=False)
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice:
        cmd = [soffice, "--headless", f"-env:UserInstallation={(folder / 'lo').as_uri()}"]
        cmd += ["--convert-to", "ods", "--outdir", str(folder), str(paths["xlsx"])]
        subprocess.run(cmd, check=True, capture_output=True, timeout=1800)
        paths["ods"] = folder / "t.ods"
    return paths


def old_module(rev: str, folder: Path) -> ModuleType:
    """files.py at ``rev``, imported inside the stratpd_xl package (its relative imports)."""
    source = subprocess.run(
        ["git", "show", f"{rev}:stratpd_xl/files.py"],
        check=True,
        capture_output=True,
        text=True,
        cwd=Path(stratpd_xl.__file__).parent.parent,
    ).stdout
    path = folder / "files_old.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("stratpd_xl._files_old", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def timed(module: ModuleType, path: Path) -> tuple[float, pd.DataFrame]:
    start = time.perf_counter()
    frame = module.read_table(path)
    return time.perf_counter() - start, frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--old", default="main", help="git revision of the old readers")
    parser.add_argument("--skip-old-ods", action="store_true", help="odfpy takes minutes")
    parser.add_argument("--new-only", action="store_true", help="time only the new readers")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = write_files(make_table(args.rows), folder)
        old = old_module(args.old, folder)
        print(f"read_table, {args.rows:,} rows x 10 columns (seconds)")
        print(f"{'file':<22}{'old':>8}{'new':>8}  same table")
        for label, path in paths.items():
            new_s, new_frame = timed(new_files, path)
            if args.new_only or (label == "ods" and args.skip_old_ods):
                print(f"{label:<22}{'-':>8}{new_s:8.2f}  -")
                continue
            old_s, old_frame = timed(old, path)
            same = new_frame.equals(old_frame) and new_frame.attrs.get(
                "notes"
            ) == old_frame.attrs.get("notes")
            print(f"{label:<22}{old_s:8.2f}{new_s:8.2f}  {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
