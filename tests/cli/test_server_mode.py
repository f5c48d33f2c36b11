"""``hms-catalog --server``: statements run on a catalog service print exactly what a local run prints,
with the same exit codes, and SWITCH/USE carry over; the Python API's ``open_session(server=...)`` too."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hms_catalog import NotFoundError, RemoteSession, open_session
from hms_catalog.cli.render import TextRenderer
from hms_catalog.errors import ServiceError
from tests.support.forkserver import run_cli
from tests.support.service import Server, served

pytestmark = pytest.mark.metastore

DB = f"served{os.getpid()}"


@pytest.fixture(scope="module")
def warehouse(spark: Any) -> Iterator[str]:
    """``sales``: Parquet written by Spark, partitioned by dt, with decimals, dates and timestamps."""
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")
    spark.sql(f"CREATE DATABASE {DB}")
    spark.sql(f"CREATE TABLE {DB}.sales (id INT, amount DECIMAL(10,2), day DATE, at TIMESTAMP, tags ARRAY<STRING>) "
              "PARTITIONED BY (dt STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {DB}.sales PARTITION (dt='2024-01-01') VALUES "
              "(1, 12.50, DATE'2024-01-01', TIMESTAMP'2024-01-01 10:11:12.123456', array('a', NULL)), "
              "(2, 0.05, NULL, NULL, NULL)")
    spark.sql(f"INSERT INTO {DB}.sales PARTITION (dt='2024-01-02') VALUES (3, 7.00, DATE'2024-01-02', NULL, array())")
    yield DB
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, metastore_uri: str, warehouse: str) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("served") / "home"
    created = _cli(home, "-e", f"CREATE CATALOG hive COMMENT 'served' PROPERTIES ('type'='hms', "
                               f"'hive.metastore.uris'='{metastore_uri}', 'secret.password'='hunter2')")
    assert created.returncode == 0, created.stderr
    with served(home) as running:
        yield running


def _cli(home: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(["--home", str(home), *args], input=stdin, timeout=300, env={**os.environ, **(env or {})})


def _remote(service: Server, elsewhere: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI on another, empty home: whatever it answers comes from the service."""
    return _cli(elsewhere, "--server", service.url, "--token", service.token, *args, stdin=stdin)


STATEMENTS = [
    "SHOW CATALOGS",
    "SHOW CREATE CATALOG hive",
    "SHOW DATABASES FROM hive",
    f"SHOW TABLES FROM hive.{DB}",
    f"SHOW TABLES FROM hive.{DB} LIKE 'sal%'",
    f"DESCRIBE hive.{DB}.sales",
    f"SHOW SPLITS FROM hive.{DB}.sales WHERE dt = '2024-01-02'",
    "SWITCH hive",
    f"USE {DB}",
    "DESCRIBE sales",
    "REFRESH TABLE sales",
]


@pytest.mark.parametrize("output", ["text", "json"])
def test_output_is_the_same_as_a_local_run(service: Server, tmp_path: Path, output: str) -> None:
    script = "; ".join(STATEMENTS)
    local = _cli(service.home, "--format", output, "-e", script)
    remote = _remote(service, tmp_path, "--format", output, "-e", script)
    assert local.returncode == remote.returncode == 0, remote.stderr
    assert remote.stdout == local.stdout
    assert "hunter2" not in remote.stdout and "******" in remote.stdout
    assert not (tmp_path / "catalog.db").exists()  # nothing was run against the client's own home


def test_errors_and_exit_codes_are_the_same(service: Server, tmp_path: Path) -> None:
    for script in (f"DESCRIBE hive.{DB}.nope", "DESCRIBE nope.a.b", "SHOW TABLES FROM hive.nope",
                   "CREATE CATALOG hive PROPERTIES ('type'='hms', 'hive.metastore.uris'='thrift://h:1')",
                   "ALTER CATALOG hive SET PROPERTIES ('hive.metastore.client.pool.size'='zero')",
                   "SHOW TABLES FROM", "DESCRIBE t"):
        local = _cli(service.home, "--format", "json", "-e", script)
        remote = _remote(service, tmp_path, "--format", "json", "-e", script)
        assert (remote.returncode, remote.stdout, remote.stderr) == (local.returncode, local.stdout, local.stderr), script
        assert remote.returncode == 1


def test_switch_and_use_carry_over_piped_statements(service: Server, tmp_path: Path) -> None:
    piped = f"SWITCH hive;\nUSE {DB};\nSHOW TABLES;\nDESCRIBE sales;\n"
    local = _cli(service.home, stdin=piped)
    remote = _remote(service, tmp_path, stdin=piped)
    assert remote.returncode == 0 and remote.stdout == local.stdout
    assert "| sales |" in remote.stdout


def test_select_runs_on_the_service_and_keeps_value_types(service: Server, spark: Any) -> None:
    query = f"SELECT id, amount, day, at, tags, dt FROM hive.{DB}.sales ORDER BY id"
    remote = open_session(server=service.url, token=service.token)
    try:
        answer = remote.run_one(query)
    finally:
        remote.close()
    local = open_session(service.home)
    try:
        expected = local.run_one(query)  # the same statement on this process's own Spark
    finally:
        local.close()
    assert answer == expected
    assert TextRenderer().result(query, answer) == TextRenderer().result(query, expected)
    assert [row[0] for row in answer.rows] == [1, 2, 3]


def test_each_request_resolves_short_names_by_its_own_position(service: Server, spark: Any) -> None:
    other = f"{DB}_other"
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {other}")
    spark.sql(f"CREATE TABLE {other}.sales (id INT) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {other}.sales VALUES (7)")
    first = open_session(server=service.url, token=service.token)
    second = open_session(server=service.url, token=service.token)
    try:
        first.run_one(f"SWITCH hive; USE {DB}")
        second.run_one(f"SWITCH hive; USE {other}")
        for _ in range(2):  # the service's one Spark, shared: each statement still reads its own session's sales
            assert first.run_one("SELECT count(*) AS n FROM sales").rows == ((3,),)
            assert second.run_one("SELECT max(id) AS top FROM sales").rows == ((7,),)
    finally:
        first.close()
        second.close()
        spark.sql(f"DROP DATABASE IF EXISTS {other} CASCADE")


def test_the_python_session_runs_statements_on_the_service(service: Server) -> None:
    session = open_session(server=service.url, token=service.token)
    assert isinstance(session, RemoteSession)
    try:
        session.run_one("SWITCH hive")
        session.run_one(f"USE {DB}")
        assert (session.current_catalog, session.current_database) == ("hive", DB)
        described = session.run_one("DESCRIBE sales")
        assert described.column("Field") == ["id", "amount", "day", "at", "tags", "dt"]
        with pytest.raises(NotFoundError, match=rf"table 'hive.{DB}.nope' does not exist") as missing:
            session.run_one("DESCRIBE nope")
        assert (missing.value.kind, missing.value.name) == ("table", f"hive.{DB}.nope")
    finally:
        session.close()


def test_the_cache_shown_is_what_every_client_shared(service: Server, tmp_path: Path) -> None:
    client = service.client()
    try:
        client.refresh("hive")
        assert _cli(tmp_path, "--server", service.url, "--token", service.token, "-e",
                    f"DESCRIBE hive.{DB}.sales").returncode == 0
        shown = _remote(service, tmp_path, "--format", "json", "-e", "SHOW SCHEMA CACHE FROM hive")
        assert f'["{DB}", "sales", "HIVE", 6,' in shown.stdout  # loaded by the other client, held by the service
    finally:
        client.close()


def test_the_token_comes_from_the_environment_or_the_home(service: Server, tmp_path: Path) -> None:
    by_env = _cli(tmp_path, "--server", service.url, "-e", "SHOW CATALOGS", env={"HMS_CATALOG_TOKEN": service.token})
    assert by_env.returncode == 0, by_env.stderr
    by_home = _cli(service.home, "--server", service.url, "-e", "SHOW CATALOGS", env={"HMS_CATALOG_TOKEN": ""})
    assert by_home.returncode == 0, by_home.stderr
    by_variable = _cli(tmp_path, "-e", "SHOW CATALOGS",
                       env={"HMS_CATALOG_SERVER": service.url, "HMS_CATALOG_TOKEN": service.token})
    assert by_variable.returncode == 0 and "hive" in by_variable.stdout
    wrong = _cli(tmp_path, "--server", service.url, "--token", "not-the-token", "-e", "SHOW CATALOGS")
    assert wrong.returncode == 1
    assert f"the catalog service at {service.url} refused the request (401" in wrong.stderr
    assert "--token" in wrong.stderr and "not-the-token" not in wrong.stderr


def test_an_unreachable_service_is_named(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    run = _cli(tmp_path, "--server", url, "--token", "t" * 20, "-e", "SHOW CATALOGS")
    assert run.returncode == 1
    assert f"error: the catalog service at {url} cannot be reached" in run.stderr
    with pytest.raises(ServiceError, match="cannot be reached"):
        open_session(server=url, token="t" * 20).run_one("SHOW CATALOGS")
    bad = _cli(tmp_path, "--server", "ftp://somewhere", "-e", "SHOW CATALOGS")
    assert bad.returncode == 2 and "catalog service URL must be http://host:port" in bad.stderr
