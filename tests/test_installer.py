"""The installer on Linux, end to end against stand-in Windows and Mac folder layouts.

``python -m stratpd_xl.excel.install`` runs with a temporary HOME/APPDATA; the commands it would
run (venv, pip) are recorded by a stand-in runner, everything it writes is real and read back.
The macOS launcher runs for real (``--use-current``: no venv, no pip); the PowerShell launcher
cannot run here and is checked to hold no logic beyond finding Python.  The legacy shared
config file (``config.py``) is still tested: ``import-udfs`` lives there.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import olefile
import pytest

from stratpd_xl.excel import addin_file, config, install

ROOT = Path(__file__).resolve().parents[1]
MAC_SCRIPT = ROOT / "installer" / "install-macos.sh"
WIN_SCRIPT = ROOT / "installer" / "install-windows.ps1"
CONFIG_TOOL = ROOT / "stratpd_xl" / "excel" / "config.py"
WIN_PY = r"C:\Users\Ana Lyst\.stratpd-xl\venv\Scripts\python.exe"


# --- config text -----------------------------------------------------------------------------


def test_windows_config_text_is_what_the_vba_reads():
    text = config.addin_config_text(WIN_PY, platform="win32")
    assert text == (f'"Interpreter_Win","{WIN_PY}"\r\n"UDF Modules","stratpd_xl.excel.udfs"\r\n')


def test_macos_config_text_uses_interpreter_mac_and_lf():
    text = config.addin_config_text("/Users/ana/.stratpd-xl/venv/bin/python", platform="darwin")
    assert text.splitlines() == [
        '"Interpreter_Mac","/Users/ana/.stratpd-xl/venv/bin/python"',
        '"UDF Modules","stratpd_xl.excel.udfs"',
    ]
    assert "\r" not in text


def test_config_keeps_other_settings_replaces_ours_and_is_idempotent():
    existing = (
        '"Show Console","True"\r\n'
        '"INTERPRETER_WIN","C:\\old\\python.exe"\r\n'
        "\r\n"
        '"udf modules","old_module"\r\n'
        '"PYTHONPATH","C:\\code"\r\n'
    )
    text = config.addin_config_text(WIN_PY, platform="win32", existing=existing)
    assert text.splitlines() == [
        '"Show Console","True"',
        '"PYTHONPATH","C:\\code"',
        f'"Interpreter_Win","{WIN_PY}"',
        '"UDF Modules","stratpd_xl.excel.udfs"',
    ]
    assert config.addin_config_text(WIN_PY, platform="win32", existing=text) == text


def test_config_refuses_values_the_vba_cannot_read_and_other_platforms():
    with pytest.raises(ValueError, match="quotes"):
        config.addin_config_text('C:\\a"b\\python.exe', platform="win32")
    with pytest.raises(ValueError, match="Windows and macOS"):
        config.addin_config_text("/usr/bin/python3", platform="linux")


def test_config_path_follows_the_templates_project_name(tmp_path):
    assert config.ADDIN_PROJECT_NAME == addin_file.PROJECT_NAME == "stratpd_xl"
    assert config.config_path("win32", tmp_path) == tmp_path / ".stratpd_xl" / "stratpd_xl.conf"
    assert config.config_path("darwin", tmp_path) == (
        tmp_path / "Library/Containers/com.microsoft.Excel/Data/stratpd_xl.conf"
    )


def test_config_tool_runs_as_a_plain_script_and_writes_once(tmp_path):
    def run(*args: str) -> str:
        out = subprocess.run(
            [sys.executable, str(CONFIG_TOOL), "write", "--home", str(tmp_path), *args],
            capture_output=True,
            text=True,
            check=True,
            env={"PATH": os.environ["PATH"], "PYTHONDONTWRITEBYTECODE": "1"},
        )
        return out.stdout

    target = tmp_path / ".stratpd_xl" / "stratpd_xl.conf"
    assert run("--platform", "win32", "--interpreter", WIN_PY, "--dry-run").startswith(
        f"would write {target}"
    )
    assert not target.exists()
    assert run("--platform", "win32", "--interpreter", WIN_PY).startswith(f"wrote {target}")
    first = target.read_bytes()
    assert b'"UDF Modules","stratpd_xl.excel.udfs"\r\n' in first
    assert run("--platform", "win32", "--interpreter", WIN_PY).startswith("unchanged:")
    assert target.read_bytes() == first


def test_config_tool_rejects_a_relative_interpreter(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            str(CONFIG_TOOL),
            "write",
            "--platform",
            "darwin",
            "--interpreter",
            "venv/bin/python",
            "--home",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and "absolute path" in out.stderr


# --- the installer, in process ----------------------------------------------------------------

ADDIN = ROOT / "addin" / "stratpd_xl.xlam"


class Recorder:
    """Stands in for subprocess: records each command, answers the AppleScript question."""

    def __init__(self, fail: str | None = None) -> None:
        self.calls: list[list[str]] = []
        self.fail = fail

    def __call__(self, command):
        self.calls.append(list(command))
        if self.fail and self.fail in command:
            raise install.InstallError(f"{self.fail} failed")
        if command[1] == "-c" and "applescript" in command[2]:
            name = f"xlwings-{xlwings_version()}.applescript"
            return str(Path(sys.modules["xlwings"].__file__).parent / name) + "\n"
        return ""


def xlwings_version() -> str:
    import xlwings

    return xlwings.__version__


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("APPDATA", str(home / "AppData" / "Roaming"))
    return home


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def _installed_settings(path: Path) -> dict[str, str]:
    return addin_file.read_settings(addin_file.read_parts(path.read_bytes()))


def _win_venv(home: Path) -> Path:
    python = home / ".stratpd-xl" / "venv" / "Scripts" / "python.exe"
    python.parent.mkdir(parents=True)
    python.write_text("stand-in")
    return python


def test_windows_install_writes_the_addin_with_its_settings_and_runs_pip(home, capsys):
    python = _win_venv(home)
    runner = Recorder()
    code = install.main(["--platform", "win32"], runner=runner, excel_check=lambda p: False)
    assert code == 0, capsys.readouterr().err
    target = home / "AppData/Roaming/Microsoft/Excel/XLSTART/stratpd_xl.xlam"
    assert runner.calls == [
        [str(python), "-m", "pip", "install", "--quiet", "--upgrade", install.default_package()],
        [str(python), "-c", install.WARM_UP_CODE],
    ]
    settings = _installed_settings(target)
    assert settings["INTERPRETER_WIN"] == str(python)
    assert settings["ADD_WORKBOOK_TO_PYTHONPATH"] == "false"
    assert settings["UDF MODULES"] == "stratpd_xl.excel.udfs"
    # The VBA is the committed add-in's, formulas included, untouched: nothing is imported and
    # nothing needs "Trust access to the VBA project object model"; no user config file.
    with zipfile.ZipFile(target) as got, zipfile.ZipFile(ADDIN) as committed:
        vba = got.read("xl/vbaProject.bin")
        assert vba == committed.read("xl/vbaProject.bin")
    assert olefile.OleFileIO(vba).exists("VBA/xlwings_udfs")
    assert not (home / ".myaddin").exists() and not (home / ".stratpd_xl").exists()
    out = capsys.readouterr().out
    assert f"wrote {target}" in out and "==> 4/4 the add-in" in out
    assert "import-udfs" not in out and "Trust access" not in out
    assert "=STRATPD, =STRATIMPACT work" in out
    first = target.read_bytes()
    assert install.main(["--platform", "win32"], runner=runner, excel_check=lambda p: False) == 0
    assert target.read_bytes() == first, "a second run gives the same add-in"


def test_missing_venv_is_created_with_the_running_python(home):
    runner = Recorder()
    venv = home / "envs" / "sx"
    args = ["--platform", "win32", "--venv", str(venv), "--from-pypi"]
    assert install.main(args, runner=runner, excel_check=lambda p: False) == 0
    python = str(venv / "Scripts" / "python.exe")
    assert runner.calls == [
        [sys.executable, "-m", "venv", str(venv)],
        [python, "-m", "pip", "install", "--quiet", "--upgrade", "stratpd-xl"],
        [python, "-c", install.WARM_UP_CODE],
    ]


def test_dry_run_prints_every_step_and_changes_nothing(home, capsys):
    runner = Recorder()
    assert install.main(["--platform", "win32", "--dry-run"], runner=runner) == 0
    out = capsys.readouterr().out
    assert runner.calls == []
    assert _files(home) == []
    for step in ("1/4 Excel must be closed", "2/4 Python environment", "4/4 the add-in"):
        assert step in out
    assert "-m venv" in out and "pip install" in out and "would write" in out
    assert "ADD_WORKBOOK_TO_PYTHONPATH = false" in out


def test_engine_warm_up_runs_in_the_new_environment_and_its_failure_is_not_fatal(home, capsys):
    runner = Recorder(fail=install.WARM_UP_CODE)
    assert install.main(["--platform", "win32"], runner=runner, excel_check=lambda p: False) == 0
    out = capsys.readouterr().out
    assert "could not compile the engine ahead" in out and "Done." in out


def test_warm_up_code_fills_the_numba_cache_it_is_meant_to():
    # The installer's warm-up, run for real in a fresh process: it must leave compiled engine
    # kernels in numba's on-disk cache, which is what makes Excel's first formula fast.
    # STRATPD_XL_WARMUP=0 (other tests set it) must not switch the installer's warm-up off.
    # numba says (NUMBA_DEBUG_CACHE) each kernel it saved to the cache or loaded from it: a
    # warm-up that did not run, or compiled without caching, names none.  The suite's cache,
    # usually filled already: compiling into an empty one (13-16 s of CPU) is what
    # tests/test_cli.py's warm-up test does.
    cache = Path(os.environ["NUMBA_CACHE_DIR"])
    env = {**os.environ, "PYTHONPATH": str(ROOT), "STRATPD_XL_WARMUP": "0",
           "NUMBA_DEBUG_CACHE": "1"}
    env.pop("STRATPD_XL_BACKEND", None)
    done = subprocess.run([sys.executable, "-c", install.WARM_UP_CODE], env=env, check=True,
                          timeout=600, capture_output=True, text=True)
    cached = {Path(path) for path in re.findall(r"data (?:saved to|loaded from) '([^']+)'",
                                                done.stdout + done.stderr)}
    assert all(path.is_file() and path.is_relative_to(cache) for path in cached), cached
    kernels = {path.name.split("-")[0] for path in cached}
    assert {"_tree._grow_numba", "_tree._apply_numba", "_stratify._first_seen",
            "_numeric._counting_order"} <= kernels, "the warm-up left kernels out of the cache"


def test_import_formulas_is_an_opt_in_rescue_step(home, capsys):
    runner = Recorder()
    args = ["--platform", "win32", "--dry-run", "--import-formulas"]
    assert install.main(args, runner=runner) == 0
    out = capsys.readouterr().out
    assert "5/5 re-import =STRATPD, =STRATIMPACT (rescue)" in out
    assert "-m stratpd_xl.excel.config import-udfs" in out
    assert install.main(["--platform", "darwin", "--dry-run", "--import-formulas"]) == 0
    assert "skipped: cell formulas need Excel on Windows" in capsys.readouterr().out


def test_refuses_while_excel_runs_and_changes_nothing(home, capsys):
    runner = Recorder()
    assert install.main(["--platform", "win32"], runner=runner, excel_check=lambda p: True) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        "stratpd-xl install: Excel is running: quit Excel (it locks the add-in file), "
        "then run this again."
    )
    assert runner.calls == [] and _files(home) == []
    # A dry run says so and shows the rest.
    assert install.main(["--platform", "win32", "--dry-run"], excel_check=lambda p: True) == 0
    assert "(dry run: carrying on)" in capsys.readouterr().out


def test_unknown_excel_state_is_reported_not_guessed(home, capsys):
    _win_venv(home)
    assert install.main(["--platform", "win32"], runner=Recorder(), excel_check=lambda p: None) == 0
    assert "could not tell whether Excel is running" in capsys.readouterr().out


def test_a_locked_addin_file_gives_one_sentence_and_no_partial_file(home, capsys):
    _win_venv(home)
    target = home / "AppData/Roaming/Microsoft/Excel/XLSTART/stratpd_xl.xlam"
    target.mkdir(parents=True)  # os.replace onto it fails as a file Excel holds open would
    assert (
        install.main(["--platform", "win32"], runner=Recorder(), excel_check=lambda p: False) == 1
    )
    assert "quit Excel, run this again." in capsys.readouterr().err
    assert [p.name for p in target.parent.iterdir()] == ["stratpd_xl.xlam"]


def test_failing_pip_stops_before_the_addin_is_installed(home, capsys):
    _win_venv(home)
    code = install.main(
        ["--platform", "win32"], runner=Recorder(fail="pip"), excel_check=lambda p: False
    )
    assert code == 1 and "pip failed" in capsys.readouterr().err
    assert not (home / "AppData").exists()


def test_uninstall_removes_the_addin_and_refuses_while_excel_runs(home, capsys):
    _win_venv(home)
    assert (
        install.main(["--platform", "win32"], runner=Recorder(), excel_check=lambda p: False) == 0
    )
    target = home / "AppData/Roaming/Microsoft/Excel/XLSTART/stratpd_xl.xlam"
    assert install.main(["--platform", "win32", "--uninstall"], excel_check=lambda p: True) == 1
    assert target.is_file()
    assert install.main(["--platform", "win32", "--uninstall"], excel_check=lambda p: False) == 0
    assert not target.exists()
    out = capsys.readouterr().out
    assert f"removed {target}" in out and "is left; delete that folder" in out
    assert install.main(["--platform", "win32", "--uninstall"], excel_check=lambda p: False) == 0
    assert "nothing to remove" in capsys.readouterr().out


def test_mac_install_puts_the_addin_in_the_startup_folder_and_the_applescript(home):
    python = home / ".stratpd-xl" / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("stand-in")
    assert (
        install.main(["--platform", "darwin"], runner=Recorder(), excel_check=lambda p: False) == 0
    )
    startup = home / (
        "Library/Group Containers/UBF8T346G9.Office/User Content.localized/Startup.localized/Excel"
    )
    settings = _installed_settings(startup / "stratpd_xl.xlam")
    assert settings["INTERPRETER_MAC"] == str(python)
    assert settings["INTERPRETER_WIN"] == addin_file.DEFAULT_INTERPRETER["win32"]
    script = (
        home
        / f"Library/Application Scripts/com.microsoft.Excel/xlwings-{xlwings_version()}.applescript"
    )
    assert script.read_text().strip(), "the AppleScript helper was copied"


def test_linux_is_refused_with_a_pointer_to_the_cli(monkeypatch, capsys):
    monkeypatch.setattr(sys, "platform", "linux")
    with pytest.raises(SystemExit) as exc:
        install.main([], runner=Recorder())
    assert exc.value.code == 2 and "stratpd-xl command" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("platform", "stdout", "returncode", "expected"),
    [
        ("win32", b"EXCEL.EXE                    4242 Console    1    250,000 K\r\n", 0, True),
        ("win32", b"INFO: No tasks are running which match the specified criteria.\r\n", 0, False),
        # Not UTF-8: a Japanese console (cp932) and a German one (cp850, "\x81" = u-umlaut).
        ("win32", "EXCEL.EXE  4242 コンソール  1  250,000 K\r\n".encode("cp932"), 0, True),
        ("win32", "INFORMATION: Es werden keine Tasks ausgef\u00fchrt.\r\n".encode("cp850"), 0,
         False),
        ("win32", b"\xff\xfe\x00garbage", 1, None),  # tasklist's own error: unknown
        ("darwin", b"", 0, True),
        ("darwin", b"", 1, False),
        ("darwin", b"", 3, None),  # pgrep's own error
    ],
)
def test_excel_check_reads_tasklist_and_pgrep(monkeypatch, platform, stdout, returncode, expected):
    seen = []

    def fake_run(command, **kwargs):
        seen.append((command, kwargs))
        return subprocess.CompletedProcess(command, returncode, stdout, b"")

    monkeypatch.setattr(install.subprocess, "run", fake_run)
    assert install.excel_is_running(platform) is expected
    command, kwargs = seen[0]
    assert command[0] == ("tasklist" if platform == "win32" else "pgrep")
    assert not kwargs.get("text") and "encoding" not in kwargs  # bytes: nothing to decode
    assert kwargs.get("timeout")


@pytest.mark.parametrize(
    "failure",
    [FileNotFoundError("tasklist"), subprocess.TimeoutExpired("tasklist", 30),
     PermissionError("tasklist")],
)
def test_excel_check_that_fails_is_unknown(monkeypatch, failure):
    def broken(command, **kwargs):
        raise failure

    monkeypatch.setattr(install.subprocess, "run", broken)
    assert install.excel_is_running("win32") is None


def _fake_tool(folder: Path, name: str, output: bytes, code: int) -> None:
    folder.mkdir(exist_ok=True)
    (folder / "out.bin").write_bytes(output)
    tool = folder / name
    tool.write_text(f"#!/bin/sh\ncat '{folder / 'out.bin'}'\nexit {code}\n")
    tool.chmod(0o755)


def test_a_real_tasklist_in_another_code_page_is_read(tmp_path, monkeypatch):
    # A real program on PATH, as on Windows; its cp932 bytes are not UTF-8.
    bin_dir = tmp_path / "bin"
    _fake_tool(bin_dir, "tasklist", "EXCEL.EXE  4242 コンソール\r\n".encode("cp932"), 0)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert install.excel_is_running("win32") is True
    _fake_tool(bin_dir, "tasklist", b"\x83\x5c\x81 ERROR\r\n", 1)
    assert install.excel_is_running("win32") is None


def test_an_excel_check_that_crashes_is_a_sentence_not_a_traceback(home, capsys):
    def crashing(platform):
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    _win_venv(home)
    assert install.main(["--platform", "win32"], runner=Recorder(), excel_check=crashing) == 0
    out = capsys.readouterr().out
    assert "could not tell whether Excel is running; if it is, quit it first" in out
    assert "Traceback" not in out


# --- 32-bit Python, wheel files, the package index -----------------------------------------------


@pytest.mark.parametrize("platform", ["win32", "darwin"])
def test_a_32_bit_python_is_refused_before_anything_is_done(home, capsys, platform):
    runner = Recorder()
    checked = []
    code = install.main(
        ["--platform", platform], runner=runner, excel_check=checked.append, pointer_bits=32
    )
    err = capsys.readouterr().err
    assert code == 1
    assert "32-bit" in err and "install the 64-bit Python 3.11 or newer from python.org" in err
    assert err.count("\n") == 1  # one sentence
    assert runner.calls == [] and checked == []  # no venv, no pip, not even the Excel check
    assert _files(home) == []


def test_a_64_bit_python_passes_the_check():
    assert install.python_bits_problem(64) is None
    assert install.POINTER_BITS in (32, 64)


def test_a_wheel_file_or_url_is_what_pip_installs(home):
    _win_venv(home)
    for package in ("C:\\dl\\stratpd_xl-0.1.0-py3-none-any.whl",
                    "https://example.org/stratpd_xl-0.1.0-py3-none-any.whl"):
        runner = Recorder()
        args = ["--platform", "win32", "--package", package]
        assert install.main(args, runner=runner, excel_check=lambda p: False) == 0
        pip = [c for c in runner.calls if "pip" in c]
        assert pip and pip[0][-1] == package


class _NotOnIndex(Recorder):
    def __call__(self, command):
        if "pip" in command:
            self.calls.append(list(command))
            raise install.InstallError(
                "python -m pip install stratpd-xl failed (1): ERROR: No matching distribution "
                "found for stratpd-xl"
            )
        return super().__call__(command)


def test_from_pypi_before_publication_says_what_to_do_instead(home, capsys):
    _win_venv(home)
    args = ["--platform", "win32", "--from-pypi"]
    assert install.main(args, runner=_NotOnIndex(), excel_check=lambda p: False) == 1
    err = capsys.readouterr().err
    assert "not on the package index yet" in err and "--package" in err
    assert not (home / "AppData").exists()


# --- the launchers -----------------------------------------------------------------------------


def _run_mac(home: Path, *args: str, **env_extra: str) -> subprocess.CompletedProcess:
    # numba's cache is the suite's (tests/conftest.py): without it the installer's warm-up
    # compiled the engine afresh into __pycache__ beside the checkout's modules.
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1",
           "NUMBA_CACHE_DIR": os.environ["NUMBA_CACHE_DIR"], **env_extra}
    return subprocess.run(["bash", str(MAC_SCRIPT), *args], capture_output=True, text=True, env=env)


def test_macos_launcher_runs_the_python_installer_end_to_end(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    out = _run_mac(home, "--use-current", "--platform", "darwin", STRATPD_XL_PYTHON=sys.executable)
    assert out.returncode == 0, out.stderr
    startup = home / (
        "Library/Group Containers/UBF8T346G9.Office/User Content.localized/Startup.localized/Excel"
    )
    assert _installed_settings(startup / "stratpd_xl.xlam")["INTERPRETER_MAC"] == sys.executable
    assert "Excel is not running" in out.stdout  # the real pgrep check ran
    removed = _run_mac(
        home,
        "--uninstall",
        "--use-current",
        "--platform",
        "darwin",
        STRATPD_XL_PYTHON=sys.executable,
    )
    assert removed.returncode == 0 and not (startup / "stratpd_xl.xlam").exists()


def test_macos_launcher_refuses_an_old_python(tmp_path):
    old_python = tmp_path / "python3.9"
    old_python.write_text("#!/bin/sh\nexit 1\n")  # fails the version check like Python 3.9
    old_python.chmod(0o755)
    out = _run_mac(tmp_path, "--dry-run", STRATPD_XL_PYTHON=str(old_python))
    assert out.returncode == 1 and "not Python 3.11 or newer" in out.stderr


def test_macos_launcher_is_valid_bash_and_passes_options_through(tmp_path):
    assert subprocess.run(["bash", "-n", str(MAC_SCRIPT)]).returncode == 0
    out = _run_mac(tmp_path, "--frobnicate", STRATPD_XL_PYTHON=sys.executable)
    assert out.returncode == 2 and "unrecognized arguments: --frobnicate" in out.stderr


def test_windows_launcher_only_finds_python_and_calls_the_module():
    text = WIN_SCRIPT.read_text()
    body = text.split("#>", 1)[1]  # after the help block
    code = "\n".join(line for line in body.splitlines() if not line.lstrip().startswith("#"))
    assert "& $Exe @Pre -m stratpd_xl.excel.install @args" in code
    assert "exit $LASTEXITCODE" in code
    # The bug this replaced: indexing an array PowerShell may have unrolled to a string.
    assert not re.search(r"\$\w+\[\d\]", code)
    assert "[string]$Exe" in code and "[string[]]$Pre" in code
    for step_word in ("pip", "xlwings", "XLSTART", "config"):
        assert step_word not in code, f"{step_word}: installer logic belongs in Python"


def _powershell_syntax_errors(text: str) -> list[str]:
    """Where tree-sitter's PowerShell grammar finds an error or a missing token in ``text``.

    PowerShell itself is not among Debian's packages; running the script in Windows
    PowerShell 5.1 and PowerShell 7 is on the README's list of checks by hand.
    """
    import tree_sitter
    import tree_sitter_powershell

    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_powershell.language()))
    found, todo = [], [parser.parse(text.encode("utf-8")).root_node]
    while todo:
        node = todo.pop()
        if node.is_error or node.is_missing:
            found.append(f"line {node.start_point[0] + 1}: {'missing ' * node.is_missing}"
                         f"{node.type}")
        todo.extend(node.children)
    return found


def test_windows_launcher_parses_as_powershell():
    text = WIN_SCRIPT.read_text(encoding="utf-8")
    assert _powershell_syntax_errors(text) == []
    # The check sees the mistakes an edit makes: a brace, a bracket or a comment left open.
    assert _powershell_syntax_errors(text.replace("    exit 1\n}\n\n&", "    exit 1\n\n&", 1))
    assert _powershell_syntax_errors(text.replace("-ne 0)", "-ne 0", 1))
    assert _powershell_syntax_errors(text.replace("$Pre = @()", "$Pre = @(", 1))
    assert _powershell_syntax_errors(text.replace("#>", "", 1))


def test_a_microsoft_store_python_is_refused_before_anything_is_written(home, capsys,
                                                                       monkeypatch):
    # Windows redirects a Store app's writes under AppData to a private copy: the add-in
    # would land where Excel never looks.
    store = (r"C:\Program Files\WindowsApps"
             r"\PythonSoftwareFoundation.Python.3.12_3.12.2800.0_x64__qbz5n2kfra8p0")
    monkeypatch.setattr(install, "BASE_PREFIX", store)
    runner = Recorder()
    assert install.main(["--platform", "win32"], runner=runner,
                        excel_check=lambda p: False) == 1
    err = capsys.readouterr().err
    assert "Microsoft Store's Python" in err and "python.org" in err
    assert runner.calls == [] and _files(home) == []
    # A python.org Python, and the Store's on a Mac (no such thing), go ahead.
    assert install.store_python_problem(r"C:\Users\me\AppData\Local\Programs\Python\Python312",
                                        "win32") is None
    assert install.store_python_problem(store, "darwin") is None


def test_a_non_ascii_home_reaches_the_addins_settings_intact(tmp_path, monkeypatch, capsys):
    home = tmp_path / "Zoë Müller 山田"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("APPDATA", str(home / "AppData" / "Roaming"))
    python = _win_venv(home)
    runner = Recorder()
    assert install.main(["--platform", "win32"], runner=runner,
                        excel_check=lambda p: False) == 0, capsys.readouterr().err
    target = home / "AppData/Roaming/Microsoft/Excel/XLSTART/stratpd_xl.xlam"
    assert _installed_settings(target)["INTERPRETER_WIN"] == str(python)
    assert runner.calls[0][0] == str(python)


def _conda(root: Path, name: str | None) -> Path:
    """A conda installation's folders: conda's own (with ``condabin``) and, when ``name`` is
    given, an environment in its ``envs`` folder."""
    (root / "condabin").mkdir(parents=True)
    (root / "conda-meta").mkdir()
    if name is None:
        return root
    env = root / "envs" / name
    (env / "conda-meta").mkdir(parents=True)
    return env


@pytest.mark.parametrize("platform", ["win32", "darwin"])
def test_a_conda_environment_is_used_as_the_venv_and_activated_by_the_addin(
        home, capsys, monkeypatch, platform):
    env = _conda(home / "miniconda3", "analysis")
    monkeypatch.setattr(install, "PREFIX", str(env))
    runner = Recorder()
    assert install.main(["--platform", platform], runner=runner,
                        excel_check=lambda p: False) == 0, capsys.readouterr().err
    python = str(env / "python.exe") if platform == "win32" else str(env / "bin" / "python")
    # No venv made from conda's Python (on Windows it cannot load conda's libraries).
    assert runner.calls[0] == [python, "-m", "pip", "install", "--quiet", "--upgrade",
                               install.default_package()]
    assert [c for c in runner.calls if "venv" in c] == []
    target = (home / "AppData/Roaming/Microsoft/Excel/XLSTART/stratpd_xl.xlam"
              if platform == "win32" else install.startup_folder("darwin", home)
              / "stratpd_xl.xlam")
    settings = _installed_settings(target)
    key = "INTERPRETER_WIN" if platform == "win32" else "INTERPRETER_MAC"
    assert settings[key] == python
    assert (settings["CONDA PATH"], settings["CONDA ENV"]) == (str(home / "miniconda3"),
                                                               "analysis")
    assert "using the conda environment" in capsys.readouterr().out
    # An environment outside conda's envs folder is activated by its path.
    assert install.conda_activation(home / "elsewhere") == ("", str(home / "elsewhere"))


def test_condas_base_environment_is_refused_with_what_to_do(home, capsys, monkeypatch):
    monkeypatch.setattr(install, "PREFIX", str(_conda(home / "anaconda3", None)))
    runner = Recorder()
    assert install.main(["--platform", "win32"], runner=runner,
                        excel_check=lambda p: False) == 1
    err = capsys.readouterr().err
    assert "conda's base environment" in err and "conda create -n stratpd-xl" in err
    assert runner.calls == [] and not (home / "AppData").exists()
    # An explicit --venv is taken as asked.
    assert install.main(["--platform", "win32", "--venv", str(home / "v")], runner=runner,
                        excel_check=lambda p: False) == 0


def test_the_launchers_prefer_an_activated_conda_environment(tmp_path):
    text = WIN_SCRIPT.read_text(encoding="utf-8")
    assert text.index("$env:CONDA_PREFIX") < text.index("Get-Command py")
    assert _powershell_syntax_errors(text) == []
    env = tmp_path / "conda-env"
    (env / "bin").mkdir(parents=True)
    marker = tmp_path / "ran"
    python = env / "bin" / "python"
    python.write_text(f'#!/bin/sh\necho "$@" >> "{marker}"\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    out = _run_mac(tmp_path, "--help", CONDA_PREFIX=str(env))
    assert out.returncode == 0 and "conda environment" in out.stdout, out.stderr
    assert "stratpd_xl.excel.install --help" in marker.read_text()
