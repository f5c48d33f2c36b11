"""Catalog definitions in the SQL store behave as the JSON store did, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from hms_catalog.errors import AlreadyExistsError, NotFoundError, VersionMismatchError
from hms_catalog.state import SqlCatalogStore, StoreDatabase
from hms_catalog.state.definitions import IMPORTED_SUFFIX
from hms_catalog.store import CatalogDefinition, CatalogStore

PROPS = {"type": "hms", "hive.metastore.uris": "thrift://h:9083", "hive.metastore.password": "s3cret"}


def _store(tmp_path: Path, database: StoreDatabase) -> SqlCatalogStore:
    return SqlCatalogStore(tmp_path / "home", database)


def test_create_get_list_alter_rename_drop(tmp_path: Path, database: StoreDatabase) -> None:
    store = _store(tmp_path, database)
    created = store.create(CatalogDefinition(name="Hive", properties=PROPS, comment="prod"))
    assert created is not None and created.name == "hive"
    assert store.get("HIVE") == created
    assert store.create(CatalogDefinition(name="hive", properties=PROPS), if_not_exists=True) is None
    with pytest.raises(AlreadyExistsError):
        store.create(CatalogDefinition(name="hive", properties=PROPS))
    altered = store.update("hive", lambda d: CatalogDefinition(d.name, {**d.properties, "k": "v"}, d.comment, d.id))
    assert (altered.version, altered.properties["k"], altered.id) == (2, "v", created.id)
    renamed = store.rename("hive", "warehouse", expected_version=2)
    assert renamed.name == "warehouse" and renamed.version == 3 and store.find("hive") is None
    assert [d.name for d in store.list()] == ["warehouse"]
    with pytest.raises(VersionMismatchError):
        store.drop("warehouse", expected_version=2)
    assert store.drop("warehouse", expected_version=3) == renamed
    with pytest.raises(NotFoundError):
        store.get("warehouse")
    assert store.drop("warehouse", if_exists=True) is None


def test_compare_and_set_lets_one_of_two_concurrent_alters_win(tmp_path: Path, database: StoreDatabase) -> None:
    """Two replicas altering one catalog from the same version: exactly one wins, the other is told to read again."""
    store, other = _store(tmp_path, database), SqlCatalogStore(tmp_path / "other", database)
    store.create(CatalogDefinition(name="c", properties=PROPS))
    outcomes: list[str] = []
    barrier = threading.Barrier(2)

    def alter(on: SqlCatalogStore, value: str) -> None:
        barrier.wait()
        try:
            on.update("c", lambda d: CatalogDefinition(d.name, {**d.properties, "who": value}, d.comment, d.id),
                      expected_version=1)
            outcomes.append("ok")
        except VersionMismatchError:
            outcomes.append("mismatch")

    threads = [threading.Thread(target=alter, args=(s, v)) for s, v in ((store, "a"), (other, "b"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["mismatch", "ok"]
    assert store.get("c").version == 2


def test_a_json_store_is_imported_once_and_kept_as_a_backup(tmp_path: Path, database: StoreDatabase) -> None:
    home = tmp_path / "home"
    legacy = CatalogStore(home)
    first = legacy.create(CatalogDefinition(name="old", properties=PROPS, comment="from before"))
    assert first is not None
    store = SqlCatalogStore(home, database)
    assert store.get("old") == first  # id, version and times kept
    assert not (home / "catalogs.json").exists()
    backup = json.loads((home / ("catalogs.json" + IMPORTED_SUFFIX)).read_text())
    assert [entry["name"] for entry in backup["catalogs"]] == ["old"]
    store.drop("old")
    assert SqlCatalogStore(home, database).find("old") is None  # not imported again
