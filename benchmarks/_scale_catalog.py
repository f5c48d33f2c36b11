"""The catalog benchmark's metastore: ``databases`` x ``tables`` tables on the PostgreSQL-backed embedded metastore.

Databases ``db0000`` ... hold tables ``t000`` ... (the same names in every database, as every tenant's or
every region's database has its ``orders``), each external Parquet with eight columns of common types and one
partition key (``dt``), and no partitions: what the table calls cost does not depend on them. The databases are
made through the metastore's API (``create_database``), and so are the first database's tables (``create_table``),
timed. When that rate would not make every table within the budget (15 minutes), the rest are written into the
metastore's PostgreSQL tables directly with the rows the API wrote for ``db0000.t000``: its rows in ``TBLS``,
``TABLE_PARAMS``, ``PARTITION_KEYS``, ``SDS``, ``SD_PARAMS``, ``CDS``, ``COLUMNS_V2``, ``SERDES`` and ``SERDE_PARAMS``
are the template, and only the ids (from DataNucleus's ``SEQUENCE_TABLE``, moved past them), the database, the
location and the times change. They go in with ``COPY`` in one transaction and are checked through the API after.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import progress
from _scale_table import _copy, _rows, database_connection

from hms_catalog.client import HmsClientPool
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.formats.storage import STORAGE_FORMATS

__all__ = ["Shape", "make_catalog"]

_PARQUET = STORAGE_FORMATS["PARQUET"]
COLUMNS = [("id", "bigint"), ("customer", "string"), ("amount", "decimal(18,2)"), ("quantity", "int"),
           ("created", "timestamp"), ("status", "string"), ("note", "string"), ("valid", "boolean")]
KEYS = [("dt", "string")]
# Rows under a table or a storage descriptor that the API leaves empty for these tables: the copy refuses a
# template with rows there, since it would not write them.
_EMPTY = {"BUCKETING_COLS": "SD_ID", "SORT_COLS": "SD_ID", "SKEWED_COL_NAMES": "SD_ID", "SKEWED_VALUES": "SD_ID_OID",
          "SKEWED_COL_VALUE_LOC_MAP": "SD_ID", "TBL_PRIVS": "TBL_ID", "TBL_COL_PRIVS": "TBL_ID", "TAB_COL_STATS": "TBL_ID"}
_SEQUENCES = ("MTable", "MStorageDescriptor", "MSerDeInfo", "MColumnDescriptor")


@dataclass(frozen=True)
class Shape:
    """``databases`` x ``tables``; names zero-padded so that listing order is numeric order."""

    databases: int
    tables: int

    @property
    def total(self) -> int:
        return self.databases * self.tables

    def database(self, index: int) -> str:
        return f"db{index:0{max(4, len(str(self.databases - 1)))}d}"

    def table(self, index: int) -> str:
        return f"t{index:0{max(3, len(str(self.tables - 1)))}d}"

    def middle(self) -> tuple[str, str]:
        """The database and table the single-object figures use: neither first nor last."""
        return self.database(self.databases // 2), self.table(self.tables // 2)


def _table(database: str, name: str, location: str) -> ttypes.Table:
    sd = ttypes.StorageDescriptor(
        cols=[ttypes.FieldSchema(column, kind, "") for column, kind in COLUMNS], location=location,
        inputFormat=_PARQUET.input_format, outputFormat=_PARQUET.output_format,
        serdeInfo=ttypes.SerDeInfo(serializationLib=_PARQUET.serde, parameters={"serialization.format": "1"}),
        numBuckets=-1, bucketCols=[], sortCols=[], parameters={},
    )
    return ttypes.Table(tableName=name, dbName=database, owner="bench", sd=sd, tableType="EXTERNAL_TABLE",
                        partitionKeys=[ttypes.FieldSchema(key, kind, "") for key, kind in KEYS], parameters={"EXTERNAL": "TRUE"})


def _timed_each(what: str, count: int, make: Callable[[int], None]) -> float:
    started = time.perf_counter()
    for index in range(count):
        make(index)
        if index % 250 == 249:
            progress(f"{index + 1:,} {what} made through the API")
    return time.perf_counter() - started


# Directly into PostgreSQL ----------------------------------------------------------------------------------

class _Template:
    """The rows the API wrote for ``db0000.t000``."""

    def __init__(self, cursor: Any, shape: Shape) -> None:
        database, name = shape.database(0), shape.table(0)
        cursor.execute('SELECT t.* FROM "TBLS" t JOIN "DBS" d ON t."DB_ID" = d."DB_ID" WHERE d."NAME" = %s AND t."TBL_NAME" = %s',
                       (database, name))
        self.table = dict(zip([d.name for d in cursor.description], cursor.fetchone()))
        table_id, sd_id = self.table["TBL_ID"], self.table["SD_ID"]
        self.params = _rows(cursor, "TABLE_PARAMS", "TBL_ID", table_id)
        self.keys = _rows(cursor, "PARTITION_KEYS", "TBL_ID", table_id)
        self.sd = _rows(cursor, "SDS", "SD_ID", sd_id)[0]
        self.sd_params = _rows(cursor, "SD_PARAMS", "SD_ID", sd_id)
        self.columns = _rows(cursor, "COLUMNS_V2", "CD_ID", self.sd["CD_ID"])
        self.serde = _rows(cursor, "SERDES", "SERDE_ID", self.sd["SERDE_ID"])[0]
        self.serde_params = _rows(cursor, "SERDE_PARAMS", "SERDE_ID", self.sd["SERDE_ID"])
        for child, column in _EMPTY.items():
            if _rows(cursor, child, column, sd_id if column.startswith("SD") else table_id):
                raise SystemExit(f"the API wrote rows in {child} for {database}.{name}: the direct copy does not write them")
        suffix = f"/{database}.db/{name}"
        if not self.sd["LOCATION"].endswith(suffix) or len(self.columns) != len(COLUMNS):
            raise SystemExit(f"unexpected rows for {database}.{name}: {self.sd['LOCATION']}, {len(self.columns)} columns")
        self.location_prefix = self.sd["LOCATION"][: -len(suffix)]


def _next_ids(cursor: Any, count: int) -> dict[str, int]:
    """First ids of the sequences the rows need, with ``count`` of each reserved (NEXT_VAL moved past)."""
    firsts = {}
    for model in _SEQUENCES:
        sequence = f"org.apache.hadoop.hive.metastore.model.{model}"
        cursor.execute('SELECT "NEXT_VAL" FROM "SEQUENCE_TABLE" WHERE "SEQUENCE_NAME" = %s FOR UPDATE', (sequence,))
        first = int(cursor.fetchone()[0])
        cursor.execute('UPDATE "SEQUENCE_TABLE" SET "NEXT_VAL" = %s WHERE "SEQUENCE_NAME" = %s', (first + count, sequence))
        firsts[model] = first
    return firsts


def _direct(metastore_dir: Path, shape: Shape) -> dict[str, Any]:
    """Every table of databases 1 .. ``shape.databases - 1`` written as the template's rows, in one transaction."""
    started = time.perf_counter()
    rows: dict[str, int] = {}
    with database_connection(metastore_dir) as connection, connection.cursor() as cursor:
        template = _Template(cursor, shape)
        cursor.execute('SELECT "NAME", "DB_ID" FROM "DBS"')
        db_ids = dict(cursor.fetchall())
        todo = [(db_ids[shape.database(d)], shape.database(d), shape.table(t))
                for d in range(1, shape.databases) for t in range(shape.tables)]
        ids = _next_ids(cursor, len(todo))
        now = int(time.time())
        table, sd, serde, cd = (ids[model] for model in _SEQUENCES)

        def each(make: Callable[[int, int, str, str], list[list[Any]]]) -> Iterator[list[Any]]:
            for offset, (db_id, database, name) in enumerate(todo):
                yield from make(offset, db_id, database, name)

        def copy(target: str, columns: list[str], make: Callable[[int, int, str, str], list[list[Any]]]) -> None:
            rows[target] = _copy(cursor, target, columns, each(make))

        serde_rest = [c for c in template.serde if c != "SERDE_ID"]
        copy("SERDES", ["SERDE_ID", *serde_rest], lambda o, i, d, n: [[serde + o, *(template.serde[c] for c in serde_rest)]])
        copy("SERDE_PARAMS", ["SERDE_ID", "PARAM_KEY", "PARAM_VALUE"],
             lambda o, i, d, n: [[serde + o, p["PARAM_KEY"], p["PARAM_VALUE"]] for p in template.serde_params])
        copy("CDS", ["CD_ID"], lambda o, i, d, n: [[cd + o]])
        column_keys = ["COMMENT", "COLUMN_NAME", "TYPE_NAME", "INTEGER_IDX"]
        copy("COLUMNS_V2", ["CD_ID", *column_keys],
             lambda o, i, d, n: [[cd + o, *(c[k] for k in column_keys)] for c in template.columns])
        sd_rest = [c for c in template.sd if c not in ("SD_ID", "CD_ID", "SERDE_ID", "LOCATION")]
        copy("SDS", ["SD_ID", "CD_ID", "SERDE_ID", "LOCATION", *sd_rest], lambda o, i, d, n: [
            [sd + o, cd + o, serde + o, f"{template.location_prefix}/{d}.db/{n}", *(template.sd[c] for c in sd_rest)]])
        copy("SD_PARAMS", ["SD_ID", "PARAM_KEY", "PARAM_VALUE"],
             lambda o, i, d, n: [[sd + o, p["PARAM_KEY"], p["PARAM_VALUE"]] for p in template.sd_params])
        table_rest = [c for c in template.table if c not in ("TBL_ID", "DB_ID", "SD_ID", "TBL_NAME", "CREATE_TIME")]
        copy("TBLS", ["TBL_ID", "DB_ID", "SD_ID", "TBL_NAME", "CREATE_TIME", *table_rest],
             lambda o, i, d, n: [[table + o, i, sd + o, n, now, *(template.table[c] for c in table_rest)]])
        params = [(p["PARAM_KEY"], str(now) if p["PARAM_KEY"] == "transient_lastDdlTime" else p["PARAM_VALUE"])
                  for p in template.params]
        copy("TABLE_PARAMS", ["TBL_ID", "PARAM_KEY", "PARAM_VALUE"], lambda o, i, d, n: [[table + o, k, v] for k, v in params])
        key_keys = ["PKEY_COMMENT", "PKEY_NAME", "PKEY_TYPE", "INTEGER_IDX"]
        copy("PARTITION_KEYS", ["TBL_ID", *key_keys], lambda o, i, d, n: [[table + o, *(k[c] for c in key_keys)] for k in template.keys])
        progress(f"{len(todo):,} tables copied ({sum(rows.values()):,} rows); committing")
    copy_seconds = time.perf_counter() - started
    started = time.perf_counter()
    with database_connection(metastore_dir) as connection:
        connection.autocommit = True
        for target in rows:
            connection.execute(f'ANALYZE "{target}"')
    return {"direct_tables": len(todo), "direct_rows": rows, "direct_copy_seconds": round(copy_seconds, 1),
            "direct_analyze_seconds": round(time.perf_counter() - started, 1),
            "template_table": f"{shape.database(0)}.{shape.table(0)}"}


# Checks -------------------------------------------------------------------------------------------------

def _check(pool: HmsClientPool, shape: Shape) -> dict[str, Any]:
    """The catalog as the API sees it: every database, the last database's tables, and a table written directly
    next to the one the API made (equal but for the names, the location and the times)."""
    databases = [name for name in pool.call("get_all_databases") if name.startswith("db")]
    if databases != [shape.database(d) for d in range(shape.databases)]:
        raise SystemExit(f"get_all_databases answered {len(databases)} of the {shape.databases} databases")
    last = shape.database(shape.databases - 1)
    names = sorted(pool.call("get_all_tables", last))
    if names != [shape.table(t) for t in range(shape.tables)]:
        raise SystemExit(f"get_all_tables {last} answered {len(names)} tables, not its {shape.tables}")
    api, direct = (pool.call("get_table", database, shape.table(shape.tables - 1)) for database in (shape.database(0), last))
    if not direct.sd.location.endswith(f"/{last}.db/{shape.table(shape.tables - 1)}"):
        raise SystemExit(f"{last}.{direct.tableName} is located at {direct.sd.location}")
    for table in (api, direct):
        table.createTime = table.lastAccessTime = 0
        table.dbName = table.sd.location = None
        table.parameters = {key: "" if key == "transient_lastDdlTime" else value for key, value in table.parameters.items()}
    if api != direct:
        raise SystemExit(f"a table written directly differs from one the API made:\n{direct}\n{api}")
    return {"check_databases": len(databases), "check_tables_of_last": len(names), "check_direct_equals_api": True}


def make_catalog(pool: HmsClientPool, metastore_dir: Path, warehouse: Path, shape: Shape, *, budget: float) -> dict[str, Any]:
    """Make the databases and the tables, and check them; what was done and how long it took."""
    started = time.perf_counter()

    def create_database(index: int) -> None:
        name = shape.database(index)
        location = (warehouse / f"{name}.db").as_uri()
        pool.call("create_database", ttypes.Database(name=name, description="", locationUri=location, parameters={}))

    database_seconds = _timed_each("databases", shape.databases, create_database)
    first = shape.database(0)

    def create_table(index: int, database: str = first) -> None:
        name = shape.table(index)
        pool.call("create_table", _table(database, name, (warehouse / f"{database}.db" / name).as_uri()))

    sample_seconds = _timed_each("tables", shape.tables, create_table)
    per_table = sample_seconds / shape.tables
    projected = per_table * shape.total
    report: dict[str, Any] = {
        "databases_api_seconds": round(database_seconds, 1), "api_sample_tables": shape.tables,
        "api_sample_seconds": round(sample_seconds, 1), "api_tables_per_second": round(1 / per_table, 1),
        "api_projected_seconds": round(projected, 1), "api_budget_seconds": budget,
    }
    if projected > budget and shape.databases > 1:
        progress(f"the API would take {projected / 60:.0f} min for {shape.total:,} tables (budget {budget / 60:.0f} min): "
                 "writing the rest into PostgreSQL directly")
        report["method"] = "direct SQL (COPY), after an API sample"
        report.update(_direct(metastore_dir, shape))
    else:
        report["method"] = "metastore API (create_database, create_table)"
        for database in range(1, shape.databases):
            for index in range(shape.tables):
                create_table(index, shape.database(database))
    report["catalog_seconds"] = round(time.perf_counter() - started, 1)
    progress(f"{shape.total:,} tables made in {report['catalog_seconds']:.0f} s ({report['method']}); checking")
    report.update(_check(pool, shape))
    return report
