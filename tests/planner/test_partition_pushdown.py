"""Partition filters pushed to the real metastore: ranges and IN on string, integral and date keys are one
get_partitions_by_filter call; a refused filter falls back to names, is remembered and not asked again; the
partitions chosen are always those local evaluation keeps over every name; batches hold 1,000 partitions.

What Hive 2.3 (the embedded metastore, on Derby) was found to do: its direct SQL path runs filters on
integral keys (bare numbers) and date keys (quoted ``"yyyy-mm-dd"``; ``date '...'`` does not parse), so
``hive.metastore.integral.jdo.pushdown`` is not needed; it falls back to its ORM path, which compares only
strings and refuses the filter, when a value of the key does not cast (an int key holding ``x1``).
"""

from __future__ import annotations

import datetime
import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.execution import Session
from hms_catalog.formats.partition_names import make_partition_name, parse_partition_name
from hms_catalog.sql import parse_expression
from hms_catalog.types import parse_hive_type
from planner import SplitPlan, plan_table
from planner.partitions import PARTITION_BATCH_SIZE
from planner.predicates import bind
from tests.support.hms import Admin
from tests.support.sessions import open_catalog

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test

KEYS = (("s", "string"), ("n", "int"), ("d", "date"))
STRINGS = ["a", "B", "b", "a b", "é", "c'd"]
NUMBERS = ["-3", "0", "2", "10", "100"]
DATES = ["2023-12-31", "2024-01-01", "2024-01-02", "2024-02-29"]
LATER_KEYS = (("n", "int"), ("s", "string"))
UNCACHED = {"partition.cache.ttl-second": "0"}  # every plan asks the metastore for its partitions


def register(admin: Admin, database: str, table: str, rows: Sequence[Sequence[str | None]]) -> None:
    """Partitions of ``table`` with ``rows`` of values (None: NULL), each a folder with one small file,
    added in one call per 1,000."""
    struct = admin.pool.call("get_table", database, table)
    root = admin.warehouse / f"{database}.db" / table
    added = []
    for index, values in enumerate(rows):
        folder = root / f"p{index:05d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "part-0.parquet").write_bytes(b"x" * 16)
        sd = ttypes.StorageDescriptor(**{**struct.sd.__dict__, "location": f"file://{folder}"})
        added.append(ttypes.Partition(values=["__HIVE_DEFAULT_PARTITION__" if v is None else v for v in values],
                                      dbName=database, tableName=table, sd=sd, parameters={"numRows": str(index)}))
    for start in range(0, len(added), 1000):
        admin.pool.call("add_partitions", added[start : start + 1000])


@pytest.fixture(scope="module")
def pushdown_db(admin: Admin) -> Iterator[str]:
    """``typed`` (s string, n int, d date: every combination, NULLs too), ``later`` (n int, s string), ``ints`` (ti tinyint, si smallint,
    b bigint), ``bad`` (s string, n int with one value that is not a number), ``many`` (1,001 partitions)."""
    database = "pushdown"
    admin.create_database(database)
    admin.create_table(database, "typed", [("x", "int")], partition_keys=KEYS)
    register(admin, database, "typed", list(itertools.product([*STRINGS, None], [*NUMBERS, None], [*DATES, None])))
    admin.create_table(database, "later", [("x", "int")], partition_keys=LATER_KEYS)
    register(admin, database, "later", list(itertools.product([*NUMBERS, None], [*STRINGS, None])))
    admin.create_table(database, "ints", [("x", "int")], partition_keys=[("ti", "tinyint"), ("si", "smallint"), ("b", "bigint")])
    register(admin, database, "ints", [["1", "300", "10000000000"], ["-2", "-300", "-1"], ["5", "7", "5000000000"]])
    admin.create_table(database, "bad", [("x", "int")], partition_keys=[("s", "string"), ("n", "int")])
    register(admin, database, "bad", [["a", "1"], ["a", "2"], ["b", "x1"], ["b", "30"]])
    admin.create_table(database, "many", [("x", "int")], partition_keys=[("p", "string")])
    register(admin, database, "many", [[f"p{index:05d}"] for index in range(PARTITION_BATCH_SIZE + 1)])
    yield database
    admin.pool.call("drop_database", database, False, True)  # the files go with the test's temporary folders


@pytest.fixture
def uncached(home: Path, metastore_uri: str) -> Iterator[Session]:
    session = open_catalog(home, metastore_uri, **UNCACHED)
    yield session
    session.manager.close()


def plan(session: Session, database: str, table: str, where: str | None) -> SplitPlan:
    catalog = session.manager.catalog("hive")
    handle = catalog.table(database, table)
    _ = handle.metadata  # count only what planning asks
    return plan_table(catalog, handle, where)


def chosen(result: SplitPlan) -> set[str]:
    return {make_partition_name([k for k, _ in s.partition_values], [v for _, v in s.partition_values])
            for s in result.splits}


def all_names(session: Session, database: str, table: str) -> list[str]:
    return list(session.manager.catalog("hive").client.get_partition_names(database, table))


def locally(names: Sequence[str], where: str, keys: Sequence[tuple[str, str]]) -> set[str]:
    """The partitions local evaluation keeps over every name: the answer pushdown must give."""
    predicate = bind(parse_expression(where), {name: parse_hive_type(kind) for name, kind in keys})
    assert predicate is not None
    return {name for name in names if predicate.may_match(dict(parse_partition_name(name)))}


@pytest.mark.parametrize("where", [
    "s >= 'b' AND s < 'é'",
    "s BETWEEN 'B' AND 'a b'",
    "n > 2",
    "n BETWEEN -3 AND 10",
    "n IN (0, 100) AND s <> 'a'",
    "n <= '2'",
    "d < DATE '2024-01-02'",
    "d >= '2024-01-02'",
    "d IN (DATE '2023-12-31', DATE '2024-02-29')",
    "d BETWEEN DATE '2024-01-01' AND DATE '2024-01-02' AND n <> 0",
    "n = 10",  # an equality on a key after the first
    "(d = DATE '2024-01-01' OR n = 100) AND s > 'B'",
])
def test_ranges_and_in_are_one_filter_call_with_the_local_answer(pushdown_db: str, uncached: Session, where: str) -> None:
    result = plan(uncached, pushdown_db, "typed", where)
    assert result.summary.metastore_calls == {"get_partitions_by_filter": 1}
    assert chosen(result) == locally(all_names(uncached, pushdown_db, "typed"), where, KEYS)
    assert uncached.manager.catalog("hive").caches.filter_refusals.snapshot() == {}


@pytest.mark.parametrize(("table", "where", "specs"), [
    ("typed", "s IN ('a', 'c''d')", 2),
    ("later", "s = 'a b'", 1),  # a key after the first: the spec leaves n free
    ("later", "s IN ('B', 'é', 'c''d')", 3),
    ("later", "s = 'b' AND x > 1", 1),
])
def test_string_equalities_and_in_lists_ask_names_by_partial_specs(pushdown_db: str, uncached: Session, table: str, where: str,
                                                                   specs: int) -> None:
    result = plan(uncached, pushdown_db, table, where)
    assert result.summary.metastore_calls == {"get_partition_names_ps": specs, "get_partitions_by_names": 1}
    keys = KEYS if table == "typed" else LATER_KEYS
    assert chosen(result) == locally(all_names(uncached, pushdown_db, table), where, keys)
    assert chosen(result)


@pytest.mark.parametrize(("where", "expected"), [
    ("ti < 2 AND si > 0", {"ti=1/si=300/b=10000000000"}),
    ("b >= 5000000000", {"ti=1/si=300/b=10000000000", "ti=5/si=7/b=5000000000"}),
    ("si IN (-300, 7)", {"ti=-2/si=-300/b=-1", "ti=5/si=7/b=5000000000"}),
])
def test_every_integral_type_is_pushed(pushdown_db: str, uncached: Session, where: str, expected: set[str]) -> None:
    result = plan(uncached, pushdown_db, "ints", where)
    assert result.summary.metastore_calls == {"get_partitions_by_filter": 1}
    assert chosen(result) == expected


def test_a_refused_integral_filter_falls_back_and_is_not_asked_again(pushdown_db: str, uncached: Session) -> None:
    catalog = uncached.manager.catalog("hive")
    first = plan(uncached, pushdown_db, "bad", "n > 1")
    assert first.summary.metastore_calls == {"get_partitions_by_filter": 1, "get_partition_names": 1, "get_partitions_by_names": 1}
    assert chosen(first) == {"s=a/n=2", "s=b/n=30"}  # x1 is no number: NULL, as Spark reads it
    assert any("refused" in note for note in first.summary.notes)
    assert catalog.caches.filter_refusals.refused(pushdown_db, "bad") == {"integral"}
    again = plan(uncached, pushdown_db, "bad", "n < 10")
    assert again.summary.metastore_calls == {"get_partition_names": 1, "get_partitions_by_names": 1}
    assert chosen(again) == {"s=a/n=1", "s=a/n=2"}
    mixed = plan(uncached, pushdown_db, "bad", "s >= 'b' AND n > 1")  # the string part is still pushed
    assert mixed.summary.metastore_calls == {"get_partitions_by_filter": 1}
    assert chosen(mixed) == {"s=b/n=30"}
    uncached.run_one(f"REFRESH TABLE hive.{pushdown_db}.bad")  # the table may have been fixed: ask again
    assert plan(uncached, pushdown_db, "bad", "n > 1").summary.metastore_calls["get_partitions_by_filter"] == 1


def test_a_refusal_is_remembered_per_catalog(pushdown_db: str, uncached: Session, home: Path, metastore_uri: str) -> None:
    plan(uncached, pushdown_db, "bad", "n > 1")
    other = open_catalog(home / "other", metastore_uri, **UNCACHED)
    try:
        assert "get_partitions_by_filter" in plan(other, pushdown_db, "bad", "n > 1").summary.metastore_calls
    finally:
        other.manager.close()


def test_partitions_come_in_batches_of_the_batch_size(pushdown_db: str, uncached: Session) -> None:
    whole = plan(uncached, pushdown_db, "many", None)  # 1,001 partitions: a batch of 1,000 and one of 1
    assert whole.summary.metastore_calls == {"get_partition_names": 1, "get_partitions_by_names": 2}
    assert len(whole.splits) == PARTITION_BATCH_SIZE + 1
    ranged = plan(uncached, pushdown_db, "many", "p >= 'p00001'")  # one filter call brings all 1,000
    assert ranged.summary.metastore_calls == {"get_partitions_by_filter": 1}
    assert len(ranged.splits) == PARTITION_BATCH_SIZE


def test_selected_partitions_carry_their_parameters(pushdown_db: str, uncached: Session) -> None:
    from planner.partitions import select_partitions

    catalog = uncached.manager.catalog("hive")
    table = catalog.table(pushdown_db, "bad").metadata.table
    predicate = bind(parse_expression("s = 'a'"), {"s": parse_hive_type("string"), "n": parse_hive_type("int")})
    selection = select_partitions(catalog.client, catalog.caches, table, predicate, max_partitions=10)
    assert {p.name: p.parameters.get("numRows") for p in selection.partitions} == {"s=a/n=1": "0", "s=a/n=2": "1"}
    assert all(p.serde and p.input_format and p.location for p in selection.partitions)


# Random predicates: pushed or not, the answer is local evaluation's ------------------------------------

def _literals(column: str) -> st.SearchStrategy[st.SearchStrategy[str]]:
    """A family of literals for ``column``: mostly of the key's type (pushable), sometimes one Spark
    compares in another type (a number against a string key, text against an int or date key)."""
    quoted = st.sampled_from([*STRINGS, "", "a%", "z"]).map(lambda v: "'" + v.replace("'", "''") + "'")
    numbers = st.integers(-5, 120).map(str)
    dates = st.dates(datetime.date(2023, 12, 30), datetime.date(2024, 3, 1)).map(lambda d: f"DATE '{d}'")
    families = {
        "s": [quoted, quoted, quoted, numbers],
        "n": [numbers, numbers, numbers.map(lambda v: f"'{v}'"), quoted],
        "d": [dates, dates, dates.map(lambda v: v[len("DATE "):]), quoted],
    }
    return st.sampled_from(families.get(column, [numbers, quoted]))


@st.composite
def _atom(draw: st.DrawFn) -> str:
    column = draw(st.sampled_from(["s", "s", "n", "n", "d", "d", "x"]))
    shape = draw(st.sampled_from(["compare", "compare", "compare", "in", "in", "between", "null"]))
    literal = draw(_literals(column))
    if shape == "compare":
        return f"{column} {draw(st.sampled_from(['=', '<>', '<', '<=', '>', '>=']))} {draw(literal)}"
    if shape == "in":
        values = draw(st.lists(literal, min_size=1, max_size=4))
        return f"{column} {draw(st.sampled_from(['IN', 'IN', 'IN', 'NOT IN']))} ({', '.join(values)})"
    if shape == "between":
        return f"{column} BETWEEN {draw(literal)} AND {draw(literal)}"
    return f"{column} IS {draw(st.sampled_from(['NULL', 'NOT NULL']))}"


PREDICATES = st.recursive(
    _atom(),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["AND", "AND", "OR"]), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(inner, st.sampled_from(["AND", "OR"]), inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        inner.map(lambda p: f"NOT ({p})"),
    ),
    max_leaves=4,
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=PREDICATES)
def test_random_predicates_choose_what_local_evaluation_chooses(pushdown_db: str, uncached: Session, where: str) -> None:
    result = plan(uncached, pushdown_db, "typed", where)
    assert chosen(result) == locally(all_names(uncached, pushdown_db, "typed"), where, KEYS), result.summary.notes
    assert uncached.manager.catalog("hive").caches.filter_refusals.snapshot() == {}


# SHOW PARTITIONS: names only ----------------------------------------------------------------------------

OBJECT_CALLS = {"get_partitions", "get_partitions_by_filter", "get_partitions_by_names", "get_partitions_ps"}


@pytest.mark.parametrize(("where", "asked"), [
    (None, {"get_partition_names": 1}),
    ("n > 2 AND d >= '2024-01-02'", {"get_partition_names": 1}),  # the planner would push this as a filter
    ("s = 'a'", {"get_partition_names_ps": 1}),  # the leading key: the metastore narrows the names
])
def test_show_partitions_asks_for_names_never_for_partitions(pushdown_db: str, uncached: Session, where: str | None,
                                                             asked: dict[str, int]) -> None:
    catalog = uncached.manager.catalog("hive")
    _ = catalog.table(pushdown_db, "typed").metadata
    before = catalog.metrics()
    statement = f"SHOW PARTITIONS hive.{pushdown_db}.typed" + ("" if where is None else f" WHERE {where}")
    rows = [row[0] for row in uncached.run_one(statement).rows]
    calls = catalog.metrics().calls_since(before)
    assert calls == asked and not OBJECT_CALLS & set(calls)
    names = all_names(uncached, pushdown_db, "typed")
    assert rows == sorted(names if where is None else locally(names, where, KEYS))


def test_too_many_partitions_on_names_are_refused_before_any_partition_is_asked(pushdown_db: str, uncached: Session) -> None:
    from hms_catalog.errors import PlanningError
    from planner.partitions import select_partitions

    catalog = uncached.manager.catalog("hive")
    table = catalog.table(pushdown_db, "many").metadata.table
    before = catalog.metrics()
    with pytest.raises(PlanningError, match="would read 1001 partitions"):
        select_partitions(catalog.client, catalog.caches, table, None, max_partitions=PARTITION_BATCH_SIZE)
    assert catalog.metrics().calls_since(before) == {"get_partition_names": 1}
