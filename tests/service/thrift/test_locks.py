"""Locks and transactions through the thrift endpoint, as pyiceberg's HiveCatalog takes them around a commit:
each reaches the metastore of the table it names, its ids are remembered with that catalog so ``check_lock``,
``unlock`` and ``commit_txn`` follow, and one call mixing two catalogs' transaction and tables is refused."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.client.metrics import MetricsSnapshot
from tests.service.thrift.conftest import Endpoint, thrift_client
from tests.support.hms import Admin

USER = "alice"
HOST = "test-host"


@pytest.fixture
def table(admin: Admin, unique_name: str) -> Iterator[tuple[str, str]]:
    """A table (database, name) of this test alone."""
    admin.create_database(unique_name)
    admin.create_table(unique_name, "facts", [("id", "int")])
    yield unique_name, "facts"
    admin.drop_database(unique_name)


def lock_request(database: str, name: str, txnid: int | None = None) -> ttypes.LockRequest:
    """pyiceberg's HiveCatalog._create_lock_request: one exclusive table lock; in a transaction, with the
    operation Hive's clients name (Hive 2.3's metastore fails a transaction's lock without one)."""
    component = ttypes.LockComponent(level=ttypes.LockLevel.TABLE, type=ttypes.LockType.EXCLUSIVE, dbname=database,
                                     tablename=name, isTransactional=True,
                                     operationType=ttypes.DataOperationType.UPDATE if txnid else None)
    return ttypes.LockRequest(component=[component], user=USER, hostname=HOST, txnid=txnid)


def held_locks(admin: Admin, database: str, name: str) -> list[ttypes.ShowLocksResponseElement]:
    """The locks the metastore itself holds on the table."""
    answer = admin.pool.call("show_locks", ttypes.ShowLocksRequest(dbname=database, tablename=name))
    return list(answer.locks or [])


def calls(endpoint: Endpoint, catalog: str) -> MetricsSnapshot:
    return endpoint.manager.catalog(catalog).metrics()


def test_a_table_lock_is_taken_checked_and_released_through_the_endpoint(
    endpoint: Endpoint, admin: Admin, table: tuple[str, str]
) -> None:
    database, name = table
    with thrift_client(endpoint.port) as client:
        client.set_ugi(USER, [])
        before = calls(endpoint, "hive")
        lock = client.lock(lock_request(database, name))
        assert lock.state == ttypes.LockState.ACQUIRED
        [held] = held_locks(admin, database, name)
        assert (held.lockid, held.dbname, held.tablename, held.type, held.user, held.hostname) == (
            lock.lockid, database, name, ttypes.LockType.EXCLUSIVE, USER, HOST)

        # a second writer's lock waits, as pyiceberg's second committer does
        second = client.lock(lock_request(database, name))
        assert second.state == ttypes.LockState.WAITING
        assert client.check_lock(ttypes.CheckLockRequest(lockid=second.lockid)).state == ttypes.LockState.WAITING

        client.unlock(ttypes.UnlockRequest(lockid=lock.lockid))
        assert client.check_lock(ttypes.CheckLockRequest(lockid=second.lockid)).state == ttypes.LockState.ACQUIRED
        client.unlock(ttypes.UnlockRequest(lockid=second.lockid))
        assert held_locks(admin, database, name) == []
        with pytest.raises(ttypes.NoSuchLockException):
            client.check_lock(ttypes.CheckLockRequest(lockid=lock.lockid))
        made = calls(endpoint, "hive").calls_since(before)
        assert {method: made.get(method) for method in ("lock", "check_lock", "unlock")} == {
            "lock": 2, "check_lock": 3, "unlock": 2}
    assert not endpoint.audit_path.exists()  # a lock is no change of the catalog: nothing audited


def test_a_lock_on_a_federated_table_goes_to_its_catalog_and_so_do_its_checks(
    endpoint: Endpoint, admin: Admin, table: tuple[str, str]
) -> None:
    database, name = table
    with thrift_client(endpoint.port) as client:
        hive_before, other_before = calls(endpoint, "hive"), calls(endpoint, "other")
        lock = client.lock(lock_request(f"other__{database}", name))
        assert lock.state == ttypes.LockState.ACQUIRED
        [held] = held_locks(admin, database, name)
        assert (held.lockid, held.dbname) == (lock.lockid, database)  # the metastore's own database name
        client.check_lock(ttypes.CheckLockRequest(lockid=lock.lockid))  # names no table: its id says whose it is
        client.heartbeat(ttypes.HeartbeatRequest(lockid=lock.lockid))
        client.unlock(ttypes.UnlockRequest(lockid=lock.lockid))
        assert held_locks(admin, database, name) == []
        assert calls(endpoint, "other").calls_since(other_before) == {"lock": 1, "check_lock": 1, "heartbeat": 1,
                                                                      "unlock": 1}
        assert calls(endpoint, "hive").calls_since(hive_before) == {}


def test_transactions_open_and_commit_through_the_primary(endpoint: Endpoint, admin: Admin, table: tuple[str, str]) -> None:
    database, name = table
    with thrift_client(endpoint.port) as client:
        before = calls(endpoint, "hive")
        [txn] = client.open_txns(ttypes.OpenTxnRequest(num_txns=1, user=USER, hostname=HOST)).txn_ids
        open_now = admin.pool.call("get_open_txns_info")
        assert txn in [each.id for each in open_now.open_txns if each.state == ttypes.TxnState.OPEN]
        lock = client.lock(lock_request(database, name, txnid=txn))
        assert lock.state == ttypes.LockState.ACQUIRED
        assert [held.txnid for held in held_locks(admin, database, name)] == [txn]
        client.commit_txn(ttypes.CommitTxnRequest(txnid=txn))
        assert held_locks(admin, database, name) == []  # committing released the transaction's locks
        assert txn not in [each.id for each in admin.pool.call("get_open_txns_info").open_txns
                           if each.state == ttypes.TxnState.OPEN]
        made = calls(endpoint, "hive").calls_since(before)
        assert {method: made.get(method) for method in ("open_txns", "lock", "commit_txn")} == {
            "open_txns": 1, "lock": 1, "commit_txn": 1}


def test_a_transaction_of_one_catalog_with_anothers_table_is_refused(
    endpoint: Endpoint, admin: Admin, table: tuple[str, str]
) -> None:
    database, name = table
    with thrift_client(endpoint.port) as client:
        [txn] = client.open_txns(ttypes.OpenTxnRequest(num_txns=1, user=USER, hostname=HOST)).txn_ids
        other_before = calls(endpoint, "other")
        # lock declares no MetaException (its processor would answer one as an anonymous "Internal error"):
        # the refusal is its first declared exception, carrying the endpoint's message
        with pytest.raises(ttypes.NoSuchTxnException) as refused:
            client.lock(lock_request(f"other__{database}", name, txnid=txn))
        message = refused.value.message
        assert "lock" in message and "catalogs hive, other" in message
        assert "a transaction or lock of one metastore used with another's tables" in message
        assert held_locks(admin, database, name) == []
        assert calls(endpoint, "other").calls_since(other_before) == {}
        client.abort_txn(ttypes.AbortTxnRequest(txnid=txn))  # the transaction itself is still the primary's
        assert txn not in [each.id for each in admin.pool.call("get_open_txns_info").open_txns
                           if each.state == ttypes.TxnState.OPEN]


def test_a_lock_id_equal_to_a_transaction_id_of_another_catalog_still_reaches_its_own(
    endpoint: Endpoint, admin: Admin, table: tuple[str, str]
) -> None:
    """Lock ids and transaction ids are two sequences of a metastore: an id remembered for one is not the other's."""
    database, name = table
    with thrift_client(endpoint.port) as client:
        lock = client.lock(lock_request(f"other__{database}", name))  # a lock of catalog other
        client.unlock(ttypes.UnlockRequest(lockid=lock.lockid))
        [txn] = client.open_txns(ttypes.OpenTxnRequest(num_txns=1, user=USER, hostname=HOST)).txn_ids
        while txn < lock.lockid:  # transactions of the primary until one has the lock's number
            client.abort_txn(ttypes.AbortTxnRequest(txnid=txn))
            [txn] = client.open_txns(ttypes.OpenTxnRequest(num_txns=1, user=USER, hostname=HOST)).txn_ids
        while lock.lockid < txn:  # or locks of other until one has the transaction's
            lock = client.lock(lock_request(f"other__{database}", name))
            client.unlock(ttypes.UnlockRequest(lockid=lock.lockid))
        assert lock.lockid == txn
        other_before, hive_before = calls(endpoint, "other"), calls(endpoint, "hive")
        with pytest.raises(ttypes.NoSuchLockException):
            client.check_lock(ttypes.CheckLockRequest(lockid=lock.lockid))  # released: but asked of its own catalog
        client.abort_txn(ttypes.AbortTxnRequest(txnid=txn))
        assert calls(endpoint, "other").calls_since(other_before) == {"check_lock": 1}
        assert calls(endpoint, "hive").calls_since(hive_before) == {"abort_txn": 1}
