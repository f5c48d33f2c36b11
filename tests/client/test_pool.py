"""The pooled client against the real embedded metastore, a refused port and a server that never answers."""

from __future__ import annotations

import threading
import time

import pytest
from thrift.transport.TTransport import TTransportException

from hms_catalog.client import HmsClientPool
from hms_catalog.client._transport import open_connection
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import MetastoreUnavailableError, PoolClosedError, PoolExhaustedError
from hms_catalog.properties import ClientConfig, MetastoreUri, parse_uris


def _config(uri: str, **overrides: object) -> ClientConfig:
    settings: dict[str, object] = {"uris": parse_uris(uri), "pool_size": 2, "retry_delay": 0.01, "borrow_timeout": 5.0}
    settings.update(overrides)
    return ClientConfig(**settings)  # type: ignore[arg-type]


def test_the_pool_opens_connections_only_when_borrowed(metastore_uri: str) -> None:
    pool = HmsClientPool(_config(metastore_uri))
    assert pool.metrics.snapshot().connections_opened == 0
    assert "default" in pool.call("get_all_databases")
    assert pool.metrics.snapshot().connections_opened == 1
    assert pool.call("get_all_databases") and pool.metrics.snapshot().connections_opened == 1
    pool.close()


def test_the_pool_is_bounded_and_a_borrow_waits_then_fails_clearly(metastore_uri: str) -> None:
    pool = HmsClientPool(_config(metastore_uri, pool_size=2, borrow_timeout=0.3))
    with pool.borrow(), pool.borrow():
        started = time.monotonic()
        with pytest.raises(PoolExhaustedError, match=r"all 2 metastore clients stayed borrowed for 0.3s"):
            with pool.borrow():
                pass
        assert time.monotonic() - started >= 0.29
    assert pool.metrics.snapshot().wait_seconds >= 0.29
    with pool.borrow() as client:
        assert client.get_all_databases()
    pool.close()


def test_a_waiting_borrower_gets_the_client_given_back(metastore_uri: str) -> None:
    pool = HmsClientPool(_config(metastore_uri, pool_size=1, borrow_timeout=5.0))
    got: list[float] = []
    with pool.borrow():
        waiter = threading.Thread(target=lambda: got.append(len(pool.call("get_all_databases"))))
        waiter.start()
        time.sleep(0.2)
        assert got == []
    waiter.join(timeout=5)
    assert got and pool.metrics.snapshot().connections_opened == 1
    pool.close()


def test_many_threads_share_a_bounded_number_of_connections(metastore_uri: str) -> None:
    pool = HmsClientPool(_config(metastore_uri, pool_size=3))
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(20):
                pool.call("get_all_databases")
        except BaseException as error:  # noqa: BLE001 - pragma: no cover - the thread's error is reported below
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    snapshot = pool.metrics.snapshot()
    assert not errors
    assert snapshot.calls == {"get_all_databases": 240}
    assert 1 <= snapshot.connections_opened <= 3
    pool.close()


def test_a_client_that_broke_is_discarded_not_returned(metastore_uri: str) -> None:
    pool = HmsClientPool(_config(metastore_uri))
    with pytest.raises(TTransportException):
        with pool.borrow() as client:
            client.get_all_databases()
            client._connection.close()  # the connection dies under the client
            client.get_all_databases()
    assert pool.idle_count == 0
    assert pool.metrics.snapshot().clients_discarded == 1
    with pool.borrow() as client:
        assert client.get_all_databases()
    assert pool.metrics.snapshot().connections_opened == 2
    pool.close()


def test_a_metastore_answer_is_not_a_broken_client_and_is_not_retried(metastore_uri: str) -> None:
    pool = HmsClientPool(_config(metastore_uri, retries=3))
    with pytest.raises(ttypes.NoSuchObjectException):
        pool.call("get_table", "default", "no_such_table")
    snapshot = pool.metrics.snapshot()
    assert snapshot.calls == {"get_table": 1}
    assert snapshot.errors == {"get_table": 1}
    assert snapshot.retries == 0 and snapshot.clients_discarded == 0
    assert pool.idle_count == 1
    pool.close()


def test_close_is_idempotent_and_borrowing_after_it_fails(metastore_uri: str) -> None:
    pool = HmsClientPool(_config(metastore_uri))
    pool.call("get_all_databases")
    with pool.borrow() as client:
        pool.close()
        pool.close()
        assert client.get_all_databases()  # a client already out finishes its work
    assert pool.idle_count == 0  # and is closed on return, not pooled
    with pytest.raises(PoolClosedError, match="closed"):
        with pool.borrow():
            pass
    with pytest.raises(PoolClosedError):
        pool.call("get_all_databases")


def test_a_refused_uri_fails_over_to_the_next_and_rests_in_backoff(refused_uri: str, metastore_uri: str) -> None:
    pool = HmsClientPool(_config(f"{refused_uri},{metastore_uri}", pool_size=2, uri_backoff=60.0))
    with pool.borrow() as first, pool.borrow() as second:
        assert str(first.uri) == str(second.uri) == metastore_uri
        assert first.get_all_databases() and second.get_all_databases()
    snapshot = pool.metrics.snapshot()
    assert snapshot.connect_failures == 1  # the second connection skipped the URI resting in backoff
    assert snapshot.connections_opened == 2
    pool.close()


def test_a_uri_is_tried_again_once_its_backoff_is_over(refused_uri: str, metastore_uri: str) -> None:
    now = [1000.0]
    pool = HmsClientPool(_config(f"{refused_uri},{metastore_uri}", pool_size=1, uri_backoff=30.0), clock=lambda: now[0])
    assert [str(u) for u in pool._candidates()] == [refused_uri, metastore_uri]
    pool.call("get_all_databases")
    assert [str(u) for u in pool._candidates()] == [metastore_uri, refused_uri]
    now[0] += 31.0
    assert [str(u) for u in pool._candidates()] == [refused_uri, metastore_uri]
    pool.close()


def test_transport_failures_are_retried_with_capped_exponential_backoff(refused_uri: str, metastore_uri: str) -> None:
    target = parse_uris(metastore_uri)[0]
    refusals = [3]
    delays: list[float] = []

    def flaky_connect(uri: MetastoreUri, **timeouts: float):  # type: ignore[no-untyped-def]
        if refusals[0]:
            refusals[0] -= 1
            raise ConnectionRefusedError("refused for the test")
        return open_connection(target, **timeouts)

    pool = HmsClientPool(
        _config(metastore_uri, retries=4, retry_delay=0.1), connect=flaky_connect, sleep=delays.append, jitter=lambda: 1.0
    )
    assert pool.call("get_all_databases")
    assert delays == [0.1, 0.2, 0.4]
    assert pool.metrics.snapshot().retries == 3
    pool.close()


def test_backoff_has_jitter_and_a_cap(metastore_uri: str) -> None:
    pool = HmsClientPool(_config(metastore_uri, retry_delay=1.0), jitter=lambda: 0.0)
    assert pool._backoff(0) == 0.5
    assert pool._backoff(3) == 4.0
    assert pool._backoff(20) == 15.0  # half of the 30 s cap at the lowest jitter
    pool.close()


def test_all_uris_down_gives_a_clear_error_after_the_retries(refused_uri: str) -> None:
    pool = HmsClientPool(_config(refused_uri, retries=2), sleep=lambda _: None)
    with pytest.raises(MetastoreUnavailableError, match=r"get_all_databases failed after 3 attempt\(s\).*could not connect"):
        pool.call("get_all_databases")
    assert pool.metrics.snapshot().connect_failures == 3
    pool.close()


def test_a_hung_server_times_out_instead_of_hanging(silent_uri: str) -> None:
    pool = HmsClientPool(_config(silent_uri, socket_timeout=0.4, retries=1))
    started = time.monotonic()
    with pytest.raises(MetastoreUnavailableError, match=r"no answer within 0.4s \(hive.metastore.client.socket.timeout\)"):
        pool.call("get_all_databases")
    assert time.monotonic() - started < 5
    snapshot = pool.metrics.snapshot()
    assert snapshot.retries == 1 and snapshot.clients_discarded == 2
    pool.close()


def test_a_hung_server_is_failed_over_to_a_live_one(silent_uri: str, metastore_uri: str) -> None:
    pool = HmsClientPool(_config(f"{silent_uri},{metastore_uri}", socket_timeout=0.4, retries=2))
    assert "default" in pool.call("get_all_databases")
    assert pool.metrics.snapshot().retries == 1
    assert [str(u) for u in pool._candidates()][0] == metastore_uri
    pool.close()


def test_with_every_uri_failing_the_error_says_what_each_one_did(
    silent_uri: str, refused_uri: str, caplog: pytest.LogCaptureFixture
) -> None:
    pool = HmsClientPool(_config(f"{silent_uri},{refused_uri}", socket_timeout=0.3, retries=1, uri_backoff=60.0))
    with pytest.raises(MetastoreUnavailableError) as raised:
        pool.call("get_all_databases")
    message = str(raised.value)
    assert message.startswith(
        f"metastore call get_all_databases failed after 2 attempt(s): {silent_uri}: no answer within 0.3s "
        f"(hive.metastore.client.socket.timeout): read timeout; {refused_uri}: could not connect: "
    )
    assert any(silent_uri in record.getMessage() and "failed on transport" in record.getMessage() for record in caplog.records)
    pool.close()


def test_a_protocol_error_breaks_the_client() -> None:
    from thrift.protocol.TProtocol import TProtocolException

    from hms_catalog.client.pool import is_application_error

    assert not is_application_error(TProtocolException(TProtocolException.BAD_VERSION))
    assert is_application_error(ttypes.NoSuchObjectException("gone"))


def test_idle_connections_to_a_failed_uri_do_not_use_up_the_retries(metastore_uri: str) -> None:
    target = parse_uris(metastore_uri)[0]
    opened: list[object] = []

    def connect(uri: MetastoreUri, **timeouts: float):  # type: ignore[no-untyped-def]
        connection = open_connection(target, **timeouts)
        opened.append(connection)
        return connection

    pool = HmsClientPool(_config(metastore_uri, pool_size=3, retries=1, uri_backoff=0.0), connect=connect)
    with pool.borrow() as a, pool.borrow() as b, pool.borrow() as c:
        for client in (a, b, c):
            client.get_all_databases()
    assert pool.idle_count == 3
    for connection in opened:  # the server restarts: every pooled connection is now dead
        connection._transport.close()  # type: ignore[attr-defined]
    assert pool.call("get_all_databases")  # one failure drops all three stale connections, the retry succeeds
    assert pool.metrics.snapshot().retries == 1
    pool.close()


# What the pool knows of its metastore's health, its probe, and a caller's refusal ---------------------------------


def test_unreachable_says_how_each_uri_failed_until_one_answers_again(refused_uri: str, silent_uri: str,
                                                                       metastore_uri: str) -> None:
    """What a caller waiting on a call reads to stop waiting for a metastore that refuses (before the retries)."""
    pool = HmsClientPool(_config(f"{refused_uri},{silent_uri}", socket_timeout=0.3, retries=0))
    assert pool.unreachable() is None  # nothing seen yet
    with pytest.raises(MetastoreUnavailableError):
        pool.call("get_all_databases")
    reasons = pool.unreachable()
    assert reasons is not None and reasons.startswith(f"{refused_uri}: could not connect: ")
    assert f"{silent_uri}: no answer within 0.3s" in reasons
    pool.close()

    mixed = HmsClientPool(_config(f"{refused_uri},{metastore_uri}"))
    assert mixed.call("get_all_databases") and mixed.unreachable() is None  # one URI failed, the other answers
    mixed.close()


def test_a_probe_finds_a_uri_that_answers_and_takes_it_out_of_backoff(refused_uri: str, metastore_uri: str) -> None:
    target = parse_uris(metastore_uri)[0]
    down = [True]

    def connect(uri: MetastoreUri, **timeouts: float):  # type: ignore[no-untyped-def]
        if down[0]:
            raise ConnectionRefusedError("refused for the test")
        return open_connection(target, **timeouts)

    pool = HmsClientPool(_config(metastore_uri, retries=0, uri_backoff=600.0), connect=connect)
    with pytest.raises(MetastoreUnavailableError, match="no metastore answered a probe: .*refused for the test"):
        pool.probe(1.0)
    assert pool.unreachable() is not None
    down[0] = False
    assert str(pool.probe(1.0)) == metastore_uri
    assert pool.unreachable() is None  # out of its 600 s backoff: the next call goes to it first
    assert pool.metrics.snapshot().calls == {"get_all_databases": 1}
    pool.close()


def test_a_probe_of_a_hung_metastore_waits_its_own_timeout_not_the_socket_timeout(silent_uri: str) -> None:
    pool = HmsClientPool(_config(silent_uri, socket_timeout=60.0))
    started = time.monotonic()
    with pytest.raises(MetastoreUnavailableError, match=r"no answer to a probe within 0.3s"):
        pool.probe(0.3)
    assert time.monotonic() - started < 5
    assert pool.unreachable() is not None
    pool.close()


def test_within_a_refusal_the_pool_makes_no_call_for_that_caller_only(metastore_uri: str) -> None:
    pool = HmsClientPool(_config(metastore_uri))
    other = HmsClientPool(_config(metastore_uri))
    elsewhere: list[object] = []
    with pool.refusing("catalog 'c': down for the test"):
        with pytest.raises(MetastoreUnavailableError, match="^catalog 'c': down for the test$"):
            pool.call("get_all_databases")
        with pytest.raises(MetastoreUnavailableError):
            with pool.borrow():
                pass
        assert "default" in other.call("get_all_databases")  # another pool is not refused
        thread = threading.Thread(target=lambda: elsewhere.append(pool.call("get_all_databases")))
        thread.start()
        thread.join()
    assert elsewhere and "default" in elsewhere[0]  # nor is another caller of the same pool
    assert "default" in pool.call("get_all_databases")  # nor this one after the block
    assert pool.metrics.snapshot().calls == {"get_all_databases": 2} and pool.metrics.snapshot().retries == 0
    pool.close()
    other.close()


def test_batches_run_in_the_caller_s_context_so_a_refusal_holds_for_them(metastore_uri: str) -> None:
    from hms_catalog.client.batches import in_batches

    pool = HmsClientPool(_config(metastore_uri, pool_size=4))
    with pool.refusing("down for the test"), pytest.raises(MetastoreUnavailableError, match="down for the test"):
        in_batches(lambda batch: pool.call("get_all_databases"), list(range(8)), 2, 4)
    assert len(in_batches(lambda batch: pool.call("get_all_databases"), list(range(8)), 2, 4)) == 4
    pool.close()


def test_the_retry_window_is_the_longest_its_retries_wait_in_all(refused_uri: str) -> None:
    """What a caller that knows the metastore down (the thrift endpoint's grace) reads as how long a call rides out."""
    waited: list[float] = []
    pool = HmsClientPool(_config(refused_uri, retries=3, retry_delay=1.0), sleep=waited.append, jitter=lambda: 1.0)
    with pytest.raises(MetastoreUnavailableError):
        pool.call("get_all_databases")
    assert waited == [1.0, 2.0, 4.0] and pool.retry_window() == sum(waited) == 7.0  # each retry at its backoff's ceiling
    pool.close()
    assert HmsClientPool(_config(refused_uri, retries=0)).retry_window() == 0.0
    assert HmsClientPool(_config(refused_uri, retries=8, retry_delay=1.0)).retry_window() == 1 + 2 + 4 + 8 + 16 + 30 * 3
