"""The request timeout as the whole wait for a request: its share among attempts (pure arithmetic), and a
store that accepts and never answers failing one request, and a listing on many threads, within it.

``MARGIN_S``: the engine measures silence at one-second ticks (the first request of a process can wait one
tick more) and a loaded machine schedules late; nothing else stands between the call and the store here.
"""

from __future__ import annotations

import threading
import time

import pytest

from hms_catalog.cache import CatalogCaches
from hms_catalog.errors import ErrorKind, StorageError, StorageUnavailableError, kind_of
from hms_catalog.properties import CacheConfig
from hms_catalog.storage import StorageConfig, StorageResolver
from hms_catalog.storage.engines import pyiceberg_properties
from hms_catalog.storage.timeouts import RETRY_STRATEGIES, S3Attempts, s3_attempts
from planner.listing import LocalBlockLocator, list_locations
from tests.support.s3 import S3Server

TIMEOUT_MS = 2000
MARGIN_S = 1.5


@pytest.mark.parametrize("timeout", [1.5, 2, 2.5, 3, 5, 8, 10, 15, 30, 60, 120, 3600])
@pytest.mark.parametrize("connect", [0.5, 10.0])
def test_the_attempts_fit_within_the_request_timeout(timeout: float, connect: float) -> None:
    attempts = s3_attempts(timeout, connect)
    assert attempts.worst <= timeout + 1e-9, attempts
    assert attempts.silence == int(attempts.silence) >= 1  # the engine's unit
    assert 0 < attempts.connect_timeout <= connect
    assert attempts.attempts == 1 or attempts.silence >= 2  # a retry is worth a wait of its own


def test_the_default_keeps_three_attempts_within_sixty_seconds() -> None:
    assert s3_attempts(60.0, 10.0) == S3Attempts(attempts=3, connect_timeout=7.0, silence=12.0)


def test_pyiceberg_gets_the_same_share_of_the_timeout() -> None:
    config = StorageConfig.from_properties({"s3.request.timeout": "10s", "s3.connection.timeout": "1000"})
    found = pyiceberg_properties(config, {})
    attempts = s3_attempts(10.0, 1.0)
    assert (found["s3.request-timeout"], found["s3.connect-timeout"]) == (str(attempts.silence), str(attempts.connect_timeout))
    assert found["s3.retry-strategy-impl"] == RETRY_STRATEGIES[attempts.attempts]
    from pyiceberg.io.pyarrow import _import_retry_strategy

    strategy = _import_retry_strategy(found["s3.retry-strategy-impl"])
    assert strategy is not None and strategy.max_attempts == attempts.attempts


def _resolver(endpoint: str, key: str = "s3.request.timeout") -> StorageResolver:
    return StorageResolver(StorageConfig.from_properties({
        "s3.endpoint": endpoint, "s3.access_key": "a", "s3.secret_key": "NOT-SHOWN", "use_path_style": "true",
        key: str(TIMEOUT_MS)}), name="lake")


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_silent_store_fails_a_request_within_the_timeout_naming_it(silent_uri: str, scheme: str) -> None:
    endpoint = silent_uri.replace("thrift://", f"{scheme}://")
    resolver = _resolver(endpoint, "fs.s3a.connection.request.timeout")
    started = time.monotonic()
    with pytest.raises(StorageError) as raised:
        resolver.check_container("s3a://bucket/wh/t")
    took = time.monotonic() - started
    message = str(raised.value)
    assert took < TIMEOUT_MS / 1000 + MARGIN_S, (took, message)
    assert message.startswith("catalog 'lake': cannot reach s3a://bucket/wh/t: "), message
    assert f"the store at {endpoint}" in message and "HeadBucket request" in message, message
    assert "within 2 s, the request timeout ('fs.s3a.connection.request.timeout'" in message, message
    assert "NOT-SHOWN" not in message


def test_a_listing_on_many_threads_fails_within_the_timeout_and_leaves_no_threads_behind(silent_uri: str) -> None:
    """Twenty locations on two threads: before, every queued chunk waited the timeout out in turn."""
    resolver = _resolver(silent_uri.replace("thrift://", "http://"))
    locations = [f"s3a://bucket/wh/t/dt={index}" for index in range(20)]
    before = threading.active_count()
    started = time.monotonic()
    with pytest.raises(StorageError, match=r"cannot list s3a://bucket/wh/t/dt=\d+: the store at .* within 2 s"):
        list_locations([(("db", "t", location), location) for location in locations],
                       CatalogCaches.from_config(CacheConfig()), storage=resolver, recursive=False,
                       block_size=1 << 25, locator=LocalBlockLocator(), parallelism=2)
    took = time.monotonic() - started
    assert took < TIMEOUT_MS / 1000 + MARGIN_S, took
    assert threading.active_count() - before <= 2  # at most the two calls in flight, each ending by itself
    deadline = time.monotonic() + TIMEOUT_MS / 1000 + MARGIN_S
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threading.active_count() == before


def test_a_store_out_of_reach_is_unavailable_and_one_that_refuses_is_not(silent_uri: str, refused_uri: str,
                                                                         s3_server: S3Server) -> None:
    """Silence and a refused connection are worth a retry later (StorageUnavailableError, 503 on every HTTP
    protocol); a real S3 API that answers and refuses a wrong key is a StorageError the retry would not change."""
    for uri in (silent_uri, refused_uri):
        with pytest.raises(StorageUnavailableError, match="catalog 'lake': cannot reach s3a://bucket/wh/t"):
            _resolver(uri.replace("thrift://", "http://")).check_container("s3a://bucket/wh/t")
    bucket = s3_server.bucket("refusing")
    wrong = StorageResolver(StorageConfig.from_properties({
        "s3.endpoint": s3_server.endpoint, "s3.access_key": s3_server.access_key, "s3.secret_key": "not-the-key",
        "use_path_style": "true", "s3.request.timeout": str(TIMEOUT_MS)}), name="lake")
    with pytest.raises(StorageError) as raised:
        wrong.check_container(f"s3a://{bucket}/wh/t")
    assert not isinstance(raised.value, StorageUnavailableError) and kind_of(raised.value) is ErrorKind.UPSTREAM_REFUSED
    assert "not-the-key" not in str(raised.value)
