"""Secrets stay secret: JSON echoes, error excerpts, --debug tracebacks, logs, history and file modes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from hms_catalog.cli.main import main
from hms_catalog.state import open_definitions
from tests.cli.test_repl import _read_until, prompt

SECRET = "hunter2-x"
CREATE = (
    "CREATE CATALOG c PROPERTIES ('type'='hms', 'hive.metastore.uris'='thrift://127.0.0.1:1', "
    f"'hive.metastore.password'='{SECRET}')"
)


def _run(capsys: pytest.CaptureFixture[str], home: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--home", str(home), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_output_masks_the_statement(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, home, "--format", "json", "-e", CREATE)
    assert code == 0, err
    assert SECRET not in out + err
    assert "'hive.metastore.password'='******'" in out
    code, out, err = _run(capsys, home, "--format", "json", "-e", "SHOW CREATE CATALOG c")
    assert code == 0 and SECRET not in out


def test_error_excerpts_mask_and_keep_the_caret_under_the_token(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = f"CREATE CATALOG c PROPERTIES ('hive.metastore.password'='{SECRET}' 'oops'='1')"
    code, out, err = _run(capsys, home, "--format", "json", "-e", bad)
    assert code == 1
    assert SECRET not in out + err
    lines = err.splitlines()
    excerpt, caret = lines[-2], lines[-1]
    assert "'hive.metastore.password'='******'" in excerpt
    assert excerpt[caret.index("^"):].startswith("'oops'")


def test_debug_tracebacks_and_failed_statements_mask(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = CREATE.replace("'type'='hms'", "'type'='hms', 'hive.metastore.client.socket.timeout'='soon'")
    code, out, err = _run(capsys, home, "--debug", "--format", "json", "-e", bad)
    assert code == 1
    assert "Traceback" in err and SECRET not in out + err
    assert open_definitions(home).find("c") is None  # the failed CREATE stored nothing


@pytest.mark.parametrize("escaped", ["a''b", "a\\'b", 'a"b'])
def test_escaped_quotes_never_end_the_mask_early(home: Path, capsys: pytest.CaptureFixture[str], escaped: str) -> None:
    statement = CREATE.replace(SECRET, f"{SECRET}{escaped}tail")
    code, out, err = _run(capsys, home, "--format", "json", "-e", statement)
    assert code == 0, err
    assert SECRET not in out and "tail" not in out


def test_home_and_its_files_are_private_whatever_the_umask(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "fresh" / "home"
    previous = os.umask(0)
    try:
        code, _, err = _run(capsys, home, "-e", CREATE)
    finally:
        os.umask(previous)
    assert code == 0, err
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    files = sorted(path.name for path in home.iterdir())
    assert "catalog.db" in files and set(files) <= {"catalog.db", "catalog.db-wal", "catalog.db-shm"}  # SQLite's own
    assert {path.name: stat.S_IMODE(path.stat().st_mode) for path in home.iterdir()} == dict.fromkeys(files, 0o600)


def test_an_existing_home_of_ours_is_tightened(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, home, "-e", CREATE)[0] == 0
    os.chmod(home, 0o755)
    os.chmod(home / "catalog.db", 0o644)
    assert [d.name for d in open_definitions(home).list()] == ["c"]  # as a new process opens the store
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "catalog.db").stat().st_mode) == 0o600


def test_the_prompts_history_is_private_and_masked(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with prompt(home, umask=0) as primary:
        os.write(primary, f"{CREATE};\n".encode())
        assert b"OK: catalog 'c' created" in _read_until(primary, b"created")
        os.write(primary, b"exit\n")
    history = home / "history"
    assert "'hive.metastore.password'='******'" in history.read_text()
    assert SECRET not in history.read_text()
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
