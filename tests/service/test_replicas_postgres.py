"""Replicas on a real PostgreSQL store: failover under load, a killed event follower, the store restarting."""

from __future__ import annotations

import os
import random
import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.errors import HmsCatalogError, StoreUnavailableError
from hms_catalog.remote import CatalogServiceClient
from tests.service.conftest import EVENTS, hms_properties
from tests.support.hms import Admin
from tests.support.postgres import PostgresServer
from tests.support.replicas import Replica, fresh_schema

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test

RUN_SECONDS = float(os.environ.get("HMS_REPLICA_RUN_SECONDS", "6"))
LEASE_SECONDS = 2.0  # serve --event-lease: the lease moves within it once its holder is killed
READERS, WRITERS = 32, 2


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text(secrets.token_urlsafe(32))
    path.chmod(0o600)
    return path


@pytest.fixture
def replicas(request: pytest.FixtureRequest, postgres: PostgresServer, tmp_path: Path, token_file: Path) -> Iterator[list[Replica]]:
    count = getattr(request, "param", 3)
    store = fresh_schema(postgres)
    started = [Replica(tmp_path / f"replica{index}", store, postgres.password_file, token_file, "--event-lease", str(LEASE_SECONDS))
               for index in range(count)]
    try:
        for replica in started:
            replica.start()
        yield started
    finally:
        for replica in started:
            replica.stop()


def _changes(replica: Replica, catalog: str) -> list[tuple[int, str, str, str]]:
    client = replica.client()
    try:
        return [(c["version"], c["kind"], c["object"], c["source"]) for c in client.changes(catalog)["changes"]]
    finally:
        client.close()


def _holder(replica: Replica) -> dict[str, Any]:
    store: Any = replica.health()["store"]
    return dict(store["event_followers"].get("c", {}))


@pytest.mark.slow
def test_three_replicas_under_load_one_killed_and_restarted(replicas: list[Replica], metastore_uri: str, admin: Admin,
                                                            unique_name: str) -> None:
    """32 readers and 2 writers over 3 replicas for RUN_SECONDS; the event follower is ``kill -9``ed halfway and
    restarted: no request fails, every replica and reader agrees on every version, the lease moves within its
    bound, and every metastore event made meanwhile is logged exactly once."""
    admin.create_database(unique_name)
    admin.create_table(unique_name, "t", [("id", "int")])
    urls = [replica.url for replica in replicas]
    setup = CatalogServiceClient(urls, replicas[0].token)
    setup.create_catalog("c", hms_properties(metastore_uri, **EVENTS))
    setup.close()
    for replica in replicas:  # every replica has the catalog live: each starts a follower, one holds the lease
        client = replica.client()
        assert client.tables("c", unique_name) == ["t"]
        client.close()
    deadline = time.monotonic() + 20
    while not _holder(replicas[0]).get("live"):
        assert time.monotonic() < deadline, "no replica took the event lease"
        time.sleep(0.2)

    failures: list[str] = []
    seen: dict[int, set[tuple[str, str, str]]] = {}
    seen_lock = threading.Lock()
    stop = threading.Event()
    requests = [0]

    def reader(index: int) -> None:
        order = urls[index % 3:] + urls[: index % 3]  # clients spread over the replicas
        client = CatalogServiceClient(order, replicas[0].token, timeout=30, connect_timeout=2)
        since = 0
        try:
            while not stop.is_set():
                try:
                    client.table("c", unique_name, "t")
                    answer = client.changes("c", since)
                except HmsCatalogError as error:
                    failures.append(f"reader {index}: {error}")
                    continue
                with seen_lock:
                    requests[0] += 2
                    for change in answer["changes"]:
                        seen.setdefault(change["version"], set()).add((change["kind"], change["object"], change["source"]))
                if answer["changes"]:
                    since = answer["changes"][-1]["version"]
                time.sleep(random.uniform(0.0, 0.05))
        finally:
            client.close()

    made: list[str] = []

    def writer(index: int) -> None:
        client = CatalogServiceClient(urls[::-1] if index else urls, replicas[0].token, timeout=30, connect_timeout=2)
        number = 0
        try:
            while not stop.is_set():
                number += 1
                try:
                    if index == 0:
                        client.refresh("c", unique_name, "t")
                    else:  # a definition written: every replica rebuilds the catalog and logs it
                        client.alter_catalog("c", properties={"hms-catalog.test.writer": str(number)})
                except HmsCatalogError as error:
                    failures.append(f"writer {index}: {error}")
                if index == 0 and number % 10 == 0:  # changes made behind the service: only events tell of them
                    name = f"ev{number}"
                    admin.create_table(unique_name, name, [("x", "int")])
                    made.append(name)
                time.sleep(0.1 if index == 0 else 1.0)
        finally:
            client.close()

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(READERS)]
    threads += [threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)]
    for thread in threads:
        thread.start()
    try:
        time.sleep(RUN_SECONDS / 2)
        holder = _holder(replicas[0])
        victim = next(r for r in replicas if r.health()["store"]["replica"] == holder["holder"])  # type: ignore[index]
        victim.kill()
        killed_at = time.monotonic()
        others = [r for r in replicas if r is not victim]
        moved_after = None
        while time.monotonic() - killed_at < LEASE_SECONDS + 20:
            now = _holder(others[0])
            if now.get("live") and now["holder"] != holder["holder"]:
                moved_after = time.monotonic() - killed_at
                assert now["lease"] > holder["lease"]
                break
            time.sleep(0.2)
        bound = LEASE_SECONDS + 5  # the lease's time, and a loaded machine's delays
        assert moved_after is not None and moved_after < bound, f"the event lease did not move within {bound} s ({moved_after})"
        victim.start()
        time.sleep(max(0.0, RUN_SECONDS / 2 - (time.monotonic() - killed_at)))
    finally:
        stop.set()
        for thread in threads:
            thread.join(60)
    assert failures == [], f"{len(failures)} of {requests[0]} requests failed, first: {failures[:5]}"
    # One numbering: every version any reader saw named one change, and every replica answers the same log.
    assert all(len(entries) == 1 for entries in seen.values()), {v: e for v, e in seen.items() if len(e) > 1}
    time.sleep(1)
    logs = [_changes(replica, "c") for replica in replicas]
    assert logs[0] == logs[1] == logs[2]
    assert [version for version, *_ in logs[0]] == list(range(logs[0][0][0], logs[0][-1][0] + 1))  # no gap
    for version, kind, obj, source in logs[0]:
        if version in seen:
            assert seen[version] == {(kind, obj, source)}
    # Every table made behind the service was logged once, from whichever replica followed at the time.
    deadline = time.monotonic() + 15
    while True:
        logged = [obj for _, kind, obj, source in _changes(replicas[0], "c") if source == "event" and kind == "added"]
        if all(f"table {unique_name}.{name}" in logged for name in made) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    for name in made:
        assert logged.count(f"table {unique_name}.{name}") == 1, (name, logged)
    assert made, "the run made no table behind the service"


@pytest.mark.parametrize("replicas", [2], indirect=True)
def test_the_store_restarting_fails_requests_clearly_and_they_resume(replicas: list[Replica], postgres: PostgresServer,
                                                                     metastore_uri: str) -> None:
    client = CatalogServiceClient([r.url for r in replicas], replicas[0].token, timeout=20, connect_timeout=2)
    try:
        client.create_catalog("c", hms_properties(metastore_uri))
        client.refresh("c")
        postgres.stop()
        try:
            started = time.monotonic()
            with pytest.raises(StoreUnavailableError, match="catalog store .* cannot be reached"):
                client.refresh("c")
            assert time.monotonic() - started < 20  # an answer, not a hang
            store: Any = replicas[0].health()["store"]
            assert store["status"].startswith("unavailable")
            assert "password" not in str(store).lower() or postgres.password not in str(store)
        finally:
            postgres.start()
        deadline = time.monotonic() + 20
        while True:  # no service restart: the replicas reconnect on their own
            try:
                version = client.refresh("c")["version"]
                break
            except StoreUnavailableError:
                assert time.monotonic() < deadline, "the replicas did not reconnect to the restarted store"
                time.sleep(0.5)
        assert version >= 2
        assert _changes(replicas[0], "c") == _changes(replicas[1], "c")
    finally:
        client.close()
