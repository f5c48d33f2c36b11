"""The embedded metastore on PostgreSQL: on a database of the test session's server, and on a server of its own.

Hive's direct SQL (MetaStoreDirectSql) must run on the schema the preparer makes, since it is what makes a
million partitions listable: the partition-filtered calls are checked at both ends, in the metastore's log
(no fallback to the ORM) and in PostgreSQL's (the hand-written SQL, with its quoted upper-case names, ran).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hms_catalog.client import HmsClientPool
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import EmbeddedMetastoreError
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.metastore._backend import own_server
from hms_catalog.metastore._database import jdbc_driver_jar
from hms_catalog.properties import ClientConfig, parse_uris
from planner import plan_table
from tests.support.hms import Admin
from tests.support.postgres import PostgresServer
from tests.support.sessions import open_catalog

pytestmark = pytest.mark.metastore  # every test here runs Java

DIRECT_SQL_FAILURES = ("Falling back to ORM", "direct SQL is disabled", "Disabling directSQL")
DAYS = ("2024-01-01", "2024-01-02")


@pytest.fixture(autouse=True)
def _jdbc_driver() -> None:
    """PostgreSQL's JDBC driver (Debian's libpostgresql-jdbc-java): skipped without it, as the ``postgres`` fixture
    is without the server, unless ``HMS_CATALOG_REQUIRE_POSTGRES=1`` (``.ci/run``) makes that a failure."""
    try:
        jdbc_driver_jar()
    except EmbeddedMetastoreError as missing:
        if os.environ.get("HMS_CATALOG_REQUIRE_POSTGRES") == "1":
            pytest.fail(str(missing), pytrace=False)
        pytest.skip(str(missing))


@pytest.fixture
def database(postgres: PostgresServer) -> Iterator[str]:
    """A new database on the session's server, owned by its ordinary role, whose statements PostgreSQL logs."""
    with postgres.scratch_database(log_statements=True) as name:
        yield name


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hms_catalog.cli", "metastore", *args],
                          capture_output=True, text=True, timeout=300, check=False)


def _fill(pool: HmsClientPool, admin: Admin) -> None:
    """A database, a table partitioned by a string and an int key, 2 x 5 partitions in one call, and a table
    parameter longer than the VARCHAR(32672) autoCreateAll makes (text, as in Hive's PostgreSQL schema)."""
    admin.create_database("pg")
    table = admin.create_table("pg", "events", [("id", "int")], partition_keys=[("dt", "string"), ("n", "int")],
                               parameters={"long": "v" * 40_000})
    admin.add_partitions(table, [(day, str(n)) for day in DAYS for n in range(5)])


def _read(pool: HmsClientPool, home: Path, uri: str) -> None:
    """The data through the thrift client, and through a catalog whose planning filters at the metastore."""
    assert pool.call("get_table", "pg", "events").parameters["long"] == "v" * 40_000
    assert len(pool.call("get_partitions", "pg", "events", -1)) == 10
    by_filter = pool.call("get_partitions_by_filter", "pg", "events", f'dt = "{DAYS[1]}" and n >= 3', -1)
    assert sorted(tuple(p.values) for p in by_filter) == [(DAYS[1], "3"), (DAYS[1], "4")]
    by_names = pool.call("get_partitions_by_names", "pg", "events", [f"dt={DAYS[0]}/n=1", f"dt={DAYS[1]}/n=4"])
    assert sorted(tuple(p.values) for p in by_names) == [(DAYS[0], "1"), (DAYS[1], "4")]
    session = open_catalog(home, uri)
    try:
        catalog = session.manager.catalog("hive")
        plan = plan_table(catalog, catalog.table("pg", "events"), "n >= 3")
        assert plan.summary.partitions_scanned == 4
        assert plan.summary.metastore_calls.get("get_partitions_by_filter") == 1
        rows = session.run_one(f"SHOW PARTITIONS hive.pg.events WHERE dt = '{DAYS[0]}' AND n < 2").rows
        assert [row[0] for row in rows] == [f"dt={DAYS[0]}/n=0", f"dt={DAYS[0]}/n=1"]
    finally:
        session.manager.close()


def _assert_direct_sql(metastore: EmbeddedMetastore, postgres: PostgresServer, log_from: int) -> None:
    log = metastore.log_file.read_text(encoding="utf-8", errors="replace")
    assert not [line for line in log.splitlines() if any(failure in line for failure in DIRECT_SQL_FAILURES)]
    statements = postgres.log_file.read_bytes()[log_from:].decode("utf-8", errors="replace")
    assert 'inner join "PARTITION_KEY_VALS" "FILTER0"' in statements  # get_partitions_by_filter's SQL
    assert 'where "PARTITIONS"."PART_NAME" in (' in statements  # get_partitions_by_names'


def _key_value_indexes(postgres: PostgresServer, database: str) -> list[str]:
    """The definitions of the indexes on PARTITION_KEY_VALS that lead with the key's position and value."""
    found = postgres.psql(f"\\c {database}\nSELECT indexdef FROM pg_indexes WHERE tablename = 'PARTITION_KEY_VALS';\n")
    return [line for line in found.splitlines() if '("INTEGER_IDX", "PART_KEY_VAL")' in line]


def _index_made(postgres: PostgresServer, log_from: int) -> bool:
    """Whether PostgreSQL's statement log, from ``log_from`` on, has the key values' CREATE INDEX."""
    statements = postgres.log_file.read_bytes()[log_from:].decode("utf-8", errors="replace")
    return 'CREATE INDEX IF NOT EXISTS "PARTITION_KEY_VALS_BY_VALUE"' in statements


def test_a_metastore_on_postgresql_keeps_its_metadata_and_filters_with_direct_sql(
    postgres: PostgresServer, database: str, tmp_path: Path
) -> None:
    """Started from the CLI on a database given by URL, filled and read through thrift and a catalog, stopped,
    and started again from Python naming no database: the directory's is taken, and everything is there."""
    directory = tmp_path / "ms"
    url = f"postgresql://{postgres.user}:{postgres.password}@{postgres.host}:{postgres.port}/{database}"
    shown = f"postgresql://{postgres.user}:******@{postgres.host}:{postgres.port}/{database}"
    log_from = postgres.log_file.stat().st_size
    started = _cli("start", "--dir", str(directory), "--port", "0", "--db", url)
    metastore = EmbeddedMetastore(directory)
    try:
        assert started.returncode == 0, started.stderr
        uri = started.stdout.strip()
        assert f"on {shown};" in started.stderr
        status = _cli("status", "--dir", str(directory))
        assert status.returncode == 0 and f"database {shown})" in status.stdout
        for output in (started.stdout, started.stderr, status.stdout, status.stderr):
            assert postgres.password not in output
        for name in ("metastore.json", "metastore.log", "metastore.out"):
            assert postgres.password not in (directory / name).read_text(encoding="utf-8", errors="replace")
        for private in (directory / "conf" / "hive-site.xml", directory / "metastore.database"):
            assert stat.S_IMODE(private.stat().st_mode) == 0o600
        pool = HmsClientPool(ClientConfig(uris=parse_uris(uri), pool_size=1, socket_timeout=120))
        try:
            _fill(pool, Admin(pool, metastore.warehouse))
            _read(pool, tmp_path / "home", uri)
            events = pool.call("get_next_notification", ttypes.NotificationEventRequest(lastEvent=0, maxEvents=100)).events
            assert [e.eventType for e in events][:3] == ["CREATE_DATABASE", "CREATE_TABLE", "ADD_PARTITION"]
        finally:
            pool.close()
        _assert_direct_sql(metastore, postgres, log_from)
        stopped = _cli("stop", "--dir", str(directory))
        assert stopped.returncode == 0 and "stopped" in stopped.stderr

        assert len(_key_value_indexes(postgres, database)) == 1  # filters on key values have their index
        assert _index_made(postgres, log_from)
        restart_from = postgres.log_file.stat().st_size
        again = metastore.start()  # no database named: the directory's last
        assert metastore.status().database == shown and again == uri  # the port is remembered too
        # looked for at the start, not asked for again (CREATE INDEX would lock the table even when it is there)
        assert len(_key_value_indexes(postgres, database)) == 1 and not _index_made(postgres, restart_from)
        pool = HmsClientPool(ClientConfig(uris=parse_uris(again), pool_size=1, socket_timeout=120))
        try:
            _read(pool, tmp_path / "home2", again)
        finally:
            pool.close()
    finally:
        metastore.stop()
    after = _cli("status", "--dir", str(directory))
    assert after.returncode == 3 and f"database {shown})" in after.stdout


def test_a_metastore_on_a_postgresql_server_of_its_own(postgres: PostgresServer, tmp_path: Path) -> None:
    """``postgresql`` with no host: the metastore makes and starts a server of its own in its directory, and
    stops it with itself; a start that names no database takes it again. (``postgres``: skipped, or failed, as
    the session's server is where PostgreSQL's server binaries are missing.)"""
    metastore = EmbeddedMetastore(tmp_path / "ms", 0, database="postgresql", events=False)
    server = own_server(metastore.directory)
    try:
        uri = metastore.start()
        status = metastore.status()
        assert status.database.endswith("/metastore (a server of its own)") and server.password not in status.database
        assert server.pid() is not None
        pool = HmsClientPool(ClientConfig(uris=parse_uris(uri), pool_size=1, socket_timeout=120))
        try:
            Admin(pool, metastore.warehouse).create_database("own")
            assert "own" in pool.call("get_all_databases")
        finally:
            pool.close()
        assert metastore.stop() is True
        assert server.pid() is None  # stopped with the metastore
        assert EmbeddedMetastore(metastore.directory).status().database == "postgresql (a server of its own)"
    finally:
        metastore.stop()
        server.close()  # as root, its data folder is a private one under the temp dir


def test_a_database_that_refuses_the_metastore_is_named_with_the_servers_reason(postgres: PostgresServer,
                                                                                database: str, tmp_path: Path) -> None:
    """A wrong password, or a database that does not exist: the start fails with one line naming the database
    (password masked) and PostgreSQL's reason, not the driver's stack, and leaves no server behind. Both in one
    directory, whose log keeps every start's lines: each start names its own reason."""
    wrong = postgres.password + "-wrong"
    for url, shown, reason in (
        (f"postgresql://{postgres.user}:{wrong}@{postgres.host}:{postgres.port}/{database}",
         f"postgresql://{postgres.user}:******@{postgres.host}:{postgres.port}/{database}",
         f'password authentication failed for user "{postgres.user}"'),
        (f"postgresql://{postgres.user}:{postgres.password}@{postgres.host}:{postgres.port}/no_such_database",
         f"postgresql://{postgres.user}:******@{postgres.host}:{postgres.port}/no_such_database",
         'database "no_such_database" does not exist'),
    ):
        directory = tmp_path / "ms"
        started = _cli("start", "--dir", str(directory), "--port", "0", "--db", url)
        assert started.returncode == 1, started.stderr
        assert f"could not open its database {shown}: FATAL: {reason}" in started.stderr, started.stderr
        assert "at org." not in started.stderr and wrong not in started.stderr and postgres.password not in started.stderr
        assert not EmbeddedMetastore(directory).status().running
