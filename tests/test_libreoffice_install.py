"""``stratpd-xl libreoffice install`` / ``uninstall`` as a user types them, with real unopkg.

unopkg refuses per-user installs as root, and CI runs as root: there the commands' unopkg
(``STRATPD_XL_UNOPKG``, as a user may set it) runs the real one as the user "nobody" with a
home it can write (``tests.office.unopkg_for_tests``); everything else is the command's own
path.  ``--shared`` would change the machine's LibreOffice for every user (and for every test
running beside this one), so its test only records what unopkg is asked.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from stratpd_xl.cli import main
from stratpd_xl.libreoffice import extension
from tests.office import (
    folder_for_calc,
    profile_for_unopkg,
    require_calc_tools,
    unopkg_for_tests,
)


def _listed(unopkg: Path, profile: Path) -> str:
    done = subprocess.run([str(unopkg), "list", f"-env:UserInstallation={profile.as_uri()}"],
                          capture_output=True, text=True, timeout=300,
                          env=extension.office_environment())
    return done.stdout + done.stderr


def test_install_then_uninstall_from_the_command_line(monkeypatch, capsys, tmp_path):
    require_calc_tools()
    hook = tmp_path / extension.UNO_HOOK  # this venv's .pth, kept out of the shared venv
    monkeypatch.setattr(extension, "_uno_hook_path", lambda: hook)
    with folder_for_calc("stratpd-install-") as base:
        unopkg = unopkg_for_tests(base, extension.find_unopkg())
        monkeypatch.setenv("STRATPD_XL_UNOPKG", str(unopkg))
        profile = profile_for_unopkg(base / "profile")

        assert main(["libreoffice", "install", "--profile", str(profile)]) == 0
        assert "installed the StratPD extension" in capsys.readouterr().out
        assert extension.EXTENSION_ID in _listed(unopkg, profile)
        assert hook.exists() == (extension._system_uno_folder() is not None)

        assert main(["libreoffice", "uninstall", "--profile", str(profile)]) == 0
        assert "removed the StratPD extension" in capsys.readouterr().out
        assert extension.EXTENSION_ID not in _listed(unopkg, profile)
        assert not hook.exists()
        # Removing what is not there says so in one sentence.
        assert main(["libreoffice", "uninstall", "--profile", str(profile)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("stratpd-xl: unopkg failed") and "\n" not in err


@pytest.mark.parametrize("action", ["install", "uninstall"])
def test_shared_asks_unopkg_for_every_user(monkeypatch, tmp_path, action):
    log = tmp_path / "asked"
    unopkg = tmp_path / "unopkg"
    unopkg.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {log}\n')
    unopkg.chmod(0o755)
    monkeypatch.setenv("STRATPD_XL_UNOPKG", str(unopkg))
    monkeypatch.setattr(extension, "_uno_hook_path", lambda: tmp_path / extension.UNO_HOOK)
    assert main(["libreoffice", action, "--shared"]) == 0
    asked = log.read_text().splitlines()
    verb = "add" if action == "install" else "remove"
    assert asked[:2] == [verb, "--shared"]
    assert not any(a.startswith("-env:UserInstallation") for a in asked)
    assert main(["libreoffice", action]) == 0  # without it: the user's own profile
    assert "--shared" not in log.read_text().splitlines()


def test_a_crashed_unopkg_is_run_once_more_and_a_refusal_is_not(monkeypatch, tmp_path):
    # unopkg crashes now and then at start-up (exit 139 beside another LibreOffice); a second
    # run works.  A refusal (exit 1) is the user's to read, not to repeat.
    runs = tmp_path / "runs"
    unopkg = tmp_path / "unopkg"
    unopkg.write_text(f'#!/bin/sh\necho run >> {runs}\n'
                      f'[ "$(wc -l < {runs})" -ge 2 ] || kill -SEGV $$\n')
    unopkg.chmod(0o755)
    monkeypatch.setenv("STRATPD_XL_UNOPKG", str(unopkg))
    monkeypatch.setattr(extension, "_uno_hook_path", lambda: tmp_path / extension.UNO_HOOK)
    assert main(["libreoffice", "install", "--profile", str(tmp_path / "profile")]) == 0
    assert runs.read_text().count("run") == 2
    unopkg.write_text(f'#!/bin/sh\necho run >> {runs}\necho "no such extension" >&2\n'
                      "exit 1\n")
    runs.unlink()
    assert main(["libreoffice", "uninstall", "--profile", str(tmp_path / "profile")]) == 2
    assert runs.read_text().count("run") == 1
    assert extension.unopkg_crashed(139) and extension.unopkg_crashed(-11)
    assert not extension.unopkg_crashed(1) and not extension.unopkg_crashed(0)
