"""The Calc extension's worker and its client, with real processes (no LibreOffice needed).

The client (:mod:`stratpd_xl.libreoffice.calc_client`) is what runs inside LibreOffice's Python;
here it starts the real worker from this environment, and small shell scripts stand in for a
broken environment: one that dies, one that hangs, one that answers garbage.  Every failure
must come back as one sentence within its time-out, and the next call must start afresh.
"""

from __future__ import annotations

import io
import json
import os
import sys
import time
from pathlib import Path

import pytest

from stratpd_xl import spreadsheet
from stratpd_xl.libreoffice import calc_client, worker
from stratpd_xl.libreoffice.calc_client import Worker, WorkerError
from stratpd_xl.libreoffice.report import cells_for_calc
from tests.test_calc_extension import DATA

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="shell scripts as interpreters")


def fake_python(tmp_path: Path, body: str) -> str:
    """An executable that stands in for the environment's interpreter."""
    path = tmp_path / "python"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


HELLO = json.dumps({"hello": "stratpd-xl", "protocol": calc_client.PROTOCOL, "version": "x"})


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    w = Worker(sys.executable, folder=str(tmp_path_factory.mktemp("cache")))
    yield w
    w.stop()


def test_worker_answers_with_the_formulas_cells(real):
    got = real.call("STRATIMPACT", data=DATA, target="price")
    assert got == cells_for_calc(spreadsheet.stratimpact(DATA, "price"))
    curve = real.call("STRATPD", data=DATA, target="price", col="cut", trials=3)
    assert curve == cells_for_calc(spreadsheet.stratpd(DATA, "price", "cut", trials=3).cells)


def test_a_range_of_names_to_exclude_travels_packed_like_the_data(real):
    # Calc hands a range as rows; the extension packs every range argument the same way.
    names = (("x",), ("y",), ("",))
    got = real.call("STRATIMPACT", data=DATA, target="price",
                    exclude=calc_client.pack_block(names))
    assert got == cells_for_calc(spreadsheet.stratimpact(DATA, "price", exclude=names))
    assert "x" not in [row[0] for row in got] and "z" in [row[0] for row in got]
    plan = real.call("REPORT", values=calc_client.pack_block(DATA), target="price",
                     exclude=["x", "y"])
    assert any(str(cell).startswith('note: left out "x" and "y" as asked (exclude)')
               for block in plan["blocks"] for row in block["cells"] for cell in row)


def test_worker_stays_warm_between_calls(real):
    real.call("PING")
    pid = real._proc.pid
    started = time.perf_counter()
    real.call("STRATIMPACT", data=DATA, target="price")  # cached in the worker by now
    assert real._proc.pid == pid
    assert time.perf_counter() - started < 5


def test_a_killed_worker_is_started_again(real):
    real.call("PING")
    old = real._proc
    old.kill()
    old.wait(timeout=10)
    assert real.call("PING") == "pong"
    assert real._proc is not old


def test_errors_are_one_cell_sentences_from_the_worker(real):
    got = real.call("STRATPD", data=DATA, target="nope", col="carat")
    assert got == [[spreadsheet.stratpd(DATA, "nope", "carat").cells[0][0]]]


def test_missing_interpreter_is_one_sentence(tmp_path):
    w = Worker(str(tmp_path / "gone" / "python"), log_path=str(tmp_path / "log"))
    with pytest.raises(WorkerError, match=r"is not there; run `stratpd-xl libreoffice install`"):
        w.call("PING")


def test_environment_without_stratpd_xl_says_what_python_said(tmp_path):
    python = fake_python(tmp_path, "echo \"No module named 'stratpd_xl'\" >&2; exit 1")
    w = Worker(python, log_path=str(tmp_path / "log"), start_timeout=30)
    with pytest.raises(WorkerError) as caught:
        w.call("PING")
    text = str(caught.value)
    assert "worker stopped (exit code 1: No module named 'stratpd_xl')" in text
    assert text.endswith(calc_client.REINSTALL) and "\n" not in text
    # A new worker would die the same way: the extension does not start one by itself.
    assert not caught.value.restartable


def test_a_hanging_start_times_out_and_the_next_call_tries_again(tmp_path):
    starts = tmp_path / "starts"
    python = fake_python(tmp_path, f"echo start >> {starts}; exec sleep 60")
    w = Worker(python, log_path=str(tmp_path / "log"), start_timeout=1)
    for attempt in (1, 2):
        began = time.perf_counter()
        with pytest.raises(WorkerError, match="longer than 1 s to start"):
            w.call("PING")
        assert time.perf_counter() - began < 10
        assert starts.read_text().count("start") == attempt
    assert w._proc is None  # stopped, not left running


def test_a_hanging_answer_times_out(tmp_path):
    python = fake_python(tmp_path, f"echo '{HELLO}'; exec sleep 60")
    w = Worker(python, log_path=str(tmp_path / "log"), call_timeout=1)
    with pytest.raises(WorkerError, match="longer than 1 s to answer"):
        w.call("STRATIMPACT", data=[[1.0]], target="y")
    assert w._proc is None


@pytest.mark.parametrize(("body", "words"), [
    ("echo 'Traceback (most recent call last):'; exec sleep 60", "answered garbage"),
    ("echo '{\"hello\": \"stratpd-xl\", \"protocol\": 99}'; exec sleep 60", "does not match"),
])
def test_garbage_or_another_version_is_one_sentence(tmp_path, body, words):
    w = Worker(fake_python(tmp_path, body), log_path=str(tmp_path / "log"), start_timeout=20)
    with pytest.raises(WorkerError, match=words):
        w.call("PING")
    assert w._proc is None


def test_serve_answers_line_by_line_and_never_with_a_traceback():
    requests = b"\n".join([
        json.dumps({"id": 1, "op": "PING", "args": {}}).encode(),
        b"not json",
        json.dumps({"id": 2, "op": "DELETE", "args": {}}).encode(),
        json.dumps({"id": 3, "op": "REPORT", "args": {"values": [["a", "b"], [1.0, 2.0]]}})
        .encode(),
    ]) + b"\n"
    out = io.BytesIO()
    worker.serve(io.BytesIO(requests), out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert answers[0]["protocol"] == calc_client.PROTOCOL
    assert answers[1] == {"id": 1, "result": "pong"}
    assert "error" in answers[2] and "error" in answers[3]
    assert answers[4]["id"] == 3 and "\n" not in answers[4]["error"]
    assert "Traceback" not in out.getvalue().decode()


def test_config_is_read_or_empty(tmp_path):
    (tmp_path / "c.json").write_text(json.dumps({"python": "/x"}))
    assert calc_client.load_config(str(tmp_path / "c.json")) == {"python": "/x"}
    (tmp_path / "bad.json").write_text("[1")
    assert calc_client.load_config(str(tmp_path / "bad.json")) == {}
    assert calc_client.load_config(str(tmp_path / "none.json")) == {}


def test_the_client_uses_the_standard_library_only():
    # It runs in LibreOffice's Python, which has neither numpy nor stratpd-xl.
    import ast

    source = Path(calc_client.__file__).read_text(encoding="utf-8")
    imported = {
        (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert {name.split(".")[0] for name in imported} <= set(sys.stdlib_module_names) | {
        "__future__"}
    assert os.path.basename(calc_client.__file__) == "calc_client.py"


@pytest.mark.parametrize("rows", [
    DATA[:50],  # numbers and text columns
    [["a", "b"], [1.0, None], [2.5, "x"], [None, 3.0]],  # blanks: the column goes as cells
    [["a", "b"], [1.0, 2.0]],
    [["only a header"]],  # too short to pack
    [["a", "b"], [1.0]],  # not a rectangle
])
def test_packed_blocks_unpack_to_the_same_rows(rows):
    wire = json.loads(json.dumps(calc_client.pack_block(tuple(map(tuple, rows)))))
    got = worker.unpack_block(wire)
    assert [list(r) for r in got] == [list(r) for r in rows]
    assert all(type(a) is type(b) for r, s in zip(got, rows, strict=True)
               for a, b in zip(r, s, strict=True))


def test_numbers_travel_as_doubles_not_digits():
    packed = calc_client.pack_block(tuple(map(tuple, DATA)))
    kinds = {c["head"]: "doubles" in c for c in packed["columns"]}
    assert kinds["carat"] and kinds["price"] and not kinds["cut"]


def _old_python() -> str | None:
    """A Python 3.8-3.10 (LibreOffice bundles such): ``STRATPD_XL_OLD_PYTHON``, on PATH, or
    under pyenv."""
    import glob
    import shutil
    import subprocess

    candidates = [os.environ.get("STRATPD_XL_OLD_PYTHON")]
    candidates += [shutil.which(f"python3.{minor}") for minor in (8, 9, 10)]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.[89]*/bin/python3")))
    for exe in filter(None, candidates):
        ok = subprocess.run([exe, "-c", "import sys; print(sys.version_info[1])"],
                            capture_output=True, text=True, timeout=60)
        if ok.returncode == 0 and ok.stdout.strip().isdigit() and int(ok.stdout) < 11:
            return exe
    return None


def test_the_extension_code_runs_in_an_older_python(tmp_path):
    import subprocess

    old = _old_python()
    if old is None:
        pytest.skip("no Python 3.8-3.10 here to stand in for LibreOffice's bundled one")
    here = Path(calc_client.__file__).parent
    # The component imports uno; compiling it is what an older Python can check here.
    for source in (here / "calc_client.py", here / "calc_component.py"):
        compiled = subprocess.run([old, "-m", "py_compile", str(source)], capture_output=True,
                                  text=True, timeout=60, cwd=tmp_path)
        assert compiled.returncode == 0, compiled.stderr
    script = tmp_path / "call.py"
    script.write_text(
        "import json, sys\n"
        f"sys.path.insert(0, {str(here)!r})\n"
        "import calc_client\n"
        "rows = tuple(map(tuple, json.loads(sys.argv[2])))\n"
        "w = calc_client.Worker(sys.argv[1], folder=sys.argv[3])\n"
        "print(json.dumps(w.call('STRATIMPACT', data=calc_client.pack_block(rows), "
        "target='price')))\n"
        "w.stop()\n"
    )
    run = subprocess.run([old, str(script), sys.executable, json.dumps(DATA[:200]),
                          str(tmp_path / "cache")],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got == cells_for_calc(spreadsheet.stratimpact(DATA[:200], "price"))


def test_the_log_starts_afresh_once_it_is_large(tmp_path):
    log = tmp_path / "worker.log"
    log.write_bytes(b"old line\n" * (calc_client.LOG_LIMIT // 9 + 1))
    python = fake_python(tmp_path, "echo 'the new start' >&2; exit 1")
    with pytest.raises(WorkerError, match="the new start"):
        Worker(python, log_path=str(log)).call("PING")
    assert log.read_bytes() == b"the new start\n"


def _served(*lines: bytes) -> list[dict]:
    out = io.BytesIO()
    worker.serve(io.BytesIO(b"".join(line + b"\n" for line in lines)), out)
    raw = out.getvalue()
    raw.decode("utf-8")  # strict: every answer is UTF-8
    # strict RFC 8259: NaN/Infinity are not JSON
    return [json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} in an answer"))
            for line in raw.splitlines()][1:]


def test_a_hostile_request_gets_one_sentence_and_the_worker_serves_on():
    ping = json.dumps({"id": 9, "op": "PING", "args": {}}).encode()
    deep = b"[" * 200_000 + b"]" * 200_000
    nested = json.dumps({"id": 4, "op": "STRATIMPACT",
                         "args": {"data": [[[[[[[[[[1]]]]]]]]]], "target": "y"}}).encode()
    surrogate = b'{"id": 5, "op": "STRATIMPACT", "args": {"data": [["y"], [1.0]], ' \
        b'"target": "\\ud800x"}}'
    nan_id = b'{"id": NaN, "op": "PING", "args": {}}'
    unknown_arg = json.dumps({"id": 6, "op": "STRATIMPACT",
                              "args": {"data": [["y"], [1.0]], "colour": "red"}}).encode()
    bad_pack = json.dumps({"id": 7, "op": "STRATPD", "args": {
        "data": {"columns": [{"head": "y", "doubles": "not base64!"}], "rows": 2}}}).encode()
    args_list = json.dumps({"id": 8, "op": "PING", "args": [1]}).encode()
    answers = _served(deep, ping, nested, ping, surrogate, nan_id, unknown_arg, bad_pack,
                      args_list, b"\xff\xfe not utf-8", ping)
    assert len(answers) == 11
    assert "nested too deeply" in answers[0]["error"] and answers[1]["result"] == "pong"
    assert answers[2] == {"id": 4, "error": answers[2]["error"]}
    assert "nested too deeply" in answers[2]["error"]
    # The formula's own sentence, the lone surrogate sent as U+FFFD.
    assert answers[4]["id"] == 5 and "\ufffdx" in json.dumps(answers[4], ensure_ascii=False)
    assert answers[5] == {"id": None, "result": "pong"}
    for answer in answers[6:10]:
        assert "rebuild the extension" in answer["error"], answer
        assert "bug" not in answer["error"]
    assert answers[6]["id"] == 6 and answers[7]["id"] == 7
    assert answers[10] == {"id": 9, "result": "pong"}


def test_a_request_over_the_size_limit_is_skipped_unread(monkeypatch):
    monkeypatch.setattr(worker, "MAX_REQUEST_BYTES", 1000)
    big = json.dumps({"id": 3, "op": "STRATIMPACT",
                      "args": {"data": [["y"]] + [[1.0]] * 500, "target": "y"}}).encode()
    ping = json.dumps({"id": 4, "op": "PING", "args": {}}).encode()
    answers = _served(big, ping)
    assert answers[0]["id"] == 3 and "save it as a file" in answers[0]["error"]
    assert answers[1] == {"id": 4, "result": "pong"}


def test_the_log_is_the_users_own_not_a_shared_temp_file(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "cache"))
    w = Worker(sys.executable)
    if sys.platform == "darwin":
        assert w.log_path.startswith(os.path.expanduser("~/Library/Caches/stratpd-xl"))
    else:
        assert w.log_path == str(tmp_path / "cache" / "stratpd-xl" / "calc-worker.log")


def test_a_death_quotes_this_workers_own_last_error_and_says_recalculate(tmp_path):
    log = tmp_path / "worker.log"
    log.write_text("ValueError: an earlier worker's error\nStratPD: the menu's sentence\n")
    python = fake_python(tmp_path, f"echo '{HELLO}'; read line; "
                         "echo 'MemoryError: Unable to allocate 7.5 GiB' >&2; "
                         "echo 'a last line that is not an error' >&2; kill -9 $$")
    w = Worker(python, log_path=str(log), start_timeout=20)
    with pytest.raises(WorkerError) as caught:
        w.call("PING")
    assert str(caught.value) == (
        "the stratpd-xl worker stopped (killed by signal 9: MemoryError: Unable to allocate "
        f"7.5 GiB); {calc_client.RECALCULATE}")
    assert w._proc is None  # the next call (a recalculation) starts a fresh one
    # The extension starts that call by itself, and the cell says so meanwhile.
    assert caught.value.restartable
    assert caught.value.restarting() == (
        "the stratpd-xl worker stopped (killed by signal 9: MemoryError: Unable to allocate "
        "7.5 GiB); starting it again, this cell fills in by itself")


def test_a_changed_environment_starts_a_fresh_worker(tmp_path):
    # Stands in for the venv upgraded (or deleted) while Calc runs: a file the worker named
    # in its greeting changes, and the next call goes to a new worker.
    stamp = tmp_path / "package"
    stamp.write_text("1")
    hello = json.dumps({"hello": "stratpd-xl", "protocol": calc_client.PROTOCOL,
                        "watch": {str(stamp): stamp.stat().st_mtime_ns}})
    starts = tmp_path / "starts"
    python = fake_python(tmp_path, f"echo start >> {starts}; echo '{hello}'; "
                         'while read line; do echo \'{"id": 1, "result": "pong"}\'; done')
    w = Worker(python, log_path=str(tmp_path / "log"), start_timeout=20)
    assert w.call("PING") == "pong" and not w.changed()
    os.utime(stamp, ns=(stamp.stat().st_atime_ns, stamp.stat().st_mtime_ns + 10**9))
    assert w.changed()
    w._next_id = 0  # the stand-in always answers id 1
    assert w.call("PING") == "pong"
    assert starts.read_text().count("start") == 2
    w.stop()


def test_the_real_worker_watches_its_environment(real):
    real.call("PING")
    watched = set(real._watch)
    package = Path(spreadsheet.__file__).parent
    assert {str(package / "__init__.py"), str(package.parent), sys.executable} <= watched
    assert not real.changed()


def test_a_second_worker_of_the_same_libreoffice_replaces_the_first(tmp_path):
    # A reinstall while Calc runs loads the extension's code again, which starts a new
    # worker; the old one leaves by itself instead of holding its memory until Calc closes.
    first = Worker(sys.executable, folder=str(tmp_path))
    second = Worker(sys.executable, folder=str(tmp_path))
    first.call("PING")
    old = first._proc
    second.call("PING")
    old.wait(timeout=worker.CLAIM_CHECK * 5)
    assert second.call("PING") == "pong"
    log = (tmp_path / "calc-worker.log").read_text()
    assert f"stratpd-xl worker {old.pid}: replaced by worker {second._proc.pid}" in log
    first.stop()
    second.stop()


def test_a_runaway_answer_is_cut_at_the_limit_and_the_worker_stopped(tmp_path, monkeypatch):
    monkeypatch.setattr(calc_client, "ANSWER_LIMIT", 1024**2)
    python = fake_python(tmp_path, f"echo '{HELLO}'; exec cat /dev/zero")
    w = Worker(python, log_path=str(tmp_path / "log"), call_timeout=60)
    start = time.monotonic()
    with pytest.raises(WorkerError, match="wrote an answer over 1 MB and was stopped"):
        w.call("PING")
    assert w._proc is None and time.monotonic() - start < 30
