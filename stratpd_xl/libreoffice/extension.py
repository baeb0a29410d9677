"""The Calc extension: ``stratpd-xl libreoffice build``, ``install`` and ``uninstall``.

The ``.oxt`` is a zip of:

* ``stratpd_xl_calc.py`` - the UNO component (:mod:`stratpd_xl.libreoffice.calc_component`) and
  ``pythonpath/stratpd_xl_calc_client.py`` (:mod:`stratpd_xl.libreoffice.calc_client`);
* ``XStratPD.rdb`` - the formulas' interface as a binary type library.  It is compiled from
  :func:`idl` with the LibreOffice SDK's ``unoidl-write`` and shipped in this package, so
  building needs no SDK (a test checks the shipped file still matches the IDL).  The documented
  binary form is used because a plain ``.idl`` fails to register in shared installs;
* ``CalcAddIns.xcu`` - the Function Wizard's names, descriptions and argument help, from
  :mod:`stratpd_xl.spreadsheet` (the texts Excel's wizard shows);
* ``Addons.xcu`` - the "Analyse selection" menu entry and toolbar button, and
  ``ProtocolHandler.xcu``, which sends their command to the component;
* ``config.json`` - the interpreter of the environment that built it, which the extension
  starts as its worker, and the worker's time-outs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from .. import __version__, spreadsheet
from ..errors import StratPDInputError
from . import calc_client

__all__ = [
    "EXTENSION_ID", "RDB", "build", "calc_addins_xcu", "compile_rdb", "find_unopkg", "idl",
    "install", "office_environment", "uninstall", "warm_up",
]

HERE = Path(__file__).resolve().parent
EXTENSION_ID = "org.stratpd.xl.calc"
INTERFACE_MODULE = ("org", "stratpd", "xl", "calc")
INTERFACE = "XStratPD"
FUNCTIONS = "org.stratpd.xl.calc.Functions"
ANALYSE = "org.stratpd.xl.calc.AnalyseSelection"
#: The shipped type library; regenerate with ``python -m stratpd_xl.libreoffice.extension``.
RDB = HERE / "XStratPD.rdb"
#: The formulas Calc gets, with their arguments in order (the worker's operations by name).
FORMULAS = {
    "STRATPD": spreadsheet.STRATPD_ARGS,
    "STRATIMPACT": spreadsheet.STRATIMPACT_ARGS,
    "STRATPDBY": spreadsheet.STRATPDBY_ARGS,
    "STRATPD2": spreadsheet.STRATPD2_ARGS,
    "STRATCOMPARE": spreadsheet.STRATCOMPARE_ARGS,
}
#: Calc draws no picture beside a formula (a formula must not change the sheet it is on).
CALC_HELP = {"chart": "Accepted for Excel's formulas; Calc draws no chart here (use Tools > "
             "Add-Ons > Analyse selection for charts)."}
# Excel's descriptions end with the picture beside the formula, which Calc does not draw.
_PICTURE_ENDINGS = (", plus a chart beside it", ", plus a chart with a line per group",
                    " and a heat map beside it", "; a picture beside it")


def calc_help(argument: str, text: str) -> str:
    """An argument's help in the Function Wizard: Calc's own where it differs, in Calc's
    syntax (``Data.A1:J5001``)."""
    return CALC_HELP.get(argument, text).replace(spreadsheet.EXAMPLE_RANGE,
                                                 spreadsheet.CALC_EXAMPLE_RANGE)


def _calc_description(text: str) -> str:
    for ending in _PICTURE_ENDINGS:
        text = text.replace(ending, "")
    return text


CALC_DESCRIPTIONS = {name: _calc_description(spreadsheet.DESCRIPTIONS[name]) for name in FORMULAS}
MENU_TITLE = "Analyse selection"
#: The command the menu entry and the toolbar button dispatch (a protocol handler's URL).
COMMAND = "org.stratpd.xl.calc:analyse"
UNOPKG_TIMEOUT = 300  # seconds; unopkg starts a LibreOffice of its own
# Signals a crashed unopkg ends with (abort, bus error, segmentation fault).
_CRASH_SIGNALS = (6, 7, 11)


def unopkg_crashed(returncode: int) -> bool:
    """Whether unopkg ended by crashing rather than by refusing: killed by a signal, or its
    launcher script's 128 + the signal.  It crashes now and then at start-up, more often
    while another LibreOffice starts beside it (exit 139 in parallel test runs); run again,
    it works, so :func:`install` and :func:`uninstall` try once more."""
    return -returncode in _CRASH_SIGNALS or returncode - 128 in _CRASH_SIGNALS
SDK_BIN = Path("/usr/lib/libreoffice/sdk/bin")


# --------------------------------------------------------------------------- the files


def uno_name(argument: str) -> str:
    """An argument's name in the IDL and the configuration: UNO IDL refuses ``_`` + lowercase."""
    first, *rest = argument.split("_")
    return first + "".join(part.capitalize() for part in rest)


#: Arguments Calc hands over as the range itself, not its values: the component reads only
#: the range's used part, so a whole-column ``A:J`` costs what the table in it costs.
RANGE_ARGUMENTS = ("data",)


def idl() -> str:
    """The formulas' UNO interface: ``data`` a cell range, every other argument ``any``.

    A formula returns ``any``: Calc takes a block of cells in it or, as the component always
    gives, an ``XVolatileResult`` (a result the extension can announce a change of, so a cell
    whose worker died fills in by itself once a new one has started)."""
    methods = []
    for name, args in FORMULAS.items():
        params = ", ".join(
            f"[in] {'com::sun::star::table::XCellRange' if arg in RANGE_ARGUMENTS else 'any'} "
            f"{uno_name(arg)}" for arg in args)
        methods.append(f"        any {name}({params});")
    opening = " ".join(f"module {m} {{" for m in INTERFACE_MODULE)
    closing = " ".join("};" for _ in INTERFACE_MODULE)
    return (
        "#include <com/sun/star/uno/XInterface.idl>\n"
        "#include <com/sun/star/table/XCellRange.idl>\n\n"
        f"{opening}\n"
        f"    interface {INTERFACE} : com::sun::star::uno::XInterface {{\n"
        + "\n".join(methods) + "\n    };\n"
        f"{closing}\n"
    )


def _prop(name: str, value: str, *, lang: bool = True) -> str:
    attr = ' xml:lang="en-US"' if lang else ""
    return f'<prop oor:name="{name}"><value{attr}>{escape(value)}</value></prop>'


def calc_addins_xcu() -> str:
    """The Function Wizard's entries: the formulas' names, descriptions and argument help."""
    functions = []
    for name, args in FORMULAS.items():
        params = "".join(
            f'<node oor:name={quoteattr(uno_name(arg))} oor:op="replace">'
            f"{_prop('DisplayName', arg)}{_prop('Description', calc_help(arg, text))}</node>"
            for arg, text in args.items()
        )
        functions.append(
            f'<node oor:name="{name}" oor:op="replace">'
            f"{_prop('DisplayName', name)}{_prop('Description', CALC_DESCRIPTIONS[name])}"
            f"{_prop('Category', 'Add-In', lang=False)}"
            f"{_prop('CompatibilityName', name)}"
            f'<node oor:name="Parameters">{params}</node></node>'
        )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<oor:component-data xmlns:oor="http://openoffice.org/2001/registry" '
        'xmlns:xs="http://www.w3.org/2001/XMLSchema" oor:name="CalcAddIns" '
        'oor:package="org.openoffice.Office">\n'
        f'<node oor:name="AddInInfo"><node oor:name="{FUNCTIONS}" oor:op="replace">'
        f'<node oor:name="AddInFunctions">{"".join(functions)}</node></node></node>\n'
        "</oor:component-data>\n"
    )


def addons_xcu() -> str:
    """The menu entry (Tools > Add-Ons) and the toolbar button, both in Calc only."""
    entry = (
        f"{_prop('URL', COMMAND, lang=False)}{_prop('Title', MENU_TITLE)}"
        f"{_prop('Target', '_self', lang=False)}"
        f"{_prop('Context', 'com.sun.star.sheet.SpreadsheetDocument', lang=False)}"
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<oor:component-data xmlns:oor="http://openoffice.org/2001/registry" '
        'xmlns:xs="http://www.w3.org/2001/XMLSchema" oor:name="Addons" '
        'oor:package="org.openoffice.Office">\n'
        '<node oor:name="AddonUI">'
        '<node oor:name="AddonMenu">'
        f'<node oor:name="{EXTENSION_ID}.menu" oor:op="replace">{entry}</node></node>'
        '<node oor:name="OfficeToolBar">'
        f'<node oor:name="{EXTENSION_ID}.toolbar" oor:op="replace">'
        f'<node oor:name="m1" oor:op="replace">{entry}</node></node></node>'
        "</node>\n</oor:component-data>\n"
    )


def protocol_handler_xcu() -> str:
    """Sends the command's URLs to the component, which LibreOffice gives the frame."""
    protocol = COMMAND.split(":")[0]
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<oor:component-data xmlns:oor="http://openoffice.org/2001/registry" '
        'xmlns:xs="http://www.w3.org/2001/XMLSchema" oor:name="ProtocolHandler" '
        'oor:package="org.openoffice.Office">\n'
        f'<node oor:name="HandlerSet"><node oor:name="{ANALYSE}" oor:op="replace">'
        '<prop oor:name="Protocols" oor:type="oor:string-list">'
        f"<value>{protocol}:*</value></prop></node></node>\n"
        "</oor:component-data>\n"
    )


def _description_xml() -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<description xmlns="http://openoffice.org/extensions/description/2006" '
        'xmlns:d="http://openoffice.org/extensions/description/2006" '
        'xmlns:xlink="http://www.w3.org/1999/xlink">\n'
        f'  <identifier value="{EXTENSION_ID}"/>\n'
        f'  <version value="{escape(__version__)}"/>\n'
        '  <display-name><name lang="en">StratPD for Calc (stratpd-xl)</name></display-name>\n'
        '  <dependencies><d:OpenOffice.org-minimal-version value="4.0" '
        'd:name="OpenOffice.org 4.0"/></dependencies>\n'
        "</description>\n"
    )


def _manifest_xml() -> str:
    entries = [
        ("application/vnd.sun.star.uno-typelibrary;type=RDB", RDB.name),
        ("application/vnd.sun.star.uno-component;type=Python", "stratpd_xl_calc.py"),
        ("application/vnd.sun.star.configuration-data", "CalcAddIns.xcu"),
        ("application/vnd.sun.star.configuration-data", "Addons.xcu"),
        ("application/vnd.sun.star.configuration-data", "ProtocolHandler.xcu"),
    ]
    lines = "".join(
        f'  <manifest:file-entry manifest:media-type="{media}" manifest:full-path="{path}"/>\n'
        for media, path in entries
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<manifest:manifest xmlns:manifest="http://openoffice.org/2001/manifest">\n'
        f"{lines}</manifest:manifest>\n"
    )


def build(out: Path, *, python: str | None = None) -> Path:
    """Write the extension to ``out`` (an ``.oxt``) and return its path.

    Parameters
    ----------
    out : Path
        The file to write (replaced when it exists).
    python : str, optional
        The interpreter the extension starts as its worker (default: this one, so build with
        the environment where stratpd-xl is installed).
    """
    out = Path(out)
    config = {
        "python": python or sys.executable,
        "version": __version__,
        "start_timeout": calc_client.DEFAULT_START_TIMEOUT,
        "call_timeout": calc_client.DEFAULT_CALL_TIMEOUT,
        # The component makes one Calc function per entry, its arguments in this order.
        "formulas": {name: list(args) for name, args in FORMULAS.items()},
        # The example range of the formulas' messages, in Excel's syntax and in Calc's.
        "range_syntax": [spreadsheet.EXAMPLE_RANGE, spreadsheet.CALC_EXAMPLE_RANGE],
    }
    files = {
        "META-INF/manifest.xml": _manifest_xml(),
        "description.xml": _description_xml(),
        "CalcAddIns.xcu": calc_addins_xcu(),
        "Addons.xcu": addons_xcu(),
        "ProtocolHandler.xcu": protocol_handler_xcu(),
        "config.json": json.dumps(config, indent=1) + "\n",
        "stratpd_xl_calc.py": (HERE / "calc_component.py").read_text(encoding="utf-8"),
        "pythonpath/stratpd_xl_calc_client.py": (HERE / "calc_client.py").read_text(
            encoding="utf-8"),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in files.items():
            z.writestr(name, text.encode("utf-8"))
        z.write(RDB, RDB.name)
    os.replace(partial, out)
    return out


def compile_rdb(out: Path, *, unoidl_write: str | None = None) -> Path:
    """Compile :func:`idl` to a binary type library with the SDK's ``unoidl-write``."""
    tool = unoidl_write or shutil.which("unoidl-write") or str(SDK_BIN / "unoidl-write")
    program = Path(tool).resolve().parents[2] / "program"
    if not (program / "types.rdb").exists():
        program = Path("/usr/lib/libreoffice/program")
    # The base types, and the office's (XCellRange) that the interface refers to.
    types = [str(program / "types.rdb"), str(program / "types" / "offapi.rdb")]
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / f"{INTERFACE}.idl"
        source.write_text(idl(), encoding="utf-8")
        subprocess.run([tool, *types, str(source), str(out)], check=True,
                       capture_output=True, timeout=60)
    return out


# --------------------------------------------------------------------------- unopkg


#: Where LibreOffice keeps unopkg when it is not on PATH (Windows, macOS, Linux tarballs).
UNOPKG_PLACES = [
    Path(os.environ.get("ProgramFiles", r"C:\Program Files"), "LibreOffice/program/unopkg.com"),
    Path("/Applications/LibreOffice.app/Contents/MacOS/unopkg"),
    Path("/usr/lib/libreoffice/program/unopkg"),
    Path("/opt/libreoffice/program/unopkg"),
]


def find_unopkg() -> str:
    """Path of LibreOffice's ``unopkg`` (``STRATPD_XL_UNOPKG`` names another), or the sentence
    saying how to get it."""
    found = os.environ.get("STRATPD_XL_UNOPKG") or shutil.which("unopkg")
    if found:
        return found
    for path in UNOPKG_PLACES:
        if path.exists():
            return str(path)
    raise StratPDInputError(
        "LibreOffice's unopkg was not found; install LibreOffice (https://www.libreoffice.org) "
        "or put its program folder on PATH"
    )


#: Variables of a Python environment that LibreOffice's embedded Python must not take.
PYTHON_VARIABLES = (
    "PYTHONHOME", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONEXECUTABLE", "PYTHONUSERBASE",
    "VIRTUAL_ENV", "VIRTUAL_ENV_PROMPT", "CONDA_PREFIX", "CONDA_DEFAULT_ENV",
    "__PYVENV_LAUNCHER__",
)


def _environment_scripts(folder: str) -> bool:
    """Whether ``folder`` is the ``bin`` (``Scripts``) folder of a venv or a conda environment."""
    if not folder:
        return False
    parent = Path(folder).parent
    return (parent / "pyvenv.cfg").is_file() or (parent / "conda-meta").is_dir()


def office_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for LibreOffice's own tools: no Python environment in it.

    A distribution's LibreOffice (Debian's, Fedora's) embeds the system Python, which finds
    its home by looking for ``python3`` on ``PATH``.  With a venv activated that is the venv's,
    so the embedded Python takes the venv's site-packages instead of the system's, where
    ``uno`` lives, and ``unopkg`` fails with "C++ code threw St9bad_alloc".  So the venv's and
    conda's ``bin`` folders leave ``PATH`` and Python's own variables are dropped; the worker
    is unaffected (it is started by its full path, recorded in the extension).
    """
    env = dict(os.environ if environ is None else environ)
    for name in PYTHON_VARIABLES:
        env.pop(name, None)
    if "PATH" in env:
        env["PATH"] = os.pathsep.join(
            f for f in env["PATH"].split(os.pathsep) if not _environment_scripts(f))
    return env


def _system_uno_folder() -> Path | None:
    """The system site folder holding ``uno.py`` (a distribution's python3-uno), or None."""
    if sys.platform in ("win32", "darwin"):
        return None  # LibreOffice brings its own Python there, with uno beside it
    for pattern in ("/usr/lib/python3/dist-packages/uno.py",
                    "/usr/lib*/python3*/site-packages/uno.py",
                    "/usr/lib*/python3*/dist-packages/uno.py"):
        for found in sorted(Path("/").glob(pattern.lstrip("/"))):
            return found.parent
    return None


#: In the venv stratpd-xl is installed in: lets a LibreOffice started from a shell where this
#: venv is active still find uno (see :func:`office_environment`).
UNO_HOOK = "stratpd_xl_libreoffice_uno.pth"


def _uno_hook_path() -> Path | None:
    """Where the hook goes: this venv's site-packages; None outside a venv."""
    if sys.prefix == sys.base_prefix:
        return None
    return Path(sysconfig.get_paths()["purelib"]) / UNO_HOOK


def uno_hook_line(folder: Path) -> str:
    """The ``.pth`` line: ``folder`` joins ``sys.path`` only in a Python with ``pyuno`` built in
    (LibreOffice's)."""
    return (f"import sys; 'pyuno' in sys.builtin_module_names and {str(folder)!r} not in "
            f"sys.path and sys.path.append({str(folder)!r})\n")


def write_uno_hook() -> Path | None:
    """Let a LibreOffice started with this venv active find the system's ``uno``.

    Such a LibreOffice's embedded Python takes this venv as its home (it finds the venv's
    ``python3`` first on ``PATH``) and so misses ``uno``: no Python extension loads, ours
    neither.  A ``.pth`` line in the venv adds the system folder holding ``uno`` to
    ``sys.path`` only inside LibreOffice (whose Python has ``pyuno`` built in); the venv's
    own Python is left as it is.  Returns the file written, or None when none is needed.
    """
    hook, folder = _uno_hook_path(), _system_uno_folder()
    if hook is None or folder is None:
        return None
    try:
        hook.write_text(uno_hook_line(folder), encoding="utf-8")
    except OSError:
        return None  # a read-only environment: LibreOffice then needs a shell without the venv
    return hook


def remove_uno_hook() -> None:
    """Remove :func:`write_uno_hook`'s file from this venv, if it is there."""
    hook = _uno_hook_path()
    if hook is not None:
        hook.unlink(missing_ok=True)


def _unopkg(args: list[str], *, profile: Path | None, shared: bool) -> None:
    command = [find_unopkg(), *args]
    if shared:
        command.insert(2, "--shared")
    if profile is not None:
        command.append(f"-env:UserInstallation={Path(profile).resolve().as_uri()}")
    for attempt in (1, 2):
        try:
            proc = subprocess.run(command, capture_output=True, text=True,
                                  timeout=UNOPKG_TIMEOUT, stdin=subprocess.DEVNULL,
                                  check=False, env=office_environment())
        except subprocess.TimeoutExpired:
            raise StratPDInputError(
                f"unopkg did not finish within {UNOPKG_TIMEOUT} s; close LibreOffice and try "
                "again"
            ) from None
        if not (attempt == 1 and unopkg_crashed(proc.returncode)):
            break
    if proc.returncode != 0:
        said = " ".join((proc.stderr or proc.stdout or "").split())[:300]
        hint = "close LibreOffice and try again"
        if "as root" in said:
            hint = "run it as your own user, or add --shared to install for every user"
        raise StratPDInputError(f"unopkg failed ({said or f'exit code {proc.returncode}'}); {hint}")


def install(
    *, shared: bool = False, profile: Path | None = None, python: str | None = None
) -> Path | None:
    """Build the extension for this environment and add it with ``unopkg add``.

    ``unopkg`` runs without this Python environment in its own (:func:`office_environment`),
    and from a venv a ``.pth`` file lets a LibreOffice started while the venv is active find
    ``uno`` (:func:`write_uno_hook`).

    Parameters
    ----------
    shared : bool
        For every user of the machine (needs administrator rights).
    profile : Path, optional
        A LibreOffice user profile folder other than the default (tests, portable installs).
    python : str, optional
        The interpreter the extension starts (default: this one).

    Returns
    -------
    Path or None
        The ``.pth`` file written into the venv, or None.

    Raises
    ------
    StratPDInputError
        When unopkg is missing, fails or takes too long (one sentence saying what to do).
    """
    folder = Path(tempfile.mkdtemp(prefix="stratpd-xl-oxt-"))
    oxt = build(folder / "stratpd-xl.oxt", python=python)
    try:
        _unopkg(["add", "--force", "--suppress-license", str(oxt)], profile=profile,
                shared=shared)
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # unopkg keeps its own copy
    return write_uno_hook()


#: Compiles the engine's kernels into numba's on-disk cache, through the formulas' own path.
WARM_UP_CODE = "from stratpd_xl import workflow; workflow.warm_up()"
WARM_UP_TIMEOUT = 600  # seconds; about 25 s on a busy 2-core machine


def warm_up(python: str | None = None) -> float:
    """Compile the engine's kernels with ``python`` (default: this one), the worker's
    interpreter, so the first formula after the install answers in seconds; the seconds taken.

    Raises
    ------
    StratPDInputError
        When it fails or takes too long (the extension works; its first formula compiles).
    """
    import time

    started = time.perf_counter()
    try:
        proc = subprocess.run([python or sys.executable, "-c", WARM_UP_CODE],
                              capture_output=True, text=True, timeout=WARM_UP_TIMEOUT,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise StratPDInputError(f"could not compile the engine ahead ({exc})") from None
    if proc.returncode != 0:
        said = " ".join((proc.stderr or "").split()[-30:])[:200]
        raise StratPDInputError(f"could not compile the engine ahead ({said})")
    return time.perf_counter() - started


def uninstall(*, shared: bool = False, profile: Path | None = None) -> None:
    """Remove the extension with ``unopkg remove``."""
    _unopkg(["remove", EXTENSION_ID], profile=profile, shared=shared)
    remove_uno_hook()


if __name__ == "__main__":  # maintainers: regenerate the shipped type library after an edit
    print(compile_rdb(RDB))
