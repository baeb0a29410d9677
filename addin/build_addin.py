"""Build ``addin/stratpd_xl.xlam`` from xlwings' shipped ribbon add-in template.

The add-in is the open-source (BSD-3) ``quickstart_addin_ribbon.xlam`` of the pinned xlwings
with three changes, all outside the VBA project:

* our ribbon, ``customUI/customUI14.xml``, replaces the template's ``customUI/customUI.xml``;
* the package relationship that pointed at the old ribbon part points at the new one;
* the template's disabled settings sheet ``_myaddin.conf`` is enabled as ``myaddin.conf`` and
  holds our settings (``stratpd_xl.excel.addin_file``): the default interpreter, the formula
  module, ``ADD_WORKBOOK_TO_PYTHONPATH`` false.  The installer rewrites this sheet in the copy it
  installs with the interpreter it set up.

``xl/vbaProject.bin`` and every other part are copied byte for byte.  The ribbon button calls the
template's existing callback ``RibbonMyAddin.RunMain``, which runs
``import <add-in file stem>; <add-in file stem>.main()``: hence the file name ``stratpd_xl.xlam``.

Entries are written uncompressed (``ZIP_STORED``), in a fixed order, with a fixed timestamp and
fixed attributes, so the output depends only on the inputs, not on the machine's zlib or clock:
two builds are byte-identical and ``--check`` can compare the committed file with a fresh build.

Usage::

    python addin/build_addin.py            # writes addin/stratpd_xl.xlam
    python addin/build_addin.py --check    # exit 1 if the committed add-in is out of date
"""

from __future__ import annotations

import argparse
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Run as a script from a checkout: the package next to this folder holds the shared zip code.
sys.path.insert(0, str(HERE.parent))
from stratpd_xl.excel import addin_file  # noqa: E402

DEFAULT_OUTPUT = HERE / "stratpd_xl.xlam"
DEFAULT_RIBBON = HERE / "customUI" / "customUI14.xml"

TEMPLATE_NAME = "quickstart_addin_ribbon.xlam"
TEMPLATE_RIBBON_PART = "customUI/customUI.xml"
RIBBON_PART = "customUI/customUI14.xml"
VBA_PART = "xl/vbaProject.bin"
RELS_PART = "_rels/.rels"
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


def build_bytes(template: Path | None = None, ribbon: Path = DEFAULT_RIBBON) -> bytes:
    """The add-in file as bytes; equal inputs give equal bytes.

    Parameters
    ----------
    template : Path, optional
        Template add-in; default: the one shipped with the installed xlwings.
    ribbon : Path
        Our ribbon XML.

    Returns
    -------
    bytes
        A complete ``.xlam`` (zip) file.
    """
    return addin_file.zip_parts(addin_parts(template or template_path(), ribbon.read_bytes()))


def build(
    output: Path = DEFAULT_OUTPUT, template: Path | None = None, ribbon: Path = DEFAULT_RIBBON
) -> Path:
    """Write the add-in to ``output`` and return its path."""
    data = build_bytes(template, ribbon)
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
    path = build(args.output, args.template, args.ribbon)
    print(f"wrote {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
