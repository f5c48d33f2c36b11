"""The scale benchmark's table: ``--partitions`` partitions of one table on the PostgreSQL-backed embedded metastore.

``bench_scale.big`` is partitioned by ``region`` (string, ``r0000`` ...) and ``day`` (string, ``d0000`` ... , ``fanout``
values), Parquet, external. The partitions are made first with the metastore's own API, batched ``add_partitions`` of
1,000 (as Hive's own client and Spark add them), for a timed sample. When that rate would not make them all within
the budget (15 minutes), the rest are written into the metastore's PostgreSQL tables directly, with the rows the
API wrote for the sample: the first API partition's rows in ``PARTITIONS``, ``PARTITION_KEY_VALS``, ``PARTITION_PARAMS``,
``SDS``, ``SD_PARAMS``, ``SERDES`` and ``SERDE_PARAMS`` are the template, and only the ids (taken from DataNucleus's
``SEQUENCE_TABLE``, which is moved past them), the name, the key values, the location and the times change. They go
in with ``COPY``, in one transaction, and are checked through the API afterwards.

Partition folders: only the partitions that some measured predicate keeps have one, holding one small Parquet file
(a hard link to one sample file); every other partition's folder is absent (or empty, for those the API made: the
metastore makes their folders), and the planner skips absent locations (``hive.ignore_absent_partitions``, true by
default) after one failed listing each.
"""

from __future__ import annotations

import errno
import io
import os
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.parquet as pq
from _common import progress

from hms_catalog.client import HmsClientPool
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.formats.storage import STORAGE_FORMATS

__all__ = ["DATABASE", "TABLE", "WARM_TABLE", "Grid", "make_files", "make_partitions"]

DATABASE = "bench_scale"
TABLE = "big"
WARM_TABLE = "warm"  # one file, no partitions: Spark's JVM warms up on it
API_BATCH = 1000
_PARQUET = STORAGE_FORMATS["PARQUET"]
_COLUMNS = [("id", "bigint"), ("v", "string")]
_COPY_ROWS = 100_000  # rows per COPY chunk
# Tables under a storage descriptor that the API leaves empty for these partitions: the copy refuses a template with
# rows there, since it would not write them.
_SD_CHILDREN = {"BUCKETING_COLS": "SD_ID", "SORT_COLS": "SD_ID", "SKEWED_COL_NAMES": "SD_ID", "SKEWED_VALUES": "SD_ID_OID",
                "SKEWED_COL_VALUE_LOC_MAP": "SD_ID"}


@dataclass(frozen=True)
class Grid:
    """``regions`` x ``fanout`` partitions; partition ``index`` is region ``index // fanout``, day ``index % fanout``."""

    partitions: int
    fanout: int

    @property
    def regions(self) -> int:
        return max(1, self.partitions // self.fanout)

    def region(self, index: int) -> str:
        return f"r{index:0{max(4, len(str(self.regions - 1)))}d}"

    def day(self, index: int) -> str:
        return f"d{index:0{max(4, len(str(self.fanout - 1)))}d}"

    def values(self, index: int) -> tuple[str, str]:
        return self.region(index // self.fanout), self.day(index % self.fanout)

    @staticmethod
    def name(region: str, day: str) -> str:
        return f"region={region}/day={day}"

    @property
    def leading(self) -> int:
        return min(42, self.regions - 1)

    @property
    def half_days(self) -> int:
        return max(1, self.fanout // 2)

    def predicates(self) -> dict[str, str]:
        """The four shapes of issue 43 section 2 (those of the 120,000-partition measurement)."""
        return {
            "leading key =": f"region = '{self.region(self.leading)}'",
            "second key =": f"day = '{self.day(self.second)}'",
            "ranges on both keys": f"region >= '{self.region(max(0, self.regions - 10))}' AND day < '{self.day(min(10, self.fanout))}'",
            "IN on second key": f"day IN ('{self.day(1)}', '{self.day(2)}', '{self.day(3)}')",
        }

    def half(self) -> str:
        """A predicate that keeps half the table: every region, the first half of the days."""
        return f"day < '{self.day(self.half_days)}'"

    @property
    def second(self) -> int:
        return min(42, self.fanout - 1)

    def kept(self, region: int, day: int) -> bool:
        """Whether some measured predicate keeps this partition: those get a folder and a file."""
        return day < max(self.half_days, 10) or day == self.second or region == self.leading


# Through the API -----------------------------------------------------------------------------------------

def _sd(location: str) -> ttypes.StorageDescriptor:
    return ttypes.StorageDescriptor(
        cols=[ttypes.FieldSchema(name, kind, "") for name, kind in _COLUMNS], location=location,
        inputFormat=_PARQUET.input_format, outputFormat=_PARQUET.output_format,
        serdeInfo=ttypes.SerDeInfo(serializationLib=_PARQUET.serde, parameters={"serialization.format": "1"}),
        numBuckets=-1, bucketCols=[], sortCols=[], parameters={},
    )


def _create(pool: HmsClientPool, root: Path) -> None:
    pool.call("create_database", ttypes.Database(name=DATABASE, description="", locationUri=f"file://{root}", parameters={}))
    for name, keys in ((TABLE, [("region", "string"), ("day", "string")]), (WARM_TABLE, [])):
        pool.call("create_table", ttypes.Table(
            tableName=name, dbName=DATABASE, owner="bench", sd=_sd(f"file://{root / name}"), tableType="EXTERNAL_TABLE",
            partitionKeys=[ttypes.FieldSchema(key, kind, "") for key, kind in keys], parameters={"EXTERNAL": "TRUE"},
        ))


def _api_batch(pool: HmsClientPool, grid: Grid, table_root: Path, start: int, stop: int) -> None:
    batch = []
    for index in range(start, stop):
        region, day = grid.values(index)
        batch.append(ttypes.Partition(values=[region, day], dbName=DATABASE, tableName=TABLE, parameters={},
                                      sd=_sd(f"file://{table_root / grid.name(region, day)}")))
    pool.call("add_partitions", batch)


def _through_api(pool: HmsClientPool, grid: Grid, table_root: Path, sample: int, budget: float) -> dict[str, Any]:
    """The timed sample, and the rest through the API too when its rate makes them within ``budget`` seconds."""
    sample = min(max(sample, 1), grid.partitions)
    batches = []
    for start in range(0, sample, API_BATCH):
        stop = min(start + API_BATCH, sample)
        started = time.perf_counter()
        _api_batch(pool, grid, table_root, start, stop)
        batches.append(round(time.perf_counter() - started, 3))
        progress(f"add_partitions of {stop - start}: {batches[-1]:.1f} s")
    per_partition = sum(batches) / sample
    projected = per_partition * grid.partitions
    report = {"api_sample_partitions": sample, "api_batch_seconds": batches,
              "api_partitions_per_second": round(1 / per_partition, 1), "api_projected_seconds": round(projected, 1),
              "api_budget_seconds": budget}
    if projected > budget:
        progress(f"the API would take {projected / 60:.0f} min for {grid.partitions:,} partitions (budget "
                 f"{budget / 60:.0f} min): writing the rest into PostgreSQL directly")
        report["method"] = "direct SQL (COPY), after an API sample"
        return report
    started = time.perf_counter()
    for start in range(sample, grid.partitions, API_BATCH):
        _api_batch(pool, grid, table_root, start, min(start + API_BATCH, grid.partitions))
        if (start // API_BATCH) % 50 == 0:
            progress(f"{start:,} partitions added through the API")
    report["method"] = "metastore API (add_partitions of 1,000)"
    report["api_rest_seconds"] = round(time.perf_counter() - started, 1)
    return report


# Directly into PostgreSQL ----------------------------------------------------------------------------------

def database_connection(metastore_dir: Path) -> Any:
    """A psycopg connection to the metastore's database, as its ``hive-site.xml`` reaches it."""
    import psycopg

    site = ElementTree.parse(metastore_dir / "conf" / "hive-site.xml").getroot()
    settings = {prop.findtext("name"): prop.findtext("value") for prop in site}
    url = urlsplit(str(settings["javax.jdo.option.ConnectionURL"]).removeprefix("jdbc:"))
    return psycopg.connect(host=url.hostname, port=url.port or 5432, dbname=url.path.lstrip("/"),
                           user=settings["javax.jdo.option.ConnectionUserName"],
                           password=settings.get("javax.jdo.option.ConnectionPassword"))


def _rows(cursor: Any, table: str, column: str, value: Any) -> list[dict[str, Any]]:
    cursor.execute(f'SELECT * FROM "{table}" WHERE "{column}" = %s', (value,))
    names = [d.name for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _text(value: Any) -> str:
    if value is None:
        return r"\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    return str(value)


def _copy(cursor: Any, table: str, columns: list[str], rows: Iterator[list[Any]]) -> int:
    count = 0
    quoted = ", ".join(f'"{column}"' for column in columns)
    with cursor.copy(f'COPY "{table}" ({quoted}) FROM STDIN') as copy:
        chunk = io.StringIO()
        for row in rows:
            chunk.write("\t".join(_text(v) for v in row) + "\n")
            count += 1
            if count % _COPY_ROWS == 0:
                copy.write(chunk.getvalue())
                chunk = io.StringIO()
        copy.write(chunk.getvalue())
    return count


class _Template:
    """The rows the API wrote for one partition, and the same rows for another partition."""

    def __init__(self, cursor: Any, grid: Grid) -> None:
        region, day = grid.values(0)
        name = grid.name(region, day)
        cursor.execute('SELECT p.* FROM "PARTITIONS" p JOIN "TBLS" t ON p."TBL_ID" = t."TBL_ID" JOIN "DBS" d ON t."DB_ID" = '
                       'd."DB_ID" WHERE d."NAME" = %s AND t."TBL_NAME" = %s AND p."PART_NAME" = %s', (DATABASE, TABLE, name))
        names = [d.name for d in cursor.description]
        self.partition = dict(zip(names, cursor.fetchone()))
        part_id, sd_id = self.partition["PART_ID"], self.partition["SD_ID"]
        self.sd = _rows(cursor, "SDS", "SD_ID", sd_id)[0]
        self.serde = _rows(cursor, "SERDES", "SERDE_ID", self.sd["SERDE_ID"])[0]
        self.serde_params = _rows(cursor, "SERDE_PARAMS", "SERDE_ID", self.sd["SERDE_ID"])
        self.sd_params = _rows(cursor, "SD_PARAMS", "SD_ID", sd_id)
        self.params = _rows(cursor, "PARTITION_PARAMS", "PART_ID", part_id)
        self.key_vals = sorted(_rows(cursor, "PARTITION_KEY_VALS", "PART_ID", part_id), key=lambda r: r["INTEGER_IDX"])
        for child, column in _SD_CHILDREN.items():
            if _rows(cursor, child, column, sd_id):
                raise SystemExit(f"the API wrote rows in {child} for {name}: the direct copy does not write them")
        if [r["PART_KEY_VAL"] for r in self.key_vals] != [region, day] or not self.sd["LOCATION"].endswith("/" + name):
            raise SystemExit(f"unexpected rows for {name}: {self.key_vals}, {self.sd['LOCATION']}")
        self.location_prefix = self.sd["LOCATION"][: -len(name)]
        self.name = name

    def params_at(self, when: int) -> list[tuple[str, str]]:
        return [(r["PARAM_KEY"], str(when) if r["PARAM_KEY"] == "transient_lastDdlTime" else r["PARAM_VALUE"]) for r in self.params]


def _next_ids(cursor: Any, count: int) -> dict[str, int]:
    """First ids of the three sequences the rows need, with ``count`` of each reserved (NEXT_VAL moved past)."""
    firsts = {}
    for model in ("MPartition", "MStorageDescriptor", "MSerDeInfo"):
        sequence = f"org.apache.hadoop.hive.metastore.model.{model}"
        cursor.execute('SELECT "NEXT_VAL" FROM "SEQUENCE_TABLE" WHERE "SEQUENCE_NAME" = %s FOR UPDATE', (sequence,))
        first = int(cursor.fetchone()[0])
        cursor.execute('UPDATE "SEQUENCE_TABLE" SET "NEXT_VAL" = %s WHERE "SEQUENCE_NAME" = %s', (first + count, sequence))
        firsts[model] = first
    return firsts


def _direct(metastore_dir: Path, grid: Grid, first: int) -> dict[str, Any]:
    """Partitions ``first`` .. ``grid.partitions - 1`` written as the template's rows, in one transaction."""
    count = grid.partitions - first
    started = time.perf_counter()
    rows: dict[str, int] = {}
    with database_connection(metastore_dir) as connection, connection.cursor() as cursor:
        template = _Template(cursor, grid)
        ids = _next_ids(cursor, count)
        now = int(time.time())
        offsets = range(count)

        def each(make: Any) -> Iterator[list[Any]]:
            for offset in offsets:
                yield from make(offset, *grid.values(first + offset))

        part, sd, serde = ids["MPartition"], ids["MStorageDescriptor"], ids["MSerDeInfo"]
        serde_row = [c for c in template.serde if c != "SERDE_ID"]
        rows["SERDES"] = _copy(cursor, "SERDES", ["SERDE_ID", *serde_row],
                               each(lambda o, r, d: [[serde + o, *(template.serde[c] for c in serde_row)]]))
        rows["SERDE_PARAMS"] = _copy(cursor, "SERDE_PARAMS", ["SERDE_ID", "PARAM_KEY", "PARAM_VALUE"], each(
            lambda o, r, d: [[serde + o, p["PARAM_KEY"], p["PARAM_VALUE"]] for p in template.serde_params]))
        sd_row = [c for c in template.sd if c not in ("SD_ID", "SERDE_ID", "LOCATION")]
        rows["SDS"] = _copy(cursor, "SDS", ["SD_ID", "SERDE_ID", "LOCATION", *sd_row], each(
            lambda o, r, d: [[sd + o, serde + o, template.location_prefix + grid.name(r, d), *(template.sd[c] for c in sd_row)]]))
        rows["SD_PARAMS"] = _copy(cursor, "SD_PARAMS", ["SD_ID", "PARAM_KEY", "PARAM_VALUE"], each(
            lambda o, r, d: [[sd + o, p["PARAM_KEY"], p["PARAM_VALUE"]] for p in template.sd_params]))
        part_row = [c for c in template.partition if c not in ("PART_ID", "SD_ID", "PART_NAME", "CREATE_TIME")]
        rows["PARTITIONS"] = _copy(cursor, "PARTITIONS", ["PART_ID", "SD_ID", "PART_NAME", "CREATE_TIME", *part_row], each(
            lambda o, r, d: [[part + o, sd + o, grid.name(r, d), now, *(template.partition[c] for c in part_row)]]))
        rows["PARTITION_KEY_VALS"] = _copy(cursor, "PARTITION_KEY_VALS", ["PART_ID", "PART_KEY_VAL", "INTEGER_IDX"], each(
            lambda o, r, d: [[part + o, r, 0], [part + o, d, 1]]))
        params = template.params_at(now)
        rows["PARTITION_PARAMS"] = _copy(cursor, "PARTITION_PARAMS", ["PART_ID", "PARAM_KEY", "PARAM_VALUE"], each(
            lambda o, r, d: [[part + o, key, value] for key, value in params]))
        progress(f"{count:,} partitions copied ({sum(rows.values()):,} rows); committing")
    copy_seconds = time.perf_counter() - started
    started = time.perf_counter()
    with database_connection(metastore_dir) as connection:
        connection.autocommit = True
        for table in ("SERDES", "SERDE_PARAMS", "SDS", "SD_PARAMS", "PARTITIONS", "PARTITION_KEY_VALS", "PARTITION_PARAMS"):
            connection.execute(f'ANALYZE "{table}"')
    return {"direct_partitions": count, "direct_rows": rows, "direct_copy_seconds": round(copy_seconds, 1),
            "direct_analyze_seconds": round(time.perf_counter() - started, 1), "template_partition": template.name}


# Checks, files ------------------------------------------------------------------------------------------

def _check(pool: HmsClientPool, grid: Grid, table_root: Path, first_direct: int) -> dict[str, Any]:
    """The table as the API sees it: every name, one region by filter, and a direct partition next to an API one."""
    started = time.perf_counter()
    names = pool.call("get_partition_names", DATABASE, TABLE, -1)
    names_seconds = time.perf_counter() - started
    if len(names) != grid.partitions or len(set(names)) != grid.partitions:
        raise SystemExit(f"get_partition_names answered {len(names)} names ({len(set(names))} distinct), "
                         f"expected {grid.partitions}")
    last = grid.region(grid.regions - 1)
    started = time.perf_counter()
    found = pool.call("get_partitions_by_filter", DATABASE, TABLE, f"region = '{last}'", -1)
    filter_seconds = time.perf_counter() - started
    if sorted(p.values[1] for p in found) != [grid.day(d) for d in range(grid.fanout)] or any(p.values[0] != last for p in found):
        raise SystemExit(f"get_partitions_by_filter region = '{last}' answered {len(found)} partitions, not its {grid.fanout} days")
    expected = f"file:{table_root / grid.name(last, grid.day(grid.fanout - 1))}"
    if not any(p.sd.location == expected for p in found):
        raise SystemExit(f"no partition of region {last} is located at {expected}")
    pair = [grid.name(*grid.values(0)), grid.name(*grid.values(min(first_direct, grid.partitions - 1)))]
    api, direct = sorted(pool.call("get_partitions_by_names", DATABASE, TABLE, pair), key=lambda p: p.values)
    for partition in (api, direct):
        partition.createTime = partition.lastAccessTime = 0
        partition.values = partition.sd.location = None
        partition.parameters = {key: "" if key == "transient_lastDdlTime" else value for key, value in partition.parameters.items()}
    if api != direct:
        raise SystemExit(f"a partition written directly differs from one the API made:\n{direct}\n{api}")
    return {"check_partition_names": len(names), "check_partition_names_seconds": round(names_seconds, 2),
            "check_filter_partitions": len(found), "check_filter_seconds": round(filter_seconds, 2),
            "check_direct_equals_api": True}


def _files(grid: Grid, table_root: Path, sample: Path) -> dict[str, Any]:
    """A folder with one file for each kept partition: hard links to ``sample``, to a copy of it once a file system's
    limit of links to one file is reached (65,000 on ext4)."""
    started = time.perf_counter()
    made = 0
    source = sample
    for region in range(grid.regions):
        for day in range(grid.fanout):
            if grid.kept(region, day):
                folder = table_root / grid.name(grid.region(region), grid.day(day))
                folder.mkdir(parents=True, exist_ok=True)
                target = folder / "part-00000.parquet"
                if not target.exists():
                    try:
                        os.link(source, target)
                    except OSError as error:
                        if error.errno != errno.EMLINK:
                            raise
                        source = sample.with_name(f"sample-{made}.parquet")
                        source.write_bytes(sample.read_bytes())
                        os.link(source, target)
                made += 1
        if region % 1000 == 999:
            progress(f"folders of {region + 1:,} regions made")
    return {"partition_files": made, "files_seconds": round(time.perf_counter() - started, 1)}


def make_partitions(pool: HmsClientPool, metastore_dir: Path, warehouse: Path, grid: Grid, *, sample: int,
                    budget: float) -> dict[str, Any]:
    """Make the database, the tables and the partitions, and check them; what was done and how long it took."""
    root = warehouse / f"{DATABASE}.db"
    root.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    _create(pool, root)
    report = _through_api(pool, grid, root / TABLE, sample, budget)
    first_direct = report["api_sample_partitions"]
    if report["method"].startswith("direct") and first_direct < grid.partitions:
        report.update(_direct(metastore_dir, grid, first_direct))
    report["partitions_seconds"] = round(time.perf_counter() - started, 1)
    progress(f"{grid.partitions:,} partitions made in {report['partitions_seconds']:.0f} s ({report['method']}); checking")
    report.update(_check(pool, grid, root / TABLE, first_direct))
    return report


def make_files(warehouse: Path, grid: Grid) -> dict[str, Any]:
    """The kept partitions' folders and files, and the warm-up table's file."""
    root = warehouse / f"{DATABASE}.db"
    sample = root / "sample.parquet"
    pq.write_table(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", "c"]}), sample)
    (root / WARM_TABLE).mkdir(exist_ok=True)
    (root / WARM_TABLE / "part-00000.parquet").write_bytes(sample.read_bytes())
    return _files(grid, root / TABLE, sample)
