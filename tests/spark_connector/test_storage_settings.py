"""The Hadoop settings Spark's readers and writers get for a table come from its catalog's storage properties:
two catalogs with different settings in one session each reach the files with their own, the session's own
Hadoop configuration is left as it was, and no credential shows in a plan. A scheme with no Hadoop FileSystem
in this Spark (``s3a://`` without hadoop-aws, as here) is refused naming the jar to add.

A tiny FileSystem (Hadoop's LocalFileSystem, recording the settings it is initialised with) is compiled for
the test and named by each catalog's ``fs.file.impl``: what it records is what the readers' Configuration held.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from hms_catalog.jdk import find_java_tool, spark_jars_dir
from tests.spark_connector.conftest import registered
from tests.support.service import Server

pytestmark = [pytest.mark.metastore, pytest.mark.slow]

DB = f"storageprobe{os.getpid()}"
SECRET_A = "secret-of-catalog-a-never-in-a-plan"
SECRET_B = "secret-of-catalog-b-never-in-a-plan"
PROBE = """
package hmsprobe;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.LocalFileSystem;

/** Writes the marker and the S3 secret of the Configuration it is initialised with to fs.hmsprobe.record. */
public class RecordingFileSystem extends LocalFileSystem {
    @Override
    public void initialize(URI uri, Configuration conf) throws IOException {
        super.initialize(uri, conf);
        String record = conf.get("fs.hmsprobe.record");
        if (record != null) {
            String line = conf.get("fs.hmsprobe.marker", "-") + "\\t" + conf.get("fs.s3a.secret.key", "-") + "\\n";
            Files.write(Paths.get(record), line.getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        }
    }
}
"""


@pytest.fixture(scope="module")
def probe_class(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The recording FileSystem's jar, added to the session (driver and executors)."""
    directory = tmp_path_factory.mktemp("probe")
    source = directory / "hmsprobe" / "RecordingFileSystem.java"
    source.parent.mkdir()
    source.write_text(PROBE, encoding="utf-8")
    javac = find_java_tool("javac")
    assert javac is not None, "the connector's tests need a JDK (javac)"
    classes = directory / "classes"
    compiled = subprocess.run([javac, "-nowarn", "--release", "17", "-d", str(classes), "-cp", f"{spark_jars_dir()}/*",
                               str(source)], capture_output=True, text=True, check=False)
    assert compiled.returncode == 0, compiled.stderr
    jar = directory / "hmsprobe.jar"
    with zipfile.ZipFile(jar, "w") as archive:
        for path in classes.rglob("*.class"):
            archive.write(path, path.relative_to(classes).as_posix())
    spark.sql(f"ADD JAR '{jar}'")
    return "hmsprobe.RecordingFileSystem"


@pytest.fixture(scope="module")
def probed_table(spark: Any) -> Iterator[str]:
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")
    spark.sql(f"CREATE DATABASE {DB}")
    spark.sql(f"CREATE TABLE {DB}.t (id INT, name STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {DB}.t VALUES (1, 'a'), (2, 'b')")
    yield f"{DB}.t"
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")


@contextlib.contextmanager
def probe_catalog(spark: Any, service: Server, metastore_uri: str, name: str, marker: str, secret: str, record: Path,
                  probe: str) -> Iterator[str]:
    """A catalog of the test metastore whose local files are reached through the recording FileSystem."""
    client = service.client()
    client.create_catalog(name, {
        "type": "hms", "hive.metastore.uris": metastore_uri, "fs.file.impl": probe,
        "fs.file.impl.disable.cache": "true",  # a FileSystem per use, so each records the Configuration it got
        "fs.hmsprobe.marker": marker, "fs.hmsprobe.record": str(record),
        "s3.endpoint": f"http://{marker.lower()}.store.invalid:9000", "s3.access_key": f"AKIA{marker}", "s3.secret_key": secret,
        "storage.vending": "catalog_key"})
    try:
        with registered(spark, service, name):
            yield name
    finally:
        client.drop_catalog(name)
        client.close()


def _recorded(record: Path) -> set[tuple[str, str]]:
    if not record.exists():
        return set()
    lines = record.read_text(encoding="utf-8").splitlines()
    record.unlink()
    return {(marker, secret) for marker, secret in (line.split("\t") for line in lines)}


def test_each_catalogs_tables_are_read_and_written_with_its_own_hadoop_settings(
        spark: Any, connector_service: Server, metastore_uri: str, probe_class: str, probed_table: str,
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = tmp_path / "record.tsv"
    session_conf = spark.sparkContext._jsc.hadoopConfiguration()
    with probe_catalog(spark, connector_service, metastore_uri, "storea", "A", SECRET_A, record, probe_class) as first, \
            probe_catalog(spark, connector_service, metastore_uri, "storeb", "B", SECRET_B, record, probe_class) as second:
        for name, marker, secret in ((first, "A", SECRET_A), (second, "B", SECRET_B)):
            rows = spark.table(f"{name}.{probed_table}").orderBy("id").collect()
            assert [tuple(row) for row in rows] == [(1, "a"), (2, "b")]
            assert _recorded(record) == {(marker, secret)}, name  # its own settings, credentials included; not the other's

        spark.sql(f"INSERT INTO {second}.{probed_table} VALUES (3, 'c')")  # the write's tasks: catalog B's settings
        assert _recorded(record) == {("B", SECRET_B)}
        spark.table(f"{first}.{probed_table}").collect()  # and the next read through A: A's again
        assert _recorded(record) == {("A", SECRET_A)}

        # The session's own Hadoop configuration never got them: a third catalog, or Spark's own tables, are untouched
        assert session_conf.get("fs.hmsprobe.marker") is None and session_conf.get("fs.file.impl") != probe_class
        assert session_conf.get("fs.s3a.secret.key") is None and session_conf.get("fs.s3a.endpoint") != "http://a.store.invalid:9000"
        assert spark.table(probed_table).count() == 3 and _recorded(record) == set()

        # No plan shows a credential: explain in every mode, the executed plan, EXPLAIN as SQL, the session's conf
        frame = spark.table(f"{first}.{probed_table}").where("id > 1")
        for mode in ("extended", "formatted", "cost"):
            frame.explain(mode)
        frame.collect()
        shown = [capsys.readouterr().out, frame._jdf.queryExecution().executedPlan().toString(),
                 spark.sql(f"EXPLAIN EXTENDED SELECT * FROM {first}.{probed_table}").collect()[0][0],
                 str(spark.sparkContext.getConf().getAll()), str(spark.conf.getAll), _sql_tab(spark)]
        assert "hms-catalog storea." in shown[0] and "hms-catalog storea." in shown[-1]
        assert [index for index, text in enumerate(shown) if SECRET_A in text or "AKIAA" in text] == []
        _recorded(record)


def _sql_tab(spark: Any) -> str:
    """What the UI's SQL tab shows of every query run (and the event log records): each plan's description."""
    executions = spark._jsparkSession.sharedState().statusStore().executionsList()
    return "\n".join(executions.apply(i).physicalPlanDescription() for i in range(executions.size()))


@contextlib.contextmanager
def moto_lake() -> Iterator[str]:
    """moto's S3 server on 127.0.0.1 (a real HTTP S3 API) with a bucket ``lake`` holding one Parquet table."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        store = pafs.S3FileSystem(endpoint_override=endpoint, scheme="http", access_key="AKIALAKE", secret_key=SECRET_A,
                                  region="us-east-1", allow_bucket_creation=True)
        store.create_dir("lake")
        pq.write_table(pa.table({"id": [1, 2, 3]}), "lake/sales/orders/part-0.parquet", filesystem=store)
        yield endpoint
    finally:
        server.stop()


def test_a_scheme_without_a_filesystem_in_spark_names_the_jar_to_add(spark: Any, connector_service: Server) -> None:
    """This Spark has no hadoop-aws: a table at ``s3a://`` (a filesystem catalog on a real S3 endpoint, planned by
    the service) is refused when its scan is planned, naming the jar; the error shows no credential."""
    with moto_lake() as endpoint:
        client = connector_service.client()
        client.create_catalog("s3lake", {"type": "filesystem", "root": "s3a://lake/", "s3.endpoint": endpoint,
                                         "s3.access_key": "AKIALAKE", "s3.secret_key": SECRET_A, "use_path_style": "true"})
        try:
            with registered(spark, connector_service, "s3lake") as name:
                assert spark.table(f"{name}.sales.orders").columns == ["id"]  # the service reached the store
                with pytest.raises(Exception) as refused:
                    spark.table(f"{name}.sales.orders").collect()
                message = str(refused.value)
                assert "s3lake.sales.orders is at s3a://lake/" in message
                assert "no Hadoop FileSystem for 's3a://'" in message and "org.apache.hadoop:hadoop-aws" in message
                assert SECRET_A not in message
        finally:
            client.drop_catalog("s3lake")
            client.close()
