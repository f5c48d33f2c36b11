"""bench_iceberg_rest's DuckDB section: a ``store_sales``-like Iceberg table scanned by DuckDB through the endpoint
(``ATTACH ... (TYPE iceberg)``) against DuckDB reading the same Parquet files directly (``read_parquet``).

The rows have TPC-DS ``store_sales``' 23 columns (generated with numpy, not dsdgen: the scan's cost depends on
the columns, the rows and the files, not on dsdgen's value distributions), written by pyiceberg through the
endpoint in ``appends`` appends into a table partitioned by ``ss_sold_date_sk`` (one file per date per append).
The extensions are loaded from their PyPI packages with autoinstall and autoload off, as the tests load them.
"""

from __future__ import annotations

import importlib
import statistics
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from _common import progress

__all__ = ["duckdb_scan"]

TABLE = "store_sales"
FIRST_DATE_KEY = 2450816  # TPC-DS's first d_date_sk
_EXTENSIONS = ("httpfs", "avro", "iceberg")
_KEYS = ("ss_sold_time_sk", "ss_item_sk", "ss_customer_sk", "ss_cdemo_sk", "ss_hdemo_sk", "ss_addr_sk", "ss_store_sk",
         "ss_promo_sk")
_MONEY = ("ss_wholesale_cost", "ss_list_price", "ss_sales_price", "ss_ext_discount_amt", "ss_ext_sales_price",
          "ss_ext_wholesale_cost", "ss_ext_list_price", "ss_ext_tax", "ss_coupon_amt", "ss_net_paid",
          "ss_net_paid_inc_tax", "ss_net_profit")


def _rows(count: int, dates: int, seed: int) -> Any:
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    columns: dict[str, Any] = {"ss_sold_date_sk": pa.array(FIRST_DATE_KEY + rng.integers(0, dates, count), pa.int32())}
    for name in _KEYS:
        columns[name] = pa.array(rng.integers(1, 200_000, count), pa.int32())
    columns["ss_ticket_number"] = pa.array(rng.integers(1, 10**9, count), pa.int64())
    columns["ss_quantity"] = pa.array(rng.integers(1, 100, count), pa.int32())
    for name in _MONEY:
        columns[name] = pa.array(np.round(rng.uniform(0, 9_999, count), 2)).cast(pa.decimal128(7, 2), safe=False)
    return pa.table(columns)


def _connection(scratch: Path) -> Any:
    import duckdb

    scratch.mkdir(parents=True, exist_ok=True)
    connected = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false",
                                       "extension_directory": str(scratch)})
    for name in _EXTENSIONS:
        package = importlib.import_module(f"duckdb_extension_{name}")
        found = Path(next(iter(package.__path__))) / "extensions" / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"
        connected.execute(f"LOAD '{found}'")
    return connected


def _median(connection: Any, sql: str, repeat: int) -> tuple[float, list[Any]]:
    times, answer = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        answer = connection.execute(sql).fetchall()
        times.append(time.perf_counter() - started)
    return round(statistics.median(times), 4), answer


def duckdb_scan(rest: Any, url: str, token: str, catalog: str, namespace: str, scratch: Path, *, rows: int, dates: int,
                appends: int, repeat: int) -> dict[str, Any]:
    identifier = (namespace, TABLE)
    table = rest.create_table(identifier, schema=_rows(1, 1, 0).schema)
    with table.update_spec() as spec:
        spec.add_identity("ss_sold_date_sk")
    started = time.perf_counter()
    for index in range(appends):
        progress(f"duckdb: append {index + 1}/{appends} of {rows // appends} rows over {dates} dates")
        rest.load_table(identifier).append(_rows(rows // appends, dates, seed=index + 1))
    written = time.perf_counter() - started
    table = rest.load_table(identifier)
    files = [urlsplit(task.file.file_path).path for task in table.scan().plan_files()]

    low, high = FIRST_DATE_KEY + dates // 4, FIRST_DATE_KEY + dates // 4 + 29  # 30 dates
    aggregate = ("SELECT ss_store_sk % 10 AS store, count(*), sum(ss_net_paid), avg(ss_quantity) FROM {source} "
                 f"WHERE ss_sold_date_sk BETWEEN {low} AND {high} GROUP BY 1 ORDER BY 1")
    count = "SELECT count(*) FROM {source}"
    through = f"cat.{namespace}.{TABLE}"
    direct = "read_parquet([" + ", ".join(f"'{path}'" for path in files) + "])"

    duck = _connection(scratch / "duckdb")
    try:
        duck.execute(f"CREATE SECRET endpoint (TYPE iceberg, TOKEN '{token}')")
        started = time.perf_counter()
        duck.execute(f"ATTACH '{catalog}' AS cat (TYPE iceberg, SECRET endpoint, ENDPOINT '{url}/iceberg')")
        attach = time.perf_counter() - started
        started = time.perf_counter()
        duck.execute(f"DESCRIBE {through}").fetchall()
        first_load = time.perf_counter() - started
        started = time.perf_counter()
        first_count = duck.execute(count.format(source=through)).fetchall()
        first_query = time.perf_counter() - started
        duck.execute(count.format(source=direct)).fetchall()  # the files' footers read once on the direct side too
        describe, _ = _median(duck, f"DESCRIBE {through}", repeat)  # a warm loadTable as DuckDB makes it, no data read
        figures: dict[str, Any] = {}
        for name, sql in (("count", count), ("aggregate_30_dates", aggregate)):
            iceberg_seconds, iceberg_answer = _median(duck, sql.format(source=through), repeat)
            parquet_seconds, parquet_answer = _median(duck, sql.format(source=direct), repeat)
            figures[name] = {
                "iceberg_through_endpoint_seconds": iceberg_seconds, "parquet_direct_seconds": parquet_seconds,
                "ratio": round(iceberg_seconds / parquet_seconds, 2),
                "iceberg_minus_parquet_seconds": round(iceberg_seconds - parquet_seconds, 4),
                "same_answer": iceberg_answer == parquet_answer,
            }
    finally:
        duck.close()
    if first_count[0][0] != rows - rows % appends:
        raise SystemExit(f"DuckDB counted {first_count[0][0]} rows through the endpoint, {rows} were written")
    return {
        "rows": first_count[0][0], "dates": dates, "data_files": len(files), "appends": appends,
        "write_seconds_pyiceberg_through_endpoint": round(written, 2), "repeat": repeat,
        "attach_seconds": round(attach, 4), "first_metadata_load_seconds": round(first_load, 4),
        "first_count_seconds": round(first_query, 4),
        "warm_describe_seconds": describe, **figures,
    }
