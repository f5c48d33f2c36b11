"""kill -9 of the service in the middle of a write's commit: after a restart the table reads as before or as
after the write, never half; no staging folder or orphan file is left; the change log records a write
exactly when the metastore holds it.

Each run overwrites a data source table of 60 partitions (STATIC, no spec) with a set that shares half
of its partitions with the one before, so one commit adds 30 partitions, replaces 30 and drops 30, in
metastore calls of 10 partitions (the catalog's ``hive.metastore.partition.batch.size``: several calls of
each kind, as a commit of thousands makes with the default 1,000); the service is killed at a random line
of that commit's undo log (any of them, from before the commit began to after it was recorded) and started
again on the same home. KILL_RUNS (3 in the suite) sets the number of runs, KILL_SEED the random seed. The
DDL test's ADD PARTITION (three calls) and RENAME are killed the same way, at a random moment of their
measured length.

The service is forked from a process that has imported it already (``killable``): a restart takes
milliseconds instead of an interpreter's start-up, and a kill -9 of it is a kill -9 of a process like any.
"""

from __future__ import annotations

import contextlib
import os
import random
import threading
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.support.hms import Admin
from tests.support.service import Server, killable

pytestmark = [pytest.mark.metastore, pytest.mark.slow]

PARTITIONS = 60
BATCH = 10  # partitions per metastore call (hive.metastore.partition.batch.size)
ADDED = 30  # partitions of one ADD PARTITION: three add_partitions calls
RENAMED = 20  # partitions of the table renamed
TABLE = {"name": "wide", "columns": [{"name": "id", "type": "int"}, {"name": "gen", "type": "int"}],
         "partition_columns": [{"name": "p", "type": "int"}], "provider": "parquet"}


def _path(location: str) -> Path:
    return Path(urlsplit(location).path)


def _names(generation: int, count: int = PARTITIONS) -> list[int]:
    """Generation g's partitions: shares half with g - 1's."""
    return [(generation * count // 2 + i) % (count * 2) for i in range(count)]


def _write(server: Server, table: str, generation: int, count: int = PARTITIONS) -> tuple[str, dict[str, Any]]:
    """A job's files (2 rows a partition, the generation in each row) and its commit body."""
    begun = server.request("POST", table + "/writes", {})
    assert begun.status == 200, begun
    job = begun.json()
    files = []
    for p in _names(generation, count):
        relative = f"p={p}/part-00000-{uuid.uuid4().hex}.c000.parquet"
        target = _path(job["staging"]) / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"id": pa.array([p, p], pa.int32()), "gen": pa.array([generation] * 2, pa.int32())}), target)
        files.append({"path": relative, "values": [str(p)], "rows": 2, "bytes": target.stat().st_size})
    return job["job"], {"mode": "overwrite", "static": {}, "files": files}


def _state(admin: Admin, database: str) -> dict[int, set[int]]:
    """Each partition's generations, read from its location's visible files as Spark's reader lists them."""
    state = {}
    for partition in admin.pool.call("get_partitions", database, "wide", -1):
        folder = _path(partition.sd.location)
        assert folder.is_dir(), f"{folder} of partition {partition.values} does not exist"
        tables = [pq.read_table(f) for f in folder.iterdir() if not f.name.startswith((".", "_"))]
        assert sum(t.num_rows for t in tables) == 2, (partition.values, [f.name for f in folder.iterdir()])
        state[int(partition.values[0])] = {g for t in tables for g in t.column("gen").to_pylist()}
    return state


def _send(server: Server, path: str, body: dict[str, Any], answers: list[int]) -> None:
    """A commit whose answer may never come (the service is killed under it)."""
    with contextlib.suppress(OSError):
        answers.append(server.request("POST", path, body).status)


def _log_lines(home: Path, server: Server, job: str) -> int:
    logs = list(home.glob(f"commits/*/{server.process.pid}/{job}.jsonl"))
    try:
        return len(logs[0].read_text().splitlines()) if logs else 0
    except FileNotFoundError:  # done and removed meanwhile
        return 0


def _commit_measured(home: Path, server: Server, job: str, body: dict[str, Any]) -> tuple[float, int]:
    """Commit ``job`` and wait for the answer; how long it took and the most lines its undo log had."""
    answers: list[int] = []
    sender = threading.Thread(target=_send, args=(server, f"/v1/catalogs/hive/writes/{job}/commit", body, answers), daemon=True)
    started = time.monotonic()
    sender.start()
    longest = 0
    while sender.is_alive():
        longest = max(longest, _log_lines(home, server, job))
        time.sleep(0.002)
    assert answers == [200], answers
    return time.monotonic() - started, longest


def _kill_point(home: Path, server: Server, job: str, sender: threading.Thread, chance: random.Random, took: float,
                lines: int) -> str:
    """Wait for a random point of the commit: once its undo log has k lines (k from 0, before the commit
    began, to every line a commit writes, after it was done and recorded), then a random part of the time
    a commit takes more."""
    steps = chance.randint(0, lines)
    deadline = time.monotonic() + took * 2 + 5
    written = 0
    while steps and sender.is_alive() and time.monotonic() < deadline:
        written = max(written, _log_lines(home, server, job))
        if written >= steps:
            break
        time.sleep(0.002)
    pause = chance.uniform(0.0, took / 4)
    time.sleep(pause)
    return f"at log line {written} (waited for {steps} of {lines}) + {pause:.3f} s"


def _logged(server: Server, source: str, database: str, table: str) -> int:
    """How many changes of ``database.table`` the catalog's log holds with ``source``."""
    client = server.client()
    try:
        result = client.statement("SHOW CHANGES FROM hive")
    finally:
        client.close()
    rows = [dict(zip(result["columns"], row)) for row in result["rows"]]
    return sum(1 for row in rows if row["Source"] == source and f"{database}.{table}" in str(row["Object"]))


def test_kill_9_of_the_service_during_commits_leaves_each_table_before_or_after(tmp_path: Path, metastore_uri: str,
                                                                                admin: Admin, unique_name: str) -> None:
    home = tmp_path / "home"
    table = f"/v1/catalogs/hive/databases/{unique_name}/tables/wide"
    chance = random.Random(int(os.environ.get("KILL_SEED", "0")) or None)
    with killable(home) as server:
        client = server.client()
        client.create_catalog("hive", {"type": "hms", "hive.metastore.uris": metastore_uri,
                                       "hive.metastore.partition.batch.size": str(BATCH)})
        client.close()
        assert server.request("POST", "/v1/catalogs/hive/databases", {"name": unique_name}).status == 200
        assert server.request("POST", f"/v1/catalogs/hive/databases/{unique_name}/tables", TABLE).status == 200
        for generation in (0, 1):  # the second commit is the shape of those killed: adds, replaces and drops
            job, body = _write(server, table, generation)
            took, lines = _commit_measured(home, server, job, body)
    generation, logged = 1, 2
    root = _path(admin.pool.call("get_table", unique_name, "wide").sd.location)
    outcomes = []
    for run in range(int(os.environ.get("KILL_RUNS", "3"))):
        next_generation = generation + 1
        with killable(home) as server:
            assert _logged(server, "write", unique_name, "wide") == logged
            job, body = _write(server, table, next_generation)
            answers: list[int] = []
            sender = threading.Thread(target=_send, args=(server, f"/v1/catalogs/hive/writes/{job}/commit", body, answers), daemon=True)
            sender.start()
            pause = _kill_point(home, server, job, sender, chance, took, lines)
            server.process.kill()
            sender.join(timeout=30)
        with killable(home) as server:  # the restart undoes or finishes the commit before it serves
            state = _state(admin, unique_name)
            after = set(state) == set(_names(next_generation)) and all(g == {next_generation} for g in state.values())
            before = set(state) == set(_names(generation)) and all(g == {generation} for g in state.values())
            assert after or before, f"run {run}: a table half written: {sorted((p, sorted(g)) for p, g in state.items())[:10]}"
            outcomes.append(f"{'after' if after else 'before'} (killed {pause})")
            assert after or answers != [200], f"run {run}: the commit answered 200, yet the table is as before"
            if after:
                generation, logged = next_generation, logged + 1
            assert _logged(server, "write", unique_name, "wide") == logged, f"run {run} ({outcomes[-1]})"
            # A job killed before its commit began leaves files no log names: RECOVER deletes them
            assert server.request("POST", table + "/partitions/recover", {"add": True, "drop": True}).status == 200
            assert _state(admin, unique_name) == state
            staged = [p for p in root.iterdir() if p.name.startswith(".hms-staging-")]
            assert staged == [], f"run {run}: staging folders left: {staged}"
            current = {_path(p.sd.location) for p in admin.pool.call("get_partitions", unique_name, "wide", -1)}
            orphans = [f for f in root.rglob("*") if f.is_file() and f.parent not in current]
            assert orphans == [], f"run {run}: files outside every partition: {orphans[:5]}"
    print(f"kill -9 runs: {outcomes}")


def _killed_during(server: Server, method: str, path: str, body: dict[str, Any], chance: random.Random, took: float) -> str:
    answers: list[int] = []
    sender = threading.Thread(target=lambda: answers.append(_answer(server, method, path, body)), daemon=True)
    sender.start()
    pause = chance.uniform(0.0, took * 1.2)
    time.sleep(pause)
    server.process.kill()
    sender.join(timeout=30)
    return f"killed at {pause:.2f} s of {took:.2f} s, answered {answers}"


def _answer(server: Server, method: str, path: str, body: dict[str, Any]) -> int:
    try:
        return server.request(method, path, body).status
    except OSError:
        return 0


def test_kill_9_of_the_service_during_multi_call_ddl_leaves_it_whole_or_undone(tmp_path: Path, metastore_uri: str,
                                                                              admin: Admin, unique_name: str) -> None:
    """ADD PARTITION of 30 partitions (three add_partitions calls) and the RENAME of a managed data source
    table (the metastore moves its folder, then its ``path`` follows: two calls), each killed at a random
    moment: after a restart, all of the partitions or none; the table under one name with its folder and
    ``path`` agreeing and its rows readable; one change logged exactly when the metastore holds the change."""
    home = tmp_path / "home"
    chance = random.Random(int(os.environ.get("KILL_SEED", "0")) or None)
    base = f"/v1/catalogs/hive/databases/{unique_name}/tables"
    with killable(home) as server:
        client = server.client()
        client.create_catalog("hive", {"type": "hms", "hive.metastore.uris": metastore_uri,
                                       "hive.metastore.partition.batch.size": str(BATCH)})
        client.close()
        assert server.request("POST", "/v1/catalogs/hive/databases", {"name": unique_name}).status == 200
        assert server.request("POST", base, {**TABLE, "name": "many"}).status == 200
        assert server.request("POST", base, {**TABLE, "name": "named0"}).status == 200
        job, body = _write(server, base + "/named0", 0, RENAMED)
        assert server.request("POST", f"/v1/catalogs/hive/writes/{job}/commit", body).status == 200
        started = time.monotonic()
        trial = {"partitions": [{"values": {"p": str(-1 - i)}} for i in range(ADDED)]}
        assert server.request("POST", base + "/many/partitions", trial).status == 200
        took_add = time.monotonic() - started
        started = time.monotonic()
        assert server.request("PATCH", f"{base}/named0", {"changes": [{"op": "rename", "name": "n0x"}]}).status == 200
        took_rename = time.monotonic() - started
    outcomes = []
    name = "n0x"
    for run in range(int(os.environ.get("KILL_RUNS", "3"))):
        values = [{"values": {"p": str(run * ADDED + i)}} for i in range(ADDED)]
        with killable(home) as server:
            before_many = set(admin.pool.call("get_partition_names", unique_name, "many", -1))
            logged_many = _logged(server, "ddl", unique_name, "many")
            how = _killed_during(server, "POST", base + "/many/partitions", {"partitions": values}, chance, took_add)
        with killable(home) as server:
            now = set(admin.pool.call("get_partition_names", unique_name, "many", -1))
            added = now - before_many
            assert added in (set(), {f"p={v['values']['p']}" for v in values}), f"run {run}: {len(added)} of {len(values)} added ({how})"
            assert _logged(server, "ddl", unique_name, "many") == logged_many + (1 if added else 0), how
            outcomes.append(f"add {'after' if added else 'before'} ({how})")
            new_name = f"n{run + 1}x"
            how = _killed_during(server, "PATCH", f"{base}/{name}", {"changes": [{"op": "rename", "name": new_name}]}, chance,
                                 took_rename)
        with killable(home) as server:
            tables = set(admin.pool.call("get_all_tables", unique_name))
            assert len({name, new_name} & tables) == 1, f"run {run}: {tables} ({how})"
            current = new_name if new_name in tables else name
            struct = admin.pool.call("get_table", unique_name, current)
            assert struct.sd.serdeInfo.parameters["path"] == struct.sd.location, (struct.sd.location, how)
            rows = sum(pq.read_table(f).num_rows for f in _path(struct.sd.location).rglob("*.parquet"))
            assert rows == 2 * RENAMED, (rows, how)
            renamed = current == new_name
            assert _logged(server, "ddl", unique_name, new_name) == (1 if renamed else 0), how
            outcomes.append(f"rename {'after' if renamed else 'before'} ({how})")
            name = current
    print(f"kill -9 runs: {outcomes}")
