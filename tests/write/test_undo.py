"""The undo log of a commit (pure logic over real folders; the metastore's part through a recording stand-in,
the real metastore's in tests/faults/test_service_kill.py): what is written down before a step, what a
restart undoes or finishes, and what a log cut short by a crash means."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.commits.undo import UndoLog, decode_struct, encode_struct
from hms_catalog.storage import StorageResolver
from hms_catalog.write.modes import Append, DynamicOverwrite, OverwriteByFilter, PartitionChanges, PartitionNames
from hms_catalog.write.request import WrittenPartition


class Recorder:
    """The metastore write calls an undo makes, recorded."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: self.calls.append((name, args))


def _folder(path: Path, *files: str) -> Path:
    path.mkdir(parents=True)
    for name in files:
        (path / name).write_text(name)
    return path


def test_a_failed_commit_is_undone_newest_first_and_its_log_removed(tmp_path: Path) -> None:
    old = _folder(tmp_path / "t" / "dt=a", "old-1")
    new = _folder(tmp_path / "t" / ".hms-staging-1" / "dt=a", "new-1")
    backup = tmp_path / "t" / ".hms-staging-1" / ".replaced" / "0"
    log = UndoLog.begin(tmp_path / "logs", "job1", "db", "t", storage=StorageResolver())
    log.will_move(str(old), str(backup))
    log.will_move(str(new), str(old))
    partition = ttypes.Partition(values=["a"], dbName="db", tableName="t", parameters={"numFiles": "1"})
    log.will("altered_partitions", database="db", table="t", old=[encode_struct(partition)])
    assert (old / "new-1").exists() and (backup / "old-1").exists()  # the renames were taken with the step
    recorder = Recorder()
    log.undo(recorder)  # type: ignore[arg-type]
    assert (old / "old-1").exists() and not (old / "new-1").exists() and (new / "new-1").exists()
    assert [name for name, _ in recorder.calls] == ["alter_partitions"]
    assert decode_struct(encode_struct(partition), ttypes.Partition) == partition
    assert not (tmp_path / "logs" / "job1.jsonl").exists()


def test_a_log_cut_short_is_what_was_taken_and_a_done_one_is_finished_not_undone(tmp_path: Path) -> None:
    source = _folder(tmp_path / "s", "f")
    log = UndoLog.begin(tmp_path / "logs", "job2", "db", "t", staging=str(tmp_path / "s"), storage=StorageResolver())
    log.will("added_partitions", database="db", table="t", names=["dt=a"])
    cut = tmp_path / "cut.jsonl"  # as a process that died while writing the next step down left it
    cut.write_text((tmp_path / "logs" / "job2.jsonl").read_text() + '{"op": "moved", "moves": [["/x", ')
    loaded = UndoLog.load(cut, StorageResolver())
    assert [step["op"] for step in loaded.steps] == ["added_partitions"] and not loaded.done
    assert loaded.staging == str(source)
    log.delete_later(str(source))
    log.mark_done()
    done = UndoLog.load(tmp_path / "logs" / "job2.jsonl", StorageResolver())
    assert done.done and done.deletes == [str(source)] and not done.recorded
    done.finish()
    assert not source.exists() and not (tmp_path / "logs" / "job2.jsonl").exists()


def test_an_undone_rename_takes_away_the_empty_folder_the_metastore_made_in_its_place(tmp_path: Path) -> None:
    """Undoing a drop re-adds the partition first, and the metastore makes its folder: the files still go back."""
    partition = _folder(tmp_path / "t" / "dt=a", "kept")
    backup = tmp_path / "t" / ".hms-staging-3" / ".replaced" / "0"
    log = UndoLog.begin(None, "job3", "db", "t", storage=StorageResolver())
    log.will_move(str(partition), str(backup))
    log.will("dropped_partitions", database="db", table="t", old=[])
    partition.mkdir()  # what add_partitions of a managed table does for a missing folder
    log.undo(Recorder())  # type: ignore[arg-type]
    assert (partition / "kept").read_text() == "kept"


def test_a_forgotten_step_is_not_undone(tmp_path: Path) -> None:
    log = UndoLog.begin(tmp_path, "job4", "db", "t", storage=StorageResolver())
    log.will("added_partitions", database="db", table="t", names=["dt=theirs"])
    log.forget_last()  # add_partitions failed: the partitions are another writer's
    assert UndoLog.load(tmp_path / "job4.jsonl", StorageResolver()).steps == []


class Names:
    def __init__(self, names: list[str]) -> None:
        self.names = names

    def get_partition_names(self, database: str, table: str) -> list[str]:
        return self.names

    def get_partition_names_ps(self, database: str, table: str, values: list[str]) -> list[str]:
        return [n for n in self.names if all(v == "" or f"={v}" in n for v in values)]


def _written(*names: str) -> dict[str, WrittenPartition]:
    return {n: WrittenPartition((n.split("=")[1],), n) for n in names}


def test_each_mode_means_what_spark_says() -> None:
    names = PartitionNames(Names(["dt=x", "dt=k%3Dv", "dt=y"]), "db", "t")  # type: ignore[arg-type]
    existing = {n: ttypes.Partition() for n in ["dt=x", "dt=k%3Dv", "dt=y"]}
    written = _written("dt=x", "dt=k%3Dv", "dt=new")
    by_filter = OverwriteByFilter({"dt": "x"}, ("dt",), hive_table=False)
    plan = PartitionChanges.of(by_filter, written, existing, by_filter.matching(names, written, set(existing)))
    assert (sorted(plan.new), sorted(plan.replaced), sorted(plan.appended), plan.dropped) == (
        ["dt=new"], ["dt=x"], ["dt=k%3Dv"], [])  # rows outside the filter are appended, never replace a partition
    everything = OverwriteByFilter({}, ("dt",), hive_table=False)
    plan = PartitionChanges.of(everything, written, existing, everything.matching(names, written, set(existing)))
    assert (sorted(plan.replaced), plan.dropped) == (["dt=k%3Dv", "dt=x"], ["dt=y"])
    hive = OverwriteByFilter({}, ("dt",), hive_table=True)  # a STORED AS table keeps what the query wrote no row to
    assert PartitionChanges.of(hive, written, existing, hive.matching(names, written, set(existing))).dropped == []
    dynamic = DynamicOverwrite()
    plan = PartitionChanges.of(dynamic, written, existing, dynamic.matching(names, written, set(existing)))
    assert (sorted(plan.replaced), plan.dropped) == (["dt=k%3Dv", "dt=x"], [])
    append = Append()
    plan = PartitionChanges.of(append, written, existing, append.matching(names, written, set(existing)))
    assert (sorted(plan.appended), plan.replaced) == (["dt=k%3Dv", "dt=x"], {})
    full = OverwriteByFilter({"dt": "empty"}, ("dt",), hive_table=True)
    spec = full.spec_partition(("dt",))
    assert spec is not None and spec.folder == "dt=empty" and spec.files == []


def test_an_undo_that_fails_keeps_its_log_for_the_next_look(tmp_path: Path) -> None:
    """The metastore out of reach during an undo: the log stays, and the job's files (what it set aside) with
    it; the catalog no longer counts it as running, so the table's next write or RECOVER tries again."""
    import os

    import pytest

    from hms_catalog.write.jobs import WriteJobs

    class Down:
        def drop_partitions(self, *args: Any, **kwargs: Any) -> None:
            raise ConnectionError("metastore unreachable")

    jobs = WriteJobs(tmp_path / "commits")
    log = jobs.open_log("job5", "db", "t")
    log.will("added_partitions", database="db", table="t", names=["dt=a"])
    with pytest.raises(RuntimeError, match="kept and is tried again"):
        log.undo(Down())  # type: ignore[arg-type]
    assert (tmp_path / "commits" / str(os.getpid()) / "job5.jsonl").exists()
    assert jobs.left_unfinished("job5") and not jobs.left_unfinished("job5")
    finished = UndoLog.begin(None, "job6", "db", "t", storage=StorageResolver())
    finished.undo(Recorder())  # type: ignore[arg-type]
    assert not jobs.left_unfinished("job6")


def test_a_finished_rename_left_unrecorded_is_logged_as_the_rename_it_was(tmp_path: Path) -> None:
    """A kill after a RENAME's log was marked done and before its change was logged: the next start logs the
    old name dropped and the new one added, as the statement would have (not a change of the old name)."""
    from dataclasses import dataclass, field

    from hms_catalog._locks import TableLocks
    from hms_catalog.cache import CatalogCaches
    from hms_catalog.commits.recovery import finish_unfinished
    from hms_catalog.properties import CacheConfig

    @dataclass
    class Catalog:
        name: str = "hive"
        ddl_locks: TableLocks = field(default_factory=TableLocks)
        caches: CatalogCaches = field(default_factory=lambda: CatalogCaches.from_config(CacheConfig()))
        client: Any = field(default_factory=Recorder)
        storage: StorageResolver = field(default_factory=StorageResolver)

    dead = tmp_path / "commits" / "999999999"  # a process that is gone
    log = UndoLog.begin(dead, "ddl-1", "db", "old", source="ddl", storage=StorageResolver())
    log.will("renamed_table", database="db", table="old", new_database="db", new_table="new")
    log.mark_done()
    catalog = Catalog()
    assert finish_unfinished(catalog, tmp_path / "commits", set()) == 1
    logged = [(change.kind.value, str(change.object), change.source.value) for change in catalog.caches.versions.changes().changes]
    assert logged == [("dropped", "table db.old", "ddl"), ("added", "table db.new", "ddl")]
    assert not (dead / "ddl-1.jsonl").exists()


def test_an_add_partition_written_down_whole_is_completed_to_the_same_structs(tmp_path: Path) -> None:
    """A killed ADD PARTITION's intent (one template and each partition's values and location) gives back the
    partitions the statement meant, and the restart marks the log done instead of undoing it."""
    from hms_catalog.commits.completion import partitions_intent

    sd = ttypes.StorageDescriptor(cols=[ttypes.FieldSchema("id", "int", "")], location="file:/w/t/dt=a",
                                  serdeInfo=ttypes.SerDeInfo(serializationLib="x", parameters={"k": "v"}), parameters={})
    folders = {v: f"file:{_folder(tmp_path / 't' / f'dt={v}')}" for v in ("a", "b", "c")}  # there: the completion makes none
    partitions = [ttypes.Partition(values=[v], dbName="db", tableName="t", parameters={},
                                   sd=ttypes.StorageDescriptor(**{**sd.__dict__, "location": folders[v]})) for v in folders]
    log = UndoLog.begin(tmp_path / "logs", "ddl1", "db", "t", source="ddl", storage=StorageResolver())
    log.will_complete("add_partitions", **partitions_intent(["dt"], partitions))
    log.will("added_partitions", database="db", table="t", names=["dt=a"])
    loaded = UndoLog.load(tmp_path / "logs" / "ddl1.jsonl", StorageResolver())
    recorder = Recorder()
    loaded.complete(recorder)  # type: ignore[arg-type]
    assert recorder.calls == [("add_partitions", (partitions,))]
    assert UndoLog.load(tmp_path / "logs" / "ddl1.jsonl", StorageResolver()).done


def test_a_change_a_running_process_began_to_undo_is_undone_by_a_restart_not_completed(tmp_path: Path) -> None:
    """The statement failed and its undo failed too (the metastore went away): the user was told it failed, so
    the next start goes on undoing it."""
    from hms_catalog.commits.completion import partitions_intent

    class Failing(Recorder):
        def __getattr__(self, name: str) -> Any:
            def call(*args: Any, **kwargs: Any) -> None:
                raise OSError("the metastore is away")
            return call

    partition = ttypes.Partition(values=["a"], dbName="db", tableName="t", parameters={},
                                 sd=ttypes.StorageDescriptor(location="file:/w/t/dt=a", parameters={}))
    log = UndoLog.begin(tmp_path / "logs", "ddl2", "db", "t", source="ddl", storage=StorageResolver())
    with pytest.raises(RuntimeError) as raised, log.whole(Failing()):  # type: ignore[arg-type]
        log.will_complete("add_partitions", **partitions_intent(["dt"], [partition]))
        log.will("added_partitions", database="db", table="t", names=["dt=a"])
        raise RuntimeError("the second batch failed")
    assert "undoing a commit" in " ".join(getattr(raised.value, "__notes__", []))
    loaded = UndoLog.load(tmp_path / "logs" / "ddl2.jsonl", StorageResolver())
    assert loaded.forward is None and [step["op"] for step in loaded.steps] == ["added_partitions"]


def test_a_write_killed_in_its_renames_after_its_intent_is_completed_renames_first(tmp_path: Path) -> None:
    """A commit written down whole (its calls' intent) and killed half-way through its renames: the restart takes
    the renames not taken yet, in order, then makes the commit's calls as their abandoned twins would (the new
    partitions added where missing, each replaced partition as the metastore has it given its new statistics,
    the dropped ones dropped where they exist), and marks the log done with its deletes and staging folder."""
    from hms_catalog.commits.write_completion import write_intent

    class Metastore(Recorder):
        def get_partitions_by_names(self, database: str, table: str, names: list[str]) -> list[ttypes.Partition]:
            self.calls.append(("get_partitions_by_names", (database, table, names)))
            return [ttypes.Partition(values=["b"], dbName="db", tableName="t", parameters={"numRows": "1", "k": "v"},
                                     sd=ttypes.StorageDescriptor(location=f"file:{root}/dt=b", parameters={}))]

    root, job = tmp_path / "t", tmp_path / "t" / ".hms-staging-7"
    old_b, new_a, new_b = _folder(root / "dt=b", "old-b"), _folder(job / "dt=a", "new-a"), _folder(job / "dt=b", "new-b")
    sd = ttypes.StorageDescriptor(location=f"file:{root}/dt=a", parameters={})
    added = ttypes.Partition(values=["a"], dbName="db", tableName="t", sd=sd, parameters={"numRows": "2"})
    replaced = ttypes.Partition(values=["b"], dbName="db", tableName="t", parameters={"numRows": "3"},
                                sd=ttypes.StorageDescriptor(location=f"file:{root}/dt=b", parameters={}))
    log = UndoLog.begin(tmp_path / "logs", "job8", "db", "t", staging=f"file:{job}", storage=StorageResolver())
    log.will_move(f"file:{new_a}", f"file:{root}/dt=a")
    log.will_move(f"file:{old_b}", f"file:{job}/.replaced/0")
    log.will_move(f"file:{new_b}", f"file:{old_b}")
    log.will_complete("write", **write_intent("db", "t", ["dt"], added=[added], changed=[replaced], replaced={"dt=b"},
                                              dropped=["dt=c"], new_table=None, deletes=[]))
    assert (root / "dt=a" / "new-a").exists() and (old_b / "new-b").exists()
    old_b.rename(new_b)  # as if killed after the second rename: the third not taken
    loaded = UndoLog.load(tmp_path / "logs" / "job8.jsonl", StorageResolver())
    metastore = Metastore()
    assert loaded.complete(metastore)  # type: ignore[arg-type]
    assert (root / "dt=a" / "new-a").exists() and (old_b / "new-b").exists() and (job / ".replaced" / "0" / "old-b").exists()
    assert [name for name, _ in metastore.calls] == ["add_partitions", "get_partitions_by_names", "alter_partitions", "drop_partitions"]
    assert metastore.calls[0][1] == ([added],)
    altered = metastore.calls[2][1][2]
    assert [(p.values, p.parameters, p.sd.location) for p in altered] == [(["b"], {"numRows": "3"}, f"file:{root}/dt=b")]
    assert metastore.calls[3][1] == ("db", "t", ["dt=c"])
    done = UndoLog.load(tmp_path / "logs" / "job8.jsonl", StorageResolver())
    assert done.done and done.deletes == [f"file:{job}"]
