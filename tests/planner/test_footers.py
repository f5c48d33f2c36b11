"""File footers as pyarrow wrote them: what they say equals what the rows say."""

from __future__ import annotations

import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as orc
import pyarrow.parquet as pq

from hms_catalog.cache import CatalogCaches
from hms_catalog.properties import CacheConfig
from hms_catalog.storage import StorageResolver
from planner.footers import file_facts, orc_facts, parquet_facts

TABLE = pa.table({
    "id": pa.array([5, None, -3, 12, None, 7], pa.int32()),
    "day": pa.array([datetime.date(2024, 1, 5), None, None, datetime.date(2023, 2, 1), datetime.date(2024, 9, 9), None]),
    "flag": pa.array([True, False, None, True, None, None]),
    "Mixed": pa.array([1, 2, 3, 4, 5, 6], pa.int64()),
    "nested": pa.array([{"x": 1}] * 6),
    "empty": pa.array([None] * 6, pa.int32()),
})


def test_parquet_footers_count_and_bound_each_column_across_row_groups(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    pq.write_table(TABLE, path, row_group_size=2)  # three row groups, one of them all NULL in 'day'... and 'id'
    facts = parquet_facts(path.as_uri(), StorageResolver())
    assert facts.rows == 6 and facts.present == {"id", "day", "flag", "mixed", "nested", "empty"}
    for name in ("id", "day", "flag", "mixed"):
        column = TABLE.column("Mixed" if name == "mixed" else name)
        found = facts.columns[name]
        assert found.values == len(column) - column.null_count and found.extremes_known
        assert (found.min, found.max) == (pc.min(column).as_py(), pc.max(column).as_py())
    assert facts.columns["empty"] == (0, None, None, True)
    assert "nested" not in facts.columns  # nested columns keep no single statistics: asked, they refuse


def test_a_parquet_file_written_without_statistics_says_so(tmp_path: Path) -> None:
    path = tmp_path / "bare.parquet"
    pq.write_table(TABLE.select(["id"]), path, write_statistics=False)
    assert parquet_facts(path.as_uri(), StorageResolver()).columns["id"].values is None


def test_orc_footers_give_row_counts(tmp_path: Path) -> None:
    path = tmp_path / "f.orc"
    orc.write_table(TABLE.select(["id", "day"]), path)
    facts = orc_facts(path.as_uri(), StorageResolver())
    assert facts.rows == 6 and facts.present == {"id", "day"} and facts.columns == {}


def test_footers_are_read_once_per_file_version(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    pq.write_table(TABLE.select(["id"]), path)
    caches = CatalogCaches.from_config(CacheConfig())
    identity = (path.as_uri(), path.stat().st_size, 1)
    first = file_facts([identity], "parquet", caches, 2, StorageResolver())
    path.unlink()  # a second read would fail: the cache answers
    assert file_facts([identity], "parquet", caches, 2, StorageResolver()) == first and len(caches.footers) == 1
