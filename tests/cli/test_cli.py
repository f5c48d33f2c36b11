"""The hms-catalog command end to end, in a subprocess, as scripts and people use it."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.forkserver import run_cli
from tests.support.hms import Admin


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "HMS_CATALOG_HOME": str(home)}


def cli(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(args, input=stdin, timeout=120, env=_env(home))


def json_lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture
def catalog_sql(metastore_uri: str) -> str:
    return f"CREATE CATALOG hive PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore_uri}')"


@pytest.fixture
def sales(admin: Admin, unique_name: str) -> str:
    admin.create_database(unique_name)
    admin.create_table(unique_name, "orders", [("id", "bigint"), ("amount", "decimal(10,2)")], partition_keys=[("dt", "date")])
    return unique_name


@pytest.mark.slow  # processes of its own
def test_json_output_one_line_per_statement(home: Path, catalog_sql: str, sales: str) -> None:
    run = cli(home, "--format", "json", "-e", f"{catalog_sql}; SHOW CATALOGS; DESCRIBE hive.{sales}.orders")
    assert run.returncode == 0, run.stderr
    create, show, describe = json_lines(run.stdout)
    assert create == {"statement": catalog_sql, "columns": [], "rows": []}
    assert show["columns"][:3] == ["CatalogName", "Type", "Comment"] and show["rows"][0][:2] == ["hive", "hms"]
    assert describe["columns"] == ["Field", "Type", "Nullable", "PartitionKey", "Comment"]
    assert describe["rows"] == [
        ["id", "bigint", True, False, ""], ["amount", "decimal(10,2)", True, False, ""], ["dt", "date", True, True, ""],
    ]


def test_definitions_persist_across_processes(home: Path, catalog_sql: str) -> None:
    assert cli(home, "-e", catalog_sql).returncode == 0
    shown = cli(home, "--format", "json", "-e", "SHOW CATALOGS")
    assert json_lines(shown.stdout)[0]["rows"][0][0] == "hive"


def test_a_syntax_error_names_line_column_and_token_and_earlier_statements_stay(home: Path, catalog_sql: str) -> None:
    script = f"{catalog_sql};\nSHOW CATALOGS;\nSHOW TABLEZ FROM x;\nDROP CATALOG hive;"
    run = cli(home, "-e", script)
    assert run.returncode == 1
    assert run.stderr.startswith("error: line 3:6: ")
    assert "near 'TABLEZ'" in run.stderr and "Traceback" not in run.stderr
    assert "SHOW TABLEZ FROM x;\n     ^" in run.stderr
    assert "hive" in run.stdout  # SHOW CATALOGS ran before the failure
    kept = cli(home, "--format", "json", "-e", "SHOW CATALOGS")
    assert json_lines(kept.stdout)[0]["rows"][0][0] == "hive"  # DROP after the error never ran


def test_json_errors_and_debug_tracebacks(home: Path) -> None:
    run = cli(home, "--format", "json", "-e", "DESC nope.db.t")
    assert run.returncode == 1
    assert json_lines(run.stdout) == [{"statement": "DESC nope.db.t", "error": "catalog 'nope' does not exist"}]
    assert run.stderr.strip() == "error: catalog 'nope' does not exist"
    debug = cli(home, "--debug", "-e", "DESC nope.db.t")
    assert "Traceback" in debug.stderr and "NotFoundError" in debug.stderr


def test_statements_from_a_file(home: Path, tmp_path: Path, catalog_sql: str) -> None:
    script = tmp_path / "setup.sql"
    script.write_text(f"-- the catalogs of this team\n{catalog_sql};\n/* list */ SHOW CATALOGS;\n")
    run = cli(home, "--format", "json", "-f", str(script))
    assert run.returncode == 0 and len(json_lines(run.stdout)) == 2
    missing = cli(home, "-f", str(tmp_path / "absent.sql"))
    assert missing.returncode == 1 and "cannot read" in missing.stderr


def test_piped_statements_are_answered_as_each_semicolon_arrives(home: Path, catalog_sql: str, sales: str) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "hms_catalog.cli", "--format", "json"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(home), bufsize=1,
    )
    assert process.stdin is not None and process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)

    def answer_to(text: str) -> dict[str, object]:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(text)
        process.stdin.flush()
        assert selector.select(timeout=60), f"no answer to {text!r}"
        return json.loads(process.stdout.readline())

    try:
        assert answer_to(catalog_sql + ";\n") == {"statement": catalog_sql, "columns": [], "rows": []}
        process.stdin.write(f"SHOW TABLES\n  FROM hive.{sales}")  # no ';' yet: no answer yet
        process.stdin.flush()
        assert not selector.select(timeout=1.0)
        assert answer_to(";\n")["rows"] == [["orders"]]
        failed = answer_to("DESC hive.nope.t;\n")
        assert failed["error"] == "database 'hive.nope' does not exist"
        assert answer_to("SWITCH hive; USE " + sales + ";\n")["statement"] == "SWITCH hive"
        assert process.stdout.readline()  # the USE answer
        assert answer_to("DESC orders;\n")["rows"][0][0] == "id"  # the session kept SWITCH and USE
    finally:
        process.stdin.close()
        process.wait(timeout=60)
        selector.close()
        errors = process.stderr.read() if process.stderr else ""
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    assert process.returncode == 1  # one statement failed
    assert "error: database 'hive.nope' does not exist" in errors


def test_help_teaches_the_statements_and_the_metastore(home: Path) -> None:
    run = cli(home, "--help")
    assert run.returncode == 0
    for text in ("CREATE CATALOG", "SHOW TABLES", "REFRESH TABLE", "--format", "metastore", "HMS_CATALOG_HOME"):
        assert text in run.stdout
    metastore_help = cli(home, "metastore", "--help")
    assert "start" in metastore_help.stdout and "--port" in metastore_help.stdout


def test_bad_arguments_exit_2(home: Path) -> None:
    run = cli(home, "--format", "xml", "-e", "SHOW CATALOGS")
    assert run.returncode == 2 and "invalid choice" in run.stderr
