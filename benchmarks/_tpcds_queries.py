"""TPC-DS query texts for bench_tpcds: DuckDB's texts in Spark SQL, the selection, and comparing results fairly.

Results are compared as multisets (the order of rows is not compared), numbers with a relative tolerance of
1e-6 (sums of doubles depend on the order Spark adds them in). ``ORDER BY ... LIMIT n`` may keep different rows
when rows tie at the n-th place; when the two limited results differ, both sides run again without the final
LIMIT: the results are the same when those full results are equal and each limited result is n rows of its side's
full result (a legitimate choice among the ties).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import sqlglot
from _tpcds_data import PARTITION_KEYS
from sqlglot import exp

__all__ = ["DEVELOPER_QUERIES", "compare", "date_joined", "parse_selection", "to_spark", "without_limit"]

DEVELOPER_QUERIES = (3, 42, 52, 55, 96)  # --quick: star joins on store_sales, pruned at run time by Spark
RELATIVE_TOLERANCE = 1e-6
SELECTIONS = ("default", "date-joins", "all")


def to_spark(text: str) -> str:
    """One of DuckDB's query texts in Spark SQL (sqlglot), without the trailing semicolon."""
    statements = [statement for statement in sqlglot.parse(text, read="duckdb") if statement is not None]
    if len(statements) != 1:
        raise ValueError(f"expected one statement, found {len(statements)}")
    return statements[0].sql(dialect="spark")


def date_joined(text: str) -> bool:
    """Whether the query joins a date-partitioned fact table with ``date_dim`` on its partition key
    (``ss_sold_date_sk = d_date_sk`` and the like): the joins that runtime partition pruning is for."""
    keys = set(PARTITION_KEYS.values())
    for statement in sqlglot.parse(text, read="duckdb"):
        for equal in statement.find_all(exp.EQ) if statement is not None else ():
            if isinstance(equal.left, exp.Column) and isinstance(equal.right, exp.Column):
                names = {equal.left.name, equal.right.name}
                if "d_date_sk" in names and names & keys:
                    return True
    return False


def parse_selection(selection: str, texts: dict[int, str]) -> list[int]:
    """``--queries``: numbers and ranges (``3,7,40-45``) or a named set (``default``, ``date-joins``, ``all``)."""
    chosen: list[int] = []
    for word in (part.strip().lower().removeprefix("q") for part in selection.split(",")):
        if word == "all":
            chosen.extend(texts)
        elif word == "date-joins":
            chosen.extend(number for number, text in texts.items() if date_joined(text))
        elif word == "default":
            chosen.extend(number for number, text in texts.items() if date_joined(text) or number <= 10)
        elif "-" in word:
            first, _, last = word.partition("-")
            chosen.extend(range(int(first), int(last) + 1))
        elif word:
            chosen.append(int(word))
    unknown = sorted(set(chosen) - texts.keys())
    if unknown:
        raise ValueError(f"no TPC-DS query {', '.join(map(str, unknown))} (queries are 1 to {max(texts)})")
    return sorted(set(chosen))


def without_limit(text: str) -> str | None:
    """The Spark SQL text without its final LIMIT, or None when it has none."""
    tree = sqlglot.parse_one(text, read="spark")
    if tree.args.get("limit") is None:
        return None
    tree.set("limit", None)
    return tree.sql(dialect="spark")


def _key(value: Any) -> tuple[int, Any]:
    """A sort key for a value of any column type: numbers rounded so that near-equal values sort together."""
    if value is None:
        return (0, 0)
    if isinstance(value, bool):
        return (1, int(value))
    if isinstance(value, int | float | Decimal):
        number = float(value)
        return (2, "nan") if math.isnan(number) else (3, float(f"{number:.6g}"))
    if isinstance(value, datetime | date):
        return (4, value.isoformat())
    return (5, str(value))


def _same_value(left: Any, right: Any) -> bool:
    if isinstance(left, float | Decimal) and isinstance(right, float | Decimal) and not isinstance(left, bool):
        a, b = float(left), float(right)
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-9)
    return bool(left == right)


def _sorted(rows: Iterable[Sequence[Any]]) -> list[tuple[Any, ...]]:
    return sorted((tuple(row) for row in rows), key=lambda row: tuple(_key(value) for value in row))


def same_rows(left: Sequence[Sequence[Any]], right: Sequence[Sequence[Any]]) -> str | None:
    """None when the two results are the same multiset of rows (numbers within the tolerance), else why not."""
    if len(left) != len(right):
        return f"{len(left)} rows against {len(right)}"
    if all(tuple(a) == tuple(b) for a, b in zip(left, right)) or Counter(map(tuple, left)) == Counter(map(tuple, right)):
        return None
    for a, b in zip(_sorted(left), _sorted(right)):
        if len(a) != len(b) or not all(_same_value(x, y) for x, y in zip(a, b)):
            return f"first different row: {a!r} against {b!r}"
    return None


def contained(part: Sequence[Sequence[Any]], whole: Sequence[Sequence[Any]]) -> bool:
    """Whether every row of ``part`` is in ``whole`` (as a multiset; exact values, as both come from one side)."""
    return not Counter(map(tuple, part)) - Counter(map(tuple, whole))


def compare(connector: Sequence[Sequence[Any]], spark: Sequence[Sequence[Any]],
            full: tuple[Sequence[Sequence[Any]], Sequence[Sequence[Any]]] | None = None) -> tuple[bool, str]:
    """Whether the connector returned Spark's rows, and how that was decided.

    ``full`` is both sides' results without the final LIMIT, given when the limited results differ."""
    difference = same_rows(connector, spark)
    if difference is None:
        return True, "same rows (multiset)"
    if full is None:
        return False, difference
    full_difference = same_rows(*full)
    if full_difference is not None:
        return False, f"{difference}; without the final LIMIT too: {full_difference}"
    if len(connector) == len(spark) and contained(connector, full[0]) and contained(spark, full[1]):
        return True, "same rows without the final LIMIT; the limited results differ only among rows tied at the limit"
    return False, f"{difference}; the rows without the final LIMIT are the same, but a limited result is not a part of them"
