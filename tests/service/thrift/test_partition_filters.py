"""Partition filters evaluated on partition names: the grammar and meaning of Hive's filter language, refusals
of whatever a metastore may answer differently, and the answers compared with the real (Hive 2.3) metastore."""

from __future__ import annotations

import pytest

from hms_catalog.client import MetastoreClient
from hms_catalog.errors import HmsCatalogError, MetastoreError
from hms_catalog.formats.partition_names import parse_partition_name
from service.thrift.partition_filters import FilterNotEvaluable, PartitionFilter, parse_partition_filter
from tests.support import hms

KEYS = {"s": "string", "n": "int", "b": "bigint"}
D = None  # the default partition's value, as parse_partition_name gives it


def selected(text: str, rows: list[tuple[str | None, str | None, str | None]]) -> list[tuple[str | None, ...]]:
    parsed = parse_partition_filter(text, KEYS)
    return [row for row in rows if parsed.matches(dict(zip(("s", "n", "b"), row)))]


ROWS: list[tuple[str | None, str | None, str | None]] = [
    ("a", "1", "10"), ("b", "2", "-5"), ("ab", "10", "100"), ("2020-01-01", "05", "0"), (D, D, D),
]


@pytest.mark.parametrize(("text", "expected"), [
    ("s = 'a'", [0]),
    ('s = "a"', [0]),
    ("'a' = s", [0]),
    ("S = 'a' AnD N = 1", [0]),
    ("s <> 'a'", [1, 2, 3, 4]),  # the default partition is the string __HIVE_DEFAULT_PARTITION__ here
    ("s != 'a'", [1, 2, 3, 4]),
    ("s = 'a' or s = 'b' and n = 3", [0]),  # AND binds tighter than OR
    ("(s = 'a' or s = 'b') and n = 2", [1]),
    ("n = 5", [3]),  # compared as numbers: '05' is 5
    ("n <> 5", [0, 1, 2]),  # the default partition of an integral key is NULL: never selected
    ("5 > n", [0, 1]),  # literal first: the operator is mirrored
    ("n between 1 and 5", [0, 1, 3]),
    ("n NOT BETWEEN 1 and 5", [2]),
    ("b < 0 or s = '2020-01-01'", [1, 3]),
    ("s > '2019-12-31'", [0, 1, 2, 3, 4]),  # digits sort before letters and the default name in every collation
    ("s between '2020-01-01' and '2020-12-31'", [3]),
    ("s = '__HIVE_DEFAULT_PARTITION__'", [4]),
    ("b >= 9223372036854775807 or b <= -9223372036854775808", []),
])
def test_grammar_and_meaning(text: str, expected: list[int]) -> None:
    assert selected(text, ROWS) == [ROWS[i] for i in expected]


@pytest.mark.parametrize("text", [
    "",  # every partition to the metastore; nothing to gain
    "x = 'a'",  # not a partition key
    "s = 1", "n = '1'", "n between 1 and '5'",  # literals of the other kind: coerced differently by version
    "s like 'a.*'",  # a Java regular expression in 2.3, SQL's LIKE later
    "s in ('a', 'b')", "s = date '2020-01-01'", "n = 2020-01-01",  # Hive 3/4 only
    "s = 'a\\'b'",  # backslashes: kept by 2.3, unescaped later
    "s = 'a' and", "s = a", "s == 'a'", "s = 'a' s = 'b'", "(s = 'a'", "s = 'a')",
    "s = 'a' and not s = 'b'", "_s = 'a'", "n = +1", "n > 9223372036854775808", "'a' between s and 'b'",
    "s = 'é' or \u00e9 = 'a'",
])
def test_refused(text: str) -> None:
    with pytest.raises(FilterNotEvaluable):
        parse_partition_filter(text, KEYS)


def test_key_types_other_than_string_and_integral_are_refused() -> None:
    for kind in ("date", "varchar(10)", "timestamp", "decimal(10,2)", "boolean"):
        with pytest.raises(FilterNotEvaluable, match=kind.split("(")[0]):
            parse_partition_filter("k = '2020-01-01'", {"k": kind})
    assert parse_partition_filter("k = 1", {"k": "tinyint"}).matches({"k": "1"})


def test_keys_and_error_root() -> None:
    parsed = parse_partition_filter("S = 'a' or n > 1", KEYS)
    assert isinstance(parsed, PartitionFilter) and parsed.keys == frozenset({"s", "n"})
    assert issubclass(FilterNotEvaluable, HmsCatalogError)
    with pytest.raises(FilterNotEvaluable, match="lack"):
        parsed.matches({"s": "a"})


def test_answers_a_database_decides_raise_from_matches() -> None:
    padded = parse_partition_filter("s = 'a'", KEYS)
    with pytest.raises(FilterNotEvaluable):  # Derby and MySQL pad with spaces, PostgreSQL does not
        padded.matches({"s": "a ", "n": "1", "b": "1"})
    letters = parse_partition_filter("s > 'b'", KEYS)
    for value in ("B", "c", "aa"):  # 'B' < 'b' in binary order, > in a locale's; Danish puts 'aa' after 'z'
        with pytest.raises(FilterNotEvaluable):
            letters.matches({"s": value})
    assert not letters.matches({"s": "2020"}) and not letters.matches({"s": "b"}) and letters.matches({"s": "bb"})
    unknown_but_irrelevant = parse_partition_filter("s > 'a' and n = 1", KEYS)
    assert unknown_but_irrelevant.matches({"s": "B", "n": "2"}) is False
    with pytest.raises(FilterNotEvaluable, match="plain integer"):  # whatever the rest says
        parse_partition_filter("s = 'x' and n = 1", KEYS).matches({"s": "a", "n": "+8"})


@pytest.mark.parametrize(("value", "literal", "greater"), [
    ("2020-01-02", "2020-01-01", True), ("2021-12-31", "2021", True), ("2020-01-01", "2021", False),
    ("10", "9", False), ("v2", "v10", True), ("9x", "a", False), ("__HIVE_DEFAULT_PARTITION__", "2020", True),
    ("2020", "__HIVE_DEFAULT_PARTITION__", False), ("2020-01", "2020-a", False), ("2020", "2020", False),
])
def test_orders_every_collation_agrees_on(value: str, literal: str, greater: bool) -> None:
    assert parse_partition_filter(f"s > '{literal}'", KEYS).matches({"s": value}) is greater


@pytest.mark.parametrize(("value", "literal"), [
    ("a", "B"), ("ab", "a-c"), ("2020-1", "20201"), ("x2", "xa"), ("a", "__HIVE_DEFAULT_PARTITION__"),
    ("2021\t", "2021"),
])
def test_orders_collations_disagree_on_are_unknown(value: str, literal: str) -> None:
    with pytest.raises(FilterNotEvaluable):
        parse_partition_filter(f"s < '{literal}'", KEYS).matches({"s": value})


# The real metastore (Hive 2.3.10 on Derby, direct SQL on) against the evaluation here, on one table.
TABLE_ROWS = [
    ("a", "1", "10"), ("b", "2", "-5"), ("ab", "10", "100"), ("B", "-3", "7"), (D, D, D), ("a.c", "05", "3"),
    ("2020-01-01", "7", "0"), ("2020-01-02", "8", "-1"), ("2021-12-31", "9", "2"), ("x1", "-10", "9223372036854775807"),
    ("b", "0", "1"),
]
EVALUATED = [
    "s = 'a'", 's = "b"', "'a' = s", "S = 'a' AND N = 1", "s <> 'a'", "s != 'ab'", "s = 'a' or s = 'b'",
    "(s = 'a' or s = 'b') and n = 1", "s = 'a' or s = 'b' and n = 2", "n = 5", "n <> 5", "n > 1", "1 < n",
    "n >= -3 and n <= 8", "n between 1 and 8", "n not between 1 and 8", "b > 9", "b < 0 or s = 'a'",
    "s >= '2020-01-02'", "s < '2021'", "s between '2020-01-01' and '2020-12-31'", "s = '__HIVE_DEFAULT_PARTITION__'",
    "s <> 'x1' and (n < 0 or b >= 100)", "b = 9223372036854775807", "s = 'zz' or n = 10",
]
REFUSED_BY_BOTH = [
    "x = 'a'", "s = 1", "n = '1'", "s in ('a', 'b')", "s = 'a' and", "n > 9223372036854775808", "s = a",
    "s == 'a'", "s = 'a' and not s = 'b'", "_s = 'a'", "n = +1",
]
# Answered by this metastore, evaluated only by it: LIKE (a Java regular expression here, SQL's LIKE in Hive 4),
# an empty filter, and an order of mixed-case strings ('B' against 'a') that another database's collation flips.
LEFT_TO_THE_METASTORE = ["s like 'a.*'", "", "s > 'a'", "s <= 'ab'"]


@pytest.fixture
def filtered_table(admin: hms.Admin, unique_name: str) -> str:
    """A database holding table ``t`` (keys s string, n int, b bigint) with the partitions of TABLE_ROWS."""
    db = unique_name
    admin.create_database(db)
    admin.create_table(db, "t", [("x", "string")], partition_keys=[("s", "string"), ("n", "int"), ("b", "bigint")])
    for number, row in enumerate(TABLE_ROWS):
        values = ["__HIVE_DEFAULT_PARTITION__" if v is None else v for v in row]
        admin.add_partition(db, "t", values, admin.warehouse / f"{db}.db" / "t" / f"p{number}")
    return db


def _local(client: MetastoreClient, db: str, text: str) -> list[str]:
    parsed = parse_partition_filter(text, KEYS)
    return sorted(name for name in client.get_partition_names(db, "t") if parsed.matches(dict(parse_partition_name(name))))


def _remote(client: MetastoreClient, db: str, text: str) -> list[str]:
    table_keys = ("s", "n", "b")
    return sorted("/".join(f"{k}={v}" for k, v in zip(table_keys, p.values))
                  for p in client.get_partitions_by_filter(db, "t", text))


def test_the_metastore_selects_what_is_evaluated_here(client: MetastoreClient, filtered_table: str) -> None:
    db = filtered_table
    assert len(client.get_partition_names(db, "t")) == len(TABLE_ROWS)
    for text in EVALUATED:
        assert _local(client, db, text) == _remote(client, db, text), text
    assert any(_remote(client, db, text) for text in EVALUATED)
    for text in REFUSED_BY_BOTH:
        with pytest.raises(FilterNotEvaluable):
            parse_partition_filter(text, KEYS)
        with pytest.raises(MetastoreError):
            client.get_partitions_by_filter(db, "t", text)
    for text in LEFT_TO_THE_METASTORE:
        assert _remote(client, db, text), text
        with pytest.raises(FilterNotEvaluable):
            _local(client, db, text)


def test_values_a_database_treats_its_own_way_are_left_to_the_metastore(
        admin: hms.Admin, client: MetastoreClient, unique_name: str) -> None:
    db = unique_name
    admin.create_database(db)
    admin.create_table(db, "t", [("x", "string")], partition_keys=[("s", "string"), ("n", "int")])
    for number, values in enumerate([("a", "1"), ("a ", "2"), ("c", "x")]):
        admin.add_partition(db, "t", list(values), admin.warehouse / f"{db}.db" / "t" / f"p{number}")
    names = client.get_partition_names(db, "t")
    # Derby ignores trailing spaces ('a' = 'a '), PostgreSQL does not: not evaluated here.
    assert sorted(p.values[0] for p in client.get_partitions_by_filter(db, "t", "s = 'a'")) == ["a", "a "]
    with pytest.raises(FilterNotEvaluable):
        [parse_partition_filter("s = 'a'", {"s": "string", "n": "int"}).matches(dict(parse_partition_name(name)))
         for name in names]
    # A value an integral cast rejects fails the metastore's call (MySQL would read it as 0).
    with pytest.raises(MetastoreError, match="type string"):
        client.get_partitions_by_filter(db, "t", "n = 1")
    with pytest.raises(FilterNotEvaluable):
        [parse_partition_filter("n = 1", {"s": "string", "n": "int"}).matches(dict(parse_partition_name(name)))
         for name in names]
    assert [p.values for p in client.get_partitions_by_filter(db, "t", "s = 'c'")] == [["c", "x"]]
    parsed = parse_partition_filter("s = 'c'", {"s": "string", "n": "int"})
    assert [name for name in names if parsed.matches(dict(parse_partition_name(name)))] == ["s=c/n=x"]
