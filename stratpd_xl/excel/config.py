"""The add-in's user config file, and ``import-udfs`` (Windows formulas).

The installer (``stratpd_xl.excel.install``) does not write this file: the add-in carries its
settings in its own sheet (``addin_file``).  ``write`` stays for users who set things up by
hand; the add-in reads the file for any key its sheet does not hold.

The add-in's VBA is xlwings' ribbon add-in template with one constant changed, so its settings
are read the way that template reads them (xlwings 0.37.8, module ``xlwings``, ``GetConfig``):

* the project name is ``PROJECT_NAME = "stratpd_xl"`` (the template's ``"myaddin"`` is shared
  by every add-in made from it), so the user config file is
  ``%USERPROFILE%\\.stratpd_xl\\stratpd_xl.conf`` on Windows and
  ``~/Library/Containers/com.microsoft.Excel/Data/stratpd_xl.conf`` on macOS (Excel's sandbox);
* each line is ``"key","value"`` (VBA ``Input #``), keys compared case-insensitively;
* ``Interpreter_Win`` / ``Interpreter_Mac`` name the Python that runs ``stratpd_xl.main()`` and
  the formulas; ``UDF Modules`` names the module whose ``@xw.func`` functions are imported.

This module uses only the standard library and also runs as a script, before the package is
installed.  The add-in ships with the formulas' module ``xlwings_udfs`` built in; ``import-udfs``
is the installer's opt-in rescue (``--import-formulas``) should an Excel refuse that module: it
regenerates it with xlwings' own import, which replaces a module of that name::

    python stratpd_xl/excel/config.py write --interpreter /path/to/venv/bin/python [--dry-run]
    python stratpd_xl/excel/config.py import-udfs      # Windows: put =STRATPD into the add-in
"""

from __future__ import annotations

import argparse
import locale
import ntpath
import posixpath
import sys
from pathlib import Path

#: ``PROJECT_NAME`` in the add-in's VBA (``addin_file.PROJECT_NAME``; this file runs as a plain
#: script too, so it is repeated here and a test keeps the two equal): the name of the config
#: file and of its folder.
ADDIN_PROJECT_NAME = "stratpd_xl"
#: The add-in file; its stem is the Python module the ribbon button imports.
ADDIN_FILE_NAME = "stratpd_xl.xlam"
#: Where the cell formulas live (``UDF Modules`` in the config).
UDF_MODULES = "stratpd_xl.excel.udfs"

_INTERPRETER_KEY = {"win32": "Interpreter_Win", "darwin": "Interpreter_Mac"}
_UDF_KEY = "UDF Modules"


def _platform_key(platform: str) -> str:
    try:
        return _INTERPRETER_KEY["win32" if platform.startswith("win") else platform]
    except KeyError:
        raise ValueError(f"Excel add-ins exist on Windows and macOS, not {platform!r}") from None


def _quote(value: str, what: str) -> str:
    # VBA's Input # has no escape for a double quote inside a quoted field.
    if '"' in value or "\n" in value or "\r" in value:
        raise ValueError(f"{what} must not contain quotes or line breaks: {value!r}")
    return f'"{value}"'


def _parse_line(line: str) -> str | None:
    """The key of a ``"key","value"`` line, or None for a line that holds no setting."""
    stripped = line.strip()
    if not stripped.startswith('"'):
        return None
    end = stripped.find('"', 1)
    return stripped[1:end] if end > 0 else None


def addin_config_text(
    interpreter: str,
    udf_modules: str = UDF_MODULES,
    *,
    platform: str = sys.platform,
    existing: str = "",
) -> str:
    """Text of the add-in's config file with our settings, keeping any other settings.

    Parameters
    ----------
    interpreter : str
        Absolute path of the virtual environment's Python (``python.exe`` on Windows).
    udf_modules : str
        Module(s) with the cell formulas, ``;``-separated.
    platform : str
        ``sys.platform`` style name: ``"win32"`` writes ``Interpreter_Win``, ``"darwin"``
        writes ``Interpreter_Mac``.
    existing : str
        Current content of the file (may be empty).  Lines for other keys are kept in order, so
        a user's own settings (``PYTHONPATH``, ``Show Console``, ...) survive a re-install.

    Returns
    -------
    str
        The new file content, lines ending in CRLF for Windows and LF for macOS; the same inputs
        always give the same text and feeding the result back as ``existing`` gives it again.
    """
    key = _platform_key(platform)
    ours = {key.lower(), _UDF_KEY.lower()}
    kept = [
        line.rstrip("\r\n")
        for line in existing.splitlines()
        if line.strip() and (_parse_line(line) or "").lower() not in ours
    ]
    lines = kept + [
        f"{_quote(key, 'key')},{_quote(interpreter, 'interpreter path')}",
        f"{_quote(_UDF_KEY, 'key')},{_quote(udf_modules, 'UDF modules')}",
    ]
    # Windows VBA reads records up to CR/CRLF (xlwings writes its own conf in text mode, CRLF).
    eol = "\r\n" if platform.startswith("win") else "\n"
    return eol.join(lines) + eol


def config_path(platform: str = sys.platform, home: Path | None = None) -> Path:
    """Where the add-in's VBA looks for its user config file.

    Parameters
    ----------
    platform : str
        ``"win32"`` or ``"darwin"``.
    home : Path, optional
        The user's home (``%USERPROFILE%`` / ``$HOME``); default: the current user's.

    Returns
    -------
    Path
        ``<home>/.stratpd_xl/stratpd_xl.conf`` (Windows) or
        ``<home>/Library/Containers/com.microsoft.Excel/Data/stratpd_xl.conf`` (macOS).
    """
    _platform_key(platform)
    home = Path(home) if home is not None else Path.home()
    name = f"{ADDIN_PROJECT_NAME}.conf"
    if platform.startswith("win"):
        return home / f".{ADDIN_PROJECT_NAME}" / name
    return home / "Library" / "Containers" / "com.microsoft.Excel" / "Data" / name


def _file_encoding(platform: str) -> str:
    # Windows VBA reads files in the ANSI code page, as xlwings' own config writer assumes;
    # elsewhere (macOS, and tests on Linux) UTF-8.
    if platform.startswith("win") and sys.platform.startswith("win"):
        return locale.getpreferredencoding(False)
    return "utf-8"


def write_config(
    interpreter: str,
    *,
    platform: str = sys.platform,
    home: Path | None = None,
    dry_run: bool = False,
    udf_modules: str = UDF_MODULES,
) -> tuple[Path, str, bool]:
    """Merge our settings into the config file; return (path, text, changed).

    Nothing is written when the file already holds exactly this text or when ``dry_run``.
    """
    path = config_path(platform, home)
    encoding = _file_encoding(platform)
    # Bytes, not read_text: universal newlines would turn CRLF into LF and every run would
    # look like a change.
    existing = path.read_bytes().decode(encoding, errors="replace") if path.is_file() else ""
    text = addin_config_text(interpreter, udf_modules, platform=platform, existing=existing)
    changed = text != existing
    if changed and not dry_run:
        path.parent.mkdir(parents=True, exist_ok=True)
        # newline="" writes the line ends chosen for the target platform unchanged.
        path.write_text(text, encoding=encoding, newline="")
    return path, text, changed


def import_udfs_into_addin(addin_name: str = ADDIN_FILE_NAME) -> str:  # pragma: no cover - Excel
    """Windows only: generate the VBA wrappers of the formulas inside the installed add-in.

    Does what the template's ``ImportPythonUDFsToAddin`` macro does, from outside Excel, with
    the open-source ``xlwings.udfs.import_udfs``; then saves the add-in in ``XLSTART``.  Excel
    must allow it: File > Options > Trust Center > Macro Settings > "Trust access to the VBA
    project object model".

    Returns
    -------
    str
        Path of the add-in that now holds the formulas.
    """
    import xlwings as xw
    from xlwings.udfs import import_udfs

    with xw.App(visible=False, add_book=False) as app:
        path = Path(app.startup_path) / addin_name
        if not path.is_file():
            raise FileNotFoundError(f"{path} not found: run python -m stratpd_xl.excel.install")
        book = app.books.open(str(path))
        import_udfs(UDF_MODULES, book.api)
        book.save()
        return str(path)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``write`` (manual setups) and ``import-udfs`` (the installer's rescue)."""
    parser = argparse.ArgumentParser(prog="stratpd-xl-config", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    write = sub.add_parser("write", help="write or update the add-in's config file")
    write.add_argument("--interpreter", required=True, help="the venv's Python, absolute path")
    write.add_argument("--platform", default=sys.platform, choices=["win32", "darwin"])
    write.add_argument("--home", type=Path, default=None, help="home folder (default: yours)")
    write.add_argument("--dry-run", action="store_true", help="print, do not write")
    sub.add_parser("import-udfs", help="Windows: import the formulas into the installed add-in")
    args = parser.parse_args(argv)

    if args.command == "import-udfs":
        if not sys.platform.startswith("win"):
            print("import-udfs needs Excel on Windows (formulas are Windows-only in xlwings)")
            return 2
        try:
            path = import_udfs_into_addin()
        except Exception as exc:  # the installer shows this line and what to do about it
            print(f"could not import the formulas: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
        print(f"imported the formulas of {UDF_MODULES} into {path}")
        return 0

    interpreter = args.interpreter
    # Judge the path by the target's rules: a Windows path is checked on Linux in tests.
    isabs = ntpath.isabs if args.platform == "win32" else posixpath.isabs
    if not (isabs(interpreter) or interpreter.startswith(("%", "$"))):
        parser.error(f"--interpreter must be an absolute path, got {interpreter!r}")
    path, text, changed = write_config(
        interpreter, platform=args.platform, home=args.home, dry_run=args.dry_run
    )
    verb = "would write" if args.dry_run and changed else "wrote" if changed else "unchanged:"
    print(f"{verb} {path}")
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
