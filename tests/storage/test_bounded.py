"""A call into an engine that cannot be held to the request timeout, watched from outside: against a silent store
it fails within the timeout with the catalog's error, and its worker, left behind, ends when the engine does;
against a store that answers it goes on for as long as it takes; off S3 it runs as it is."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from hms_catalog.errors import StorageError
from hms_catalog.storage import StorageResolver
from hms_catalog.storage.bounded import bounded_call
from tests.support.s3 import REGION, S3Server

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test

TIMEOUT_S = 1
MARGIN_S = 2.0  # as in test_store_timeouts: the engine's one-second tick, scheduling on a loaded machine


def _workers(name: str) -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == name]


def test_a_call_on_a_silent_store_fails_within_the_request_timeout_and_its_worker_ends_with_it(silent_uri: str) -> None:
    endpoint = silent_uri.replace("thrift://", "http://")
    silent = StorageResolver.from_properties({
        "s3.endpoint": endpoint, "s3.access_key": "key", "s3.secret_key": "secret", "s3.region": REGION,
        "use_path_style": "true", "s3.request.timeout": str(TIMEOUT_S * 1000)}, name="watched")
    engine_gives_up = threading.Event()
    started = time.monotonic()
    with pytest.raises(StorageError) as caught:
        bounded_call(silent, "s3a://bucket/rides", lambda: engine_gives_up.wait(60),
                     probe="s3a://bucket/rides/.hoodie/hoodie.properties", doing="read the Hudi table at")
    took = time.monotonic() - started
    message = str(caught.value)
    assert took < TIMEOUT_S + MARGIN_S, (took, message)
    assert message.startswith("catalog 'watched': cannot read the Hudi table at s3a://bucket/rides: "
                              f"the store at {endpoint} did not answer a HeadObject request "
                              f"within {TIMEOUT_S} s, the request timeout ('s3.request.timeout'"), message
    [worker] = _workers("hms-catalog: read the Hudi table at s3a://bucket/rides")  # one, left behind
    assert worker.daemon and worker.is_alive()
    engine_gives_up.set()
    worker.join(timeout=10)
    assert not worker.is_alive()


def test_a_call_longer_than_the_request_timeout_goes_on_while_the_store_answers(s3_server: S3Server) -> None:
    """A large table's listing may outlast one request timeout: it is not cut off while the store answers."""
    bucket = s3_server.bucket("watched")
    s3_server.client.put_object(Bucket=bucket, Key="rides/.hoodie/hoodie.properties", Body=b"hoodie.table.name=rides\n")
    resolver = StorageResolver.from_properties(
        s3_server.catalog_properties(**{"s3.request.timeout": str(TIMEOUT_S * 1000)}), name="watched")

    def slow() -> str:
        time.sleep(2.5 * TIMEOUT_S)
        return "listed"

    started = time.monotonic()
    assert bounded_call(resolver, f"s3a://{bucket}/rides", slow, probe=f"s3a://{bucket}/rides/.hoodie/hoodie.properties",
                        doing="read the Hudi table at") == "listed"
    assert time.monotonic() - started < 2.5 * TIMEOUT_S + MARGIN_S


def test_the_calls_error_is_raised_to_the_caller(s3_server: S3Server) -> None:
    bucket = s3_server.bucket("watched")
    resolver = StorageResolver.from_properties(s3_server.catalog_properties(), name="watched")

    def broken() -> None:
        time.sleep(0.5)  # past the first look: the store is asked, answers, and the call's own error comes
        raise ValueError("not a Hudi table")

    with pytest.raises(ValueError, match="not a Hudi table"):
        bounded_call(resolver, f"s3a://{bucket}/rides", broken, probe=f"s3a://{bucket}/rides/.hoodie/hoodie.properties",
                     doing="read the Hudi table at")


def test_a_location_off_s3_is_called_on_the_callers_thread(tmp_path: Path) -> None:
    caller = threading.current_thread()
    assert bounded_call(StorageResolver(name="local"), str(tmp_path), threading.current_thread,
                        probe=str(tmp_path / "probe"), doing="read") is caller
