"""Sixteen threads mixing DESCRIBE, SHOW SPLITS and REFRESH over one catalog manager while they add
partitions and files: no statement fails, and a SHOW SPLITS after a REFRESH TABLE has returned never
misses what was added before the REFRESH (nothing stale), whatever the other threads' loads in flight."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from hms_catalog.execution import Session
from tests.faults._data import partitioned_table, write_parquet
from tests.faults.conftest import FaultsMetastore
from tests.support import hms
from tests.support.sessions import open_catalog

pytestmark = [pytest.mark.metastore, pytest.mark.slow]

THREADS = 16
ROUNDS = 6


def _split_files(session: Session, table: str, where: str = "") -> set[str]:
    result = session.run_one(f"SHOW SPLITS FROM {table}" + (f" WHERE {where}" if where else ""))
    return {row[0].rsplit("/", 2)[-2] + "/" + row[0].rsplit("/", 1)[-1] for row in result.rows}


def test_sixteen_threads_see_nothing_stale_after_a_refresh(
    faults_server: FaultsMetastore, faults_admin: hms.Admin, unique_name: str, home: Path
) -> None:
    root = partitioned_table(faults_admin, unique_name, "facts", ["base0", "base1"])
    table = f"hive.{unique_name}.facts"
    owner = open_catalog(home, faults_server.uri)
    manager = owner.manager
    start = threading.Barrier(THREADS)
    errors: list[tuple[str, BaseException]] = []
    counts = {"statements": 0, "refreshes": 0}
    lock = threading.Lock()

    def work(number: int) -> None:
        session = Session(manager)  # one session per user, one manager (caches, pool) for all
        partition = f"t{number}"
        mine: set[str] = set()
        done = 0
        try:
            start.wait(timeout=60)
            for round_ in range(ROUNDS):
                described = session.run_one(f"DESCRIBE {table}")
                assert [row[0] for row in described.rows] == ["id", "p"]
                before = _split_files(session, table)
                assert {"p=base0", "p=base1"} <= {name.split("/")[0] for name in before}
                if round_ == 0:
                    faults_admin.add_partition(unique_name, "facts", [partition], root / f"p={partition}")
                written = write_parquet(root / f"p={partition}", range(round_ * 10, round_ * 10 + 10))
                mine.add(f"p={partition}/{written.name}")
                if round_ % 3 == 2:
                    session.run_one(f"REFRESH DATABASE hive.{unique_name}")
                else:
                    session.run_one(f"REFRESH TABLE {table}")
                after = _split_files(session, table)
                assert mine <= after, f"stale after REFRESH: {sorted(mine - after)} missing"
                assert {name for name in _split_files(session, table, f"p = '{partition}'")} == mine
                done += 5
        except BaseException as error:  # noqa: BLE001 - every failure is the finding
            errors.append((f"thread {number}", error))
        finally:
            with lock:
                counts["statements"] += done
                counts["refreshes"] += done // 5

    began = time.monotonic()
    threads = [threading.Thread(target=work, args=(n,), name=f"statements-{n}") for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    seconds = time.monotonic() - began
    metrics = manager.catalog("hive").metrics()
    final = _split_files(owner, table)
    manager.close()
    assert not errors, f"{len(errors)} thread(s) failed, first: {errors[0][0]}: {errors[0][1]!r}"
    assert len(final) == 2 + THREADS * ROUNDS
    print(
        f"\n{THREADS} threads: {counts['statements']} statements ({counts['refreshes']} REFRESH) in {seconds:.1f}s, "
        f"0 failed, 0 stale; {metrics.total_calls} metastore calls, {metrics.connections_opened} connections, "
        f"{metrics.wait_seconds:.2f}s waiting for a pooled client"
    )
