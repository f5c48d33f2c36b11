"""The embedded metastore: a real server that answers, writes notification events and takes locks."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from hms_catalog.client import HmsClientPool
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import EmbeddedMetastoreError
from hms_catalog.metastore import EmbeddedMetastore, MetastoreAlreadyRunning, MetastorePortInUse
from hms_catalog.properties import ClientConfig, parse_uris
from tests.support.hms import Admin, table_struct

pytestmark = [pytest.mark.metastore, pytest.mark.slow]  # every test here runs Java, most start a metastore of their own


def _events_since(pool: HmsClientPool, event_id: int) -> list[ttypes.NotificationEvent]:
    response = pool.call("get_next_notification", ttypes.NotificationEventRequest(lastEvent=event_id, maxEvents=1000))
    return list(response.events or [])


# Columns Hive's hive-schema-2.3.0.derby.sql declares wider than autoCreateAll made them (before the
# preparer changed them), with autoCreateAll's type and the production one.
_NARROW_BEFORE = {
    "NOTIFICATION_LOG.MESSAGE": ("LONG VARCHAR", "CLOB"),
    "TABLE_PARAMS.PARAM_VALUE": ("VARCHAR(32672)", "CLOB"),
    "SERDE_PARAMS.PARAM_VALUE": ("VARCHAR(32672)", "CLOB"),
    "SD_PARAMS.PARAM_VALUE": ("VARCHAR(32672)", "CLOB"),
    "COLUMNS_V2.TYPE_NAME": ("VARCHAR(32672)", "CLOB"),
    "COLUMNS_V2.COMMENT": ("VARCHAR(256)", "VARCHAR(4000)"),
}

_COLUMN_TOOL = """
import java.sql.*;

public class ColumnTypes {
  public static void main(String[] args) throws Exception {
    try (Connection c = DriverManager.getConnection(args[0]); Statement s = c.createStatement()) {
      for (int i = 2; i < args.length; i++) {
        String[] column = args[i].split("[.=]", 3);  // TABLE.COLUMN=TYPE
        if (args[1].equals("retype")) {  // as Derby allows: add, copy, drop, rename
          String table = "APP." + column[0];
          s.execute("ALTER TABLE " + table + " ADD COLUMN RETYPED " + column[2]);
          s.execute("UPDATE " + table + " SET RETYPED = CAST(" + column[1] + " AS " + column[2] + ")");
          s.execute("ALTER TABLE " + table + " DROP COLUMN " + column[1]);
          s.execute("RENAME COLUMN " + table + ".RETYPED TO " + column[1]);
        }
        try (ResultSet r = c.getMetaData().getColumns(null, "APP", column[0], column[1])) {
          r.next();
          String type = r.getString("TYPE_NAME");
          System.out.println(type.equals("VARCHAR") ? type + "(" + r.getInt("COLUMN_SIZE") + ")" : type);
        }
      }
    }
  }
}
"""


def _column_types(directory: Path, tool: Path, columns: dict[str, str] | None = None) -> dict[str, str]:
    """Types of the ``_NARROW_BEFORE`` columns, read with Derby while the server is down; with ``columns``
    (``TABLE.COLUMN`` -> type), first changed to those types."""
    from hms_catalog.jdk import find_java_tool, spark_jars_dir

    java = find_java_tool("java")
    assert java is not None
    names = list(columns or _NARROW_BEFORE)
    arguments = [f"{name}={columns[name]}" for name in names] if columns else [f"{name}=" for name in names]
    run = subprocess.run(
        [java, f"-Dderby.stream.error.file={tool.parent / 'derby.log'}", "-cp", f"{spark_jars_dir()}/*", str(tool),
         f"jdbc:derby:{directory / 'metastore_db'}", "retype" if columns else "show", *arguments],
        capture_output=True, text=True, timeout=120, check=False, cwd=tool.parent,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return dict(zip(names, run.stdout.split("\n"), strict=False))


def _large_values(columns: int = 2_500, characters: int = 100_000) -> tuple[str, str, str]:
    """A struct type, a column comment and a parameter value as long as production's columns take."""
    struct = "struct<" + ",".join(f"field_{n:05d}:string" for n in range(columns)) + ">"
    return struct, "c" * 4000, "v" * characters


def test_columns_hold_what_a_production_metastores_do(admin: Admin, unique_name: str) -> None:
    """Table, serde and storage parameters, column types (CLOB in Hive's Derby schema) and column comments
    (VARCHAR(4000)) longer than the columns autoCreateAll makes on Derby (32,672 and 256 characters)."""
    struct, comment, value = _large_values()
    assert len(struct) > 32_672
    location = admin.create_database(unique_name) / "large"
    table = table_struct(unique_name, "large", [("id", "int"), ("nested", struct)], location.as_uri(),
                         parameters={"avro.schema.literal": value}, comments={"nested": comment})
    table.sd.serdeInfo.parameters["serde.literal"] = value
    table.sd.parameters = {"sd.literal": value}
    admin.pool.call("create_table", table)
    stored = admin.pool.call("get_table", unique_name, "large")
    assert stored.sd.cols[1].type == struct and stored.sd.cols[1].comment == comment
    assert stored.parameters["avro.schema.literal"] == value
    assert stored.sd.serdeInfo.parameters["serde.literal"] == value and stored.sd.parameters["sd.literal"] == value
    admin.drop_database(unique_name)


def test_a_database_made_with_the_narrow_columns_is_converted_on_start(tmp_path: Path) -> None:
    """Metastore directories made before the preparer gave the columns their production types keep their
    content (events included) and take production-size values after their next start."""
    tool = tmp_path / "ColumnTypes.java"
    tool.write_text(_COLUMN_TOOL, encoding="utf-8")
    server = EmbeddedMetastore(tmp_path / "old", events=True)
    pool = HmsClientPool(ClientConfig(uris=parse_uris(server.start()), pool_size=1, socket_timeout=300))
    try:
        admin = Admin(pool, server.warehouse)
        admin.create_database("made_before")
        admin.create_table("made_before", "kept", [("id", "int"), ("pair", "struct<a:int,b:string>")],
                           parameters={"note": "kept"}, comments={"pair": "a comment"})
        server.stop()
        assert _column_types(server.directory, tool) == {name: types[1] for name, types in _NARROW_BEFORE.items()}
        before = {name: types[0] for name, types in _NARROW_BEFORE.items()}
        assert _column_types(server.directory, tool, before) == before
        (server.directory / "metastore_db.prepared").unlink()
        pool.close()
        pool = HmsClientPool(ClientConfig(uris=parse_uris(server.start()), pool_size=1, socket_timeout=300))
        admin = Admin(pool, server.warehouse)
        kept = pool.call("get_table", "made_before", "kept")
        assert kept.parameters["note"] == "kept" and kept.sd.cols[1].type == "struct<a:int,b:string>"
        assert kept.sd.cols[1].comment == "a comment"
        struct, comment, value = _large_values()
        admin.create_table("made_before", "large", [("nested", struct)], parameters={"literal": value},
                           comments={"nested": comment})
        assert pool.call("get_table", "made_before", "large").parameters["literal"] == value
        table = admin.create_table("made_before", "wide", [("id", "int")], partition_keys=[("p", "string")])
        deep = "/".join(["a_rather_long_folder_name_as_warehouses_have"] * 4)
        partitions = [ttypes.Partition(values=[f"v{n:04d}"], dbName="made_before", tableName="wide",
                                       sd=ttypes.StorageDescriptor(**{**table.sd.__dict__,
                                                                      "location": f"{table.sd.location}/{deep}/p=v{n:04d}"}),
                                       parameters={}) for n in range(200)]
        pool.call("add_partitions", partitions)
        events = _events_since(pool, 0)
        assert [e.eventType for e in events if e.dbName == "made_before"][:1] == ["CREATE_DATABASE"]  # kept
        assert max(len(e.message) for e in events if e.eventType == "ADD_PARTITION") > 32_700
    finally:
        pool.close()
        server.stop()
    assert _column_types(server.directory, tool) == {name: types[1] for name, types in _NARROW_BEFORE.items()}


def test_the_session_metastore_runs_and_reports_its_status(metastore: EmbeddedMetastore) -> None:
    status = metastore.status()
    assert status.running and status.uri == metastore.uri and status.events is True
    assert status.pid is not None


def test_a_second_start_on_a_running_directory_says_so(metastore: EmbeddedMetastore) -> None:
    with pytest.raises(MetastoreAlreadyRunning, match="already running") as running:
        EmbeddedMetastore(metastore.directory).start()
    assert running.value.uri == metastore.uri
    with pytest.raises(MetastoreAlreadyRunning):  # the database it runs on, asked for again: the same start
        EmbeddedMetastore(metastore.directory, database="derby").start()
    elsewhere = "postgresql://hive:secret@db.example:5432/metastore"
    with pytest.raises(EmbeddedMetastoreError) as moved:  # another one: never taken for the one it runs on
        EmbeddedMetastore(metastore.directory, database=elsewhere).start()
    assert "already running" in str(moved.value) and "on derby, not on postgresql://hive:******@db.example" in str(moved.value)
    assert "secret" not in str(moved.value) and metastore.status().running


def test_changes_are_written_to_the_notification_log(admin: Admin, unique_name: str) -> None:
    pool = admin.pool
    start = pool.call("get_current_notificationEventId").eventId
    admin.create_database(unique_name)
    table = admin.create_table(unique_name, "events", [("id", "int")], partition_keys=[("p", "string")])
    partition = ttypes.Partition(
        values=["a"], dbName=unique_name, tableName="events", sd=table.sd, parameters={}
    )
    pool.call("add_partitions", [partition], )
    altered = pool.call("get_table", unique_name, "events")
    altered.parameters["comment"] = "changed"
    pool.call("alter_table", unique_name, "events", altered)
    pool.call("drop_partition", unique_name, "events", ["a"], False)
    admin.drop_table(unique_name, "events")
    admin.drop_database(unique_name)
    events = [e for e in _events_since(pool, start) if e.dbName == unique_name]
    assert [e.eventType for e in events] == [
        "CREATE_DATABASE", "CREATE_TABLE", "ADD_PARTITION", "ALTER_TABLE", "DROP_PARTITION", "DROP_TABLE", "DROP_DATABASE",
    ]
    assert all(e.messageFormat == "json-0.2" and e.message.startswith("{") for e in events)
    assert [e.eventId for e in events] == sorted(e.eventId for e in events)
    assert events[1].tableName == "events"


def test_the_transaction_tables_exist_so_locks_work(admin: Admin, unique_name: str) -> None:
    admin.create_database(unique_name)
    admin.create_table(unique_name, "locked", [("id", "int")])
    component = ttypes.LockComponent(
        type=ttypes.LockType.EXCLUSIVE, level=ttypes.LockLevel.TABLE, dbname=unique_name, tablename="locked"
    )
    response = admin.pool.call("lock", ttypes.LockRequest(component=[component], user="test", hostname="localhost"))
    assert response.state == ttypes.LockState.ACQUIRED
    admin.pool.call("unlock", ttypes.UnlockRequest(lockid=response.lockid))
    admin.drop_database(unique_name)


def test_a_failed_start_shows_the_server_log(tmp_path: Path) -> None:
    broken = EmbeddedMetastore(tmp_path / "broken", heap="1k", startup_timeout=60)
    with pytest.raises(EmbeddedMetastoreError, match=r"exited with status \d+ while starting(.|\n)*heap"):
        broken.start()
    assert not broken.status().running


def test_a_busy_port_is_reported(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(EmbeddedMetastoreError, match=f"port {port} is already in use"):
            EmbeddedMetastore(tmp_path / "busy", port).start()


@pytest.mark.slow  # three starts of a metastore of its own, a minute in all
def test_a_restart_takes_the_port_the_catalogs_name(tmp_path: Path) -> None:
    """Started again on the same directory, the metastore listens where it did, so a catalog defined over it
    works after the restart; when that port is taken, the error names it and how to choose another; a port
    named explicitly wins and is remembered in turn."""
    from hms_catalog import open_session

    server = EmbeddedMetastore(tmp_path / "ms", events=False)
    first = server.start()
    session = open_session(tmp_path / "home")
    try:
        session.run_one(f"CREATE CATALOG hive PROPERTIES ('type'='hms', 'hive.metastore.uris'='{first}')")
        session.run_one("CREATE DATABASE hive.kept")
        server.stop()
        server = EmbeddedMetastore(server.directory, events=False)  # a new object: the port is the directory's
        assert server.start() == first
        session.run_one("CREATE DATABASE hive.after")  # reaches the metastore itself, whatever is cached
        assert {"kept", "after"} <= {row[0] for row in session.run_one("SHOW DATABASES FROM hive").rows}
        server.stop()
        port = server.remembered_port
        assert port is not None and first.endswith(f":{port}")
        with socket.socket() as taken:
            taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # the clients' closed connections linger
            taken.bind(("127.0.0.1", port))
            taken.listen(1)
            with pytest.raises(MetastorePortInUse, match=f"port {port} is already in use(.|\n)*--port N") as refused:
                EmbeddedMetastore(server.directory, events=False).start()
            assert refused.value.port == port and refused.value.remembered
            assert "ALTER CATALOG" in str(refused.value)
            server = EmbeddedMetastore(server.directory, 0, events=False)
            moved = server.start()
        assert moved != first and server.remembered_port == int(moved.rsplit(":", 1)[1])
    finally:
        session.manager.close()
        server.stop()


def test_stop_on_a_directory_with_no_server_is_harmless(tmp_path: Path) -> None:
    assert EmbeddedMetastore(tmp_path / "idle").stop() is False


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hms_catalog.cli", *args], capture_output=True, text=True, timeout=180, check=False
    )


def test_the_cli_starts_reports_and_stops_a_metastore(tmp_path: Path) -> None:
    directory = str(tmp_path / "cli-ms")
    started = _cli("metastore", "start", "--dir", directory, "--port", "0")
    try:
        assert started.returncode == 0, started.stderr
        uri = started.stdout.strip()
        assert uri.startswith("thrift://127.0.0.1:")
        assert "ready in" in started.stderr and "java" not in started.stdout.lower()
        status = _cli("metastore", "status", "--dir", directory)
        assert status.returncode == 0 and f"running at {uri}" in status.stdout
        again = _cli("metastore", "start", "--dir", directory, "--port", "0")
        assert again.returncode == 0 and again.stdout.strip() == uri and "already running" in again.stderr
    finally:
        stopped = _cli("metastore", "stop", "--dir", directory)
    assert stopped.returncode == 0 and "stopped" in stopped.stderr
    after = _cli("metastore", "status", "--dir", directory)
    assert after.returncode == 3 and "not running" in after.stdout


def test_the_audit_log_counts_calls_at_the_server(metastore: EmbeddedMetastore, admin: Admin, unique_name: str, home: Path) -> None:
    import time

    from hms_catalog import open_session

    admin.create_database(unique_name)
    admin.create_table(unique_name, "audited", [("id", "int")])
    session = open_session(home)
    session.run_one(f"CREATE CATALOG hive PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore.uri}')")
    time.sleep(0.2)
    mark, _ = metastore.audited_calls()
    session.run_one(f"DESCRIBE hive.{unique_name}.audited")
    session.run_one(f"DESCRIBE hive.{unique_name}.audited")
    time.sleep(0.3)
    _, calls = metastore.audited_calls(mark)
    session.manager.close()
    assert calls == {"get_table": 1}  # the one get_table_req the client counted; Hive audits it as get_table
