"""Choosing partitions over the in-memory metastore: the filters written for Hive, the routes taken, the
batches asked, and the memory of refused filters. The same behaviour against the real metastore is in
test_partition_pushdown.py."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator, Sequence

import pytest

from hms_catalog.cache import CatalogCaches
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.properties import CacheConfig
from hms_catalog.sql import parse_expression
from hms_catalog.types import parse_hive_type
from planner.partitions import PARTITION_BATCH_SIZE, choose_partitions, partition_batches, select_partitions
from planner.predicates import IN_LIST_AS_RANGE, PartitionPredicate, bind
from tests.support import hms
from tests.support.fake_metastore import FakeMetastore

KEYS = {"s": "string", "n": "int", "d": "date", "b": "bigint", "v": "varchar(10)", "t": "timestamp"}


def predicate(where: str, keys: dict[str, str] = KEYS) -> PartitionPredicate:
    bound = bind(parse_expression(where), {name: parse_hive_type(kind) for name, kind in keys.items()})
    assert bound is not None
    return bound


def filter_of(where: str, refused: frozenset[str] = frozenset()) -> str | None:
    found = predicate(where).metastore_filter(refused)
    return None if found is None else found.expression


@pytest.mark.parametrize(("where", "expected"), [
    ("s = 'a'", 's = "a"'),
    ("s >= 'r1190' AND n < 10", 's >= "r1190" and n < 10'),
    ("'b' < s", 's > "b"'),
    ("n BETWEEN 1 AND 10", "n >= 1 and n <= 10"),
    ("n IN (1, 2, 3)", "(n = 1 or n = 2 or n = 3)"),
    ("n = '10'", "n = 10"),  # Spark casts the string to the key's type
    ("b <> -5", "b <> -5"),
    ("d > DATE '2024-01-01'", 'd > "2024-01-01"'),
    ("d <= '2024-03-01'", 'd <= "2024-03-01"'),
    ("s IN ('a', NULL)", '(s = "a")'),  # NULL equals nothing
    ("s = 'say \"hi\"'", "s = 'say \"hi\"'"),
    ("(s = 'a' AND x = 1) OR n = 2", '(s = "a" or n = 2)'),  # a data column drops out of the AND, not the OR
    ("s = 'a' AND x > 3", 's = "a"'),
    ("s = 'a' OR x = 1", None),  # x is a data column: the OR could hold in any partition
    ("NOT (s = 'a')", None),
    ("s NOT IN ('a')", None),
    ("s IS NULL", None),
    ("s = 1", None),  # Spark compares a string key with a number as numbers: not as the metastore would
    ("n = 1.5", None),
    ("n = 'x'", None),
    ("d < TIMESTAMP '2024-01-01 12:00:00'", None),
    ("v = 'a'", None),  # Hive refuses filters on varchar keys
    ("t > TIMESTAMP '2024-01-01 00:00:00'", None),
    ("s = 'both \" and '''", None),  # the grammar has no escapes: no quote can hold this value
])
def test_filters_are_written_in_hives_grammar(where: str, expected: str | None) -> None:
    assert filter_of(where) == expected


def test_refused_kinds_are_left_out_and_reported() -> None:
    found = predicate("s = 'a' AND n > 1 AND d = DATE '2024-01-01'").metastore_filter()
    assert found is not None and found.kinds == {"string", "integral", "date"}
    assert filter_of("s = 'a' AND n > 1", frozenset({"integral"})) == 's = "a"'
    assert filter_of("n > 1", frozenset({"integral"})) is None


def test_long_in_lists_are_asked_as_a_range() -> None:
    values = ", ".join(str(v) for v in range(IN_LIST_AS_RANGE + 1, 0, -1))
    assert filter_of(f"n IN ({values})") == f"(n >= 1 and n <= {IN_LIST_AS_RANGE + 1})"
    assert filter_of("n IN (3, 1, 2)") == "(n = 3 or n = 1 or n = 2)"


def fake_table(partitions: int, keys: tuple[tuple[str, str], ...] = (("s", "string"), ("n", "int"))) -> FakeMetastore:
    fake = FakeMetastore()
    fake.add_database("db")
    fake.add_table(hms.table_struct("db", "t", [("x", "int")], "file:///w/t", partition_keys=keys))
    for index in range(partitions):
        generated = {"s": f"s{index % 7}", "n": str(index)}
        values = [generated[key] for key, _ in keys]
        fake.add_partition("db", "t", values, f"file:///w/t/{index}", {"numRows": str(index), "totalSize": "10"})
    return fake


def select(fake: FakeMetastore, caches: CatalogCaches, where: str | None) -> list[str]:
    table = fake.get_table("db", "t")
    keys = {k.name: k.type for k in table.partitionKeys}
    bound = None if where is None else predicate(where, keys)
    selection = select_partitions(fake, caches, table, bound, max_partitions=10**6, parallelism=2)
    return sorted(p.name for p in selection.partitions)


def asked(fake: FakeMetastore, method: str) -> list[tuple[object, ...]]:
    return [args for name, args in fake.requests if name == method]


def uncached() -> CatalogCaches:
    """Caches that keep no partition lists or objects: every selection asks the metastore."""
    return CatalogCaches.from_config(CacheConfig(partition_ttl=0))


def test_partitions_are_asked_by_names_in_batches_of_the_batch_size() -> None:
    fake = fake_table(2 * PARTITION_BATCH_SIZE + 500)
    assert len(select(fake, uncached(), None)) == 2 * PARTITION_BATCH_SIZE + 500
    batches = sorted(len(args[2]) for args in asked(fake, "get_partitions_by_names"))  # type: ignore[arg-type]
    assert batches == [500, PARTITION_BATCH_SIZE, PARTITION_BATCH_SIZE]
    assert PARTITION_BATCH_SIZE >= 1000


def test_a_pushed_filter_is_one_call_that_brings_the_objects() -> None:
    fake = fake_table(50)
    names = select(fake, uncached(), "n >= 10 AND n < 13")
    assert names == ["s=s3/n=10", "s=s4/n=11", "s=s5/n=12"]  # narrowed locally: the fake answers a superset
    assert [m for m, _ in fake.requests] == ["get_partitions_by_filter"]
    assert asked(fake, "get_partitions_by_filter") == [("db", "t", "n >= 10 and n < 13")]


def test_a_leading_key_equality_asks_names_by_partial_spec() -> None:
    fake = fake_table(50)
    assert len(select(fake, uncached(), "s = 's1'")) == 7
    assert [m for m, _ in fake.requests] == ["get_partition_names_ps", "get_partitions_by_names"]
    fake.requests.clear()
    select(fake, uncached(), "n = 3")  # the second key: one filter call instead
    assert [m for m, _ in fake.requests] == ["get_partitions_by_filter"]


TWO_STRING_KEYS = {"region": "string", "day": "string", "hr": "int"}


@pytest.mark.parametrize(("where", "specs"), [
    ("day = 'd1'", [["", "d1"]]),  # '' is any value: the first key is free
    ("region = 'r'", [["r"]]),  # trailing wildcards are left out
    ("region IN ('b', 'a')", [["a"], ["b"]]),
    ("day IN ('x', 'y') AND region = 'r'", [["r", "x"], ["r", "y"]]),
    ("day = 'x' AND other > 3", [["", "x"]]),  # a data column narrows nothing in the metastore
    ("day = 'x' AND day IN ('x', 'y')", [["", "x"]]),
    ("day = 'x' AND day = 'y'", []),  # nothing can match
    ("day = 'x' AND hr = 3", None),  # an int key: a spec matches its text, which need not be how 3 is written
    ("day = 'x' AND region > 'a'", None),  # a range beside it: one filter narrows by both
    ("day = 'x' OR region = 'y'", None),
    ("day NOT IN ('x')", None),
    ("day = 'a.b'", None),  # the metastore matches specs as regular expressions
    ("day = ''", None),  # '' in a spec means any value
    ("day IN ('x', NULL)", None),
    ("other = 'x'", None),
    ("day IN ('1', '2', '3') AND region IN ('a', 'b', 'c')", None),  # 9 specs: past the limit of 8
])
def test_partial_specs_cover_equalities_and_in_lists_on_string_keys(where: str, specs: list[list[str]] | None) -> None:
    keys = list(TWO_STRING_KEYS)
    assert predicate(where, TWO_STRING_KEYS).partial_specs(keys, 8) == specs


def test_values_that_exclude_each_other_ask_the_metastore_nothing() -> None:
    fake = fake_table(20, (("n", "int"), ("s", "string")))
    table = fake.get_table("db", "t")
    bound = predicate("s = 's1' AND s IN ('s2', 's3')", {"n": "int", "s": "string"})
    selection = select_partitions(fake, uncached(), table, bound, max_partitions=100)
    assert selection.partitions == [] and fake.requests == []
    assert selection.notes == ["no partition can match: the predicate pins a partition key to values that exclude each other"]


def test_a_later_string_key_equality_asks_names_by_a_wildcard_spec() -> None:
    fake = fake_table(50, (("n", "int"), ("s", "string")))
    assert select(fake, uncached(), "s = 's2'") == sorted(f"n={i}/s=s2" for i in range(2, 50, 7))
    assert [m for m, _ in fake.requests] == ["get_partition_names_ps", "get_partitions_by_names"]
    assert asked(fake, "get_partition_names_ps") == [("db", "t", ["", "s2"])]


class _Watched(FakeMetastore):
    """Tells when partitions are asked by names, holds each call until let go, and notes a context variable's value
    in the calling thread."""

    seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")

    def __init__(self) -> None:
        super().__init__()
        self.asked = threading.Semaphore(0)
        self.go = threading.Event()
        self.contexts: list[str] = []
        self.fail_on: str | None = None

    def get_partitions_by_names(self, database: str, table: str, names: list[str], *,
                                fields: Sequence[str] | None = None) -> list[ttypes.Partition]:
        self.contexts.append(self.seen.get())
        self.asked.release()
        assert self.go.wait(10)
        if self.fail_on in names:
            raise RuntimeError(f"metastore broke on {self.fail_on}")
        return super().get_partitions_by_names(database, table, names, fields=fields)


def _watched(partitions: int) -> _Watched:
    fake = _Watched()
    fake.add_database("db")
    fake.add_table(hms.table_struct("db", "t", [("x", "int")], "file:///w/t", partition_keys=(("n", "int"),)))
    for index in range(partitions):
        fake.add_partition("db", "t", [str(index)], f"file:///w/t/{index}")
    return fake


def _batches(fake: _Watched, batch: int) -> Iterator[list[str]]:
    choice = choose_partitions(fake, uncached(), fake.get_table("db", "t"), None, max_partitions=10**6)
    return ([p.name for p in selected] for selected in partition_batches(choice, batch))


def test_the_next_batch_is_asked_for_while_the_caller_holds_this_one() -> None:
    fake = _watched(30)
    token = _Watched.seen.set("the caller's")
    try:
        batches = _batches(fake, 10)
        fake.go.set()
        first = next(batches)
        assert first == [f"n={i}" for i in sorted(range(30), key=str)][:10]
        # the caller has not asked for the second batch, and its call is already made
        assert fake.asked.acquire(timeout=10) and fake.asked.acquire(timeout=10)
        assert len(asked(fake, "get_partitions_by_names")) == 2
        rest = list(batches)
    finally:
        _Watched.seen.reset(token)
    assert [len(b) for b in rest] == [10, 10]
    assert fake.contexts == ["the caller's"] * 3  # the calls ahead run in the caller's context


def test_a_plan_closed_early_leaves_no_call_running() -> None:
    fake = _watched(30)
    batches = _batches(fake, 10)
    fake.go.set()
    next(batches)
    assert fake.asked.acquire(timeout=10) and fake.asked.acquire(timeout=10)  # the second batch's call has begun
    batches.close()  # waits for it: nothing of the plan runs on after it
    assert not any(t.name.startswith("partitions-ahead") for t in threading.enumerate())
    assert len(asked(fake, "get_partitions_by_names")) == 2  # the third batch is never asked for


def test_a_failed_call_ahead_fails_its_own_batch() -> None:
    fake = _watched(30)
    fake.fail_on = "n=7"  # in the third batch (names in the metastore's order: n=0, n=1, n=10, ...)
    fake.go.set()
    batches = _batches(fake, 10)
    assert len(next(batches)) == 10
    assert len(next(batches)) == 10
    with pytest.raises(RuntimeError, match="broke on n=7"):
        next(batches)


def test_a_refused_filter_falls_back_to_names_and_is_not_asked_again() -> None:
    fake = fake_table(30)
    fake.refuse_filter = lambda expression: "n " in expression
    caches = uncached()
    expected = ["s=s6/n=20", "s=s0/n=21"]
    assert select(fake, caches, "n IN (20, 21)") == sorted(expected)
    assert [m for m, _ in fake.requests] == ["get_partitions_by_filter", "get_partition_names", "get_partitions_by_names"]
    assert caches.filter_refusals.refused("db", "t") == {"integral"}
    fake.requests.clear()
    assert select(fake, caches, "n > 27") == ["s=s0/n=28", "s=s1/n=29"]
    assert "get_partitions_by_filter" not in [m for m, _ in fake.requests]


def test_a_refused_mixed_filter_is_asked_again_with_the_kinds_still_accepted() -> None:
    fake = fake_table(30, (("n", "int"), ("s", "string")))
    fake.refuse_filter = lambda expression: "n " in expression
    caches = uncached()
    assert select(fake, caches, "s = 's2' AND n > 5 AND n < 20") == ["n=16/s=s2", "n=9/s=s2"]
    assert asked(fake, "get_partitions_by_filter") == [("db", "t", 's = "s2" and n > 5 and n < 20'), ("db", "t", 's = "s2"')]
    fake.requests.clear()
    select(fake, caches, "s = 's2' AND n > 5")
    assert asked(fake, "get_partitions_by_filter") == [("db", "t", 's = "s2"')]  # not the refused kind again


def test_refresh_forgets_a_refusal() -> None:
    caches = uncached()
    caches.filter_refusals.remember("db", "t", {"integral"})
    caches.filter_refusals.remember("db", "u", {"date"})
    caches.invalidate_table("DB", "T")
    assert caches.filter_refusals.snapshot() == {("db", "u"): frozenset({"date"})}
    caches.invalidate_all()
    assert caches.filter_refusals.snapshot() == {}


def test_selected_partitions_carry_their_parameters_and_storage() -> None:
    fake = fake_table(3)
    table = fake.get_table("db", "t")
    table.sd.serdeInfo = ttypes.SerDeInfo(serializationLib=hms.PARQUET[2])
    fake.add_partition("db", "t", ["z", None], "file:///w/t/null", {"numRows": "7", "COLUMN_STATS_ACCURATE": "{}"})
    selection = select_partitions(fake, uncached(), table, predicate("s = 'z'", {"s": "string", "n": "int"}),
                                  max_partitions=10)
    [chosen] = selection.partitions
    assert chosen.name == "s=z/n=__HIVE_DEFAULT_PARTITION__" and chosen.values == (("s", "z"), ("n", None))
    assert chosen.parameters == {"numRows": "7", "COLUMN_STATS_ACCURATE": "{}"}
    assert (chosen.location, chosen.input_format, chosen.serde) == ("file:///w/t/null", hms.PARQUET[0], hms.PARQUET[2])
