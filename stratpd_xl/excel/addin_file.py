"""The add-in file's own settings sheet, and writing the add-in as a reproducible zip.

xlwings' ribbon add-in template reads every setting through ``GetConfig`` (xlwings 0.37.8, VBA
module ``xlwings``), which looks in this order and stops at the first hit:

1. a sheet named ``<PROJECT_NAME>.conf`` in the active workbook;
2. a sheet of that name in the add-in itself (``ThisWorkbook``);
3. ``<PROJECT_NAME>.conf`` next to the active workbook;
4. the user file ``%USERPROFILE%\\.<PROJECT_NAME>\\<PROJECT_NAME>.conf`` (macOS: in Excel's
   sandbox).

``PROJECT_NAME`` is a VBA constant, not derived from the file name; the template sets it to
``"myaddin"``, which every add-in made from the template shares, so another add-in's
``~/.myaddin/myaddin.conf`` (step 4), a ``myaddin.conf`` beside the workbook (step 3) or a
``myaddin.conf`` sheet in the active workbook (step 1, above our own sheet) would redirect
ours.  The build (``addin/build_addin.py``) therefore changes that one constant in the VBA
module ``xlwings`` to ``"stratpd_xl"``: every step then looks for ``stratpd_xl.conf``, a name
only this add-in uses.  Step 2 holds our settings: the template ships that sheet disabled as
``_myaddin.conf``; we enable it as ``stratpd_xl.conf``.  The keys a user might still set in
their own ``~/.stratpd_xl/stratpd_xl.conf`` to redirect the add-in (a conda environment, a
PYTHONPATH) are pinned empty in the sheet.

Only the standard library is used: the installer runs this before the package's dependencies
are installed.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
import zipfile
from xml.sax.saxutils import escape, quoteattr

#: ``PROJECT_NAME`` in the template's VBA, shared by every add-in made from it.
TEMPLATE_PROJECT_NAME = "myaddin"
#: ``PROJECT_NAME`` in our add-in: the name of every settings sheet and file it reads.
PROJECT_NAME = "stratpd_xl"
#: The VBA module that declares ``PROJECT_NAME``, and its declaration before and after the build.
PROJECT_NAME_MODULE = "xlwings"
TEMPLATE_PROJECT_NAME_LINE = f'Public Const PROJECT_NAME As String = "{TEMPLATE_PROJECT_NAME}"'
PROJECT_NAME_LINE = f'Public Const PROJECT_NAME As String = "{PROJECT_NAME}"'
#: The settings sheet the VBA reads inside the add-in (step 2 above).
CONFIG_SHEET = f"{PROJECT_NAME}.conf"
#: How the template ships that sheet: disabled by the leading underscore.
TEMPLATE_CONFIG_SHEET = f"_{TEMPLATE_PROJECT_NAME}.conf"
WORKBOOK_PART = "xl/workbook.xml"
CONFIG_SHEET_PART = "xl/worksheets/sheet1.xml"
#: The settings sheet's code name in the template: its VBA document module is named so, and a
#: sheet without it no longer matches that module (Excel then reports the file as damaged or
#: makes a second module).
CONFIG_SHEET_CODE_NAME = "Sheet2"
UDF_MODULES = "stratpd_xl.excel.udfs"

#: Defaults in the committed add-in: the installer's default venv, written so that the VBA
#: expands them per user (``WScript.ExpandEnvironmentStrings`` on Windows; a leading ``$HOME``
#: on macOS, where the VBA also strips Excel's sandbox from the path).
DEFAULT_INTERPRETER = {
    "win32": r"%USERPROFILE%\.stratpd-xl\venv\Scripts\python.exe",
    "darwin": "$HOME/.stratpd-xl/venv/bin/python",
}
_INTERPRETER_KEY = {"win32": "Interpreter_Win", "darwin": "Interpreter_Mac"}

_MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
# 1980-01-01 is the earliest date a zip header can hold: a timestamp that says "not a date".
FIXED_DATE_TIME = (1980, 1, 1, 0, 0, 0)


def addin_settings(
    interpreter_win: str = DEFAULT_INTERPRETER["win32"],
    interpreter_mac: str = DEFAULT_INTERPRETER["darwin"],
    conda_path: str = "",
    conda_env: str = "",
) -> list[tuple[str, str]]:
    """The settings the add-in carries in its own sheet, in sheet order.

    Parameters
    ----------
    interpreter_win, interpreter_mac : str
        Python that runs the ribbon button and the formulas on Windows / macOS.
    conda_path, conda_env : str
        conda's own folder and the environment, when the Python is a conda environment's:
        xlwings then activates it before starting Python (on Windows a conda Python finds its
        libraries only so).

    Returns
    -------
    list of (key, value)
        ``ADD_WORKBOOK_TO_PYTHONPATH`` is ``false``: the package is installed, so the folder of
        the workbook is not needed, and for a workbook on OneDrive/SharePoint xlwings would
        otherwise try to map its URL to a local folder first.  ``PYTHONPATH`` is empty, and
        ``Conda Path`` and ``Conda Env`` unless given, on purpose (see the module docstring).
    """
    return [
        ("Interpreter_Win", interpreter_win),
        ("Interpreter_Mac", interpreter_mac),
        ("UDF Modules", UDF_MODULES),
        ("ADD_WORKBOOK_TO_PYTHONPATH", "false"),
        ("PYTHONPATH", ""),
        ("Conda Path", conda_path),
        ("Conda Env", conda_env),
    ]


def interpreter_key(platform: str) -> str:
    """``Interpreter_Win`` or ``Interpreter_Mac`` for a ``sys.platform`` style name."""
    key = "win32" if platform.startswith("win") else platform
    if key not in _INTERPRETER_KEY:
        raise ValueError(f"Excel add-ins exist on Windows and macOS, not {platform!r}")
    return _INTERPRETER_KEY[key]


def _inline(ref: str, text: str) -> str:
    return f'<c r="{ref}" t="inlineStr"><is><t xml:space="preserve">{escape(text)}</t></is></c>'


def config_sheet_xml(settings: list[tuple[str, str]],
                     code_name: str = CONFIG_SHEET_CODE_NAME) -> bytes:
    """Worksheet XML with one setting per row: key in column A, value in column B.

    The VBA reads column A from A1 down to the first empty cell, so keys must be non-empty; an
    empty value leaves column B empty, which the VBA reads as ``""``.  ``code_name`` is the
    sheet's VBA code name, kept from the sheet it replaces.
    """
    rows = []
    for number, (key, value) in enumerate(settings, start=1):
        if not key.strip():
            raise ValueError("a setting needs a key: the VBA stops reading at an empty key")
        if any(ch in key + value for ch in "\r\n"):
            raise ValueError(f"settings must be single lines: {key!r}={value!r}")
        cells = _inline(f"A{number}", key) + (_inline(f"B{number}", value) if value else "")
        rows.append(f'<row r="{number}">{cells}</row>')
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        f'<worksheet xmlns="{_MAIN_NS}"><sheetPr codeName={quoteattr(code_name)}/>'
        f'<sheetData>{"".join(rows)}</sheetData></worksheet>'
    ).encode()


def sheet_code_name(sheet_xml: bytes) -> str | None:
    """The VBA code name a worksheet's XML gives its sheet (``<sheetPr codeName=...>``)."""
    found = ET.fromstring(sheet_xml).find(f"{{{_MAIN_NS}}}sheetPr")
    return None if found is None else found.get("codeName")


def read_settings(parts: dict[str, bytes]) -> dict[str, str]:
    """Settings in the add-in's enabled config sheet, keys upper-cased as the VBA compares them.

    Returns an empty dict when the sheet is absent or still the template's disabled one.
    """
    if f'name="{CONFIG_SHEET}"'.encode() not in parts.get(WORKBOOK_PART, b""):
        return {}
    ns = {"m": _MAIN_NS}
    root = ET.fromstring(parts[CONFIG_SHEET_PART])
    cells: dict[str, str] = {}
    for cell in root.iterfind(".//m:c", ns):
        cells[cell.get("r", "")] = "".join(t.text or "" for t in cell.iterfind(".//m:t", ns))
    settings = {}
    row = 1
    while cells.get(f"A{row}"):
        settings[cells[f"A{row}"].upper()] = cells.get(f"B{row}", "")
        row += 1
    return settings


def with_settings(parts: dict[str, bytes], settings: list[tuple[str, str]]) -> dict[str, bytes]:
    """The add-in's parts with the config sheet enabled and holding ``settings``.

    Parameters
    ----------
    parts : dict[str, bytes]
        Parts of the template-derived add-in (its only sheet is the config sheet).
    settings : list of (key, value)
        What the sheet should hold, e.g. :func:`addin_settings`.

    Returns
    -------
    dict[str, bytes]
        A new mapping, same part order; the input is not changed.
    """
    workbook = parts[WORKBOOK_PART]
    names = re.findall(rb'<sheet name="([^"]*)"', workbook)
    if names not in ([TEMPLATE_CONFIG_SHEET.encode()], [CONFIG_SHEET.encode()]):
        raise ValueError(f"expected one sheet named {CONFIG_SHEET!r} in the add-in, got {names}")
    new = dict(parts)
    new[WORKBOOK_PART] = workbook.replace(
        f'name="{TEMPLATE_CONFIG_SHEET}"'.encode(), f'name="{CONFIG_SHEET}"'.encode()
    )
    code_name = sheet_code_name(parts[CONFIG_SHEET_PART]) or CONFIG_SHEET_CODE_NAME
    new[CONFIG_SHEET_PART] = config_sheet_xml(settings, code_name)
    return new


def read_parts(data: bytes) -> dict[str, bytes]:
    """Parts of a zip (``.xlam``) file, in stored order."""
    with zipfile.ZipFile(io.BytesIO(data)) as zin:
        return {info.filename: zin.read(info) for info in zin.infolist()}


def zip_parts(parts: dict[str, bytes]) -> bytes:
    """A zip of ``parts`` in the given order that depends only on them.

    Entries are stored uncompressed with a fixed timestamp and attributes, so the same parts
    always give the same bytes, whatever the machine's zlib or clock.
    """
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as zout:
        for name, data in parts.items():
            info = zipfile.ZipInfo(name, date_time=FIXED_DATE_TIME)
            info.compress_type = zipfile.ZIP_STORED
            info.create_system = 0  # "MS-DOS", as Office writes; not the build machine's OS
            info.external_attr = 0
            zout.writestr(info, data)
    return buffer.getvalue()
