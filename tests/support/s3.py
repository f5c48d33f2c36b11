"""A real S3 API for the tests: moto's server on 127.0.0.1, path style, checking every request's signature.

The server runs in a process of its own (moto.server's ``main``, through ``_moto_server.py``), not in the test
process: moto keeps its authentication switch and request recorder in module globals, so an in-process server
would change how the other moto servers some tests start behave. Once started it holds one IAM user allowed
everything, whose access key the catalogs use, and is switched to checking signatures (moto's ``reset-auth``): a
request signed with another secret is refused with ``SignatureDoesNotMatch``, as AWS and MinIO refuse it, so the
tests of wrong credentials test something.

:func:`write_warehouse` fills a bucket with a small warehouse written with pyarrow and pyiceberg and
registers it in a metastore through the catalog's own DDL (see :class:`Warehouse`).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["S3Server", "S3ServerError", "REGION", "Warehouse", "write_warehouse", "create_catalog_statement",
           "iceberg_catalog"]

REGION = "us-east-1"
_START_TIMEOUT = 30.0
_MOTO_SERVER = Path(__file__).with_name("_moto_server.py")  # moto.server with its backend lookup remembered
_ALLOW_ALL = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}

T = TypeVar("T")


class S3ServerError(RuntimeError):
    """moto's server could not be started or set up (its log's tail is in the message)."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class S3Server:
    """A running moto S3 server: its endpoint, the keys it accepts, a boto3 client signed with them."""

    process: subprocess.Popen[bytes]
    host: str
    port: int
    access_key: str
    secret_key: str
    log_file: Path
    client: Any = field(repr=False)
    _buckets: set[str] = field(default_factory=set, repr=False)

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    @classmethod
    def start(cls, directory: Path) -> S3Server:
        """Start the server with its log under ``directory``; S3ServerError when it does not come up."""
        import boto3
        import requests

        directory.mkdir(parents=True, exist_ok=True)
        port = _free_port()
        log_file = directory / "moto.log"
        env = {**os.environ, "MOTO_RECORDER_FILEPATH": str(directory / "moto_recording")}
        with open(log_file, "wb") as log:
            process = subprocess.Popen(
                [sys.executable, str(_MOTO_SERVER), "-H", "127.0.0.1", "-p", str(port)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
            )
        endpoint = f"http://127.0.0.1:{port}"
        try:
            _wait_until_ready(process, endpoint, log_file)
            # The one user whose key the catalogs use; made before signatures are checked (moto's IAM would
            # refuse an unsigned first call afterwards).
            iam = boto3.client("iam", endpoint_url=endpoint, region_name=REGION,
                               aws_access_key_id="bootstrap", aws_secret_access_key="bootstrap")
            iam.create_user(UserName="hms-catalog-tests")
            iam.put_user_policy(UserName="hms-catalog-tests", PolicyName="everything",
                                PolicyDocument=json.dumps(_ALLOW_ALL))
            key = iam.create_access_key(UserName="hms-catalog-tests")["AccessKey"]
            requests.post(f"{endpoint}/moto-api/reset-auth", data=b"0", timeout=10).raise_for_status()
            client = boto3.client("s3", endpoint_url=endpoint, region_name=REGION,
                                  aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"])
        except BaseException:
            _stop(process)
            raise
        return cls(process, "127.0.0.1", port, key["AccessKeyId"], key["SecretAccessKey"], log_file, client)

    def stop(self) -> None:
        _stop(self.process)

    def bucket(self, name: str) -> str:
        """A bucket ``name``, made on first use; its name."""
        if name not in self._buckets:
            self.client.create_bucket(Bucket=name)
            self._buckets.add(name)
        return name

    def catalog_properties(self, **overrides: str) -> dict[str, str]:
        """The S3 properties of a catalog on this server, in Doris's names (what users write)."""
        return {
            "s3.endpoint": self.endpoint,
            "s3.access_key": self.access_key,
            "s3.secret_key": self.secret_key,
            "s3.region": REGION,
            "use_path_style": "true",
            **overrides,
        }

    def filesystem(self) -> Any:
        """pyarrow's S3 filesystem on this server, for writing test data apart from the catalog."""
        import pyarrow.fs as pafs

        return pafs.S3FileSystem(endpoint_override=f"{self.host}:{self.port}", scheme="http", region=REGION,
                                 access_key=self.access_key, secret_key=self.secret_key,
                                 force_virtual_addressing=False)

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        """Every key under ``prefix`` of ``bucket``, sorted."""
        found: list[str] = []
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            found.extend(entry["Key"] for entry in page.get("Contents", []))
        return sorted(found)

    def list_requests(self, action: Callable[[], T]) -> tuple[T, int]:
        """``action()``'s value and the S3 LIST requests (ListObjectsV2) the server saw meanwhile, counted by
        moto's request recorder (the server is this process's own: nothing else records on it)."""
        import requests

        endpoint = self.endpoint
        requests.post(f"{endpoint}/moto-api/recorder/reset-recording", timeout=30)
        requests.post(f"{endpoint}/moto-api/recorder/start-recording", timeout=30)
        try:
            value = action()
        finally:
            requests.post(f"{endpoint}/moto-api/recorder/stop-recording", timeout=30)
        recorded = requests.get(f"{endpoint}/moto-api/recorder/download-recording", timeout=60).text
        calls = [json.loads(line) for line in recorded.splitlines() if line.strip()]
        return value, sum(1 for call in calls if call.get("method") == "GET" and "list-type=2" in call.get("url", ""))

    def refuses_wrong_signatures(self) -> bool:
        """True when a request signed with another secret is refused (signatures are being checked)."""
        import boto3
        from botocore.exceptions import ClientError

        wrong = boto3.client("s3", endpoint_url=self.endpoint, region_name=REGION,
                             aws_access_key_id=self.access_key, aws_secret_access_key=self.secret_key + "x")
        try:
            wrong.list_buckets()
        except ClientError as error:
            return bool(error.response.get("Error", {}).get("Code") == "SignatureDoesNotMatch")
        return False


def _wait_until_ready(process: subprocess.Popen[bytes], endpoint: str, log_file: Path) -> None:
    import requests

    deadline = time.monotonic() + _START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise S3ServerError(f"moto's server exited with status {process.returncode}:\n{_tail(log_file)}")
        try:
            requests.get(f"{endpoint}/moto-api/data.json", timeout=1)
            return
        except requests.RequestException:
            time.sleep(0.05)
    raise S3ServerError(f"moto's server did not answer at {endpoint} within {_START_TIMEOUT:g}s:\n{_tail(log_file)}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


# The warehouse ------------------------------------------------------------------------------------------

WAREHOUSE_BUCKET = "warehouse"
WAREHOUSE_DATABASE = "s3wh"
# Partition values as Hive writes their folders: a space is kept, '/' is escaped as %2F.
SALES: dict[str, list[tuple[int, str, float]]] = {
    "north": [(1, "ada", 10.5), (2, "grace", 20.0)],
    "south east": [(3, "edsger", 7.25), (4, "barbara", 1.0)],
    "a/b": [(5, "alan", 99.0)],
}
SALES_FOLDERS = {"north": "region=north", "south east": "region=south east", "a/b": "region=a%2Fb"}
EVENTS: dict[str, list[tuple[int, str]]] = {"2026-01-01": [(1, "open"), (2, "close")], "2026-01-02": [(3, "open")]}
NOTES: dict[str, bytes] = {"2026-01-01": b"1,first\n2,second\n", "2026-01-02": b"3,third\n"}
CLICKS = [(1, "/home"), (2, "/pens"), (3, "/ink")]
LAKE_VISITS: dict[str, list[int]] = {"2026-02-01": [1, 2], "2026-02-02": [3]}
LAKE_PRICES = b"sku,price\npen,1.5\nink,3.25\n"


@dataclass(frozen=True)
class Warehouse:
    """What :func:`write_warehouse` made: a bucket, a database registered at ``root`` (``s3a://``) holding
    ``sales`` (Parquet, by region), ``events`` (ORC, by dt), ``notes`` (text, by dt) and ``clicks``
    (Iceberg, by pyiceberg), and a folder tree at ``lake`` for a filesystem catalog (``raw/visits``,
    Parquet by dt; ``raw/prices``, CSV)."""

    server: S3Server
    bucket: str
    database: str
    root: str
    lake: str
    metastore_uri: str

    def catalog_properties(self, **overrides: str) -> dict[str, str]:
        """An ``hms`` catalog's properties over the warehouse's metastore and bucket."""
        return {"type": "hms", "hive.metastore.uris": self.metastore_uri, **self.server.catalog_properties(**overrides)}

    def lake_properties(self, **overrides: str) -> dict[str, str]:
        """A filesystem catalog's properties over the lake's folders."""
        return {"type": "filesystem", "root": self.lake, **self.server.catalog_properties(**overrides)}

    def iceberg_properties(self) -> dict[str, str]:
        """pyiceberg's names for the same store, as a pyiceberg user writes them."""
        return {"s3.endpoint": self.server.endpoint, "s3.access-key-id": self.server.access_key,
                "s3.secret-access-key": self.server.secret_key, "s3.region": REGION,
                "s3.force-virtual-addressing": "false"}


def create_catalog_statement(name: str, properties: dict[str, str]) -> str:
    """``CREATE CATALOG name PROPERTIES (...)`` for ``properties``."""
    listed = ", ".join(f"'{key}'='{value}'" for key, value in properties.items())
    return f"CREATE CATALOG {name} PROPERTIES ({listed})"


def write_warehouse(server: S3Server, home: Path, metastore_uri: str) -> Warehouse:
    """Write the warehouse's files with pyarrow (and pyiceberg), and register its tables in the metastore
    at ``metastore_uri`` through a catalog session under ``home`` (the catalog's DDL, then MSCK REPAIR)."""
    from hms_catalog import open_session

    bucket = server.bucket(WAREHOUSE_BUCKET)
    root = f"s3a://{bucket}/{WAREHOUSE_DATABASE}.db"
    warehouse = Warehouse(server, bucket, WAREHOUSE_DATABASE, root, f"s3a://{bucket}/lake", metastore_uri)
    _write_files(server, bucket)
    session = open_session(home)
    try:
        session.run_one(create_catalog_statement("hive", warehouse.catalog_properties()))
        table = f"hive.{WAREHOUSE_DATABASE}"
        for statement in (
            f"CREATE DATABASE {table} LOCATION '{root}'",
            f"CREATE EXTERNAL TABLE {table}.sales (id BIGINT, name STRING, amount DOUBLE) "
            f"PARTITIONED BY (region STRING) STORED AS PARQUET LOCATION '{root}/sales'",
            f"CREATE EXTERNAL TABLE {table}.events (id BIGINT, kind STRING) PARTITIONED BY (dt STRING) "
            f"STORED AS ORC LOCATION '{root}/events'",
            f"CREATE EXTERNAL TABLE {table}.notes (id BIGINT, note STRING) PARTITIONED BY (dt STRING) "
            f"ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' STORED AS TEXTFILE LOCATION '{root}/notes'",
            f"MSCK REPAIR TABLE {table}.sales",
            f"MSCK REPAIR TABLE {table}.events",
            f"MSCK REPAIR TABLE {table}.notes",
        ):
            session.run_one(statement)
    finally:
        session.manager.close()
    _write_iceberg(warehouse)
    return warehouse


def _write_files(server: S3Server, bucket: str) -> None:
    import pyarrow as pa
    import pyarrow.orc as orc
    import pyarrow.parquet as pq

    filesystem = server.filesystem()
    base = f"{bucket}/{WAREHOUSE_DATABASE}.db"
    for region, rows in SALES.items():
        table = pa.table({"id": pa.array([r[0] for r in rows], pa.int64()), "name": [r[1] for r in rows],
                          "amount": pa.array([r[2] for r in rows], pa.float64())})
        pq.write_table(table, f"{base}/sales/{SALES_FOLDERS[region]}/part-00000.parquet", filesystem=filesystem)
    for day, events in EVENTS.items():
        with filesystem.open_output_stream(f"{base}/events/dt={day}/part-00000.orc") as out:
            orc.write_table(pa.table({"id": pa.array([e[0] for e in events], pa.int64()), "kind": [e[1] for e in events]}), out)
    for day, text in NOTES.items():
        with filesystem.open_output_stream(f"{base}/notes/dt={day}/part-00000") as out:
            out.write(text)
    for day, ids in LAKE_VISITS.items():
        pq.write_table(pa.table({"visit_id": pa.array(ids, pa.int64())}),
                       f"{bucket}/lake/raw/visits/dt={day}/part-00000.parquet", filesystem=filesystem)
    with filesystem.open_output_stream(f"{bucket}/lake/raw/prices/part-00000.csv") as out:
        out.write(LAKE_PRICES)


def _write_iceberg(warehouse: Warehouse) -> None:
    """``clicks``: an Iceberg table pyiceberg creates in the metastore and writes to the bucket."""
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    table = iceberg_catalog(warehouse).create_table(f"{warehouse.database}.clicks", location=f"{warehouse.root}/clicks",
                                 schema=Schema(NestedField(1, "id", LongType(), required=False),
                                               NestedField(2, "page", StringType(), required=False)))
    table.append(pa.table({"id": pa.array([c[0] for c in CLICKS], pa.int64()), "page": [c[1] for c in CLICKS]}))


def iceberg_catalog(warehouse: Warehouse) -> Any:
    """pyiceberg's HiveCatalog on the warehouse's metastore and store."""
    from pyiceberg.catalog.hive import HiveCatalog

    return HiveCatalog("s3wh", uri=warehouse.metastore_uri, **warehouse.iceberg_properties(),
                       **{"hive.hive2-compatible": "true"})
