"""Catalog definitions persist, survive restarts, never half-write, and concurrent writers lose nothing."""

from __future__ import annotations

import json
import multiprocessing
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from hms_catalog.errors import AlreadyExistsError, ConfigurationError, NotFoundError, VersionMismatchError
from hms_catalog.store import CatalogDefinition, CatalogStore

PROPS = {"type": "hms", "hive.metastore.uris": "thrift://h:9083"}


def test_create_get_list_drop(home: Path) -> None:
    store = CatalogStore(home)
    created = store.create(CatalogDefinition(name="Hive", properties=PROPS, comment="prod"))
    assert created is not None and created.name == "hive" and created.version == 1
    assert store.get("HIVE") == created
    assert [d.name for d in store.list()] == ["hive"]
    with pytest.raises(AlreadyExistsError, match="catalog 'hive' already exists"):
        store.create(CatalogDefinition(name="hive", properties=PROPS))
    assert store.create(CatalogDefinition(name="hive", properties=PROPS), if_not_exists=True) is None
    assert store.drop("hive") == created
    assert store.drop("hive", if_exists=True) is None
    with pytest.raises(NotFoundError, match="catalog 'hive' does not exist"):
        store.drop("hive")


def test_updates_bump_the_version_and_keep_identity(home: Path) -> None:
    store = CatalogStore(home)
    created = store.create(CatalogDefinition(name="c", properties=PROPS))
    assert created is not None
    updated = store.update("c", lambda d: CatalogDefinition(name=d.name, properties={**d.properties, "x": "1"}))
    assert (updated.id, updated.version, updated.created_at) == (created.id, 2, created.created_at)
    assert updated.updated_at >= created.updated_at
    renamed = store.rename("c", "d")
    assert (renamed.name, renamed.id, renamed.version) == ("d", created.id, 3)
    with pytest.raises(NotFoundError):
        store.get("c")


def test_a_failed_change_stores_nothing(home: Path) -> None:
    store = CatalogStore(home)
    store.create(CatalogDefinition(name="c", properties=PROPS))
    before = store.path.read_bytes()

    def broken(_: CatalogDefinition) -> CatalogDefinition:
        raise ConfigurationError("rejected")

    with pytest.raises(ConfigurationError):
        store.update("c", broken)
    assert store.path.read_bytes() == before
    assert [p.name for p in home.iterdir() if p.name.endswith(".tmp")] == []


def test_the_file_is_private(home: Path) -> None:
    store = CatalogStore(home)
    store.create(CatalogDefinition(name="c", properties={**PROPS, "secret": "s"}))
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600


def test_definitions_survive_a_new_process(home: Path) -> None:
    CatalogStore(home).create(CatalogDefinition(name="kept", properties=PROPS, comment="across restarts"))
    code = (
        "import sys, json; from hms_catalog.store import CatalogStore;"
        "d = CatalogStore(sys.argv[1]).get('kept'); print(json.dumps(d.to_json()))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(home)], capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout)
    assert loaded["comment"] == "across restarts" and loaded["properties"] == PROPS


def test_a_corrupt_store_is_reported_with_its_path(home: Path) -> None:
    (home / "catalogs.json").write_text("{not json")
    with pytest.raises(ConfigurationError, match="catalogs.json is not valid"):
        CatalogStore(home).list()


def _bump_many(home: str, times: int) -> None:
    store = CatalogStore(home)
    for _ in range(times):
        store.update(
            "shared",
            lambda d: CatalogDefinition(
                name=d.name, properties={**d.properties, "n": str(int(d.properties.get("n", "0")) + 1)}
            ),
        )


@pytest.mark.slow  # processes of its own
def test_concurrent_writers_in_several_processes_lose_no_update(home: Path) -> None:
    CatalogStore(home).create(CatalogDefinition(name="shared", properties=PROPS))
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_bump_many, args=(str(home), 25)) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    final = CatalogStore(home).get("shared")
    assert final.version == 1 + 100
    assert final.properties["n"] == "100"
    assert json.loads((home / "catalogs.json").read_text())["format"] == 1


_HANGING_WRITER = """
import os, sys, time
from hms_catalog.store import CatalogDefinition, CatalogStore

def hang(source, target):
    print("temporary document written", flush=True)
    time.sleep(120)

os.replace = hang
CatalogStore(sys.argv[1]).create(CatalogDefinition(name="lost", properties={"type": "hms"}))
"""


def test_a_writer_killed_before_its_rename_leaves_no_temporary_file_behind_the_next_write(home: Path) -> None:
    store = CatalogStore(home)
    store.create(CatalogDefinition(name="kept", properties=PROPS))
    with subprocess.Popen([sys.executable, "-c", _HANGING_WRITER, str(home)], stdout=subprocess.PIPE, text=True) as writer:
        try:
            assert writer.stdout is not None and writer.stdout.readline().strip() == "temporary document written"
        finally:
            writer.kill()  # SIGKILL: no cleanup handler runs
    assert [d.name for d in store.list()] == ["kept"]  # the change was never acknowledged, nor applied
    assert len(list(home.glob(".catalogs-*.tmp"))) == 1
    store.update("kept", lambda d: CatalogDefinition(name=d.name, properties={**d.properties, "x": "1"}))
    assert sorted(p.name for p in home.iterdir()) == ["catalogs.json", "catalogs.lock"]


def test_the_rename_is_made_durable_by_syncing_the_directory(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    synced: list[bool] = []
    real_fsync = os.fsync

    def recording_fsync(descriptor: int) -> None:
        synced.append(stat.S_ISDIR(os.fstat(descriptor).st_mode))
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    CatalogStore(home).create(CatalogDefinition(name="c", properties=PROPS))
    assert synced == [False, True]  # the document, then the directory after the rename


def test_a_conditional_change_is_stored_only_at_the_expected_version(home: Path) -> None:
    store = CatalogStore(home)
    created = store.create(CatalogDefinition(name="hive", properties=PROPS))
    assert created is not None and created.version == 1
    changed = store.update("hive", lambda d: d, expected_version=1)
    assert changed.version == 2
    with pytest.raises(VersionMismatchError, match=r"catalog 'hive' is at version 2, not 1: it changed since it was read"):
        store.update("hive", lambda d: d, expected_version=1)
    with pytest.raises(VersionMismatchError):
        store.rename("hive", "prod", expected_version=1)
    with pytest.raises(VersionMismatchError):
        store.drop("hive", expected_version=1)
    assert [(d.name, d.version) for d in store.list()] == [("hive", 2)]  # none of the refused changes was stored
    renamed = store.rename("hive", "prod", expected_version=2)
    assert (renamed.name, renamed.version) == ("prod", 3)
    assert store.drop("prod", expected_version=3) is not None and store.list() == []
    with pytest.raises(NotFoundError):
        store.update("prod", lambda d: d, expected_version=3)
