"""``python -m hms_catalog.demo --store s3``: the demo's warehouse on a local S3 endpoint.

moto's S3 server (in the ``dev`` extra, which ``make`` installs) is started on 127.0.0.1 as a real HTTP S3 API, path
style, with credentials. pyarrow writes the warehouse's files to a bucket (a partitioned Parquet table, an
ORC table, a text table; pyiceberg an Iceberg table); the catalog's own DDL registers them at ``s3a://`` locations, as Hadoop and Spark
record them, in an embedded metastore of their own started with its stub ``s3a://`` filesystem (Hive 2.3
from PySpark's jars has no S3 filesystem; a real metastore has ``hadoop-aws``), and MSCK REPAIR finds the
partitions by listing the bucket. Then SHOW CREATE CATALOG (the secret masked), DESCRIBE, EXPLAIN SPLITS with
pruning, and a read of the plan's files with pyarrow through the catalog's storage settings.

Spark is not used here: reading ``s3a://`` needs ``hadoop-aws`` and the AWS SDK on Spark's classpath, which
this machine does not have. moto keeps its objects in memory, so everything this demo writes is gone when it
ends: it stops its metastore too, and starts from nothing on every run.
"""

from __future__ import annotations

import logging
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from hms_catalog.cli.render import TextRenderer
from hms_catalog.errors import HmsCatalogError
from hms_catalog.execution import Result, Session
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.registry import shared_manager

if TYPE_CHECKING:
    import pyarrow.fs as pafs

__all__ = ["run_s3", "BUCKET", "CATALOG"]

CATALOG = "demo_s3"
DATABASE = "sales"
BUCKET = "demo-warehouse"
# moto accepts any keys; these show how a catalog names them (the secret is masked wherever it is shown).
ACCESS_KEY = "demo-access-key"
SECRET_KEY = "demo-secret-key"
ROOT = f"s3a://{BUCKET}/{DATABASE}.db"

_ORDERS = {
    "2026-11-01": [(1, 1, "19.99"), (2, 2, "5.00")],
    "2026-11-02": [(3, 1, "42.10"), (4, 3, "7.25")],
    "2026-11-03": [(5, 2, "13.00")],
}
_CUSTOMERS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["Ada", "Grace", "Edsger"],
                       "country": ["UK", "US", "NL"]})
_VISITS = b"1,/home,2026-11-01 09:00:00\n3,/pens,2026-11-02 10:30:00\n"


@contextmanager
def moto_s3() -> Iterator[str]:
    """moto's S3 server on a free port of 127.0.0.1, its bucket made; yields the endpoint URL."""
    try:
        from moto.server import ThreadedMotoServer
    except ImportError as error:
        raise SystemExit("--store s3 needs moto's server: pip install 'moto[server]' (the dev extra has it)") from error
    import boto3

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's server logs every request otherwise

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=ACCESS_KEY,
                     aws_secret_access_key=SECRET_KEY).create_bucket(Bucket=BUCKET)
        yield endpoint
    finally:
        server.stop()


def write_files(filesystem: pafs.FileSystem) -> list[str]:
    """The warehouse's files, written with pyarrow through ``filesystem`` (the catalog's); their paths."""
    import pyarrow.orc as orc
    import pyarrow.parquet as pq

    base = f"{BUCKET}/{DATABASE}.db"
    written = []
    for day, rows in _ORDERS.items():
        table = pa.table({"order_id": pa.array([r[0] for r in rows], pa.int64()),
                          "customer_id": pa.array([r[1] for r in rows], pa.int64()),
                          "amount": pa.array([Decimal(r[2]) for r in rows], pa.decimal128(10, 2))})
        path = f"{base}/orders/dt={day}/part-00000.parquet"
        pq.write_table(table, path, filesystem=filesystem)
        written.append(path)
    path = f"{base}/customers/part-00000.orc"
    with filesystem.open_output_stream(path) as out:
        orc.write_table(_CUSTOMERS, out)
    written.append(path)
    path = f"{base}/visits/part-00000"
    with filesystem.open_output_stream(path) as out:
        out.write(_VISITS)
    written.append(path)
    return written


def write_iceberg(uri: str, io_properties: Mapping[str, str]) -> None:
    """An Iceberg table written by pyiceberg, reaching the bucket with the catalog's own storage settings in
    pyiceberg's names (``catalog.io_properties``), so pyiceberg and the catalog read the same objects."""
    from pyiceberg.catalog.hive import HiveCatalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import DecimalType, LongType, NestedField, StringType

    settings = {key: value for key, value in io_properties.items() if key.startswith("s3.")}
    iceberg = HiveCatalog("demo_s3", uri=uri, **settings, **{"hive.hive2-compatible": "true"})
    table = iceberg.create_table(f"{DATABASE}.returns", location=f"{ROOT}/returns", schema=Schema(
        NestedField(1, "order_id", LongType()), NestedField(2, "reason", StringType()), NestedField(3, "refund", DecimalType(10, 2))))
    table.append(pa.Table.from_pylist(
        [{"order_id": 1, "reason": "broken", "refund": Decimal("19.99")},
         {"order_id": 4, "reason": "late", "refund": Decimal("7.25")}],
        schema=table.schema().as_arrow()))


def _statements(uri: str, endpoint: str) -> tuple[list[str], list[str], list[str]]:
    """The catalog's definition; the DDL over the files pyarrow wrote; the look around after pyiceberg's table."""
    table = f"{CATALOG}.{DATABASE}"
    define = [
        f"CREATE CATALOG {CATALOG} COMMENT 'the demo warehouse on a local S3 endpoint' PROPERTIES ('type'='hms', "
        f"'hive.metastore.uris'='{uri}', 's3.endpoint'='{endpoint}', 's3.region'='us-east-1', "
        f"'s3.access_key'='{ACCESS_KEY}', 's3.secret_key'='{SECRET_KEY}', 'use_path_style'='true')",
        f"SHOW CREATE CATALOG {CATALOG}",
    ]
    register = [
        f"CREATE DATABASE {table} LOCATION '{ROOT}'",
        f"CREATE EXTERNAL TABLE {table}.orders (order_id BIGINT, customer_id BIGINT, amount DECIMAL(10,2)) "
        f"PARTITIONED BY (dt STRING) STORED AS PARQUET LOCATION '{ROOT}/orders'",
        f"MSCK REPAIR TABLE {table}.orders",
        f"CREATE EXTERNAL TABLE {table}.customers (id BIGINT, name STRING, country STRING) STORED AS ORC "
        f"LOCATION '{ROOT}/customers'",
        f"CREATE EXTERNAL TABLE {table}.visits (customer_id BIGINT, page STRING, at TIMESTAMP) "
        f"ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' STORED AS TEXTFILE LOCATION '{ROOT}/visits'",
        f"SHOW PARTITIONS {table}.orders",
    ]
    explore = [
        f"REFRESH DATABASE {table}",
        f"SHOW TABLE STATUS FROM {table}",
        f"DESCRIBE {table}.orders",
        f"DESCRIBE {table}.returns",
        f"EXPLAIN SPLITS FROM {table}.orders WHERE dt >= '2026-11-02'",
        f"EXPLAIN SPLITS FROM {table}.returns",
    ]
    return define, register, explore


def read_plan(session: Session) -> Result:
    """Orders since November 2nd with their customers' names: the plans' files read with pyarrow, each opened
    through the catalog's storage (its endpoint and credentials), as a reader of the plan would."""
    import pyarrow.orc as orc
    import pyarrow.parquet as pq

    from planner import plan_table

    catalog = session.manager.catalog(CATALOG)

    def files(table: str, where: str | None, read: Callable[..., pa.Table]) -> pa.Table:
        parts = []
        for split in plan_table(catalog, catalog.table(DATABASE, table), where).splits:
            filesystem, path = catalog.storage.resolve(split.path)
            rows = read(path, filesystem=filesystem)
            for key, value in split.partition_values:  # partition values are in the plan, not in the files
                rows = rows.append_column(key, pa.array([value] * rows.num_rows, pa.string()))
            parts.append(rows)
        return pa.concat_tables(parts)

    orders = files("orders", "dt >= '2026-11-02'", pq.read_table)
    customers = files("customers", None, orc.read_table).select(["id", "name"])
    joined = orders.join(customers, "customer_id", "id").sort_by([("dt", "ascending"), ("order_id", "ascending")])
    columns = ["dt", "order_id", "name", "amount"]
    return Result.table(columns, [tuple(str(row[name]) for name in columns) for row in joined.select(columns).to_pylist()],
                        "read from the plans' files on S3 with pyarrow")


def run_s3(directory: Path, step: Callable[[str], None], started: Callable[[], float]) -> int:
    """The demo on S3 under ``directory/s3`` (made afresh: moto's objects do not outlive a run)."""
    base = directory / "s3"
    previous = EmbeddedMetastore(base / "metastore")
    if previous.status().running:
        previous.stop()
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    step("starting moto's S3 server on 127.0.0.1 (a real HTTP S3 API, path style, with credentials)")
    with moto_s3() as endpoint:
        print(f"    S3 endpoint {endpoint}, bucket {BUCKET}")
        step("starting an embedded Hive Metastore that accepts s3a:// locations (its stub S3 filesystem)")
        with EmbeddedMetastore(base / "metastore", 0, events=False, object_store_stub=True) as metastore:
            session = Session(shared_manager(base / "home"))
            renderer = TextRenderer()
            try:
                define, register, explore = _statements(metastore.uri, endpoint)
                _run(session, renderer, define, step)
                step(f"pyarrow writes the warehouse's files to s3://{BUCKET} through the catalog's storage")
                filesystem, _ = session.manager.catalog(CATALOG).storage.resolve(ROOT)
                for path in write_files(filesystem):
                    print(f"    s3a://{path}")
                _run(session, renderer, register, step)
                step("pyiceberg writes an Iceberg table to the bucket with the catalog's settings in its own names")
                write_iceberg(metastore.uri, session.manager.catalog(CATALOG).io_properties)
                _run(session, renderer, explore, step)
                step("planning orders since 2026-11-02 and reading the plan's files with pyarrow "
                     "(Spark would need hadoop-aws for s3a://, which this machine lacks)")
                print(renderer.result("read", read_plan(session)))
            except HmsCatalogError as error:
                print(f"error: {error}", file=sys.stderr)
                return 1
            finally:
                session.manager.close()
    print(f"\nDone in {started():.0f}s. moto keeps its objects in memory, so the S3 endpoint and this demo's "
          f"metastore stopped with it; run it again with: make demo STORE=s3")
    return 0


def _run(session: Session, renderer: TextRenderer, statements: list[str], step: Callable[[str], None]) -> None:
    for statement in statements:
        step(f"running {' '.join(statement.split()[:2])}")
        print(f"hms-catalog> {_masked(statement)};")
        print(renderer.result(statement, session.run_one(statement)))


def _masked(statement: str) -> str:
    """The statement as echoed: its secret key masked, as the catalog masks it everywhere."""
    return statement.replace(SECRET_KEY, "******")

