"""Spark through the connector on a catalog that vends a role's sessions, with nothing but the service's token: no
S3 key in Spark's own configuration.

The catalog ``svend`` (moto's S3 with IAM auth, and its STS) has a role whose own policy allows the bucket
``sparkvend`` only. The driver asks the service for each table's session (``?table=``; a CREATE TABLE AS, whose
table has no location yet, for its job's: ``?job=``) and sets it on that scan's or write's Hadoop configuration
only. This Spark has no hadoop-aws (no registry here serves it), so the catalog names a stand-in S3 FileSystem
(``stand_in/hmstest/SessionS3FileSystem.java``: Signature V4 with S3A's keys) for ``s3a://``: moto checks every
signature, and takes a session's key only with its token. moto does not apply a session policy, so what scopes
a session is checked as STS received it, from moto's request recorder.
"""

from __future__ import annotations

import io
import json
import subprocess
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import requests

from hms_catalog.jdk import find_java_tool, spark_jars_dir
from tests.spark_connector.conftest import heard, registered
from tests.support.s3 import S3Server
from tests.support.service import Server, served, tokens_file
from tests.support.sts import assumable_role, assume_role_requests

pytestmark = [pytest.mark.metastore, pytest.mark.slow]

BUCKET = "sparkvend"
ROLE, EXTERNAL_ID = "hms-spark-vending-tests", "hms-spark-external-id"
CATALOG = "svend"
READ_TOKEN = "spark-vending-read-token-of-tests-01"
WRITE_TOKEN = "spark-vending-etl-token-of-tests-002"
TOKENS = {"tokens": [{"name": "sparkro", "token": READ_TOKEN, "access": "read"},
                     {"name": "sparketl", "token": WRITE_TOKEN, "access": "write", "catalogs": [CATALOG]}]}
STAND_IN = Path(__file__).parent / "stand_in" / "hmstest" / "SessionS3FileSystem.java"
DB = "vended_db"


@pytest.fixture(scope="module")
def role_arn(s3_server: S3Server) -> str:
    """A role the tests' user may assume with the external id, allowed everything on the bucket ``sparkvend`` only."""
    return assumable_role(s3_server, ROLE, BUCKET, EXTERNAL_ID)


@pytest.fixture(scope="module")
def stand_in(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The stand-in S3 FileSystem's jar, added to the session (driver and executors); its class name."""
    directory = tmp_path_factory.mktemp("stand_in")
    javac = find_java_tool("javac")
    assert javac is not None, "the connector's tests need a JDK (javac)"
    classes = directory / "classes"
    compiled = subprocess.run([javac, "-nowarn", "--release", "17", "-d", str(classes), "-cp", f"{spark_jars_dir()}/*",
                               str(STAND_IN)], capture_output=True, text=True, check=False)
    assert compiled.returncode == 0, compiled.stderr
    jar = directory / "hmstest.jar"
    with zipfile.ZipFile(jar, "w") as archive:
        for path in classes.rglob("*.class"):
            archive.write(path, path.relative_to(classes).as_posix())
    spark.sql(f"ADD JAR '{jar}'")
    return "hmstest.SessionS3FileSystem"


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the stand-in FileSystem writes the key of each Configuration it is made with."""
    return tmp_path_factory.mktemp("record") / "keys.tsv"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, metastore_uri: str, s3_server: S3Server, role_arn: str,
            stand_in: str, record: Path) -> Iterator[Server]:
    """A served service whose catalog ``svend`` vends the role's sessions, moto's request recorder on meanwhile."""
    recorder = f"{s3_server.endpoint}/moto-api/recorder"
    requests.post(f"{recorder}/reset-recording", timeout=30)
    requests.post(f"{recorder}/start-recording", timeout=30)
    directory = tmp_path_factory.mktemp("spark_vending")
    tokens = tokens_file(directory / "tokens.json", TOKENS)
    try:
        with served(directory / "home", "--tokens", str(tokens)) as running:
            client = running.client()
            try:
                client.create_catalog(CATALOG, {
                    "type": "hms", "hive.metastore.uris": metastore_uri, **s3_server.catalog_properties(),
                    "s3.role_arn": role_arn, "s3.external_id": EXTERNAL_ID,
                    "fs.s3a.impl": stand_in, "fs.hmstest.record": str(record)})
            finally:
                client.close()
            yield running
    finally:
        requests.post(f"{recorder}/stop-recording", timeout=30)


@pytest.fixture(scope="module")
def catalogs(spark: Any, service: Server) -> Iterator[tuple[str, str]]:
    """``svend`` registered in Spark twice: ``vread`` with the read token, ``vwrite`` with the write token."""
    with registered(spark, service, "vread", token=READ_TOKEN, remote_name=CATALOG) as reader, \
            registered(spark, service, "vwrite", token=WRITE_TOKEN, remote_name=CATALOG) as writer:
        yield reader, writer


@pytest.fixture(scope="module")
def table(spark: Any, catalogs: tuple[str, str], s3_server: S3Server) -> Iterator[str]:
    """``vended_db.clicks`` at ``s3a://sparkvend/vended_db.db/clicks``, a Parquet Hive table made through the connector,
    with one file the catalog's owner put there; a sibling ``clicks2`` whose name begins with the same text."""
    _, writer = catalogs
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {writer}.{DB} LOCATION 's3a://{BUCKET}/{DB}.db'")
    for name in ("clicks", "clicks2"):
        spark.sql(f"CREATE TABLE {writer}.{DB}.{name} (id INT, page STRING) STORED AS PARQUET")
    data = io.BytesIO()
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int32()), "page": ["/a", "/b"]}), data)
    s3_server.client.put_object(Bucket=BUCKET, Key=f"{DB}.db/clicks/part-00000.parquet", Body=data.getvalue())
    yield f"{DB}.clicks"
    spark.sql(f"DROP DATABASE IF EXISTS {writer}.{DB} CASCADE")


def _sts_requests(s3_server: S3Server, session_name: str) -> list[dict[str, str]]:
    """The AssumeRole requests moto received for ``session_name``, in order."""
    return assume_role_requests(s3_server, session_name)


def _scope(sent: dict[str, str]) -> tuple[list[str], bool]:
    """The objects a session may reach, as its policy says, and whether it may write them."""
    objects = json.loads(sent["Policy"])["Statement"][0]
    return objects["Resource"], "s3:PutObject" in objects["Action"]


def _keys(record: Path) -> set[tuple[str, str]]:
    """The (access key, session token given) of each FileSystem made since the last call."""
    if not record.exists():
        return set()
    lines = record.read_text(encoding="utf-8").splitlines()
    record.unlink()
    return {(key, token) for key, token in (line.split("\t") for line in lines)}


def _rows(spark: Any, name: str) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in spark.table(name).orderBy("id").collect()]


def test_spark_reads_and_writes_a_role_catalogs_table_with_its_token_only(
        spark: Any, service: Server, catalogs: tuple[str, str], table: str, s3_server: S3Server, record: Path) -> None:
    reader, writer = catalogs
    assert s3_server.refuses_wrong_signatures()  # moto checks every request's signature and key
    _keys(record)
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    assert conf.get("fs.s3a.access.key") is None and conf.get("fs.s3a.secret.key") is None  # Spark has no S3 key

    # A read token reads: a read session scoped to the table's folder reached the scan's readers
    assert _rows(spark, f"{reader}.{table}") == [(1, "/a"), (2, "/b")]
    [read] = _sts_requests(s3_server, "hms-svend-sparkro")
    assert _scope(read) == ([f"arn:aws:s3:::{BUCKET}/{DB}.db/clicks/*"], False)
    assert json.loads(read["Policy"])["Statement"][1]["Condition"] == {
        "StringLike": {"s3:prefix": [f"{DB}.db/clicks/", f"{DB}.db/clicks/*"]}}
    used = _keys(record)
    assert used and all(key.startswith("ASIA") and token == "true" for key, token in used), used

    # A write token inserts: its session may write the table's folder (where the job's staging folder is)
    spark.sql(f"INSERT INTO {writer}.{table} VALUES (3, '/c')")
    [write] = _sts_requests(s3_server, "hms-svend-sparketl")
    assert _scope(write) == ([f"arn:aws:s3:::{BUCKET}/{DB}.db/clicks/*"], True)
    assert _rows(spark, f"{writer}.{table}") == [(1, "/a"), (2, "/b"), (3, "/c")]
    assert len([key for key in s3_server.keys(BUCKET, f"{DB}.db/clicks/") if key.endswith(".parquet")]) == 2
    used = _keys(record)
    assert used and all(key.startswith("ASIA") and token == "true" for key, token in used), used

    # A session is used again while it has half its life left: reading again asks STS nothing
    heard(lambda: _rows(spark, f"{reader}.{table}"), lambda rows: rows == [(1, "/a"), (2, "/b"), (3, "/c")],
          "the read catalog never saw the insert", every=1)
    assert len(_sts_requests(s3_server, "hms-svend-sparkro")) == 1

    # No long-lived secret reached Spark: not its conf, nor the session's Hadoop conf, nor any FileSystem
    secret = s3_server.secret_key
    shown = [str(spark.sparkContext.getConf().getAll()), str(dict(spark.conf.getAll))]
    shown.append(" ".join(f"{entry.getKey()}={entry.getValue()}" for entry in conf.iterator()))
    assert [index for index, text in enumerate(shown) if secret in text or s3_server.access_key in text] == []
    assert conf.get("fs.s3a.session.token") is None and conf.get("fs.s3a.impl") != "hmstest.SessionS3FileSystem"


def test_create_table_as_select_gets_a_session_for_its_jobs_folder(
        spark: Any, service: Server, catalogs: tuple[str, str], table: str, s3_server: S3Server, record: Path) -> None:
    reader, writer = catalogs
    _keys(record)
    before = len(_sts_requests(s3_server, "hms-svend-sparketl"))
    spark.sql(f"CREATE TABLE {writer}.{DB}.copied STORED AS PARQUET AS SELECT * FROM {writer}.{table} WHERE id < 3")
    made = _sts_requests(s3_server, "hms-svend-sparketl")[before:]
    assert [_scope(sent) for sent in made] == [([f"arn:aws:s3:::{BUCKET}/{DB}.db/copied/*"], True)]
    assert _rows(spark, f"{reader}.{DB}.copied") == [(1, "/a"), (2, "/b")]
    assert all(key.startswith("ASIA") for key, _ in _keys(record))
    # A read token gets no session for a write job's folder
    refused = service.request("GET", f"/v1/catalogs/{CATALOG}/storage-credentials?job=0123456789abcdef", token=READ_TOKEN)
    assert refused.status == 403, refused


def test_the_answer_says_when_the_session_ends(service: Server, table: str) -> None:
    answer = service.request("GET", f"/v1/catalogs/{CATALOG}/storage-credentials?table={table}", token=READ_TOKEN)
    body = answer.json()
    assert body["vending"] == "role" and body["hadoop_settings"]["fs.s3a.access.key"].startswith("ASIA")
    assert time.time() * 1000 < body["expires_at_ms"] <= (time.time() + 900) * 1000
