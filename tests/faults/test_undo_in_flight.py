"""A killed process's last call, which the metastore may still be running: the metastore finishes a call
whose client went away, so a restart that dropped the call's batch of partitions could run before it commits
and leave the batch behind (tests/faults/test_service_kill.py once found 1,000 of 1,200 partitions of a
killed ADD PARTITION after the restart). ADD PARTITION is completed by the restart instead."""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from hms_catalog.client import MetastoreClient
from hms_catalog.client.hive_thrift import ThriftHiveMetastore, ttypes
from hms_catalog.commits.completion import partitions_intent
from hms_catalog.commits.undo import UndoLog
from hms_catalog.storage import StorageResolver
from tests.support.hms import Admin

pytestmark = [pytest.mark.metastore, pytest.mark.slow]

# Partitions of the abandoned call. Enough for the metastore to be still adding them when the completion runs
# (the test waits a quarter of a batch's time first); 1,000 took 33 s in all on a loaded machine, 200 a few.
BATCH = 200


def _batch(admin: Admin, database: str, start: int) -> list[ttypes.Partition]:
    sd = admin.pool.call("get_table", database, "t").sd
    return [ttypes.Partition(values=[str(start + i)], dbName=database, tableName="t",
                             sd=ttypes.StorageDescriptor(**{**sd.__dict__, "location": f"{sd.location}/p={start + i}"}),
                             parameters={}) for i in range(BATCH)]


def _send_and_go_away(uri: str, partitions: list[ttypes.Partition]) -> None:
    """An ``add_partitions_req`` sent on a connection that is closed before the answer comes, as a process
    killed in the middle of the call leaves it: the metastore goes on with it."""
    address = urlsplit(uri)
    transport = TTransport.TBufferedTransport(TSocket.TSocket(address.hostname, address.port))
    transport.open()
    client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport))
    first = partitions[0]
    client.send_add_partitions_req(ttypes.AddPartitionsRequest(dbName=first.dbName, tblName=first.tableName, parts=partitions,
                                                               ifNotExists=False, needResult=True))
    transport.close()


def test_an_add_partition_killed_in_its_first_batch_is_completed_whatever_the_abandoned_call_does(
        tmp_path: Path, metastore_uri: str, admin: Admin, unique_name: str) -> None:
    """Two batches written down as ADD PARTITION writes them, the first sent and abandoned: the restart's
    completion adds them all while the metastore is still adding the first, and they all stay, each with its
    folder (made again if the abandoned call's failure took it away); the log is marked done (the restart
    records the change) and removed."""
    admin.create_database(unique_name)
    admin.create_table(unique_name, "t", [("id", "int")], partition_keys=[("p", "int")])
    client = MetastoreClient(admin.pool)
    started = time.monotonic()
    client.add_partitions(_batch(admin, unique_name, -BATCH))  # how long the metastore takes for a batch here
    took = time.monotonic() - started
    intended = _batch(admin, unique_name, 0) + _batch(admin, unique_name, BATCH)[: BATCH // 5]
    log = UndoLog.begin(tmp_path, "killed", unique_name, "t", source="ddl", storage=StorageResolver())
    log.will_complete("add_partitions", **partitions_intent(["p"], intended))
    log.will("added_partitions", database=unique_name, table="t", names=[f"p={p.values[0]}" for p in intended[:BATCH]])
    _send_and_go_away(metastore_uri, intended[:BATCH])
    time.sleep(min(took / 4, 0.5))  # the call is under way, not done
    loaded = UndoLog.load(tmp_path / "killed.jsonl", StorageResolver())
    assert loaded.forward is not None and not loaded.done
    loaded.complete(client)  # type: ignore[arg-type]
    assert UndoLog.load(tmp_path / "killed.jsonl", StorageResolver()).done  # a restart killed now records it, not undoes it
    loaded.finish()
    assert not (tmp_path / "killed.jsonl").exists()
    wanted = {f"p={p.values[0]}" for p in intended}
    deadline = time.monotonic() + 2 * took + 2  # long enough for the abandoned call to have ended either way
    while True:
        names = {n for n in admin.pool.call("get_partition_names", unique_name, "t", -1) if not n.startswith("p=-")}
        assert names == wanted, f"{len(names)} of {len(wanted)} partitions"
        if time.monotonic() > deadline:
            break
        time.sleep(0.25)
    deadline = time.monotonic() + 40  # the abandoned call's failure takes its folders away; they are made again
    while missing := [p.sd.location for p in intended if not Path(urlsplit(p.sd.location).path).is_dir()]:
        assert time.monotonic() < deadline, f"{len(missing)} partitions have no folder, first {missing[:1]}"
        time.sleep(0.5)


def test_a_failure_in_a_running_process_is_still_undone(tmp_path: Path, admin: Admin, unique_name: str) -> None:
    """The intent written down changes nothing for a process that is alive: its failed change is undone."""
    admin.create_database(unique_name)
    admin.create_table(unique_name, "t", [("id", "int")], partition_keys=[("p", "int")])
    client = MetastoreClient(admin.pool)
    batch = _batch(admin, unique_name, 0)[:10]
    log = UndoLog.begin(tmp_path, "failing", unique_name, "t", source="ddl", storage=StorageResolver())
    with pytest.raises(RuntimeError, match="second batch"), log.whole(client):
        log.will_complete("add_partitions", **partitions_intent(["p"], batch))
        log.will("added_partitions", database=unique_name, table="t", names=[f"p={p.values[0]}" for p in batch])
        client.add_partitions(batch)
        raise RuntimeError("the second batch failed")
    assert admin.pool.call("get_partition_names", unique_name, "t", -1) == []
    assert not (tmp_path / "failing.jsonl").exists()
