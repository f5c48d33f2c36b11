"""A metastore restarted in the middle of a workload: no statement fails when it is back within the
client's retry window; the retries are counted and the slowest statement waited out the restart. A
catalog following the metastore's events keeps following it after the restart."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from hms_catalog import open_session
from hms_catalog.execution import Session
from tests.faults._data import partitioned_table
from tests.faults.conftest import FaultsMetastore
from tests.support import hms

pytestmark = [pytest.mark.metastore, pytest.mark.slow]

# Backoff ceilings 0.5, 1, 2, 4, 8, 16, 30, 30... s (each drawn between half and all of it): ten retries
# wait at least 75 s in all, far more than a restart of the embedded metastore takes.
PATIENT = {
    "hive.metastore.failure.retries": "10",
    "hive.metastore.client.connect.retry.delay": "0.5",
    "hive.metastore.client.connect.timeout": "2",
    "schema.cache.ttl-second": "0",  # every statement asks the metastore
    "partition.cache.ttl-second": "0",
    "file.meta.cache.ttl-second": "0",
}
WORKERS = 4


@dataclass(frozen=True)
class Run:
    statement: str
    started: float
    seconds: float
    error: BaseException | None


def _workload(session: Session, database: str, stop: threading.Event, runs: list[Run]) -> None:
    statements = (
        "SHOW DATABASES FROM fr",
        f"SHOW TABLES FROM fr.{database}",
        f"DESCRIBE fr.{database}.facts",
        f"SHOW SPLITS FROM fr.{database}.facts WHERE p = 'b'",
        "REFRESH CATALOG fr",
    )
    while not stop.is_set():
        for text in statements:
            started = time.monotonic()
            error: BaseException | None = None
            try:
                session.run_one(text)
            except BaseException as caught:  # noqa: BLE001 - every failure is the finding
                error = caught
            runs.append(Run(text, started, time.monotonic() - started, error))


def _wait_for(condition: object, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "the workload made no progress"
        time.sleep(0.05)


def test_a_restart_within_the_retry_window_fails_no_statement(
    faults_server: FaultsMetastore, faults_admin: hms.Admin, unique_name: str, home: Path
) -> None:
    partitioned_table(faults_admin, unique_name, "facts", ["a", "b", "c"])
    properties = "".join(f", '{key}'='{value}'" for key, value in PATIENT.items())
    owner = open_session(home)
    owner.run_one(f"CREATE CATALOG fr PROPERTIES ('type'='hms', 'hive.metastore.uris'='{faults_server.uri}'{properties})")
    catalog = owner.manager.catalog("fr")
    events = {"hive.enable_hms_events_incremental_sync": "true", "hive.hms_events_polling_interval_ms": "200"}
    following = "".join(f", '{key}'='{value}'" for key, value in {**PATIENT, **events}.items() if "cache" not in key)
    owner.run_one(f"CREATE CATALOG ev PROPERTIES ('type'='hms', 'hive.metastore.uris'='{faults_server.uri}'{following})")
    assert [row[0] for row in owner.run_one(f"SHOW TABLES FROM ev.{unique_name}").rows] == ["facts"]  # cached now
    stop = threading.Event()
    runs: list[list[Run]] = [[] for _ in range(WORKERS)]
    threads = [
        threading.Thread(target=_workload, args=(Session(owner.manager), unique_name, stop, mine), name=f"workload-{i}")
        for i, mine in enumerate(runs)
    ]
    for thread in threads:
        thread.start()
    try:
        _wait_for(lambda: all(len(mine) >= 5 for mine in runs), 60)
        before = catalog.metrics()
        down = time.monotonic()
        faults_server.stop()
        gone = time.monotonic()
        time.sleep(1.0)  # long enough for every worker to find the server gone
        restarting = time.monotonic()
        start_seconds = faults_server.start()
        up = time.monotonic()
        _wait_for(lambda: all(sum(r.started > up for r in mine) >= 5 for mine in runs), 120)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=180)
    after = catalog.metrics()

    faults_admin.create_table(unique_name, "made_after_the_restart", [("id", "bigint")])
    deadline = time.monotonic() + 60
    while len(owner.run_one(f"SHOW TABLES FROM ev.{unique_name}").rows) < 2:
        assert time.monotonic() < deadline, "the catalog stopped following events after the restart"
        time.sleep(0.1)
    follower = owner.manager.catalog("ev").follower
    assert follower is not None and follower.status().running
    owner.manager.close()

    everything = [run for mine in runs for run in mine]
    failed = [run for run in everything if run.error is not None]
    assert not failed, f"{len(failed)} of {len(everything)} statements failed, first: {failed[0].statement}: {failed[0].error!r}"
    # Every worker was in the middle of a statement while no server listened, and rode it out.
    caught_out = [
        [run for run in mine if run.started < restarting and run.started + run.seconds > gone and "REFRESH" not in run.statement]
        for mine in runs
    ]
    assert all(caught_out), "a worker ran no statement while the metastore was down"
    assert all(run.started + run.seconds >= restarting for mine in caught_out for run in mine)
    assert after.retries > before.retries
    print(
        f"\nrestart: down {up - down:.1f}s (start {start_seconds:.1f}s); statements {len(everything)}, "
        f"{sum(map(len, caught_out))} in flight while down, 0 failed; metastore calls {after.total_calls}, "
        f"retries {after.retries - before.retries}, connect failures {after.connect_failures - before.connect_failures}, "
        f"clients discarded {after.clients_discarded - before.clients_discarded}; slowest statement "
        f"{max(run.seconds for run in everything):.1f}s"
    )
