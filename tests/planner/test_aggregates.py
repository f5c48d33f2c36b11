"""Aggregates answered from file metadata: exact answers, or a refusal with the reason, never a guess."""

from __future__ import annotations

import datetime

import pytest

from hms_catalog.formats.schema import Column, TableSchema
from hms_catalog.types.tree import DateType, DoubleType, IntType, StringType
from planner.aggregates import AggregateFunction, AggregateRequest, ColumnFacts, FileFacts, answer

SCHEMA = TableSchema((
    Column("id", IntType(), "int"), Column("day", DateType(), "date"), Column("name", StringType(), "string"),
    Column("score", DoubleType(), "double"), Column("p", IntType(), "int", partition=True),
), source="test")


def request(*functions: tuple[str, str | None]) -> AggregateRequest:
    return AggregateRequest(tuple(AggregateFunction(f, c) for f, c in functions))


def facts(rows: int, **columns: ColumnFacts) -> FileFacts:
    return FileFacts(rows, columns, frozenset({"id", "day", "name", "score"}))


FILE_A = facts(10, id=ColumnFacts(8, 3, 40, True), day=ColumnFacts(10, datetime.date(2024, 1, 2), datetime.date(2024, 3, 1), True))
FILE_B = facts(5, id=ColumnFacts(0, None, None, True), day=ColumnFacts(5, datetime.date(2023, 12, 31), datetime.date(2024, 1, 1), True))


def test_counts_and_extremes_add_up_over_files_and_partitions() -> None:
    got = answer(request(("count_star", None), ("count", "id"), ("min", "id"), ("max", "day"), ("min", "day")), SCHEMA,
                 [((("p", "1"),), lambda: [FILE_A, FILE_B]), ((("p", "2"),), lambda: [FILE_B])], "parquet footers")
    assert got.answered and got.source == "parquet footers"
    assert [p.results for p in got.partitions] == [(15, 8, "3", "2024-03-01", "2023-12-31"), (5, 0, None, "2024-01-01", "2023-12-31")]


def test_partition_columns_are_their_partitions_value() -> None:
    got = answer(request(("count", "p"), ("min", "p"), ("max", "p")), SCHEMA,
                 [((("p", "7"),), lambda: [FILE_A]), ((("p", None),), lambda: [FILE_B]), ((("p", "9"),), lambda: [])], "x")
    assert [p.results for p in got.partitions] == [(10, "7", "7"), (0, None, None), (0, None, None)]


def test_a_column_the_file_does_not_hold_is_null_in_it() -> None:
    old = FileFacts(4, {}, frozenset({"id"}))  # written before 'day' was added
    got = answer(request(("count", "day"), ("max", "day")), SCHEMA, [((), lambda: [old, FILE_A])], "x")
    assert got.partitions[0].results == (10, "2024-03-01")


def test_exact_row_counts_answer_count_star_alone() -> None:
    assert answer(request(("count_star", None)), SCHEMA, [((("p", "1"),), 42)], "Hive statistics").partitions[0].results == (42,)
    refused = answer(request(("count_star", None), ("count", "id")), SCHEMA, [((("p", "1"),), 42)], "Hive statistics")
    assert not refused.answered and "only count(*)" in (refused.reason or "")


@pytest.mark.parametrize("function, column, reason", [
    ("min", "name", "min(name) of type string"),  # stored string extremes may be truncated
    ("max", "score", "max(score) of type double"),  # a NaN is never among stored extremes
    ("count", "nope", "nope"),
])
def test_what_metadata_cannot_answer_exactly_is_refused(function: str, column: str, reason: str) -> None:
    got = answer(request((function, column)), SCHEMA, [((), lambda: [FILE_A])], "x")
    assert not got.answered and reason in (got.reason or "")


def test_missing_statistics_refuse_rather_than_guess() -> None:
    no_stats = facts(3, id=ColumnFacts(None, None, None, False))
    assert not answer(request(("count", "id")), SCHEMA, [((), lambda: [no_stats])], "x").answered
    no_extremes = facts(3, id=ColumnFacts(3, None, None, False))
    got = answer(request(("count", "id"), ("max", "id")), SCHEMA, [((), lambda: [no_extremes])], "x")
    assert not got.answered and "keeps no max" in (got.reason or "")
    unlisted = facts(3)  # the file holds 'id' but keeps nothing about it
    assert not answer(request(("count", "id")), SCHEMA, [((), lambda: [unlisted])], "x").answered


def test_a_file_storing_another_type_is_refused() -> None:
    strings = facts(2, id=ColumnFacts(2, "10", "9", True))
    got = answer(request(("min", "id")), SCHEMA, [((), lambda: [strings])], "x")
    assert not got.answered and "another type" in (got.reason or "")
