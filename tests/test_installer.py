"""Installers on Linux: the config text both installers write, and the macOS script end to end.

The macOS script runs for real against a stand-in virtual environment whose ``python`` and
``xlwings`` log their arguments (so nothing is installed and no Excel is needed); the config step
inside it is the real ``stratpd_xl/excel/config.py``.  The PowerShell script cannot run here
(no PowerShell); it is checked to call the same config tool and the same xlwings command.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # oletools vs. newer pyparsing
    from oletools.olevba import VBA_Parser

from stratpd_xl.excel import config

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
    assert config.ADDIN_PROJECT_NAME == "myaddin"
    assert config.config_path("win32", tmp_path) == tmp_path / ".myaddin" / "myaddin.conf"
    assert config.config_path("darwin", tmp_path) == (
        tmp_path / "Library/Containers/com.microsoft.Excel/Data/myaddin.conf"
    )


def test_project_name_matches_the_addins_vba():
    # The file name only holds if the add-in's VBA still says PROJECT_NAME = "myaddin".
    with zipfile.ZipFile(ROOT / "addin" / "stratpd_xl.xlam") as z:
        parser = VBA_Parser("vbaProject.bin", data=z.read("xl/vbaProject.bin"))
    code = "\n".join(c for _, _, _, c in parser.extract_macros())
    parser.close()
    match = re.search(r'PROJECT_NAME\s+As\s+String\s*=\s*"([^"]+)"', code)
    assert match and match.group(1) == config.ADDIN_PROJECT_NAME
    assert re.search(r'Environ\("USERPROFILE"\) & "\\\." & PROJECT_NAME & "\\"', code)


def test_config_tool_runs_as_a_plain_script_and_writes_once(tmp_path):
    def run(*args: str) -> str:
        out = subprocess.run(
            [sys.executable, str(CONFIG_TOOL), "write", "--home", str(tmp_path), *args],
            capture_output=True,
            text=True,
            check=True,
            env={"PATH": os.environ["PATH"]},
        )
        return out.stdout

    target = tmp_path / ".myaddin" / "myaddin.conf"
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


# --- macOS shell script ----------------------------------------------------------------------


def _fake_venv(venv: Path, log: Path) -> None:
    """A venv whose python logs pip calls and runs real Python for the config tool."""
    bin_dir = venv / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text(
        "#!/bin/sh\n"
        f'echo "python $*" >> "{log}"\n'
        'if [ "$1" = "-m" ]; then exit 0; fi\n'
        f'exec "{sys.executable}" "$@"\n'
    )
    (bin_dir / "xlwings").write_text(
        "#!/bin/sh\n"
        f'echo "xlwings $*" >> "{log}"\n'
        'if [ "$2" = "status" ]; then echo "${XLWINGS_STATUS:-The add-in is installed at /x}"; fi\n'
    )
    for exe in bin_dir.iterdir():
        exe.chmod(0o755)


def _run_mac(home: Path, *args: str, **env_extra: str) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ["PATH"], "HOME": str(home), **env_extra}
    return subprocess.run(["bash", str(MAC_SCRIPT), *args], capture_output=True, text=True, env=env)


def test_macos_script_is_valid_bash():
    assert subprocess.run(["bash", "-n", str(MAC_SCRIPT)]).returncode == 0


def test_macos_dry_run_prints_every_step_and_changes_nothing(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    out = _run_mac(home, "--dry-run", "--python", sys.executable)
    assert out.returncode == 0, out.stderr
    venv_py = home / ".stratpd-xl/venv/bin/python"
    assert f"-m venv {home}/.stratpd-xl/venv" in out.stdout
    assert f"{venv_py} -m pip install --quiet --upgrade {ROOT}" in out.stdout
    assert f"xlwings addin install -f {ROOT}/addin/stratpd_xl.xlam" in out.stdout
    assert f'"Interpreter_Mac","{venv_py}"' in out.stdout
    assert '"UDF Modules","stratpd_xl.excel.udfs"' in out.stdout
    assert list(home.iterdir()) == [], "a dry run must not create anything"


def test_macos_install_runs_each_step_and_is_idempotent(tmp_path):
    home, venv, log = tmp_path / "home", tmp_path / "venv", tmp_path / "calls.log"
    _fake_venv(venv, log)
    conf = home / "Library/Containers/com.microsoft.Excel/Data/myaddin.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text('"Show Console","True"\n')

    first = _run_mac(home, "--venv", str(venv))
    assert first.returncode == 0, first.stderr
    assert "exists, reused" in first.stdout
    calls = log.read_text().splitlines()
    assert f"python -m pip install --quiet --upgrade {ROOT}" in calls
    assert f"xlwings addin install -f {ROOT}/addin/stratpd_xl.xlam" in calls
    assert f"xlwings addin status -f {ROOT}/addin/stratpd_xl.xlam" in calls
    assert "The add-in is installed at /x" in first.stdout
    assert conf.read_text().splitlines() == [
        '"Show Console","True"',
        f'"Interpreter_Mac","{venv}/bin/python"',
        '"UDF Modules","stratpd_xl.excel.udfs"',
    ]
    written = conf.read_bytes()

    second = _run_mac(home, "--venv", str(venv), "--from-pypi")
    assert second.returncode == 0, second.stderr
    assert f"unchanged: {conf}" in second.stdout
    assert conf.read_bytes() == written
    assert "python -m pip install --quiet --upgrade stratpd-xl" in log.read_text()


def test_macos_install_stops_when_xlwings_could_not_install_the_addin(tmp_path):
    home, venv, log = tmp_path / "home", tmp_path / "venv", tmp_path / "calls.log"
    home.mkdir()
    _fake_venv(venv, log)
    out = _run_mac(home, "--venv", str(venv), XLWINGS_STATUS="The add-in is not installed.")
    assert out.returncode == 1 and "the add-in was not installed" in out.stderr
    assert list(home.iterdir()) == [], "no config is written for an add-in that is not there"


def test_macos_script_refuses_an_old_python(tmp_path):
    old_python = tmp_path / "python3.9"
    old_python.write_text("#!/bin/sh\nexit 1\n")  # fails the version check like Python 3.9
    old_python.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    out = _run_mac(home, "--python", str(old_python))
    assert out.returncode == 1 and "not Python 3.11 or newer" in out.stderr
    assert list(home.iterdir()) == []


def test_macos_script_rejects_unknown_options(tmp_path):
    out = _run_mac(tmp_path, "--frobnicate")
    assert out.returncode == 2 and "unknown option" in out.stderr


# --- Windows PowerShell script (static: no PowerShell on Linux) -------------------------------


def test_windows_script_uses_the_same_config_tool_and_xlwings_command():
    text = WIN_SCRIPT.read_text()
    assert '"stratpd_xl\\excel\\config.py"' in text
    assert '@($ConfigTool, "write", "--platform", "win32", "--interpreter", $VenvPy)' in text
    assert '@("addin", "install", "-f", $Addin)' in text
    assert "& $Xlwings addin status -f $Addin" in text
    assert '"addin\\stratpd_xl.xlam"' in text
    assert '"Scripts\\python.exe"' in text
    assert "-m stratpd_xl.excel.config import-udfs" in text
    # Every step is announced, and a dry run only prints.
    assert len(re.findall(r'^Step "\d/5 ', text, re.M)) == 5
    assert "if (-not $DryRun)" in text


@pytest.mark.skipif(shutil.which("pwsh") is None, reason="PowerShell (pwsh) is not installed")
def test_windows_script_parses_in_powershell():
    cmd = (
        "$e=$null; [System.Management.Automation.Language.Parser]::ParseFile("
        f"'{WIN_SCRIPT}', [ref]$null, [ref]$e) | Out-Null; exit $e.Count"
    )
    assert subprocess.run(["pwsh", "-NoProfile", "-Command", cmd]).returncode == 0
