"""One of two federated metastores stopped, through the thrift endpoint and a real thrift client: after the one
bounded wait that finds it down, calls merging the catalogs answer at once with the names it last answered; a
call addressed to it alone that its caches cannot answer is made with the catalog's own retries for the grace
those retries ride out (so a restart within it fails no call), and past that grace fails fast naming it; once
it is back, found by the endpoint's own probe, its names are fresh again."""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from hms_catalog.client.hive_thrift import MetastoreThriftClient, ttypes
from hms_catalog.manager import CatalogManager
from hms_catalog.state import open_definitions
from service.audit import AuditLog
from service.thrift import ThriftEndpoint, ThriftSettings
from tests.faults.conftest import FaultsMetastore
from tests.service.thrift.conftest import thrift_client
from tests.support import hms

pytestmark = [pytest.mark.metastore, pytest.mark.slow]

# The old answer took the whole listing wait, 1.00 s, on every call while the metastore was down. An answer from
# what was last seen takes milliseconds; these bounds leave room for a loaded two-core machine and stay well under.
AT_ONCE = 0.5
AT_ONCE_MEDIAN = 0.25
BACK_WITHIN = 60.0  # the metastore's own restart is most of it
# Retries 0.25, 0.5 and 1 s apart at most: a grace of 2 s (its floor), so a test sees it end without waiting long.
BRIEF = {"hive.metastore.client.connect.retry.delay": "0.25"}
# Backoff ceilings 0.1, 0.2, 0.4 ... 25.6, then 30 s: retries that ride out at least 70 s, and the grace's ceiling,
# 60 s, both far longer than a restart of the embedded metastore takes.
PATIENT = {"hive.metastore.failure.retries": "12", "hive.metastore.client.connect.retry.delay": "0.1",
           "hive.metastore.client.connect.timeout": "2",
           "schema.cache.ttl-second": "0"}  # no table is cached: get_table always asks the metastore

_T = TypeVar("_T")


def _timed(call: Callable[[], _T]) -> tuple[float, _T]:
    started = time.monotonic()
    answer = call()
    return time.monotonic() - started, answer


def _wait_for(condition: Callable[[], bool], timeout: float) -> float:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, "condition not met in time"
        time.sleep(0.05)
    return time.monotonic() - started


class _Federation:
    """An endpoint over ``hive`` (the session's metastore) and ``lake`` (the faults metastore), the client's defaults
    (3 retries a second apart, as the endpoint's users configure none) for both unless ``lake`` says otherwise."""

    def __init__(self, home: Path, primary_uri: str, lake_uri: str, lake: dict[str, str] | None = None) -> None:
        self.manager = CatalogManager(open_definitions(home, None))
        self.manager.create("hive", {"type": "hms", "hive.metastore.uris": primary_uri})
        self.manager.create("lake", {"type": "hms", "hive.metastore.uris": lake_uri, **(lake or {})})
        self.endpoint = ThriftEndpoint(self.manager, AuditLog(home / "audit.log"), ThriftSettings(port=0)).start()

    def unreachable(self) -> dict[str, Any]:
        found: dict[str, Any] = self.endpoint.health()["unreachable"]
        return found

    def fails_fast(self) -> bool:
        """Whether calls addressed to ``lake`` alone fail at once: it is down, and has been for longer than its grace."""
        return bool(self.unreachable().get("lake", {}).get("calls_fail_fast"))

    def close(self) -> None:
        self.endpoint.stop()
        self.manager.close()


@pytest.fixture
def federate(home: Path, metastore_uri: str, faults_server: FaultsMetastore) -> Iterator[Callable[..., _Federation]]:
    """Opens the federation, ``lake`` with the properties given (one per test)."""
    opened: list[_Federation] = []

    def federation(lake: dict[str, str] | None = None) -> _Federation:
        opened.append(_Federation(home, metastore_uri, faults_server.uri, lake))
        return opened[-1]

    try:
        yield federation
    finally:
        for each in opened:
            each.close()
        faults_server.ensure_running()


@pytest.fixture
def federation(federate: Callable[..., _Federation]) -> _Federation:
    return federate()


def test_a_stopped_metastore_answers_at_once_from_what_it_last_listed(
    federate: Callable[..., _Federation], faults_server: FaultsMetastore, faults_admin: hms.Admin, unique_name: str
) -> None:
    federation = federate(BRIEF)
    faults_admin.create_database(unique_name)
    faults_admin.create_table(unique_name, "t", [("a", "int")])
    lake_db = f"lake__{unique_name}"
    with thrift_client(federation.endpoint.address[1]) as client:
        listed = client.get_all_databases()
        assert lake_db in listed
        assert client.get_table(lake_db, "t").tableName == "t"  # cached from now on
        made_since = f"{unique_name}_new"
        faults_admin.create_database(made_since)  # the endpoint's listing is cached: it has not seen this one

        faults_server.stop()
        assert client.get_table(lake_db, "t").dbName == lake_db  # a cached table is answered from the cache, as before
        federation.manager.refresh("lake")  # REFRESH CATALOG lake: nothing of it cached, only what it last answered

        first, names = _timed(client.get_all_databases)
        later = [_timed(client.get_all_databases) for _ in range(5)]
        seconds = [took for took, _ in later]
        print(f"\nlake stopped: first get_all_databases {first * 1000:.1f} ms (finds it down), then "
              f"{', '.join(f'{took * 1000:.1f}' for took in seconds)} ms")
        assert names == listed  # its last-seen names, in their place
        assert all(answer == listed for _, answer in later)
        assert first < AT_ONCE  # a stopped metastore refuses: finding it down costs one refused connection
        assert max(seconds) < AT_ONCE and statistics.median(seconds) < AT_ONCE_MEDIAN

        took, matching = _timed(lambda: client.get_databases("lake__*"))
        assert matching == [name for name in listed if name.startswith("lake__")] and took < AT_ONCE
        took, metas = _timed(lambda: client.get_table_meta("lake__*", "*", None))
        assert metas == [] and took < AT_ONCE  # its tables are not cached: none to answer with
        _wait_for(federation.fails_fast, 10)  # its grace, 2 s from when it was found down
        started = time.monotonic()
        with pytest.raises(ttypes.MetaException) as raised:
            client.get_table(lake_db, "t")
        assert time.monotonic() - started < AT_ONCE
        assert "catalog 'lake'" in raised.value.message and "unreachable" in raised.value.message, raised.value.message
        assert set(federation.unreachable()) == {"lake"}

        faults_server.start()
        waited = _wait_for(lambda: not federation.unreachable(), BACK_WITHIN)  # the probe finds it; no client asks
        print(f"lake restarted: the endpoint's probe found it back {waited:.2f} s after it answered")
        took, names = _timed(client.get_all_databases)
        assert lake_db in names and f"lake__{made_since}" in names  # fresh: listed again, not the last-seen names
        assert took < AT_ONCE
        assert client.get_table(lake_db, "t").tableName == "t"


def test_calls_merging_catalogs_stop_waiting_once_a_catalog_is_known_down(
    federation: _Federation, faults_server: FaultsMetastore, metastore_uri: str
) -> None:
    """With nothing of it ever seen, a stopped metastore's catalog is left out at once, call after call."""
    with thrift_client(federation.endpoint.address[1]) as client:
        faults_server.stop()
        primary = _primary_databases(metastore_uri)
        seconds = []
        for _ in range(4):
            took, names = _timed(client.get_all_databases)
            assert names == primary
            seconds.append(took)
        print(f"\nlake stopped, never listed: get_all_databases {', '.join(f'{took * 1000:.1f}' for took in seconds)} ms")
        assert max(seconds) < AT_ONCE


def _primary_databases(uri: str) -> list[str]:
    with thrift_client(int(uri.rsplit(":", 1)[1])) as direct:
        answer: list[str] = direct.get_all_databases()
        return answer


def test_a_call_addressed_to_it_alone_is_made_with_its_retries_within_the_grace_then_fails_fast(
    federate: Callable[..., _Federation], faults_server: FaultsMetastore, faults_admin: hms.Admin, unique_name: str
) -> None:
    federation = federate(BRIEF)  # 3 retries at most 0.25, 0.5 and 1 s apart: a call takes 0.875 s at least; grace 2 s
    faults_admin.create_database(unique_name)
    faults_admin.create_table(unique_name, "t", [("a", "int")])
    lake_db = f"lake__{unique_name}"
    with thrift_client(federation.endpoint.address[1]) as client:
        listed = client.get_all_databases()
        faults_server.stop()
        within = []
        for _ in range(2):  # the first finds it down; the second knows it down, and is within the grace all the same
            started = time.monotonic()
            with pytest.raises(ttypes.MetaException) as raised:
                client.get_table(lake_db, "t")  # not cached: asked, with the catalog's retries
            within.append(time.monotonic() - started)
            message = raised.value.message
            assert message.startswith("catalog 'lake': metastore call ") and "failed after 4 attempt(s)" in message, message
            assert set(federation.unreachable()) == {"lake"}
        print(f"\nlake stopped: get_table within its grace failed after {within[0]:.2f} s, then {within[1]:.2f} s")
        assert min(within) > 0.8, within
        took, names = _timed(client.get_all_databases)
        assert names == listed and took < AT_ONCE  # merged calls answer at once, grace or not

        _wait_for(federation.fails_fast, 10)
        for call in (lambda: client.get_table(lake_db, "t"), lambda: client.get_functions(lake_db, "*"),
                     lambda: client.get_all_tables(lake_db)):
            started = time.monotonic()
            with pytest.raises(ttypes.MetaException) as raised:
                call()
            took = time.monotonic() - started
            message = raised.value.message
            assert took < AT_ONCE, took
            assert message.startswith("catalog 'lake': its metastore is unreachable (") and "could not connect" in message
            assert "past its grace of 2 s" in message, message
        took, names = _timed(client.get_all_databases)
        assert names == listed and took < AT_ONCE


def test_a_restart_within_the_grace_fails_no_call_addressed_to_it(
    federate: Callable[..., _Federation], faults_server: FaultsMetastore, faults_admin: hms.Admin, unique_name: str
) -> None:
    """Clients looping calls the caches cannot answer (a forwarded one and an uncached table) through a restart of
    lake's metastore: each call made while it is down waits with the catalog's retries and is answered once it is
    back; meanwhile get_all_databases answers at once."""
    federation = federate(PATIENT)
    faults_admin.create_database(unique_name)
    faults_admin.create_table(unique_name, "t", [("a", "int")])
    lake_db = f"lake__{unique_name}"
    port = federation.endpoint.address[1]
    with thrift_client(port) as client:
        listed = client.get_all_databases()
    down, back = threading.Event(), threading.Event()
    calls: list[tuple[str, float, float, str | None]] = []  # (call, started, seconds, error)

    def loop(connection: MetastoreThriftClient, first: str) -> None:
        each = {"get_functions": lambda: connection.get_functions(lake_db, "*"),  # forwarded
                "get_table": lambda: connection.get_table(lake_db, "t")}  # never cached
        down.wait()
        while not back.is_set():
            for name, call in sorted(each.items(), key=lambda item: item[0] != first):
                started = time.monotonic()
                error = None
                try:
                    call()
                except Exception as failed:  # noqa: BLE001 - every failure is the finding
                    error = f"{type(failed).__name__}: {failed}"
                calls.append((name, started, time.monotonic() - started, error))
            back.wait(0.05)

    with thrift_client(port, timeout_ms=180_000) as one, thrift_client(port, timeout_ms=180_000) as two, \
            thrift_client(port) as client:
        loops = [threading.Thread(target=loop, args=pair) for pair in ((one, "get_functions"), (two, "get_table"))]
        for each in loops:
            each.start()
        try:
            faults_server.stop()
            stopped = time.monotonic()
            merged = [_timed(client.get_all_databases) for _ in range(3)]  # the first finds it down
            assert all(names == listed for _, names in merged)
            assert max(took for took, _ in merged) < AT_ONCE, merged
            assert "lake" in federation.unreachable()
            down.set()  # the loops' calls are made while it is known down
            time.sleep(1.0)
            restart = faults_server.start()
            answering = time.monotonic()
            _wait_for(lambda: not federation.unreachable(), BACK_WITHIN)
            time.sleep(0.5)
        finally:
            back.set()
            for each in loops:
                each.join(timeout=200)
    during = [each for each in calls if stopped <= each[1] < answering]
    print(f"\nlake down {answering - stopped:.1f} s (its start {restart:.1f} s): {len(calls)} calls, {len(during)} "
          f"made while it was down, the longest {max(seconds for _, _, seconds, _ in calls):.1f} s")
    assert answering - stopped < 60.0, "the restart outlasted the grace: the test proves nothing"
    assert [each for each in calls if each[3] is not None] == []
    assert {name for name, *_ in during} == {"get_functions", "get_table"}
    assert max(seconds for _, _, seconds, _ in during) > 1.0  # they waited it out
