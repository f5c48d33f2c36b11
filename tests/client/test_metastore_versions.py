"""Catalogs over metastores of other versions: the embedded Hive 2.3 behind a proxy that answers as a
Hive 4.0.1 metastore (no get_table, no get_table_objects_by_name) or as a Hive 2.1 one (no ``_req``
calls). Everything a user does works through both, with the same number of calls as direct."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.errors import UnsupportedCallError
from hms_catalog.execution import Session
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.model.database import TABLE_BATCH_SIZE
from hms_catalog.properties import parse_uris
from planner.spark import attach_catalogs
from tests.spark.test_datasource import rows_of
from tests.support.hms import Admin
from tests.support.sessions import EVENTS, caught_up, open_catalog
from tests.support.thrift_proxy import HIVE4_REMOVED, HIVE21_MISSING, RefusingProxy

pytestmark = pytest.mark.metastore

REFUSED = {"hive4": HIVE4_REMOVED, "hive21": HIVE21_MISSING}
TABLE_CALL = {"hive4": "get_table_req", "hive21": "get_table"}
BATCH_CALL = {"hive4": "get_table_objects_by_name_req", "hive21": "get_table_objects_by_name"}
MANY = TABLE_BATCH_SIZE + 20  # two batches


@pytest.fixture(scope="module")
def warehouse(spark: Any, admin: Admin) -> Iterator[str]:
    """``sales`` written by Spark (partitioned by dt and region) and MANY small tables registered over thrift."""
    database = f"versions{os.getpid()}"
    spark.sql(f"DROP DATABASE IF EXISTS {database} CASCADE")
    spark.sql(f"CREATE DATABASE {database}")
    spark.sql(f"CREATE TABLE {database}.sales (id BIGINT, amount DOUBLE) PARTITIONED BY (dt STRING, region STRING) STORED AS PARQUET")
    spark.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    rows = ", ".join(f"({i}, {i}.5, '2024-01-0{1 + i % 3}', '{['eu', 'us'][i % 2]}')" for i in range(12))
    spark.sql(f"INSERT INTO {database}.sales PARTITION (dt, region) SELECT * FROM VALUES {rows}")
    for index in range(MANY):
        admin.create_table(database, f"small{index:03d}", [("id", "int")])
    yield database
    spark.sql(f"DROP DATABASE IF EXISTS {database} CASCADE")


@pytest.fixture(params=sorted(REFUSED))
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def proxy(kind: str, metastore: EmbeddedMetastore) -> Iterator[RefusingProxy]:
    upstream = parse_uris(metastore.uri)[0]
    with RefusingProxy((upstream.host, upstream.port), REFUSED[kind]) as running:
        yield running


@pytest.fixture
def through(home: Path, proxy: RefusingProxy) -> Iterator[Session]:
    """A catalog ``hive`` whose only URI is the proxy."""
    session = open_catalog(home, proxy.uri)
    yield session
    session.manager.close()


@pytest.fixture
def direct(tmp_path: Path, metastore_uri: str) -> Iterator[Session]:
    home = tmp_path / "direct"
    home.mkdir()
    session = open_catalog(home, metastore_uri)
    yield session
    session.manager.close()


def _calls(session: Session, statement: str) -> tuple[Any, dict[str, int]]:
    catalog = session.manager.catalog("hive")
    before = catalog.metrics()
    result = session.run_one(statement)
    return result, catalog.metrics().calls_since(before)


def _no_failure(session: Session) -> None:
    snapshot = session.manager.catalog("hive").metrics()
    assert snapshot.errors == {} and snapshot.retries == 0 and snapshot.clients_discarded == 0


def test_describe_is_one_call_in_the_form_the_metastore_answers(
    kind: str, through: Session, direct: Session, proxy: RefusingProxy, warehouse: str
) -> None:
    ours, calls = _calls(through, f"DESCRIBE hive.{warehouse}.sales")
    assert calls == {TABLE_CALL[kind]: 1}
    assert ours.rows == direct.run_one(f"DESCRIBE hive.{warehouse}.sales").rows
    _, calls = _calls(through, f"DESCRIBE hive.{warehouse}.small000")
    assert calls == {TABLE_CALL[kind]: 1}
    _no_failure(through)
    unsupported = through.manager.catalog("hive").metrics().unsupported
    if kind == "hive4":
        assert unsupported == {} and proxy.refused == {}  # get_table is never sent at all
    else:
        assert unsupported == {"get_table_req": 1} and proxy.refused == {"get_table_req": 1}  # refused once, then remembered


def test_show_table_status_of_many_tables_is_batched(kind: str, through: Session, direct: Session, warehouse: str) -> None:
    ours, calls = _calls(through, f"SHOW TABLE STATUS FROM hive.{warehouse}")
    assert calls == {"get_all_tables": 1, BATCH_CALL[kind]: 2}
    assert len(ours.rows) == MANY + 1
    theirs = direct.run_one(f"SHOW TABLE STATUS FROM hive.{warehouse}")
    assert [row[:4] for row in ours.rows] == [row[:4] for row in theirs.rows]
    _no_failure(through)
    # The two batches run in parallel, so an older metastore may refuse the _req form once per batch.
    refused = through.manager.catalog("hive").metrics().unsupported.get("get_table_objects_by_name_req", 0)
    assert refused == 0 if kind == "hive4" else 1 <= refused <= 2


def test_show_splits_prunes_partitions_as_direct(kind: str, through: Session, direct: Session, warehouse: str) -> None:
    statement = f"SHOW SPLITS FROM hive.{warehouse}.sales WHERE region = 'us' AND dt <= '2024-01-02'"
    ours, our_calls = _calls(through, statement)
    theirs, their_calls = _calls(direct, statement)
    assert sorted(ours.rows) == sorted(theirs.rows)
    assert {row[5] for row in ours.rows} == {"dt=2024-01-01/region=us", "dt=2024-01-02/region=us"}
    our_calls.pop(TABLE_CALL[kind])
    their_calls.pop("get_table_req")
    assert our_calls == their_calls  # the partition calls, the same ones
    _no_failure(through)


@pytest.fixture
def following(tmp_path: Path, proxy: RefusingProxy) -> Iterator[Session]:
    """A catalog ``hive`` whose only URI is the proxy, following events."""
    home = tmp_path / "following"
    home.mkdir()
    session = open_catalog(home, proxy.uri, **EVENTS)
    yield session
    session.manager.close()


def test_events_are_followed(kind: str, following: Session, admin: Admin, spark: Any, warehouse: str) -> None:
    name = f"{warehouse}.followed_{kind}"
    spark.sql(f"CREATE TABLE {name} (id INT) STORED AS PARQUET")
    assert [row[0] for row in following.run_one(f"DESCRIBE hive.{name}").rows] == ["id"]
    spark.sql(f"ALTER TABLE {name} ADD COLUMNS (note STRING)")
    caught_up(following, admin)
    follower = following.manager.catalog("hive").follower
    assert follower is not None
    assert [row[0] for row in following.run_one(f"DESCRIBE hive.{name}").rows] == ["id", "note"]
    assert follower.status().failures == 0 and follower.status().full_invalidations == 0
    _no_failure(following)


def test_select_reads_through_spark(kind: str, through: Session, home: Path, spark: Any, warehouse: str) -> None:
    original = spark.sql
    runner = attach_catalogs(spark, str(home))
    try:
        query = "SELECT region, count(*) AS n, sum(amount) AS total FROM {p}sales WHERE dt >= '2024-01-02' GROUP BY region"
        ours = spark.sql(query.format(p=f"hive.{warehouse}."))
        theirs = original(query.format(p=f"{warehouse}."))
        assert rows_of(ours) == rows_of(theirs)
        assert sum(row["n"] for row in theirs.collect()) == 8
    finally:
        spark.sql = original
        runner.session.manager.close()


def test_a_metastore_answering_no_form_is_a_clear_error(metastore: EmbeddedMetastore, tmp_path: Path, warehouse: str) -> None:
    upstream = parse_uris(metastore.uri)[0]
    with RefusingProxy((upstream.host, upstream.port), HIVE4_REMOVED | {"get_table_req"}) as proxy:
        session = open_catalog(tmp_path, proxy.uri)
        try:
            with pytest.raises(UnsupportedCallError) as raised:
                session.run_one(f"DESCRIBE hive.{warehouse}.sales")
            assert str(raised.value) == (
                f"the metastore at {proxy.uri} answers none of get_table_req (Hive 2.3 and later), "
                "get_table (Hive releases before 4.0.1); it answered: Invalid method name: 'get_table'"
            )
            # The connection stayed usable and nothing counts as a failure.
            assert warehouse in session.run_one("SHOW DATABASES FROM hive").column("Database")
            _no_failure(session)
        finally:
            session.manager.close()
