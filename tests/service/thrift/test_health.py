"""The endpoint's view of its catalogs' metastores, over a real catalog manager whose catalog ``c`` reaches a port
nothing listens on: what answers for a lost catalog's databases, and one probe per catalog however many ask.
The endpoint's behaviour over real metastores is in test_federation.py and tests/faults/test_thrift_federation_outage.py."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hms_catalog.cache.catalog_caches import DATABASE_NAMES_KEY
from hms_catalog.client import HmsClientPool
from hms_catalog.errors import MetastoreUnavailableError
from hms_catalog.manager import CatalogManager
from hms_catalog.properties import ClientConfig, parse_uris
from hms_catalog.state import open_definitions
from service.thrift.health import GRACE_CEILING_SECONDS, GRACE_FLOOR_SECONDS, CatalogHealth, grace_seconds

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test


@pytest.fixture
def manager(home: Path, refused_uri: str) -> Iterator[CatalogManager]:
    opened = CatalogManager(open_definitions(home, None))
    opened.create("c", {"type": "hms", "hive.metastore.uris": refused_uri, "hive.metastore.failure.retries": "0"})
    yield opened
    opened.close()


@pytest.fixture
def health(manager: CatalogManager) -> Iterator[CatalogHealth]:
    watching = CatalogHealth(manager, probe_interval=0.05, probe_timeout=0.5)
    yield watching
    watching.stop()


def _probes() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "thrift-probe-c"]


def test_a_lost_catalog_answers_with_its_cached_names_else_those_it_last_listed(manager: CatalogManager,
                                                                                health: CatalogHealth) -> None:
    names = manager.catalog("c").caches.names
    health.seen("c", ("a", "b"))
    health.lose("c", "down for the test")
    assert health.remembered("c") == ("a", "b")  # nothing cached: what it last listed through the endpoint
    names.put(DATABASE_NAMES_KEY, ("a", "b", "listed_elsewhere"), ticket=names.ticket())  # the REST API listed it
    assert health.remembered("c") == ("a", "b", "listed_elsewhere")
    manager.refresh("c")
    assert health.remembered("c") == ("a", "b")


def test_one_probe_per_catalog_however_many_callers_find_it_down(health: CatalogHealth) -> None:
    callers = [threading.Thread(target=lambda: [health.lose("c", "down for the test") for _ in range(50)])
               for _ in range(8)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert len(_probes()) == 1
    outage = health.lost("c")
    assert outage is not None and outage.reason == "down for the test"  # the first reason, kept
    deadline = time.monotonic() + 5
    while not health.report()["c"]["calls_fail_fast"]:  # once its probe has met the refusal itself
        assert time.monotonic() < deadline, "no probe ran"
        time.sleep(0.01)
    assert "could not connect" in health.report()["c"]["reason"]  # as the probe found it, not the first reason
    health.seen("c", ("a",))  # a late listing answered, but the pool has seen every URI fail since: lost again
    assert health.lost("c") is not None
    health.stop()
    deadline = time.monotonic() + 5
    while _probes():
        assert time.monotonic() < deadline, "the probe did not end"
        time.sleep(0.01)


def test_the_grace_is_the_window_the_catalogs_own_retries_ride_out_within_bounds(refused_uri: str) -> None:
    def grace(retries: int, delay: float) -> float:
        pool = HmsClientPool(ClientConfig(uris=parse_uris(refused_uri), retries=retries, retry_delay=delay))
        return grace_seconds(pool)

    assert grace(3, 1.0) == 7.0  # the client's defaults: retries after 1, 2 and 4 s at most
    assert grace(4, 0.5) == 0.5 + 1 + 2 + 4
    assert grace(0, 1.0) == grace(3, 0.1) == GRACE_FLOOR_SECONDS  # a blip is left to the probe before calls are refused
    assert grace(10, 1.0) == GRACE_CEILING_SECONDS  # past a minute a metastore is down, not restarting


def test_calls_addressed_to_a_lost_catalog_are_made_within_its_grace_then_refused(manager: CatalogManager,
                                                                                health: CatalogHealth) -> None:
    """Catalog ``c`` has no retries: its grace is the floor, 2 s, which its own probe does not shorten."""
    live = manager.catalog("c")
    with pytest.raises(MetastoreUnavailableError):
        live.database_names()  # its one URI failed: calls addressed to it alone are now up to the grace
    assert health.refusal("c", live) is None  # found down just now: still made, with the client's own retries
    assert health.report()["c"]["calls_fail_fast"] is False
    deadline = time.monotonic() + 10
    while (refused := health.refusal("c", live)) is None:
        assert time.monotonic() < deadline, "never refused"
        time.sleep(0.02)
    outage = health.lost("c")
    assert outage is not None and outage.seconds() >= GRACE_FLOOR_SECONDS
    assert refused.startswith("catalog 'c': its metastore is unreachable (") and "past its grace of 2 s" in refused, refused
    assert health.report()["c"]["calls_fail_fast"] is True
