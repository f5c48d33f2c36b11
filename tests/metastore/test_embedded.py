"""The embedded metastore: a real server that answers, writes notification events and takes locks."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from hmsclient.genthrift.hive_metastore import ttypes

from hms_catalog.client import HmsClientPool
from hms_catalog.errors import EmbeddedMetastoreError
from hms_catalog.metastore import EmbeddedMetastore, MetastoreAlreadyRunning
from hms_catalog.properties import ClientConfig, parse_uris
from tests.support.hms import Admin

pytestmark = pytest.mark.metastore  # every test here runs Java, most start a metastore of their own


def _events_since(pool: HmsClientPool, event_id: int) -> list[ttypes.NotificationEvent]:
    response = pool.call("get_next_notification", ttypes.NotificationEventRequest(lastEvent=event_id, maxEvents=1000))
    return list(response.events or [])


_COLUMN_TOOL = """
import java.sql.*;

public class NotificationColumn {
  public static void main(String[] args) throws Exception {
    try (Connection c = DriverManager.getConnection(args[0]); Statement s = c.createStatement()) {
      if (args[1].equals("shorten")) {  // back to the LONG VARCHAR that autoCreateAll used to give it
        s.execute("ALTER TABLE APP.NOTIFICATION_LOG ADD COLUMN SHORT_MESSAGE LONG VARCHAR");
        s.execute("UPDATE APP.NOTIFICATION_LOG SET SHORT_MESSAGE = CAST(MESSAGE AS LONG VARCHAR)");
        s.execute("ALTER TABLE APP.NOTIFICATION_LOG DROP COLUMN MESSAGE");
        s.execute("RENAME COLUMN APP.NOTIFICATION_LOG.SHORT_MESSAGE TO MESSAGE");
      }
      try (ResultSet r = c.getMetaData().getColumns(null, "APP", "NOTIFICATION_LOG", "MESSAGE")) {
        r.next();
        System.out.println(r.getString("TYPE_NAME"));
      }
    }
  }
}
"""


def _message_column(directory: Path, tool: Path, action: str = "show") -> str:
    """The notification log's MESSAGE column type, read (or first shortened) with Derby while the server is down."""
    from hms_catalog.metastore._setup import find_java_tool, spark_jars_dir

    java = find_java_tool("java")
    assert java is not None
    run = subprocess.run(
        [java, f"-Dderby.stream.error.file={tool.parent / 'derby.log'}", "-cp", f"{spark_jars_dir()}/*", str(tool),
         f"jdbc:derby:{directory / 'metastore_db'}", action],
        capture_output=True, text=True, timeout=120, check=False, cwd=tool.parent,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.strip().splitlines()[-1]


def test_a_database_made_with_the_short_message_column_is_converted_on_start(tmp_path: Path) -> None:
    """Metastore directories made before the notification log held production-size messages keep their
    events and take large ones after their next start."""
    tool = tmp_path / "NotificationColumn.java"
    tool.write_text(_COLUMN_TOOL, encoding="utf-8")
    server = EmbeddedMetastore(tmp_path / "old", events=True)
    pool = HmsClientPool(ClientConfig(uris=parse_uris(server.start()), pool_size=1, socket_timeout=300))
    try:
        admin = Admin(pool, server.warehouse)
        admin.create_database("made_before")
        server.stop()
        assert _message_column(server.directory, tool) == "CLOB"
        assert _message_column(server.directory, tool, "shorten") == "LONG VARCHAR"
        (server.directory / "metastore_db.prepared").unlink()
        pool.close()
        pool = HmsClientPool(ClientConfig(uris=parse_uris(server.start()), pool_size=1, socket_timeout=300))
        admin = Admin(pool, server.warehouse)
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
    assert _message_column(server.directory, tool) == "CLOB"


def test_the_session_metastore_runs_and_reports_its_status(metastore: EmbeddedMetastore) -> None:
    status = metastore.status()
    assert status.running and status.uri == metastore.uri and status.events is True
    assert status.pid is not None


def test_a_second_start_on_a_running_directory_says_so(metastore: EmbeddedMetastore) -> None:
    with pytest.raises(MetastoreAlreadyRunning, match="already running") as running:
        EmbeddedMetastore(metastore.directory).start()
    assert running.value.uri == metastore.uri


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
    assert calls == {"get_table": 1}  # what the client counted, confirmed by the server
