"""A write's commit and a RENAME killed in the middle of a metastore call, whose call the metastore runs after
the restart has looked: the table is whole (as after the change: the restart completes it) and stays whole once
the abandoned call has landed, as tests/faults/test_undo_in_flight.py shows for ADD PARTITION.

The service runs behind :class:`~tests.faults._abandoning_proxy.AbandoningProxy`, which kills it at a chosen
call and keeps that call: the restarted service looks first, then the call is delivered to the metastore on a
raw connection of its own, once with its answer awaited (so the test knows it has ended) and once closed
right after sending while the restart's recovery runs.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hms_catalog import open_session
from tests.faults._abandoning_proxy import AbandoningProxy
from tests.support.hms import Admin
from tests.support.service import Server, killable

pytestmark = [pytest.mark.metastore, pytest.mark.slow]

COUNT = 300  # partitions of a generation; the next shares half: 150 added (one batch), 150 replaced, 150 dropped (2 calls)
TABLE = {"name": "wide", "columns": [{"name": "id", "type": "int"}, {"name": "gen", "type": "int"}],
         "partition_columns": [{"name": "p", "type": "int"}], "provider": "parquet"}
FLAT = {"name": "flat", "columns": [{"name": "id", "type": "int"}, {"name": "gen", "type": "int"}], "provider": "parquet"}


@pytest.fixture
def proxy(metastore_uri: str) -> Iterator[AbandoningProxy]:
    with AbandoningProxy(metastore_uri) as running:
        yield running


def _path(location: str) -> Path:
    return Path(urlsplit(location).path)


def _names(generation: int) -> list[int]:
    """Generation g's partitions: half of them g - 1's."""
    return [(generation * COUNT // 2 + i) % (COUNT * 2) for i in range(COUNT)]


def _rows(generation: int) -> int:
    """Rows per file of generation g: the statistics tell the generations apart too."""
    return 2 + generation


def _write(server: Server, table: str, generation: int, *, partitioned: bool = True) -> tuple[str, dict[str, Any]]:
    """A job's files (generation g's rows, the generation in each) and its commit body."""
    begun = server.request("POST", table + "/writes", {})
    assert begun.status == 200, begun
    job = begun.json()
    files = []
    for p in _names(generation) if partitioned else [None]:
        relative = (f"p={p}/" if p is not None else "") + f"part-00000-{uuid.uuid4().hex}.c000.parquet"
        target = _path(job["staging"]) / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        rows = _rows(generation)
        pq.write_table(pa.table({"id": pa.array([p or 0] * rows, pa.int32()), "gen": pa.array([generation] * rows, pa.int32())}), target)
        files.append({"path": relative, "values": [str(p)] if p is not None else [], "rows": rows, "bytes": target.stat().st_size})
    return job["job"], {"mode": "overwrite", "static": {}, "files": files}


def _commit(server: Server, job: str, body: dict[str, Any]) -> None:
    answer = server.request("POST", f"/v1/catalogs/hive/writes/{job}/commit", body)
    assert answer.status == 200, answer


def _visible(folder: Path) -> list[Path]:
    return [f for f in folder.iterdir() if not f.name.startswith((".", "_"))]


def _generations(location: str, parameters: dict[str, str]) -> set[int]:
    """The generations of the rows at ``location``, which must be what the statistics say is there."""
    folder = _path(location)
    assert folder.is_dir(), f"{folder} does not exist"
    tables = [pq.read_table(f) for f in _visible(folder)]
    rows = sum(t.num_rows for t in tables)
    assert (str(len(tables)), str(rows)) == (parameters.get("numFiles"), parameters.get("numRows")), (
        f"{folder}: {len(tables)} file(s) of {rows} row(s), the metastore says {parameters.get('numFiles')} of {parameters.get('numRows')}")
    return {g for t in tables for g in t.column("gen").to_pylist()}


def _state(admin: Admin, database: str) -> dict[int, set[int]]:
    """Each partition's generations, its files and statistics agreeing."""
    return {int(p.values[0]): _generations(p.sd.location, p.parameters) for p in admin.pool.call("get_partitions", database, "wide", -1)}


def _whole(state: dict[int, set[int]], generation: int) -> bool:
    return set(state) == set(_names(generation)) and all(g == {generation} for g in state.values())


def _logged(server: Server, source: str, database: str, table: str) -> int:
    client = server.client()
    try:
        result = client.statement("SHOW CHANGES FROM hive")
    finally:
        client.close()
    rows = [dict(zip(result["columns"], row)) for row in result["rows"]]
    return sum(1 for row in rows if row["Source"] == source and f"{database}.{table}" in str(row["Object"]))


def _no_leftovers(root: Path, current: set[Path]) -> None:
    staged = [p for p in root.iterdir() if p.name.startswith(".hms-")]
    assert staged == [], f"staging folders left: {staged}"
    orphans = [f for f in root.rglob("*") if f.is_file() and f.parent not in current and ".hms-" not in str(f)]
    assert orphans == [], f"files outside every partition: {orphans[:5]}"


def _prepared(server: Server, proxy: AbandoningProxy, database: str, *tables: dict[str, Any]) -> None:
    client = server.client()
    client.create_catalog("hive", {"type": "hms", "hive.metastore.uris": proxy.uri})
    client.close()
    assert server.request("POST", "/v1/catalogs/hive/databases", {"name": database}).status == 200
    for table in tables:
        assert server.request("POST", f"/v1/catalogs/hive/databases/{database}/tables", table).status == 200


def _killed_in(server: Server, proxy: AbandoningProxy, call: str, nth: int, method: str, path: str, body: dict[str, Any]) -> None:
    """Send the request; the proxy kills the service at its ``nth`` ``call`` and keeps that call."""
    proxy.arm(call, server.process.pid, nth)
    sender = threading.Thread(target=lambda: _ignored(server, method, path, body), daemon=True)
    sender.start()
    assert proxy.fired.wait(120), f"the request made no {call} call #{nth}"
    server.process.wait()
    sender.join(30)


def _ignored(server: Server, method: str, path: str, body: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):
        server.request(method, path, body)


@pytest.mark.parametrize(("call", "nth"), [("add_partitions_req", 1), ("alter_partitions_with_environment_context", 1),
                                           ("drop_partitions_req", 2)])
def test_a_write_killed_in_a_metastore_call_that_lands_after_the_restart_is_completed(
        tmp_path: Path, proxy: AbandoningProxy, admin: Admin, unique_name: str, call: str, nth: int) -> None:
    """An overwrite that adds, replaces and drops partitions, killed in its add, its alter or its second drop
    call: the restart completes it, and the abandoned call, landing after, leaves it whole. (When a restart
    undid such a commit, the abandoned call then put its new partitions, as empty folders, its statistics over
    the old files, or its drops on the table the undo had restored.)"""
    home = tmp_path / "home"
    table = f"/v1/catalogs/hive/databases/{unique_name}/tables/wide"
    with killable(home) as server:
        _prepared(server, proxy, unique_name, TABLE)
        _commit(server, *_write(server, table, 0))
        job, body = _write(server, table, 1)
        _killed_in(server, proxy, call, nth, "POST", f"/v1/catalogs/hive/writes/{job}/commit", body)
    with killable(home) as server:  # the restart looks (and completes) before it serves
        answer = proxy.deliver(answer=True)  # the killed process's call lands now
        assert answer is not None
        state = _state(admin, unique_name)
        assert _whole(state, 0) or _whole(state, 1), f"a table half written: {sorted((p, sorted(g)) for p, g in state.items())[:10]}"
        assert _whole(state, 1), "the commit's intent was written down: it is completed"
        assert _logged(server, "write", unique_name, "wide") == 2
        root = _path(admin.pool.call("get_table", unique_name, "wide").sd.location)
        _no_leftovers(root, {_path(p.sd.location) for p in admin.pool.call("get_partitions", unique_name, "wide", -1)})


def test_a_write_of_an_unpartitioned_table_killed_in_its_alter_table_is_completed(
        tmp_path: Path, proxy: AbandoningProxy, admin: Admin, unique_name: str) -> None:
    """The table's new definition (its statistics) lands after the restart: it agrees with the files the
    restart left, which are the new ones (before, the undo moved the old files back under the new statistics)."""
    home = tmp_path / "home"
    table = f"/v1/catalogs/hive/databases/{unique_name}/tables/flat"
    with killable(home) as server:
        _prepared(server, proxy, unique_name, FLAT)
        _commit(server, *_write(server, table, 0, partitioned=False))
        job, body = _write(server, table, 1, partitioned=False)
        _killed_in(server, proxy, "alter_table_with_environment_context", 1, "POST", f"/v1/catalogs/hive/writes/{job}/commit", body)
    with killable(home) as server:
        assert proxy.deliver(answer=True) is not None
        struct = admin.pool.call("get_table", unique_name, "flat")
        assert _generations(struct.sd.location, struct.parameters) == {1}
        assert _logged(server, "write", unique_name, "flat") == 2
        _no_leftovers(_path(struct.sd.location), {_path(struct.sd.location)})


def _renamed_whole(admin: Admin, database: str, names: tuple[str, str]) -> str:
    """The table under one of ``names``, its folder and ``path`` agreeing and its rows there; which name."""
    tables = set(admin.pool.call("get_all_tables", database))
    assert len(set(names) & tables) == 1, tables
    current = names[0] if names[0] in tables else names[1]
    struct = admin.pool.call("get_table", database, current)
    assert struct.sd.serdeInfo.parameters["path"] == struct.sd.location, (struct.sd.serdeInfo.parameters["path"], struct.sd.location)
    assert {g for p in admin.pool.call("get_partitions", database, current, -1) for g in _generations(p.sd.location, p.parameters)} == {0}
    return current


def test_a_rename_killed_in_its_call_that_lands_after_the_restart_is_completed(
        tmp_path: Path, proxy: AbandoningProxy, admin: Admin, unique_name: str) -> None:
    """The RENAME of a managed data source table (the metastore moves its folder; its ``path`` follows in a
    second call), killed in its first call, which lands after the restart: the table is renamed, its ``path``
    at the moved folder, the rename logged once (before, the undo found nothing renamed yet, and the rename
    landed after it with the ``path`` left behind and no change logged)."""
    home = tmp_path / "home"
    base = f"/v1/catalogs/hive/databases/{unique_name}/tables"
    with killable(home) as server:
        _prepared(server, proxy, unique_name, TABLE)
        _commit(server, *_write(server, base + "/wide", 0))
        _killed_in(server, proxy, "alter_table_with_environment_context", 1, "PATCH", base + "/wide",
                   {"changes": [{"op": "rename", "name": "moved"}]})
    with killable(home) as server:
        proxy.deliver(answer=True)
        assert _renamed_whole(admin, unique_name, ("wide", "moved")) == "moved"
        assert _logged(server, "ddl", unique_name, "moved") == 1


@pytest.mark.parametrize("change", ["write", "rename"])
def test_an_abandoned_call_running_while_the_restart_completes_its_change_leaves_it_whole(
        tmp_path: Path, proxy: AbandoningProxy, admin: Admin, unique_name: str, change: str) -> None:
    """The killed process's call sent on a raw connection that is closed at once, and the recovery run right
    away, while the metastore runs the call: the write's first add batch, or the rename. Both are completed,
    and stay whole once the call has ended, however the two met."""
    home = tmp_path / "home"
    base = f"/v1/catalogs/hive/databases/{unique_name}/tables"
    with killable(home) as server:
        _prepared(server, proxy, unique_name, TABLE)
        _commit(server, *_write(server, base + "/wide", 0))
        if change == "write":
            job, body = _write(server, base + "/wide", 1)
            _killed_in(server, proxy, "add_partitions_req", 1, "POST", f"/v1/catalogs/hive/writes/{job}/commit", body)
        else:
            _killed_in(server, proxy, "alter_table_with_environment_context", 1, "PATCH", base + "/wide",
                       {"changes": [{"op": "rename", "name": "moved"}]})
    session = open_session(home)
    try:
        started = time.monotonic()
        proxy.deliver(answer=False)
        session.manager.catalog("hive")  # built, it completes what the killed process left: the restart's recovery
        took = time.monotonic() - started
    finally:
        session.manager.close()
    assert list(home.glob("commits/**/*.jsonl")) == []
    # The abandoned call (one batch of COUNT // 2 partitions, or one alter) is shorter than the completion, which
    # makes the same change and more: twice its time, and at least 4 s, covers the call landing before or after.
    deadline = time.monotonic() + max(4.0, 2 * took)
    while time.monotonic() < deadline:
        if change == "write":
            state = _state(admin, unique_name)
            assert _whole(state, 0) or _whole(state, 1), f"a table half written: {sorted((p, sorted(g)) for p, g in state.items())[:10]}"
            assert _whole(state, 1)
        else:
            assert _renamed_whole(admin, unique_name, ("wide", "moved")) == "moved"
        time.sleep(0.5)
