"""The followers of the change feed and the sync_ddl wait on them, with a clock the tests move."""

from __future__ import annotations

import threading
import time

import pytest

from hms_catalog.cache.versions import CatalogObject, CatalogVersions, ChangeKind, ChangeSource
from hms_catalog.errors import ConfigurationError
from service.sync_ddl import FollowerRegistry, SyncDdlTimeoutError, SyncWaiter, sync_timeout


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_followers_are_live_while_polling_or_for_a_while_after() -> None:
    clock = Clock()
    registry = FollowerRegistry(live_seconds=30, clock=clock)
    registry.acknowledge("Hive", "a", 5)
    with registry.polling("hive", "b", 7):
        clock.now += 100  # a long poll open for long: still live
        assert registry.live("HIVE") == {"b": 7}  # a was last seen 100 s ago: gone
    clock.now += 29
    assert registry.live("hive") == {"b": 7}
    clock.now += 2
    assert registry.live("hive") == {}
    assert registry.live("other") == {}


def test_a_wait_returns_once_every_live_follower_is_there() -> None:
    registry = FollowerRegistry()
    assert registry.wait("hive", 10, timeout=0.1) == []  # nobody to wait for: at once
    registry.acknowledge("hive", "a", 3)
    registry.acknowledge("hive", "b", 12)
    done: list[list[str]] = []
    waiting = threading.Thread(target=lambda: done.append(registry.wait("hive", 10, timeout=10)))
    waiting.start()
    waiting.join(timeout=0.3)
    assert waiting.is_alive()  # a lags
    registry.acknowledge("hive", "a", 10)
    waiting.join(timeout=5)
    assert done == [["a", "b"]]


def test_a_wait_times_out_naming_the_laggards() -> None:
    registry = FollowerRegistry()
    registry.acknowledge("hive", "slow-driver", 3)
    registry.acknowledge("hive", "quick", 11)
    began = time.monotonic()
    with pytest.raises(SyncDdlTimeoutError) as timed_out:
        registry.wait("hive", 10, timeout=0.4)
    assert 0.3 < time.monotonic() - began < 3
    message = str(timed_out.value)
    assert "'slow-driver' at version 3" in message and "quick" not in message and "1 of 2" in message and "0.4 s" in message
    assert timed_out.value.lagging == {"slow-driver": 3}
    stopping = threading.Event()
    stopping.set()
    with pytest.raises(SyncDdlTimeoutError, match="stopping"):
        registry.wait("hive", 10, timeout=30, stopping=stopping)


def test_the_waiter_waits_for_the_newest_logged_change_and_reads_its_timeout() -> None:
    versions = CatalogVersions()
    registry = FollowerRegistry()
    options: dict[str, str] = {}
    waiter = SyncWaiter(registry, lambda name: versions, options)
    assert "no live follower" in waiter("hive", 1)
    changed = versions.record(ChangeKind.CHANGED, CatalogObject.for_table("db", "t"), ChangeSource.DDL)
    versions.loaded(None)  # a load moves the counter without a change a follower would wake for
    registry.acknowledge("hive", "a", changed)
    assert "seen by every live follower" in waiter("hive", versions.current)  # waits for `changed`, which a has
    assert "nothing changed" in waiter.wait_for("hive", versions.current, since=versions.current)
    options["sync_ddl_timeout"] = "0.2"
    registry.acknowledge("hive", "a", changed - 1)
    with pytest.raises(SyncDdlTimeoutError, match="within 0.2 s"):
        waiter("hive", changed)


@pytest.mark.parametrize("value", ["0", "-1", "soon", "100000"])
def test_a_bad_timeout_is_refused_naming_the_option(value: str) -> None:
    with pytest.raises(ConfigurationError, match="sync_ddl_timeout"):
        sync_timeout({"sync_ddl_timeout": value})
    assert sync_timeout({}) == 30.0 and sync_timeout({"sync_ddl_timeout": "2.5"}) == 2.5
