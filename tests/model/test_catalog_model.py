"""The lazy catalog model's behaviour, run against the in-memory fake and the real embedded metastore."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from hms_catalog.errors import NotFoundError
from hms_catalog.model import ExternalCatalog
from hms_catalog.properties import CatalogConfig
from hms_catalog.store import CatalogDefinition
from tests.support import hms
from tests.support.fake_metastore import FakeMetastore

PROPERTIES = {"type": "hms", "hive.metastore.uris": "thrift://unused:9083"}


@dataclass
class World:
    """A metastore to arrange (databases, tables) and the client a catalog reads it through."""

    client: Any
    add_database: Callable[[str], None]
    add_table: Callable[..., None]

    def catalog(self) -> ExternalCatalog:
        definition = CatalogDefinition(name="cat", properties=PROPERTIES)
        return ExternalCatalog(definition, CatalogConfig.from_properties(PROPERTIES), self.client)

    def calls_during(self, action: Callable[[], object]) -> dict[str, int]:
        before = self.client.metrics()
        action()
        return self.client.metrics().calls_since(before)


@pytest.fixture(params=["fake", pytest.param("real", marks=pytest.mark.metastore)])
def world(request: pytest.FixtureRequest) -> Iterator[World]:
    if request.param == "fake":
        fake = FakeMetastore(latency=0.01)

        def add_fake_table(db: str, name: str, columns: Sequence[tuple[str, str]], **kw: Any) -> None:
            fake.add_table(hms.table_struct(db, name, columns, f"file:///w/{db}.db/{name}", **kw))

        yield World(fake, fake.add_database, add_fake_table)
        return
    admin = request.getfixturevalue("admin")
    client = request.getfixturevalue("client")
    created: list[str] = []

    def add_database(name: str) -> None:
        admin.create_database(name)
        created.append(name)

    yield World(client, add_database, admin.create_table)
    for name in created:
        admin.drop_database(name)


@pytest.fixture
def db(world: World, unique_name: str) -> str:
    world.add_database(unique_name)
    for index in range(5):
        world.add_table(unique_name, f"t{index}", [("id", "bigint"), ("amount", "decimal(10,2)")],
                        partition_keys=[("dt", "string")])
    return unique_name


def test_creating_a_catalog_and_handles_makes_no_call(world: World, db: str) -> None:
    calls = world.calls_during(lambda: world.catalog().database(db).table("t0"))
    assert calls == {}


def test_describe_on_a_cold_catalog_is_one_get_table_and_warm_is_none(world: World, db: str) -> None:
    catalog = world.catalog()
    cold = world.calls_during(lambda: catalog.table(db, "t1").metadata)
    warm = world.calls_during(lambda: catalog.table(db, "t1").metadata)
    assert cold == {"get_table_req": 1}
    assert warm == {}
    assert catalog.table(db, "t1").thrift.sd.cols[1].type == "decimal(10,2)"


def test_show_tables_is_one_call_whatever_the_table_count(world: World, db: str) -> None:
    catalog = world.catalog()
    names: list[tuple[str, ...]] = []
    calls = world.calls_during(lambda: names.append(catalog.database(db).table_names()))
    assert names == [("t0", "t1", "t2", "t3", "t4")]
    assert calls == {"get_all_tables": 1}
    assert world.calls_during(lambda: catalog.database(db).table_names()) == {}


def test_thirty_two_threads_asking_for_one_table_cause_one_load(world: World, db: str) -> None:
    catalog = world.catalog()
    start = threading.Barrier(32)
    seen: list[object] = []
    errors: list[BaseException] = []

    def ask() -> None:
        try:
            start.wait()
            seen.append(catalog.table(db, "t2").metadata)
        except BaseException as error:  # noqa: BLE001 - any failure in the thread is reported below  # pragma: no cover
            errors.append(error)

    def run_all() -> None:
        threads = [threading.Thread(target=ask) for _ in range(32)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    calls = world.calls_during(run_all)
    assert not errors
    assert calls == {"get_table_req": 1}
    assert len(seen) == 32 and all(s is seen[0] for s in seen)


def test_names_are_case_insensitive(world: World, db: str) -> None:
    catalog = world.catalog()
    assert catalog.table(db.upper(), "T3") is catalog.table(db, "t3")
    assert catalog.table(db.upper(), "T3").thrift.tableName == "t3"


def test_missing_table_and_missing_database_are_named(world: World, db: str) -> None:
    catalog = world.catalog()
    with pytest.raises(NotFoundError) as missing_table:
        _ = catalog.table(db, "nope").metadata
    assert (missing_table.value.kind, missing_table.value.name) == ("table", f"cat.{db}.nope")
    with pytest.raises(NotFoundError) as missing_db:
        _ = catalog.table(f"{db}_gone", "t0").metadata
    assert (missing_db.value.kind, missing_db.value.name) == ("database", f"cat.{db}_gone")
    with pytest.raises(NotFoundError, match=f"database 'cat.{db}_gone' does not exist"):
        catalog.database(f"{db}_gone").table_names()


def test_a_failed_load_is_tried_again(world: World, db: str) -> None:
    catalog = world.catalog()
    with pytest.raises(NotFoundError):
        _ = catalog.table(db, "later").metadata
    world.add_table(db, "later", [("x", "int")])
    assert catalog.table(db, "later").thrift.tableName == "later"


def test_refresh_forgets_exactly_its_level(world: World, db: str) -> None:
    catalog = world.catalog()
    _ = catalog.table(db, "t0").metadata
    catalog.database(db).table_names()
    catalog.database_names()

    catalog.database(db).refresh_table("t0")
    assert world.calls_during(lambda: catalog.table(db, "t0").metadata) == {"get_table_req": 1}
    assert world.calls_during(lambda: catalog.database(db).table_names()) == {}

    world.add_table(db, "t9", [("x", "int")])
    catalog.refresh_database(db)
    assert world.calls_during(lambda: catalog.database(db).table_names())["get_all_tables"] == 1
    assert "t9" in catalog.database(db).table_names()
    assert world.calls_during(lambda: catalog.table(db, "t0").metadata) == {"get_table_req": 1}

    catalog.refresh()
    assert world.calls_during(catalog.database_names) == {"get_all_databases": 1}
    assert db in catalog.database_names()
