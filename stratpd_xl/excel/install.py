"""Install (or remove) the Excel add-in: ``python -m stratpd_xl.excel.install``.

Every step lives here, in Python, so it runs and is tested the same everywhere; the scripts in
``installer/`` only find a Python 3.11+ and call this module.  Steps:

0. refuse a 32-bit Python before anything else (pandas, numba and scipy publish no 32-bit
   Windows packages, so pip would fail half-way);
1. refuse while Excel runs (it locks the add-in file it has open);
2. a Python environment: an existing venv is reused, a missing one is created (default
   ``~/.stratpd-xl/venv``), or ``--use-current`` takes the Python running this; run from a
   conda environment's Python, that environment is used as the venv would be (a venv made from
   conda's Python cannot load conda's libraries on Windows), and the add-in activates it;
3. ``pip install --upgrade`` the package into it (this checkout, a wheel file or URL given with
   ``--package``, or ``--from-pypi``), then run
   the formulas' warm-up once in it, so numba's on-disk cache holds the compiled engine before
   Excel's first formula (about 3 s saved there; a failure here only costs that time later);
4. copy the add-in into Excel's startup folder with its settings sheet pointing at that Python
   (``addin_file``); on macOS also xlwings' AppleScript helper that ``RunPython`` needs.

The formulas' VBA wrappers ship inside the add-in (``addin/build_addin.py``), so there is no
per-machine import and no "Trust access to the VBA project object model".  ``--import-formulas``
(Windows) is kept only as a rescue should an Excel refuse the shipped module: it regenerates the
wrappers inside the installed add-in with xlwings' own import, which does need that setting.

``--dry-run`` prints every step and changes nothing; ``--uninstall`` removes the add-in.
Only the standard library is imported, so this runs before the dependencies are installed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from . import addin_file

ADDIN_NAME = "stratpd_xl.xlam"
PACKAGE_NAME = "stratpd-xl"
#: Checkout root when this file runs from a source tree (``<root>/stratpd_xl/excel``).
CHECKOUT_ROOT = Path(__file__).resolve().parents[2]

Runner = Callable[[Sequence[str]], str]
#: Compiles the engine's numba kernels into their on-disk cache (and loads matplotlib once).
#: ``STRATPD_XL_WARMUP`` is forced on: the warm-up runs at import unless it says 0.
WARM_UP_CODE = (
    "import os; os.environ['STRATPD_XL_WARMUP'] = '1'; "
    "from stratpd_xl.excel import udfs; udfs.wait_for_warm_up(600)"
)
ExcelCheck = Callable[[str], bool | None]
#: Bits of a pointer in the Python running this (32 or 64); tests pass another.
POINTER_BITS = struct.calcsize("P") * 8
#: Seconds to wait for ``tasklist`` / ``pgrep`` before giving up on the "is Excel running?" check.
EXCEL_CHECK_TIMEOUT = 30


class InstallError(Exception):
    """A step could not be done; the message is the one sentence the user sees."""


def _run(command: Sequence[str]) -> str:
    """Run a command, return its standard output; raise InstallError when it fails."""
    try:
        # errors="replace": pip and Python print in the console's code page on Windows, which
        # need not be the one Python guesses; a wrong guess must not become a traceback.
        done = subprocess.run(
            list(command), capture_output=True, text=True, encoding="utf-8", errors="replace"
        )
    except OSError as exc:
        raise InstallError(f"could not run {command[0]}: {exc}") from exc
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
        raise InstallError(f"{' '.join(command)} failed ({done.returncode}): {detail[0]}")
    return done.stdout


def tasklist_shows_excel(output: bytes) -> bool:
    """Whether ``tasklist``'s output lists ``EXCEL.EXE``.

    The output is in the console's code page (cp437, cp850, cp1252, cp932, UTF-8, ...), which
    Python cannot know for sure; the image name is ASCII in all of them, so the bytes are
    searched as they are and nothing is decoded.
    """
    return b"excel.exe" in output.lower()


def excel_is_running(platform: str) -> bool | None:
    """Whether Excel runs for this user: True, False, or None when it cannot be told.

    Windows asks ``tasklist`` for ``EXCEL.EXE``; macOS asks ``pgrep`` for the exact process name
    ``Microsoft Excel``.  Any failure of the check itself (no such program, a time-out, an
    error exit) is None, which the installer turns into a sentence.
    """
    try:
        if platform.startswith("win"):
            done = subprocess.run(
                ["tasklist", "/FI", "IMAGENAME eq EXCEL.EXE", "/NH"],
                capture_output=True,
                timeout=EXCEL_CHECK_TIMEOUT,
            )
            if done.returncode != 0:
                return None
            return tasklist_shows_excel(done.stdout)
        done = subprocess.run(
            ["pgrep", "-x", "Microsoft Excel"], capture_output=True, timeout=EXCEL_CHECK_TIMEOUT
        )
        # pgrep: 0 found, 1 not found, anything else an error of its own.
        return {0: True, 1: False}.get(done.returncode)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def python_bits_problem(bits: int = POINTER_BITS) -> str | None:
    """The sentence refusing a 32-bit Python, or None for a 64-bit one."""
    if bits >= 64:
        return None
    version = ".".join(map(str, sys.version_info[:2]))
    return (
        f"this Python ({sys.executable}, {version}, {bits}-bit) cannot run stratpd-xl: pandas, "
        "numba and scipy publish no 32-bit packages; install the 64-bit Python 3.11 or newer "
        "from python.org (Windows installer (64-bit)) and run this again, or set "
        "STRATPD_XL_PYTHON to a 64-bit python.exe"
    )


#: The installation the running Python comes from (tests pass a Store Python's).
BASE_PREFIX = sys.base_prefix
#: The environment the running Python is (tests pass a conda environment's).
PREFIX = sys.prefix
DEFAULT_VENV = str(Path("~") / ".stratpd-xl" / "venv")


def conda_environment(prefix: str) -> Path | None:
    """The conda environment ``prefix`` is (it holds ``conda-meta``), or None."""
    path = Path(prefix)
    return path if (path / "conda-meta").is_dir() else None


def conda_python(environment: Path, platform: str) -> Path:
    """The Python of a conda environment made for ``platform``."""
    if platform.startswith("win"):
        return environment / "python.exe"
    return environment / "bin" / "python"


def conda_activation(environment: Path) -> tuple[str, str]:
    """xlwings' ``Conda Path`` and ``Conda Env`` for a conda environment: conda's own folder
    (the one holding ``condabin``) and the environment's name, or its full path when it is not
    in conda's ``envs`` folder (``conda activate`` takes either)."""
    if environment.parent.name == "envs" and (environment.parent.parent / "condabin").is_dir():
        return str(environment.parent.parent), environment.name
    return "", str(environment)


def store_python_problem(base_prefix: str, platform: str) -> str | None:
    """The sentence refusing the Microsoft Store's Python on Windows, or None.

    Windows gives a Store app a private copy of what it writes under ``AppData``, so the
    add-in it wrote into Excel's startup folder would be where Excel never looks.
    """
    if not platform.startswith("win"):
        return None
    parts = base_prefix.replace("/", "\\").split("\\")
    if "WindowsApps" not in parts or not any(
            x.startswith("PythonSoftwareFoundation.Python") for x in parts):
        return None
    return (
        f"this is the Microsoft Store's Python ({base_prefix}): Windows keeps what it writes "
        "under AppData in a private copy, so Excel would never see the add-in; install Python "
        "3.11 or newer from python.org and run this again, or set STRATPD_XL_PYTHON to its "
        "python.exe"
    )


def startup_folder(platform: str, home: Path | None = None) -> Path:
    """Excel's per-user startup folder, where an add-in is opened with every Excel start.

    Windows: ``%APPDATA%\\Microsoft\\Excel\\XLSTART``; macOS (Office 2016 and later):
    ``~/Library/Group Containers/UBF8T346G9.Office/User Content.localized/Startup.localized/Excel``.
    """
    home = home or Path.home()
    if platform.startswith("win"):
        appdata = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
        return appdata / "Microsoft" / "Excel" / "XLSTART"
    return (
        home
        / "Library"
        / "Group Containers"
        / "UBF8T346G9.Office"
        / "User Content.localized"
        / "Startup.localized"
        / "Excel"
    )


def applescript_folder(home: Path | None = None) -> Path:
    """Where Excel for Mac may run AppleScript files from (xlwings' ``RunPython`` helper)."""
    return (home or Path.home()) / "Library" / "Application Scripts" / "com.microsoft.Excel"


def venv_python(venv: Path, platform: str) -> Path:
    """The Python of a virtual environment made for ``platform``."""
    if platform.startswith("win"):
        return venv / "Scripts" / "python.exe"
    return venv / "bin" / "python"


def default_addin() -> Path:
    """The committed add-in of this checkout."""
    return CHECKOUT_ROOT / "addin" / ADDIN_NAME


def default_package() -> str:
    """This checkout when it is one (has the project's pyproject.toml), else the PyPI name."""
    pyproject = CHECKOUT_ROOT / "pyproject.toml"
    if pyproject.is_file() and f'name = "{PACKAGE_NAME}"' in pyproject.read_text("utf-8"):
        return str(CHECKOUT_ROOT)
    return PACKAGE_NAME


def addin_bytes(source: Path, interpreter: str, platform: str,
                conda: tuple[str, str] = ("", "")) -> bytes:
    """The add-in file to install: ``source`` with its settings sheet naming ``interpreter``
    (and ``conda``'s folder and environment, which xlwings activates first).

    The other platform's interpreter keeps its default, so one file can still be copied between
    a Windows and a Mac machine that use the default venv.
    """
    interpreters = dict(addin_file.DEFAULT_INTERPRETER)
    interpreters["win32" if platform.startswith("win") else "darwin"] = interpreter
    settings = addin_file.addin_settings(interpreters["win32"], interpreters["darwin"], *conda)
    parts = addin_file.with_settings(addin_file.read_parts(source.read_bytes()), settings)
    return addin_file.zip_parts(parts)


class Installer:
    """The steps, with the side effects that tests replace (commands, the Excel check)."""

    def __init__(
        self,
        args: argparse.Namespace,
        runner: Runner = _run,
        excel_check: ExcelCheck = excel_is_running,
        out: Callable[[str], None] = print,
        pointer_bits: int = POINTER_BITS,
    ) -> None:
        self.args = args
        self.pointer_bits = pointer_bits
        self.platform: str = args.platform
        self.runner = runner
        self.excel_check = excel_check
        self.out = out
        self.home = Path.home()
        self.target = startup_folder(self.platform, self.home) / ADDIN_NAME
        self.conda: tuple[str, str] = ("", "")  # xlwings' Conda Path and Conda Env

    def say(self, text: str) -> None:
        self.out(f"    {text}")

    def command(self, command: Sequence[str]) -> str:
        """Print a command as typed, run it unless this is a dry run."""
        self.say("> " + subprocess.list2cmdline(list(command)))
        return "" if self.args.dry_run else self.runner(command)

    def check_python(self) -> None:
        """Refuse a 32-bit or a Microsoft Store Python before anything is created or
        installed."""
        problem = (python_bits_problem(self.pointer_bits)
                   or store_python_problem(BASE_PREFIX, self.platform))
        if problem is not None:
            raise InstallError(problem)

    def check_excel(self) -> None:
        try:
            running = self.excel_check(self.platform)
        except Exception:  # the check is a courtesy: its failure must not end the install
            running = None
        if running is None:
            self.say("could not tell whether Excel is running; if it is, quit it first")
        elif running:
            sentence = (
                "Excel is running: quit Excel (it locks the add-in file), then run this again."
            )
            if not self.args.dry_run:
                raise InstallError(sentence)
            self.say(f"{sentence} (dry run: carrying on)")
        else:
            self.say("Excel is not running")

    def python(self) -> str:
        if self.args.use_current:
            self.say(f"using the Python running this: {sys.executable}")
            return sys.executable
        conda = conda_environment(PREFIX) if self.args.venv == DEFAULT_VENV else None
        if conda is not None:
            return self.conda_python(conda)
        venv = Path(self.args.venv).expanduser()
        python = venv_python(venv, self.platform)
        if python.exists():
            self.say(f"reusing the environment {venv}")
        else:
            self.command([sys.executable, "-m", "venv", str(venv)])
        return str(python)

    def conda_python(self, environment: Path) -> str:
        """Use the conda environment this runs from as the venv would be used (conda's base
        environment is refused: pip would change the packages conda manages there)."""
        if (environment / "condabin").is_dir():
            raise InstallError(
                f"this is conda's base environment ({environment}), whose packages conda "
                "manages: make one for stratpd-xl (conda create -n stratpd-xl python=3.11, then "
                "conda activate stratpd-xl) and run this again from it")
        self.conda = conda_activation(environment)
        self.say(f"using the conda environment {environment} (a venv made from conda's Python "
                 "cannot load conda's libraries); the add-in activates it")
        return str(conda_python(environment, self.platform))

    def install_package(self, python: str) -> None:
        if self.args.use_current:
            self.say("skipped: the package is used from where this Python finds it")
            self.warm_up(python)
            return
        try:
            self.command(
                [python, "-m", "pip", "install", "--quiet", "--upgrade", self.args.package]
            )
        except InstallError as exc:
            if self.args.package == PACKAGE_NAME and "no matching distribution" in str(exc).lower():
                raise InstallError(
                    f"{PACKAGE_NAME} is not on the package index yet: leave out --from-pypi to "
                    "install from this folder, or give a wheel file or its URL with --package"
                ) from exc
            raise
        self.warm_up(python)

    def warm_up(self, python: str) -> None:
        """Compile the engine's kernels into numba's cache, so the first formula answers in
        seconds instead of waiting half a minute for the compiler."""
        self.say("compiling the engine's kernels once (up to a minute), so Excel's first "
                 "formula answers at once")
        try:
            self.command([python, "-c", WARM_UP_CODE])
        except InstallError as exc:
            self.say(f"could not compile the engine ahead ({exc}); Excel's first formula will")

    def install_addin(self, python: str) -> None:
        source = Path(self.args.addin)
        if not source.is_file():
            raise InstallError(
                f"{source} not found: run this from a stratpd-xl checkout or pass --addin"
            )
        data = addin_bytes(source, python, self.platform, self.conda)
        if self.args.dry_run:
            self.say(f"would write {self.target}")
        else:
            self.target.parent.mkdir(parents=True, exist_ok=True)
            partial = self.target.with_name(self.target.name + ".partial")
            try:
                partial.write_bytes(data)
                os.replace(partial, self.target)  # never leave a half-written add-in behind
            except OSError as exc:
                partial.unlink(missing_ok=True)
                raise InstallError(
                    f"could not write {self.target} ({exc.strerror}): quit Excel, run this again."
                ) from exc
            self.say(f"wrote {self.target}")
        for key, value in addin_file.read_settings(addin_file.read_parts(data)).items():
            self.say(f"  {key} = {value}")
        if self.platform == "darwin":
            self.install_applescript(python)

    def install_applescript(self, python: str) -> None:
        # RunPython on a Mac goes through this AppleScript, named by the xlwings version.
        code = (
            "import pathlib, xlwings; print(pathlib.Path(xlwings.__file__).parent / "
            "f'xlwings-{xlwings.__version__}.applescript')"
        )
        found = self.command([python, "-c", code]).strip()
        if self.args.dry_run:
            self.say(f"would copy xlwings' AppleScript into {applescript_folder(self.home)}")
            return
        source = Path(found)
        if not source.is_file():
            raise InstallError(f"xlwings' AppleScript {source} is missing: reinstall xlwings")
        folder = applescript_folder(self.home)
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, folder / source.name)
        self.say(f"copied {source.name} into {folder}")

    def import_formulas(self, python: str) -> None:
        # Rescue only (--import-formulas): the add-in already carries the wrappers.
        if not self.platform.startswith("win"):
            self.say("skipped: cell formulas need Excel on Windows; the ribbon button works")
            return
        if not sys.platform.startswith("win") and not self.args.dry_run:
            self.say("skipped: needs Excel on this machine")
            return
        try:
            self.command([python, "-m", "stratpd_xl.excel.config", "import-udfs"])
        except InstallError as exc:
            self.say(
                f"could not import the formulas ({exc}). In Excel tick File > Options > Trust "
                "Center > Trust Center Settings > Macro Settings > 'Trust access to the VBA "
                "project object model', quit Excel and run this again."
            )

    def install(self) -> None:
        self.check_python()
        steps: list[tuple[str, Callable[[], object]]] = []
        python: list[str] = []
        steps.append(("Excel must be closed", self.check_excel))
        steps.append(("Python environment", lambda: python.append(self.python())))
        steps.append(
            (f"install the package ({self.args.package})", lambda: self.install_package(python[0]))
        )
        steps.append(("the add-in and its settings", lambda: self.install_addin(python[0])))
        if self.args.import_formulas:
            title = "re-import =STRATPD, =STRATIMPACT (rescue)"
            steps.append((title, lambda: self.import_formulas(python[0])))
        for number, (title, step) in enumerate(steps, start=1):
            self.out(f"==> {number}/{len(steps)} {title}")
            step()

    def uninstall(self) -> None:
        self.out("==> 1/2 Excel must be closed")
        self.check_excel()
        self.out("==> 2/2 remove the add-in")
        if not self.target.exists():
            self.say(f"nothing to remove: {self.target} does not exist")
        elif self.args.dry_run:
            self.say(f"would remove {self.target}")
        else:
            try:
                self.target.unlink()
            except OSError as exc:
                raise InstallError(
                    f"could not remove {self.target} ({exc.strerror}): quit Excel, run this again."
                ) from exc
            self.say(f"removed {self.target}")
        if not self.args.use_current:
            self.say(
                f"the Python environment {Path(self.args.venv).expanduser()} is left; delete "
                "that folder to remove it too"
            )


def parser() -> argparse.ArgumentParser:
    """The command line."""
    p = argparse.ArgumentParser(
        prog="python -m stratpd_xl.excel.install", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--dry-run", action="store_true", help="print every step, change nothing")
    p.add_argument("--uninstall", action="store_true", help="remove the add-in")
    p.add_argument(
        "--venv",
        default=DEFAULT_VENV,
        help="virtual environment to create or reuse (default: ~/.stratpd-xl/venv; run from a "
        "conda environment's Python: that environment)",
    )
    p.add_argument(
        "--use-current",
        action="store_true",
        help="use the Python running this (already has the package) instead of a venv",
    )
    p.add_argument(
        "--package",
        default=default_package(),
        help="what pip installs: a folder, a wheel file or a wheel's URL (default: this "
        "checkout, else stratpd-xl from the package index)",
    )
    p.add_argument(
        "--from-pypi",
        action="store_const",
        dest="package",
        const=PACKAGE_NAME,
        help="install stratpd-xl from the package index (once it is published there)",
    )
    p.add_argument("--addin", default=str(default_addin()), help="the add-in file to install")
    p.add_argument(
        "--import-formulas",
        action="store_true",
        help="Windows rescue, if Excel refuses the formulas shipped in the add-in: regenerate "
        "them in the installed add-in (needs 'Trust access to the VBA project object model')",
    )
    p.add_argument(
        "--platform", default=sys.platform, choices=["win32", "darwin"], help=argparse.SUPPRESS
    )  # tests lay out one platform's folders on another
    return p


def main(
    argv: Sequence[str] | None = None,
    *,
    runner: Runner = _run,
    excel_check: ExcelCheck = excel_is_running,
    pointer_bits: int = POINTER_BITS,
) -> int:
    """Run the installer; 0 on success, 1 with one sentence on standard error otherwise."""
    p = parser()
    args = p.parse_args(argv)
    if args.platform not in ("win32", "darwin"):
        p.error("Excel add-ins exist on Windows and macOS; elsewhere use the stratpd-xl command")
    installer = Installer(args, runner, excel_check, pointer_bits=pointer_bits)
    if args.dry_run:
        print("Dry run: nothing is changed.")
    try:
        installer.uninstall() if args.uninstall else installer.install()
    except InstallError as exc:
        print(f"stratpd-xl install: {exc}", file=sys.stderr)
        return 1
    if args.dry_run:
        print("Dry run done: nothing was changed.")
    elif args.uninstall:
        print("Done. Restart Excel: the StratPD tab is gone.")
    else:
        print(
            "Done. Start Excel: the ribbon has a StratPD tab"
            + (" and =STRATPD, =STRATIMPACT work." if args.platform == "win32" else ".")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
