"""Build ``addin/stratpd_xl.xlam`` from xlwings' shipped ribbon add-in template.

The add-in is the open-source (BSD-3) ``quickstart_addin_ribbon.xlam`` of the pinned xlwings
with these changes:

* our ribbon, ``customUI/customUI14.xml``, replaces the template's ``customUI/customUI.xml``;
* the package relationship that pointed at the old ribbon part points at the new one;
* the VBA constant ``PROJECT_NAME`` (module ``xlwings``) becomes ``"stratpd_xl"`` instead of
  the template's ``"myaddin"``, which every add-in made from the template shares: the add-in
  then reads its settings only from sheets and files named ``stratpd_xl.conf``, never from
  another add-in's ``myaddin.conf`` (``stratpd_xl.excel.addin_file``);
* the template's disabled settings sheet ``_myaddin.conf`` is enabled as ``stratpd_xl.conf`` and
  holds our settings: the default interpreter, the formula module,
  ``ADD_WORKBOOK_TO_PYTHONPATH`` false.  The installer rewrites this sheet in the copy it
  installs with the interpreter it set up;
* the VBA project gets two modules (``vba_project.py``): ``xlwings_udfs``, the text xlwings' own
  "Import Functions" (``xlwings.udfs.import_udfs``) writes for ``stratpd_xl.excel.udfs`` --
  the ``=STRATPD``/``=STRATIMPACT`` wrappers --, and ``StratPDWizard``, whose ``Auto_Open``
  makes the ``Application.MacroOptions`` calls that import makes (function-wizard texts).  So
  the formulas need no per-machine import and no "Trust access to the VBA project object
  model".  Every other template module and every other part is kept byte for byte.

The ribbon button calls the template's existing callback ``RibbonMyAddin.RunMain``, which runs
``import <add-in file stem>; <add-in file stem>.main()``: hence the file name ``stratpd_xl.xlam``.

Entries are written uncompressed (``ZIP_STORED``), in a fixed order, with a fixed timestamp and
fixed attributes, so the output depends only on the inputs, not on the machine's zlib or clock:
two builds are byte-identical and ``--check`` can compare the committed file with a fresh build
(which also fails when a formula's signature or texts changed and the add-in was not rebuilt).

Usage::

    python addin/build_addin.py            # writes addin/stratpd_xl.xlam
    python addin/build_addin.py --check    # exit 1 if the committed add-in is out of date
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# Run as a script from a checkout: the package next to this folder holds the shared zip code.
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import vba_project  # noqa: E402

from stratpd_xl.excel import addin_file  # noqa: E402

DEFAULT_OUTPUT = HERE / "stratpd_xl.xlam"
DEFAULT_RIBBON = HERE / "customUI" / "customUI14.xml"

TEMPLATE_NAME = "quickstart_addin_ribbon.xlam"
TEMPLATE_RIBBON_PART = "customUI/customUI.xml"
RIBBON_PART = "customUI/customUI14.xml"
VBA_PART = "xl/vbaProject.bin"
RELS_PART = "_rels/.rels"
#: The module name xlwings' own import uses, so a later "Import Functions" replaces it.
FORMULA_MODULE = "xlwings_udfs"
WIZARD_MODULE = "StratPDWizard"
UDF_MODULE = "stratpd_xl.excel.udfs"
# The formulas' module is what xlwings' own "Import Functions" (``xlwings.udfs.import_udfs``)
# hands to Excel: it runs here against a stand-in workbook that records the module file Excel
# would import and the function-wizard texts it would register.  xlwings.udfs imports pywin32,
# so it runs with empty stand-ins for pywin32, in its own process so no other code sees them.
_IMPORT_SCRIPT = """
import importlib, json, sys, types
stubs = {n: types.ModuleType(n) for n in ("pythoncom", "pywintypes", "win32com", "win32com.client")}
stubs["pythoncom"].CoInitialize = lambda: None
stubs["pywintypes"].com_error = type("com_error", (Exception,), {})
stubs["win32com.client"].Dispatch = None
stubs["win32com"].client = stubs["win32com.client"]
sys.modules.update(stubs)
import xlwings
real = importlib.import_module("xlwings.udfs")
real.__pro__ = False  # the open-source import path, whatever licence this machine has
xlwings.func, xlwings.arg, xlwings.ret = real.xlfunc, real.xlarg, real.xlret
recorded = {"module": None, "macro_options": []}

class Components:
    def __call__(self, name):
        raise stubs["pywintypes"].com_error(name)  # a fresh add-in has no such module yet
    def Remove(self, component):
        raise AssertionError("nothing to remove")
    def Import(self, path):
        with open(path, encoding="mbcs" if sys.platform == "win32" else "utf-8") as f:
            recorded["module"] = f.read()

class Application:
    Version = "16.0"
    def MacroOptions(self, macro, **options):
        recorded["macro_options"].append({"macro": macro, **options})

class AddinBook:
    Name = "stratpd_xl.xlam"
    VBProject = types.SimpleNamespace(VBComponents=Components())
    Application = Application()

real.get_udf_module(sys.argv[1], None)  # imported once here, so the import path needs no book
real.import_udfs(sys.argv[1], AddinBook())
sys.stdout.write("\\n" + json.dumps(recorded))  # after xlwings' own "Imported ..." line
"""
# Office 2010+ ribbon namespace and the relationship type Office uses for customUI14.xml.
RIBBON_NAMESPACE = "http://schemas.microsoft.com/office/2009/07/customui"
RIBBON_REL_TYPE = "http://schemas.microsoft.com/office/2007/relationships/ui/extensibility"


def template_path() -> Path:
    """Path of the ribbon add-in template shipped inside the installed xlwings package.

    Returns
    -------
    Path
        ``<site-packages>/xlwings/quickstart_addin_ribbon.xlam``.

    Raises
    ------
    FileNotFoundError
        If the installed xlwings does not ship the template.
    """
    import xlwings

    path = Path(xlwings.__file__).resolve().parent / TEMPLATE_NAME
    if not path.is_file():
        raise FileNotFoundError(f"xlwings {xlwings.__version__} ships no {TEMPLATE_NAME}")
    return path


def _part_order(name: str) -> tuple[int, str]:
    # Content types and package relationships first (what readers look for), the rest sorted.
    first = {"[Content_Types].xml": 0, RELS_PART: 1}
    return (first.get(name, 2), name)


def _retarget_ribbon_relationship(rels: bytes) -> bytes:
    old = f'Target="{TEMPLATE_RIBBON_PART}"'.encode()
    if rels.count(old) != 1:
        raise ValueError(f"{RELS_PART} of the template has no single relationship to the ribbon")
    text = rels.replace(old, f'Target="{RIBBON_PART}"'.encode())
    if RIBBON_REL_TYPE.encode() not in text:
        raise ValueError(f"{RELS_PART} of the template lacks the type {RIBBON_REL_TYPE}")
    return text


def addin_parts(template: Path, ribbon_xml: bytes) -> dict[str, bytes]:
    """All parts of the add-in: the template's, with our ribbon in place of its ribbon.

    Parameters
    ----------
    template : Path
        xlwings' ``quickstart_addin_ribbon.xlam``.
    ribbon_xml : bytes
        Content of our ``customUI14.xml``.

    Returns
    -------
    dict[str, bytes]
        Part name -> bytes, in the order they are written.
    """
    if RIBBON_NAMESPACE.encode() not in ribbon_xml:
        raise ValueError(f"the ribbon XML must use the namespace {RIBBON_NAMESPACE}")
    with zipfile.ZipFile(template) as zin:
        parts = {info.filename: zin.read(info) for info in zin.infolist()}
    if VBA_PART not in parts or TEMPLATE_RIBBON_PART not in parts:
        raise ValueError(f"{template} is not the expected xlwings ribbon add-in template")
    del parts[TEMPLATE_RIBBON_PART]
    parts[RIBBON_PART] = ribbon_xml
    parts[RELS_PART] = _retarget_ribbon_relationship(parts[RELS_PART])
    parts = addin_file.with_settings(parts, addin_file.addin_settings())
    return {name: parts[name] for name in sorted(parts, key=_part_order)}


def formula_import(module: str = UDF_MODULE) -> dict[str, Any]:
    """What xlwings' "Import Functions" gives Excel for ``module``, recorded without Excel.

    Returns
    -------
    dict
        ``"module"``: the text of the VBA module file it imports (``xlwings_udfs``: a header
        with ``#Const App``, then one wrapper per formula); ``"macro_options"``: the keyword
        arguments of each ``Application.MacroOptions`` call (description, category, argument
        descriptions shown by the function wizard).
    """
    env = {**os.environ, "STRATPD_XL_WARMUP": "0", "PYTHONPATH": str(HERE.parent)}
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_SCRIPT, module],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    recorded = json.loads(done.stdout.rsplit("\n", 1)[-1])
    if "Function " not in (recorded["module"] or ""):
        raise ValueError(f"xlwings generated no wrapper for {module}")
    return recorded


def formula_module(recorded: dict[str, Any]) -> tuple[str, str]:
    """Name and source of the formulas' VBA module, as xlwings' import writes it.

    Parameters
    ----------
    recorded : dict
        :func:`formula_import`'s answer.

    Returns
    -------
    tuple[str, str]
        ``("xlwings_udfs", source)``; the source without its ``Attribute VB_Name`` line
        (``vba_project.add_module`` writes that line itself).
    """
    text = recorded["module"].replace("\r\n", "\n")
    first, _, rest = text.partition("\n")
    if first != f'Attribute VB_Name = "{FORMULA_MODULE}"':
        raise ValueError(f"xlwings' import names its module differently: {first}")
    return FORMULA_MODULE, rest


def _vba_string(text: str) -> str:
    if "\n" in text or "\r" in text:
        raise ValueError(f"a function-wizard text must be one line: {text!r}")
    return '"' + text.replace('"', '""') + '"'


def wizard_module(macro_options: list[dict[str, Any]]) -> tuple[str, str]:
    """Name and source of the module that registers the function-wizard texts on open.

    xlwings' import registers each formula's description, category and argument descriptions
    with ``Application.MacroOptions`` once, on the machine that imports.  The add-in carries
    the same calls in ``Auto_Open``, which Excel runs whenever it opens the add-in, so the
    wizard lists ``STRATPD`` under *StratPD* with its texts without any import.
    """
    lines = [
        "' Written by addin/build_addin.py: the Application.MacroOptions calls that xlwings'",
        "' \"Import Functions\" makes for the formulas in xlwings_udfs, run on every open.",
        "Sub Auto_Open()",
        "    On Error Resume Next  ' the texts are a help; never stop Excel's start for them",
    ]
    for options in macro_options:
        name = options["macro"].rpartition("!")[2]
        if not name.isidentifier():
            raise ValueError(f"not a formula name: {name!r}")
        lines.append(
            f"    Application.MacroOptions Macro:=\"'\" & ThisWorkbook.Name & \"'!{name}\", _"
        )
        lines.append(f"        Description:={_vba_string(options['Description'])}, _")
        lines.append(f"        Category:={_vba_string(options['Category'])}, _")
        docs = options.get("ArgumentDescriptions") or []
        if len(docs) > 20:  # VBA allows 24 line continuations in one statement
            raise ValueError(f"{name} has too many arguments for one MacroOptions statement")
        items = [_vba_string(doc) for doc in docs]
        if items:
            lines.append("        ArgumentDescriptions:=Array( _")
            lines += [f"            {item}, _" for item in items[:-1]]
            lines.append(f"            {items[-1]})")
        else:
            lines[-1] = lines[-1].removesuffix(", _")
    lines.append("End Sub")
    if any(len(line) > 1023 for line in lines):
        raise ValueError("a VBA line is longer than 1023 characters")
    return WIZARD_MODULE, "\n".join(lines) + "\n"


def build_bytes(
    template: Path | None = None, ribbon: Path = DEFAULT_RIBBON, with_formulas: bool = True
) -> bytes:
    """The add-in file as bytes; equal inputs give equal bytes.

    Parameters
    ----------
    template : Path, optional
        Template add-in; default: the one shipped with the installed xlwings.
    ribbon : Path
        Our ribbon XML.
    with_formulas : bool
        Add the formulas' modules (``xlwings_udfs`` and ``StratPDWizard``); False gives the
        template's VBA project with only ``PROJECT_NAME`` changed (tests compare the two).

    Returns
    -------
    bytes
        A complete ``.xlam`` (zip) file.
    """
    parts = addin_parts(template or template_path(), ribbon.read_bytes())
    parts[VBA_PART] = vba_project.replace_in_module(
        parts[VBA_PART],
        addin_file.PROJECT_NAME_MODULE,
        addin_file.TEMPLATE_PROJECT_NAME_LINE,
        addin_file.PROJECT_NAME_LINE,
    )
    if with_formulas:
        recorded = formula_import()
        name, source = formula_module(recorded)
        vba = vba_project.add_module(parts[VBA_PART], name, source)
        parts[VBA_PART] = vba_project.add_module(vba, *wizard_module(recorded["macro_options"]))
    return addin_file.zip_parts(parts)


def build(
    output: Path = DEFAULT_OUTPUT,
    template: Path | None = None,
    ribbon: Path = DEFAULT_RIBBON,
    with_formulas: bool = True,
) -> Path:
    """Write the add-in to ``output`` and return its path."""
    data = build_bytes(template, ribbon, with_formulas)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_bytes(data)
    return output


def main(argv: list[str] | None = None) -> int:
    """Command line: build, or with ``--check`` compare the committed add-in with a fresh build."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--template", type=Path, default=None)
    parser.add_argument("--ribbon", type=Path, default=DEFAULT_RIBBON)
    parser.add_argument(
        "--check", action="store_true", help="do not write; exit 1 if --output differs from a build"
    )
    args = parser.parse_args(argv)
    if args.check:
        fresh = build_bytes(args.template, args.ribbon)
        if not args.output.is_file() or args.output.read_bytes() != fresh:
            print(f"{args.output} is out of date: run python addin/build_addin.py", file=sys.stderr)
            return 1
        print(f"{args.output} is up to date")
        return 0
    if args.output.name != DEFAULT_OUTPUT.name:
        parser.error(
            f"the ribbon button imports the module named like the file: {DEFAULT_OUTPUT.name}"
        )
    path = build(args.output, args.template, args.ribbon)
    print(f"wrote {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
