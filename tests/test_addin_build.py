"""Build the Excel add-in from scratch on Linux and check what Excel will rely on.

Checked: the ribbon XML is well-formed and uses the Office 2010 schema; every ``onAction`` names a
``Sub <name>(control As IRibbonControl)`` that exists in the add-in's VBA (read with oletools);
the VBA's xlwings version equals the pinned xlwings; the template's VBA is kept byte for byte
beside the two added modules, whose text is what xlwings' own "Import Functions" writes for the
current formulas (so a changed formula fails here until the add-in is rebuilt); the VBA
project's records (dir, PROJECT, PROJECTwm) and the compound file around them are consistent;
LibreOffice, a third-party reader, imports the added modules; two builds are byte-identical and
the committed add-in equals a fresh build; the add-in's own settings sheet is the one the VBA
reads, holds what we wrote, and opens in openpyxl.
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

from stratpd_xl.excel import addin_file, config
from tests.office import soffice

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


def _streams(vba_bin: bytes) -> dict[str, bytes]:
    import olefile

    ole = olefile.OleFileIO(vba_bin)
    try:
        return {"/".join(p): ole.openstream("/".join(p)).read() for p in ole.listdir()}
    finally:
        ole.close()


ADDED = {builder.FORMULA_MODULE, builder.WIZARD_MODULE}


def test_template_parts_and_vba_streams_are_kept_byte_for_byte(built):
    with zipfile.ZipFile(builder.template_path()) as t, zipfile.ZipFile(built) as b:
        # Changed on purpose: the ribbon, its relationship, the enabled settings sheet, the VBA.
        changed = {
            "_rels/.rels", "xl/workbook.xml", "xl/worksheets/sheet1.xml", "xl/vbaProject.bin"
        }
        template_parts = set(t.namelist()) - {"customUI/customUI.xml"}
        for name in template_parts - changed:
            assert b.read(name) == t.read(name), name
        assert set(b.namelist()) == template_parts | {"customUI/customUI14.xml", "_rels/.rels"}
        old, new = _streams(t.read("xl/vbaProject.bin")), _streams(b.read("xl/vbaProject.bin"))
    # The project's lists of modules change, and the one constant PROJECT_NAME in module
    # xlwings; every other template module stream is untouched.
    assert set(new) == set(old) | {f"VBA/{name}" for name in ADDED}
    renamed = f"VBA/{addin_file.PROJECT_NAME_MODULE}"
    for name in set(old) - {"VBA/dir", "PROJECT", "PROJECTwm", renamed}:
        assert new[name] == old[name], name
    old_source = builder.vba_project.decompress(old[renamed]).decode("cp1252")
    new_source = builder.vba_project.decompress(new[renamed]).decode("cp1252")
    assert new_source == old_source.replace(
        addin_file.TEMPLATE_PROJECT_NAME_LINE, addin_file.PROJECT_NAME_LINE
    ) != old_source
    assert new["VBA/_VBA_PROJECT"] == builder.vba_project.SOURCE_ONLY_VBA_PROJECT
    assert builder.build_bytes(with_formulas=False) != built.read_bytes()


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
    match = re.findall(r'PROJECT_NAME\s+As\s+String\s*=\s*"([^"]+)"', code)
    assert match == [addin_file.PROJECT_NAME] == ["stratpd_xl"]
    # GetConfig reads the sheet of the add-in (ThisWorkbook) before any shared config file.
    get_config = code[code.index("Function GetConfig(") :]
    this_book = get_config.index('SheetExists(ThisWorkbook, PROJECT_NAME & ".conf")')
    assert this_book < get_config.index("GetConfigFromFile(GetConfigFilePath()")
    assert re.search(r"d\.Add UCase\(cell\.Value\), cell\.Offset\(0, 1\)\.Value", code)


# Every place GetConfig (and its helpers) looks: the active workbook's sheet, the add-in's
# sheet, the file beside the active workbook, the user file.  Each is named from PROJECT_NAME.
_CONFIG_LOOKUPS = [
    'SheetExists(ActiveWorkbook, PROJECT_NAME & ".conf")',
    'SheetExists(ThisWorkbook, PROJECT_NAME & ".conf")',
    'wb.Sheets(PROJECT_NAME & ".conf")',
    'GetDirectoryPath(ActiveWorkbook) & pathSeparator & PROJECT_NAME & ".conf"',
    'Environ("USERPROFILE") & "\\." & PROJECT_NAME & "\\" & PROJECT_NAME & ".conf"',
    'GetMacDir("$HOME", False) & "/" & PROJECT_NAME & ".conf"',
]


def test_no_other_addins_settings_can_reach_ours(vba_modules):
    # Another add-in made from xlwings' template reads and writes "myaddin.conf" (its sheet,
    # ~/.myaddin/myaddin.conf, a file beside the workbook).  Ours looks only for names made
    # from its own PROJECT_NAME, so none of those can redirect it.
    code = "\n".join(vba_modules.values())
    for lookup in _CONFIG_LOOKUPS:
        assert lookup in code, lookup
    other_names = code.replace('& ".conf"', "")
    assert '.conf"' not in other_names, "a settings name not made from PROJECT_NAME"
    assert not re.search(r"myaddin\.conf|\.myaddin", code, re.I)
    assert addin_file.CONFIG_SHEET == "stratpd_xl.conf"
    assert config.ADDIN_PROJECT_NAME == addin_file.PROJECT_NAME


def test_project_name_is_changed_only_where_it_is_declared():
    template = zipfile.ZipFile(builder.template_path()).read("xl/vbaProject.bin")
    changed = vba_project.replace_in_module(
        template, "xlwings", addin_file.TEMPLATE_PROJECT_NAME_LINE, addin_file.PROJECT_NAME_LINE
    )
    assert addin_file.PROJECT_NAME_LINE in vba_project.module_source(changed, "xlwings")
    with pytest.raises(ValueError, match="0 copies"):
        vba_project.replace_in_module(changed, "xlwings", "no such line", "x")
    with pytest.raises(ValueError, match="lists no module"):
        vba_project.replace_in_module(template, "NoModule", "a", "b")


def test_committed_addin_carries_its_settings_in_the_enabled_sheet():
    parts = addin_file.read_parts(builder.DEFAULT_OUTPUT.read_bytes())
    assert b'<sheet name="stratpd_xl.conf"' in parts["xl/workbook.xml"]
    assert b"myaddin.conf" not in parts["xl/workbook.xml"]
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
    sheet = openpyxl.load_workbook(path)["stratpd_xl.conf"]
    assert [[c.value for c in row] for row in sheet.iter_rows(max_col=2)] == [
        ["Interpreter_Win", r"C:\R&D <x>\  py.exe"],
        ["UDF Modules", "m"],
        ["Empty", None],
    ]


def test_settings_sheet_keeps_the_code_name_its_vba_module_has(built, vba_modules):
    # The template's sheet is "Sheet2" in the VBA project; written without a code name, the
    # sheet no longer matched its document module.
    with zipfile.ZipFile(builder.template_path()) as z:
        template = addin_file.sheet_code_name(z.read(addin_file.CONFIG_SHEET_PART))
    assert template == addin_file.CONFIG_SHEET_CODE_NAME and template in vba_modules
    for data in (built.read_bytes(), builder.DEFAULT_OUTPUT.read_bytes()):
        parts = addin_file.read_parts(data)
        assert addin_file.sheet_code_name(parts[addin_file.CONFIG_SHEET_PART]) == template
        # What the installer writes keeps it too.
        again = addin_file.with_settings(parts, [("Interpreter_Win", r"C:\py\python.exe")])
        assert addin_file.sheet_code_name(again[addin_file.CONFIG_SHEET_PART]) == template


def test_settings_sheet_refuses_what_the_vba_would_misread():
    with pytest.raises(ValueError, match="needs a key"):
        addin_file.config_sheet_xml([("A", "1"), (" ", "2")])
    with pytest.raises(ValueError, match="single lines"):
        addin_file.config_sheet_xml([("PYTHONPATH", "a\nb")])
    parts = addin_file.read_parts(builder.DEFAULT_OUTPUT.read_bytes())
    parts["xl/workbook.xml"] = parts["xl/workbook.xml"].replace(
        b'<sheet name="stratpd_xl.conf"', b'<sheet name="Sheet9"'
    )
    with pytest.raises(ValueError, match="expected one sheet"):
        addin_file.with_settings(parts, addin_file.addin_settings())


# --- the formulas' modules written into the VBA project (vba_project.py) -----------------------

vba_project = builder.vba_project


@pytest.fixture(scope="module")
def recorded() -> dict:
    return builder.formula_import()


@pytest.fixture(scope="module")
def committed_vba() -> bytes:
    with zipfile.ZipFile(builder.DEFAULT_OUTPUT) as z:
        return z.read("xl/vbaProject.bin")


def _modules(vba_bin: bytes) -> dict[str, str]:
    parser = VBA_Parser("vbaProject.bin", data=vba_bin)
    try:
        return {name: code for _, _, name, code in parser.extract_macros()}
    finally:
        parser.close()


def _crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def test_committed_formula_module_is_what_xlwings_import_writes_for_the_current_udfs(
    recorded, committed_vba
):
    # xlwings' own import_udfs, run against a recording stand-in workbook, must write exactly
    # the module the committed add-in carries: a changed formula signature, default or text
    # fails here until the add-in is rebuilt.
    code = _modules(committed_vba).get(f"{builder.FORMULA_MODULE}.bas")
    assert code is not None, "the committed add-in has no xlwings_udfs module"
    assert code == _crlf(recorded["module"]), "formulas changed: run python addin/build_addin.py"
    assert code.startswith('Attribute VB_Name = "xlwings_udfs"\r\n')
    # The wrappers test "#If App = ..." on a module-level constant; without it they would take
    # the branch that passes no caller, which =STRATPD needs.
    assert '#Const App = "Microsoft Excel"' in code
    assert (
        "Function STRATPD(data, target, col, Optional min_samples_leaf, Optional trials, "
        "Optional chart, Optional max_points, Optional positive, Optional exclude, "
        "Optional keep, Optional classes)"
    ) in code
    impact = ("Function STRATIMPACT(data, target, Optional min_samples_leaf, Optional positive, "
              "Optional exclude, Optional keep, Optional classes)")
    assert impact in code
    assert (
        "Function STRATCOMPARE(data, target, col, Optional min_samples_leaf, Optional trials, "
        "Optional chart, Optional positive, Optional exclude, Optional keep, Optional classes)"
    ) in code
    assert 'XLPy.CallUDF("stratpd_xl.excel.udfs", "STRATPD"' in code
    assert "Function XLPy()" in _modules(committed_vba)["xlwings.bas"], "wrappers call XLPy"


def test_committed_wizard_module_registers_what_xlwings_import_registers(
    recorded, committed_vba
):
    code = _modules(committed_vba).get(f"{builder.WIZARD_MODULE}.bas")
    name, source = builder.wizard_module(recorded["macro_options"])
    assert code == _crlf(f'Attribute VB_Name = "{name}"\n' + source)
    assert "\r\nSub Auto_Open()\r\n" in code
    # =STRATPD, =STRATIMPACT, =STRATPDBY, =STRATPD2, =STRATCOMPARE
    assert code.count("    Application.MacroOptions Macro:=") == len(recorded["macro_options"]) == 5
    for options in recorded["macro_options"]:
        assert options["Category"] == "StratPD" and options["Description"]
        assert '"' + options["Description"].replace('"', '""') + '"' in code
        for doc in options["ArgumentDescriptions"]:
            assert '"' + doc.replace('"', '""') + '"' in code


def test_wizard_module_escapes_quotes_and_refuses_what_vba_cannot_hold():
    options = {"macro": "'a.xlam'!F", "Description": 'say "hi"', "Category": "C",
               "ArgumentDescriptions": None}
    _, source = builder.wizard_module([options])
    assert 'Description:="say ""hi""", _' in source and "ArgumentDescriptions" not in source
    assert 'Category:="C"\n' in source
    with pytest.raises(ValueError, match="one line"):
        builder.wizard_module([{**options, "Description": "two\nlines"}])
    with pytest.raises(ValueError, match="not a formula name"):
        builder.wizard_module([{**options, "macro": "'a.xlam'!F; End Sub"}])


def _dir_records(dir_stream: bytes) -> list[tuple[int, bytes]]:
    import struct

    records, at = [], 0
    while at < len(dir_stream):
        rid, size = struct.unpack_from("<HI", dir_stream, at)
        if rid == 0x0009:  # PROJECTVERSION: its Size field says 4, the record holds 6 bytes
            size = 6
        records.append((rid, dir_stream[at + 6 : at + 6 + size]))
        at += 6 + size
    return records


def test_dir_project_and_projectwm_list_the_new_modules_consistently(committed_vba):
    import struct

    streams = _streams(committed_vba)
    template = _streams(zipfile.ZipFile(builder.template_path()).read("xl/vbaProject.bin"))
    records = _dir_records(vba_project.decompress(streams["VBA/dir"]))
    old_records = _dir_records(vba_project.decompress(template["VBA/dir"]))
    ids = [rid for rid, _ in records]
    assert ids[-1] == 0x0010 and records[-1][1] == b""  # terminator
    count_at = ids.index(0x000F)
    count = struct.unpack("<H", records[count_at][1])[0]
    assert records[count_at + 1][0] == 0x0013  # PROJECTCOOKIE follows the count
    # Everything before the module list, and every template module's records, are unchanged.
    assert records[:count_at] == old_records[:count_at]
    assert records[count_at + 1 : len(old_records) - 1] == old_records[count_at + 1 : -1]
    modules: list[dict[int, bytes]] = []
    for rid, payload in records[count_at + 2 : -1]:
        if rid == 0x0019:
            modules.append({})
        modules[-1][rid] = payload
    old_count = sum(rid == 0x0019 for rid, _ in old_records)
    assert count == len(modules) == old_count + len(ADDED) == 7
    names = [m[0x0019].decode("cp1252") for m in modules]
    assert names[-2:] == [builder.FORMULA_MODULE, builder.WIZARD_MODULE]
    for module in modules[-2:]:
        name = module[0x0019].decode("cp1252")
        assert module[0x0047] == name.encode("utf-16-le")  # MODULENAMEUNICODE
        assert module[0x001A] == module[0x0019] and module[0x0032] == module[0x0047]
        assert struct.unpack("<I", module[0x0031])[0] == 0  # MODULEOFFSET: source at byte 0
        assert module[0x002C] == b"\xff\xff"  # MODULECOOKIE as MS-OVBA says to write it
        assert 0x0021 in module and 0x0022 not in module  # procedural (standard) module
        assert 0x002B in module  # its terminator
    for name in names:  # every listed module has its stream, and only those exist
        assert f"VBA/{name}" in streams
    assert {p for p in streams if p.startswith("VBA/")} == {
        f"VBA/{n}" for n in names
    } | {"VBA/dir", "VBA/_VBA_PROJECT"}

    project = streams["PROJECT"].decode("cp1252")
    for name in ADDED:
        assert f"\r\nModule={name}\r\n" in project
        assert f"\r\n{name}=0, 0, 0, 0, C\r\n" in project.partition("[Workspace]")[2]
    assert project.endswith("\r\n\r\n") and project.count("[Workspace]") == 1
    # PROJECTwm: MBCS name, NUL, UTF-16 name, NUL NUL per module, in dir order, then NUL NUL.
    wm, pairs = streams["PROJECTwm"], []
    while wm != b"\x00\x00":
        mbcs, wm = wm.split(b"\x00", 1)
        end = next(i for i in range(0, len(wm), 2) if wm[i : i + 2] == b"\x00\x00")
        pairs.append((mbcs.decode("cp1252"), wm[:end].decode("utf-16-le")))
        wm = wm[end + 2 :]
    assert pairs == [(n, n) for n in names]


def test_compound_file_sectors_chains_and_mini_stream_are_consistent(committed_vba):
    import struct

    import olefile

    data = committed_vba
    ole = olefile.OleFileIO(data, raise_defects=olefile.DEFECT_INCORRECT)
    assert ole.parsing_issues == [] and ole.get_type("VBA") == olefile.STGTY_STORAGE
    header = struct.unpack_from("<8s16sHHHHH6sIIIIIIIII", data)
    sig, _, minor, major, bom, sector_shift, mini_shift = header[:7]
    fat_count, first_dir, _, cutoff, first_minifat, minifat_count, first_difat = header[9:16]
    assert (sig, major, bom, sector_shift, mini_shift, cutoff) == (
        bytes.fromhex("d0cf11e0a1b11ae1"), 3, 0xFFFE, 9, 6, 4096
    )
    assert minor == 0x3E and first_difat == vba_project.ENDOFCHAIN
    assert (len(data) - 512) % 512 == 0
    sectors = (len(data) - 512) // 512
    difat = struct.unpack_from("<109I", data, 76)
    fat_sectors = [s for s in difat if s != vba_project.FREESECT]
    assert len(fat_sectors) == fat_count

    def sector(i: int) -> bytes:
        assert 0 <= i < sectors
        return data[512 + 512 * i : 512 + 512 * (i + 1)]

    fat = [v for s in fat_sectors for v in struct.unpack("<128I", sector(s))]
    assert all(fat[s] == vba_project.FATSECT for s in fat_sectors)
    used: set[int] = set(fat_sectors)

    def chain(first: int, table: list[int]) -> list[int]:
        out = []
        while first != vba_project.ENDOFCHAIN:
            assert first not in out, "a loop in a sector chain"
            out.append(first)
            first = table[first]
        return out

    def claim(run: list[int]) -> None:
        assert not used & set(run), "a sector belongs to two chains"
        used.update(run)

    directory = chain(first_dir, fat)
    claim(directory)
    minifat_run = chain(first_minifat, fat)
    claim(minifat_run)
    assert len(minifat_run) == minifat_count
    minifat = [v for s in minifat_run for v in struct.unpack("<128I", sector(s))]
    entries = b"".join(sector(s) for s in directory)
    root_start, root_size = struct.unpack_from("<IQ", entries, 116)
    mini_run = chain(root_start, fat)
    claim(mini_run)
    assert len(mini_run) == -(-root_size // 512)
    mini_used: set[int] = set()
    streams = 0
    for k in range(1, len(entries) // 128):
        entry = entries[128 * k : 128 * (k + 1)]
        kind = entry[66]
        start, size = struct.unpack_from("<IQ", entry, 116)
        if kind != 2:  # storages and unused slots hold no data
            continue
        streams += 1
        if size < cutoff:  # MS-CFB: small streams live in the mini stream
            run = chain(start, minifat) if size else []
            assert len(run) == -(-size // 64) and not mini_used & set(run)
            mini_used.update(run)
            assert all(s < root_size // 64 for s in run)
        else:
            run = chain(start, fat)
            assert len(run) == -(-size // 512)
            claim(run)
    assert streams == len([p for p in ole.listdir()])
    assert used == set(range(sectors)), "every sector is used by exactly one chain"
    ole.close()


@pytest.fixture(scope="module")
def libreoffice_basic(tmp_path_factory) -> dict[str, str]:
    """The Basic modules LibreOffice imports from the committed add-in's vbaProject.bin."""
    import subprocess

    exe = soffice()
    work = tmp_path_factory.mktemp("lo")
    subprocess.run(
        [exe, "--headless", "--norestore", f"-env:UserInstallation={(work / 'p').as_uri()}",
         "--infilter=Calc MS Excel 2007 VBA XML", "--convert-to", "ods",
         "--outdir", str(work), str(builder.DEFAULT_OUTPUT)],
        capture_output=True, check=True, timeout=180,
    )
    with zipfile.ZipFile(work / "stratpd_xl.ods") as z:
        return {
            Path(n).stem: z.read(n).decode()
            for n in z.namelist()
            if n.startswith("Basic/MyAddin/") and not n.endswith("script-lb.xml")
        }


def test_libreoffice_imports_the_added_modules_with_their_source(
    libreoffice_basic, committed_vba
):
    import html

    modules = _modules(committed_vba)
    assert set(libreoffice_basic) == {Path(n).stem for n in modules}
    for name in ADDED:
        basic = libreoffice_basic[name]
        assert 'script:moduleType="normal"' in basic and "VBA_ModuleType=VBAModule" in basic
        body = html.unescape(basic.split('script:moduleType="normal">', 1)[1])
        # LibreOffice keeps every line of the source except the Attribute line it consumed.
        source = modules[f"{name}.bas"].split("\r\n", 1)[1].rstrip("\r\n").split("\r\n")
        assert all(line in body.splitlines() for line in source), name
        assert "Function STRATPD(" in body or "Sub Auto_Open()" in body


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet='ab =()\r\nXYZ"', max_size=9000))
def test_ovba_compression_round_trips_through_oletools(text):
    from oletools.olevba import decompress_stream

    data = text.encode()
    packed = vba_project.compress(data)
    assert bytes(decompress_stream(bytearray(packed))) == data
    assert vba_project.decompress(packed) == data


def test_compound_file_directory_is_a_sorted_valid_red_black_tree(committed_vba):
    import olefile

    ole = olefile.OleFileIO(committed_vba)

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


def test_xlwings_itself_ships_source_only_modules_in_a_seven_byte_project():
    # The evidence addin/README.md gives for Excel accepting our modules, kept true for the
    # pinned xlwings: its own add-in runs Main (RunPython, the UDF server) from source alone.
    import struct

    addin = Path(builder.template_path()).parent / "addin" / "xlwings.xlam"
    streams = _streams(zipfile.ZipFile(addin).read("xl/vbaProject.bin"))
    assert streams["VBA/_VBA_PROJECT"] == vba_project.SOURCE_ONLY_VBA_PROJECT
    offsets, name = {}, None
    for rid, payload in _dir_records(vba_project.decompress(streams["VBA/dir"])):
        if rid == 0x0019:
            name = payload.decode("cp1252")
        elif rid == 0x0031:
            offsets[name] = struct.unpack("<I", payload)[0]
    assert offsets["Main"] == 0 and "Public Function RunPython(" in _modules(
        zipfile.ZipFile(addin).read("xl/vbaProject.bin")
    )["Main.bas"]
