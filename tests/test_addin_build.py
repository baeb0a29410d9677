"""Build the Excel add-in from scratch on Linux and check what Excel will rely on.

Checked: the ribbon XML is well-formed and uses the Office 2010 schema; every ``onAction`` names a
``Sub <name>(control As IRibbonControl)`` that exists in the add-in's VBA (read with oletools);
the VBA's xlwings version equals the pinned xlwings; the VBA project is the template's byte for
byte; two builds are byte-identical and the committed add-in equals a fresh build; the add-in's
own settings sheet is the one the VBA reads, holds what we wrote, and opens in openpyxl.
"""

from __future__ import annotations

import importlib.util
import re
import tomllib
import warnings
import xml.etree.ElementTree as ET
import zipfile
from importlib.metadata import version
from pathlib import Path

import openpyxl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.requirements import Requirement

from stratpd_xl.excel import addin_file

with warnings.catch_warnings():
    # oletools 0.60 uses pyparsing names that newer pyparsing deprecates; not our concern here.
    warnings.simplefilter("ignore", DeprecationWarning)
    from oletools.olevba import VBA_Parser

ROOT = Path(__file__).resolve().parents[1]
ADDIN_DIR = ROOT / "addin"


def _load_builder():
    spec = importlib.util.spec_from_file_location("build_addin", ADDIN_DIR / "build_addin.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


builder = _load_builder()


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return builder.build(tmp_path_factory.mktemp("addin") / "stratpd_xl.xlam")


@pytest.fixture(scope="module")
def vba_modules(built) -> dict[str, str]:
    with zipfile.ZipFile(built) as z:
        data = z.read("xl/vbaProject.bin")
    parser = VBA_Parser("vbaProject.bin", data=data)
    try:
        modules = {
            Path(vba_filename).stem: code for _, _, vba_filename, code in parser.extract_macros()
        }
    finally:
        parser.close()
    assert modules, "oletools found no VBA modules in the add-in"
    return modules


def _pinned_xlwings() -> str:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = [str(r.specifier)[2:] for r in map(Requirement, deps) if r.name == "xlwings"]
    assert len(pins) == 1, f"pyproject must pin xlwings with ==, found {deps}"
    return pins[0]


def test_ribbon_xml_is_well_formed_office_2010_ribbon(built):
    with zipfile.ZipFile(built) as z:
        names = z.namelist()
        root = ET.fromstring(z.read("customUI/customUI14.xml"))
        rels = ET.fromstring(z.read("_rels/.rels"))
    assert "customUI/customUI.xml" not in names, "the template's ribbon must be replaced"
    assert root.tag == f"{{{builder.RIBBON_NAMESPACE}}}customUI"
    tabs = root.findall(f".//{{{builder.RIBBON_NAMESPACE}}}tab")
    assert [t.get("label") for t in tabs] == ["StratPD"]
    labels = [b.get("label") for b in root.iter(f"{{{builder.RIBBON_NAMESPACE}}}button")]
    assert "Analyse selection" in labels
    targets = {r.get("Target"): r.get("Type") for r in rels}
    assert targets["customUI/customUI14.xml"] == builder.RIBBON_REL_TYPE


def test_every_on_action_is_a_ribbon_callback_in_the_vba(built, vba_modules):
    with zipfile.ZipFile(built) as z:
        root = ET.fromstring(z.read("customUI/customUI14.xml"))
    actions = [el.get("onAction") for el in root.iter() if el.get("onAction")]
    assert actions, "the ribbon has no button with an onAction"
    for action in actions:
        module, _, proc = action.rpartition(".")
        assert module in vba_modules, f"{action}: no VBA module {module!r} in {sorted(vba_modules)}"
        signature = (
            rf"^\s*(Public\s+)?Sub\s+{re.escape(proc)}"
            r"\s*\(\s*control\s+As\s+IRibbonControl\s*\)"
        )
        assert re.search(signature, vba_modules[module], re.I | re.M), (
            f"{action}: no 'Sub {proc}(control As IRibbonControl)' in module {module}"
        )


def test_ribbon_button_runs_stratpd_xl_main(vba_modules):
    # RunMain imports the module named like the add-in file and calls its main().
    code = vba_modules["RibbonMyAddin"]
    assert re.search(r"RunPython\s+\"import \"\s*&\s*mymodule\s*&\s*\";\"\s*&\s*mymodule", code)
    assert "ThisWorkbook.Name" in code
    assert builder.DEFAULT_OUTPUT.stem == "stratpd_xl"
    spec = importlib.util.find_spec("stratpd_xl")
    assert spec is not None and "def main(" in Path(spec.origin).read_text()


def test_vba_xlwings_version_equals_the_pinned_xlwings(vba_modules):
    match = re.search(
        r'XLWINGS_VERSION\s+As\s+String\s*=\s*"([^"]+)"', vba_modules["xlwings"], re.I
    )
    assert match, "the add-in's xlwings module holds no XLWINGS_VERSION constant"
    assert match.group(1) == _pinned_xlwings() == version("xlwings")


def test_vba_project_is_the_templates_byte_for_byte(built):
    with zipfile.ZipFile(builder.template_path()) as t, zipfile.ZipFile(built) as b:
        assert b.read("xl/vbaProject.bin") == t.read("xl/vbaProject.bin")
        # Changed on purpose: the ribbon, its relationship, and the enabled settings sheet.
        changed = {"_rels/.rels", "xl/workbook.xml", "xl/worksheets/sheet1.xml"}
        template_parts = set(t.namelist()) - {"customUI/customUI.xml"}
        for name in template_parts - changed:
            assert b.read(name) == t.read(name), name
        assert set(b.namelist()) == template_parts | {"customUI/customUI14.xml", "_rels/.rels"}


def test_build_is_reproducible_and_the_committed_addin_is_current(built, tmp_path):
    second = builder.build(tmp_path / "again.xlam")
    assert second.read_bytes() == built.read_bytes()
    committed = builder.DEFAULT_OUTPUT
    assert committed.is_file(), "addin/stratpd_xl.xlam is not committed"
    assert committed.read_bytes() == built.read_bytes(), "run: python addin/build_addin.py"
    assert builder.main(["--check"]) == 0


def test_check_flags_a_stale_addin(tmp_path):
    stale = tmp_path / "stratpd_xl.xlam"
    stale.write_bytes(b"not the add-in")
    assert builder.main(["--check", "--output", str(stale)]) == 1


def test_build_refuses_a_ribbon_in_the_2007_schema(tmp_path):
    old = tmp_path / "customUI.xml"
    old.write_text('<customUI xmlns="http://schemas.microsoft.com/office/2006/01/customui"/>')
    with pytest.raises(ValueError, match="namespace"):
        builder.build_bytes(ribbon=old)


def test_package_parts_and_relationships_resolve(built):
    # Every content-type override and every relationship target must exist in the zip, or
    # Excel offers to "repair" the add-in.
    import posixpath

    with zipfile.ZipFile(built) as z:
        names = set(z.namelist())
        types_xml = ET.fromstring(z.read("[Content_Types].xml"))
        for override in types_xml:
            part = override.get("PartName")
            if part:
                assert part.lstrip("/") in names, part
        rels_files = [n for n in names if n.endswith(".rels")]
        assert "_rels/.rels" in rels_files and "xl/_rels/workbook.xml.rels" in rels_files
        for rels in rels_files:
            source_dir = posixpath.dirname(posixpath.dirname(rels))
            for rel in ET.fromstring(z.read(rels)):
                if rel.get("TargetMode") == "External":
                    continue
                target = rel.get("Target")
                path = (
                    target.lstrip("/")
                    if target.startswith("/")
                    else posixpath.normpath(posixpath.join(source_dir, target))
                )
                assert path in names, f"{rels}: {target}"
        assert z.testzip() is None


# A subset of the Office 2010 customUI schema, for the elements our ribbon uses: unknown
# attributes or children make Excel drop the whole ribbon silently.
_ALLOWED = {
    "customUI": ({"onLoad", "loadImage"}, {"ribbon"}),
    "ribbon": ({"startFromScratch"}, {"tabs"}),
    "tabs": (set(), {"tab"}),
    "tab": ({"id", "idMso", "label", "keytip", "visible", "insertAfterMso"}, {"group"}),
    "group": ({"id", "label", "keytip", "visible", "imageMso"}, {"button", "labelControl"}),
    "button": (
        {
            "id",
            "label",
            "size",
            "imageMso",
            "onAction",
            "screentip",
            "supertip",
            "keytip",
            "visible",
            "enabled",
            "showLabel",
            "showImage",
        },
        set(),
    ),
    "labelControl": ({"id", "label", "screentip", "supertip", "visible", "showLabel"}, set()),
}


def test_ribbon_uses_only_known_elements_attributes_and_unique_ids(built):
    with zipfile.ZipFile(built) as z:
        root = ET.fromstring(z.read("customUI/customUI14.xml"))
    ns = f"{{{builder.RIBBON_NAMESPACE}}}"
    ids = []
    for el in root.iter():
        assert el.tag.startswith(ns), el.tag
        tag = el.tag[len(ns) :]
        assert tag in _ALLOWED, f"unexpected element {tag}"
        attrs, children = _ALLOWED[tag]
        assert set(el.attrib) <= attrs, (tag, set(el.attrib) - attrs)
        assert {c.tag[len(ns) :] for c in el} <= children, tag
        if "id" in el.attrib:
            ids.append(el.get("id"))
            assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", el.get("id")), el.get("id")
        for text_attr in ("label", "screentip"):
            assert len(el.get(text_attr, "")) <= 1024
    assert len(ids) == len(set(ids)), "ids must be unique"


# --- the add-in's own settings sheet -----------------------------------------------------------


def test_vba_reads_the_sheet_named_after_its_project_constant_in_the_addin_itself(vba_modules):
    code = "\n".join(vba_modules.values())
    match = re.search(r'PROJECT_NAME\s+As\s+String\s*=\s*"([^"]+)"', code)
    assert match and match.group(1) == addin_file.PROJECT_NAME
    # GetConfig reads the sheet of the add-in (ThisWorkbook) before any shared config file.
    get_config = code[code.index("Function GetConfig(") :]
    this_book = get_config.index('SheetExists(ThisWorkbook, PROJECT_NAME & ".conf")')
    assert this_book < get_config.index("GetConfigFromFile(GetConfigFilePath()")
    assert re.search(r"d\.Add UCase\(cell\.Value\), cell\.Offset\(0, 1\)\.Value", code)


def test_committed_addin_carries_its_settings_in_the_enabled_sheet():
    parts = addin_file.read_parts(builder.DEFAULT_OUTPUT.read_bytes())
    assert b'<sheet name="myaddin.conf"' in parts["xl/workbook.xml"]
    assert b"_myaddin.conf" not in parts["xl/workbook.xml"]
    assert addin_file.read_settings(parts) == {
        "INTERPRETER_WIN": r"%USERPROFILE%\.stratpd-xl\venv\Scripts\python.exe",
        "INTERPRETER_MAC": "$HOME/.stratpd-xl/venv/bin/python",
        "UDF MODULES": "stratpd_xl.excel.udfs",
        "ADD_WORKBOOK_TO_PYTHONPATH": "false",
        "PYTHONPATH": "",
        "CONDA PATH": "",
        "CONDA ENV": "",
    }


def test_settings_sheet_opens_in_openpyxl_with_keys_in_a_and_values_in_b(tmp_path):
    settings = [("Interpreter_Win", r"C:\R&D <x>\  py.exe"), ("UDF Modules", "m"), ("Empty", "")]
    parts = addin_file.with_settings(
        addin_file.read_parts(builder.DEFAULT_OUTPUT.read_bytes()), settings
    )
    # openpyxl opens workbooks, not add-ins: same parts under the macro workbook content type.
    parts["[Content_Types].xml"] = parts["[Content_Types].xml"].replace(
        b"application/vnd.ms-excel.addin.macroEnabled.main+xml",
        b"application/vnd.ms-excel.sheet.macroEnabled.main+xml",
    )
    path = tmp_path / "as_workbook.xlsm"
    path.write_bytes(addin_file.zip_parts(parts))
    sheet = openpyxl.load_workbook(path)["myaddin.conf"]
    assert [[c.value for c in row] for row in sheet.iter_rows(max_col=2)] == [
        ["Interpreter_Win", r"C:\R&D <x>\  py.exe"],
        ["UDF Modules", "m"],
        ["Empty", None],
    ]


def test_settings_sheet_refuses_what_the_vba_would_misread():
    with pytest.raises(ValueError, match="needs a key"):
        addin_file.config_sheet_xml([("A", "1"), (" ", "2")])
    with pytest.raises(ValueError, match="single lines"):
        addin_file.config_sheet_xml([("PYTHONPATH", "a\nb")])
    parts = addin_file.read_parts(builder.DEFAULT_OUTPUT.read_bytes())
    parts["xl/workbook.xml"] = parts["xl/workbook.xml"].replace(
        b'<sheet name="myaddin.conf"', b'<sheet name="Sheet9"'
    )
    with pytest.raises(ValueError, match="expected one sheet"):
        addin_file.with_settings(parts, addin_file.addin_settings())


# --- experimental: the formulas' VBA wrappers written into the add-in (vba_project.py) ---------

vba_project = builder.vba_project


@pytest.fixture(scope="module")
def with_formulas(tmp_path_factory) -> Path:
    return builder.build(
        tmp_path_factory.mktemp("formulas") / "stratpd_xl.xlam", with_formulas=True
    )


def _modules(vba_bin: bytes) -> dict[str, str]:
    parser = VBA_Parser("vbaProject.bin", data=vba_bin)
    try:
        return {name: code for _, _, name, code in parser.extract_macros()}
    finally:
        parser.close()


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet='ab =()\r\nXYZ"', max_size=9000))
def test_ovba_compression_round_trips_through_oletools(text):
    from oletools.olevba import decompress_stream

    data = text.encode()
    packed = vba_project.compress(data)
    assert bytes(decompress_stream(bytearray(packed))) == data
    assert vba_project.decompress(packed) == data


def test_formula_module_is_added_and_every_template_module_kept(with_formulas):
    with zipfile.ZipFile(with_formulas) as z, zipfile.ZipFile(builder.template_path()) as t:
        new, old = z.read("xl/vbaProject.bin"), t.read("xl/vbaProject.bin")
    got, template = _modules(new), _modules(old)
    assert set(got) == set(template) | {"StratPDFormulas.bas"}
    assert all(got[name] == code for name, code in template.items())
    code = got["StratPDFormulas.bas"]
    assert (
        "Function STRATPD(data, target, col, Optional min_samples_leaf, Optional trials, "
        "Optional chart, Optional max_points, Optional positive)"
    ) in code
    impact = "Function STRATIMPACT(data, target, Optional min_samples_leaf, Optional positive)"
    assert impact in code
    assert 'XLPy.CallUDF("stratpd_xl.excel.udfs", "STRATPD"' in code
    assert "Function XLPy()" in template["xlwings.bas"], "the wrappers call the template's XLPy"


def test_compound_file_directory_is_a_sorted_valid_red_black_tree(with_formulas):
    import olefile

    with zipfile.ZipFile(with_formulas) as z:
        ole = olefile.OleFileIO(z.read("xl/vbaProject.bin"))

    RED, BLACK = 0, 1  # MS-CFB 2.6.1 colour flags

    def walk(sid, depth_black):  # -> (names in order, black heights of the NIL leaves)
        if sid == olefile.NOSTREAM:
            return [], {depth_black}
        entry = ole.direntries[sid]
        black = depth_black + (entry.color == BLACK)
        left, lh = walk(entry.sid_left, black)
        right, rh = walk(entry.sid_right, black)
        for child in (entry.sid_left, entry.sid_right):
            if child != olefile.NOSTREAM and entry.color == RED:
                assert ole.direntries[child].color == BLACK, "red node with red child"
        return left + [entry.name] + right, lh | rh

    storages = [e for e in ole.root.kids if e.entry_type == olefile.STGTY_STORAGE]
    assert [e.name for e in storages] == ["VBA"]
    for storage in [ole.root, *storages]:
        names, heights = walk(storage.sid_child, 0)
        keys = [(len(n), n.upper()) for n in names]
        assert keys == sorted(keys) and len(heights) == 1, storage.name
        if storage.sid_child != olefile.NOSTREAM:
            assert ole.direntries[storage.sid_child].color == BLACK
    ole.close()


def test_add_module_refuses_compiled_projects_and_duplicate_names():
    with zipfile.ZipFile(builder.template_path()) as t:
        vba = t.read("xl/vbaProject.bin")
    with pytest.raises(ValueError, match="already has"):
        vba_project.add_module(vba, "xlwings", "Sub x()\nEnd Sub\n")
    with pytest.raises(ValueError, match="not a VBA module name"):
        vba_project.add_module(vba, "1bad name", "")
    streams = {"VBA/_VBA_PROJECT": bytes.fromhex("cc61b5000001") + b"\x00" * 40, "PROJECT": b""}
    with pytest.raises(ValueError, match="compiled code"):
        vba_project.add_module(vba_project.write_compound_file(streams), "M", "")


def test_with_formulas_is_reproducible_and_never_the_committed_file(with_formulas, tmp_path):
    again = builder.build(tmp_path / "stratpd_xl.xlam", with_formulas=True)
    assert again.read_bytes() == with_formulas.read_bytes()
    assert with_formulas.read_bytes() != builder.DEFAULT_OUTPUT.read_bytes()
    with pytest.raises(SystemExit):
        builder.main(["--with-formulas"])  # the committed add-in stays without the module
