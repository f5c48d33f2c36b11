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
from tests.support.hms import Admin


def _events_since(pool: HmsClientPool, event_id: int) -> list[ttypes.NotificationEvent]:
    response = pool.call("get_next_notification", ttypes.NotificationEventRequest(lastEvent=event_id, maxEvents=1000))
    return list(response.events or [])


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
