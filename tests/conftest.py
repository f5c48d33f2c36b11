"""Session-wide fixtures: one real embedded metastore for the whole run, and helpers to fill it.

Tables are made through the metastore's thrift API, which is how Spark, pyiceberg and Hudi's hive sync
register theirs; the tests that need data files write them with real writers.
"""

from __future__ import annotations

import itertools
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hms_catalog import open_session
from hms_catalog.client import HmsClientPool, MetastoreClient
from hms_catalog.demo.loopback import keep_spark_on_loopback, on_loopback
from hms_catalog.execution import Session
from hms_catalog.jdk import java_cache_dir
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.metastore.embedded import JAVA_OPTIONS_ENV
from hms_catalog.properties import ClientConfig, parse_uris
from tests.support import class_archive, hms
from tests.support.postgres import PostgresServer
from tests.support.postgres import available as postgres_available
from tests.support.s3 import S3Server, Warehouse, create_catalog_statement, write_warehouse
from tests.support.sessions import open_catalog
from tests.support.workers import in_worker_order, make_scheduler

_names = itertools.count(1)
TESTS = Path(__file__).parent

# Every Spark JVM the tests start (the session fixture, spark-submit children, local-cluster workers, Spark
# Connect servers) binds 127.0.0.1, never the machine's other addresses (hms_catalog.demo.loopback).
keep_spark_on_loopback()

# Every Spark driver JVM the tests start (through spark-submit: the session fixture, spark-submit children, the
# Spark Hive workers, killed drivers, Spark Connect servers) and every embedded metastore compiles with C1 only.
# They live seconds to minutes and run small statements, so C2's compiler threads cost more CPU than they win
# back: a Spark session's start and first job took 33 CPU-s, 19 with C1; 25 rounds of DDL, inserts and reads in
# one session 99, 57; a metastore's start and 300 calls 26, 15. What the JVMs compute is the same.
QUICK_JVM = "-XX:TieredStopAtLevel=1"
for _variable in ("SPARK_SUBMIT_OPTS", JAVA_OPTIONS_ENV):
    os.environ.setdefault(_variable, QUICK_JVM)

# Every Spark driver started once the class archive exists maps its classes from it (tests.support.class_archive);
# the archive is dumped in the background the first time a session that uses Java starts, and named to the drivers
# from the test after it is done. HMS_CATALOG_CLASS_ARCHIVE=0 starts them without (to compare, or to rule it out).
_DRIVER_OPTIONS = class_archive.without_archive(os.environ["SPARK_SUBMIT_OPTS"])
_CLASS_ARCHIVE = (class_archive.archive_path(java_cache_dir() / "class-archives")
                  if os.environ.get("HMS_CATALOG_CLASS_ARCHIVE", "1") != "0" else None)
_ARCHIVE_DUMPS: list[subprocess.Popen[bytes]] = []


def _name_the_archive_if_dumped() -> None:
    os.environ["SPARK_SUBMIT_OPTS"] = class_archive.driver_options(_DRIVER_OPTIONS, _CLASS_ARCHIVE)


_name_the_archive_if_dumped()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the archive's dump when the tests to run use Java (``-m "not metastore"`` starts none)."""
    if (_CLASS_ARCHIVE is None or _CLASS_ARCHIVE.is_file() or session.config.option.collectonly
            or not any(item.get_closest_marker("metastore") for item in session.items)):
        return
    dump = class_archive.start_dump(_CLASS_ARCHIVE, _DRIVER_OPTIONS)
    if dump is not None:
        _ARCHIVE_DUMPS.append(dump)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Once the archive is in place (this session's dump or another worker's), the drivers started from the
    next test on use it; a dump of this session's that has ended is reaped here, between tests."""
    if _ARCHIVE_DUMPS and _ARCHIVE_DUMPS[0].poll() is not None:
        _ARCHIVE_DUMPS.clear()
    if _CLASS_ARCHIVE is not None and "SharedArchiveFile" not in os.environ["SPARK_SUBMIT_OPTS"]:
        _name_the_archive_if_dumped()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that reaches the embedded metastore, however indirectly (through ``session``,
    ``admin``, ``spark``, ...), so ``pytest -m "not metastore"`` runs the pure tests without Java, and every test that
    uses the session's SparkSession slow (``make test-fast`` runs none of them). In a worker of
    ``make test``, put the groups handed out whole in the order they go (:mod:`tests.support.workers`)."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "metastore" in fixtures:
            item.add_marker(pytest.mark.metastore)
        if "spark" in fixtures:  # the session's SparkSession: Spark's tests are half the suite's time
            item.add_marker(pytest.mark.slow)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        files = [_under_tests(Path(str(item.path))) for item in items]
        items[:] = [items[index] for index in in_worker_order(files)]


def _under_tests(path: Path) -> str:
    """A test file's path under ``tests/`` (a file elsewhere, named on the command line, keeps its own)."""
    return path.relative_to(TESTS).as_posix() if path.is_relative_to(TESTS) else path.as_posix()


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    return make_scheduler(config, log)


@pytest.fixture(scope="session")
def metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedMetastore]:
    """The embedded metastore, started once per test session; it accepts ``s3a://`` locations through its
    stub filesystem (the S3 tests' tables live on :func:`s3_server`)."""
    with EmbeddedMetastore(tmp_path_factory.mktemp("metastore"), audit=True, object_store_stub=True) as server:
        yield server


@pytest.fixture(scope="session")
def metastore_uri(metastore: EmbeddedMetastore) -> str:
    return metastore.uri


@pytest.fixture(scope="session")
def admin(metastore: EmbeddedMetastore) -> Iterator[hms.Admin]:
    """A thrift client for arranging test data, apart from the pools under test."""
    pool = HmsClientPool(ClientConfig(uris=parse_uris(metastore.uri), pool_size=2))
    yield hms.Admin(pool, metastore.warehouse)
    pool.close()


@pytest.fixture(scope="session")
def spark(metastore: EmbeddedMetastore, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One SparkSession with Hive support on the embedded metastore and the native connector's jar, for the
    whole test session."""
    from pyspark.sql import SparkSession

    from planner.spark import register
    from spark_connector import connector_jar

    os.environ["PYSPARK_PYTHON"] = sys.executable  # Python workers run this interpreter, with this venv
    scratch = tmp_path_factory.mktemp("spark")
    session = (
        on_loopback(SparkSession.builder.master("local[2]"))
        .appName("hms-catalog-tests")
        .config("spark.sql.catalogImplementation", "hive")
        .config("spark.hadoop.hive.metastore.uris", metastore.uri)
        .config("spark.sql.warehouse.dir", metastore.warehouse.as_uri())
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        # One driver serves the whole suite's Spark tests; with Spark's default 1g its heap ran out once, half-way
        # (a fresh-clone run: OutOfMemoryError in the thread serving a collect's rows to Python).
        .config("spark.driver.memory", "2g")
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={scratch}")
        .config("spark.local.dir", str(scratch))
        .config("spark.pyspark.python", sys.executable)
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .config("spark.jars", str(connector_jar()))  # the native connector's catalogs, added per test with spark.conf
        .config("spark.sql.extensions", "hmscatalog.spark.HmsSessionExtensions")  # Spark's meaning where DSv2 differs
        .enableHiveSupport()
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def iceberg_catalog(metastore: EmbeddedMetastore) -> Any:
    """pyiceberg's HiveCatalog on the embedded metastore (Hive 2.3 needs hive2-compatible)."""
    from pyiceberg.catalog.hive import HiveCatalog

    return HiveCatalog(
        "tests", uri=metastore.uri, warehouse=metastore.warehouse.as_uri(), **{"hive.hive2-compatible": "true"}
    )


@pytest.fixture
def unique_name() -> str:
    """A database or catalog name no other test uses."""
    return f"t{os.getpid()}_{next(_names)}"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty hms-catalog home for catalog definitions."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def session(home: Path, metastore_uri: str) -> Iterator[Session]:
    """A session whose catalog ``hive`` is the embedded metastore."""
    opened = open_catalog(home, metastore_uri)
    yield opened
    opened.manager.close()


@pytest.fixture
def client(metastore_uri: str) -> Iterator[MetastoreClient]:
    pool = HmsClientPool(ClientConfig(uris=parse_uris(metastore_uri), pool_size=4))
    yield MetastoreClient(pool)
    pool.close()


@pytest.fixture
def refused_uri() -> str:
    """A local port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"thrift://127.0.0.1:{port}"


@pytest.fixture
def silent_uri() -> Iterator[str]:
    """A hung metastore: a server that accepts connections and never answers a byte."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.1)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
                held.append(connection)
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"thrift://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join(timeout=2)
    for connection in held:
        connection.close()
    server.close()


@pytest.fixture(scope="session")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    """A real PostgreSQL server, started once per test session; ``url`` has no password, pass ``password``.

    Skipped where PostgreSQL is not installed, unless ``HMS_CATALOG_REQUIRE_POSTGRES=1`` (``.ci/run`` sets it
    after installing it) makes that a failure.
    """
    ok, reason = postgres_available()
    if not ok:
        if os.environ.get("HMS_CATALOG_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"the PostgreSQL tests are required here and cannot run: {reason}", pytrace=False)
        pytest.skip(reason)
    with PostgresServer(tmp_path_factory.mktemp("postgres")) as server:
        yield server


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """moto's S3 server on 127.0.0.1 (a real HTTP S3 API, path style, signatures checked), one per test
    session: ``endpoint``, ``access_key``/``secret_key``, ``client`` (boto3), ``bucket(name)``,
    ``catalog_properties()``. Skipped only where moto is not installed, and never in CI (``CI=true`` or
    ``HMS_CATALOG_REQUIRE_S3=1``, which ``.ci/run`` sets)."""
    try:
        import moto.server  # noqa: F401
    except ImportError as error:
        if os.environ.get("CI") == "true" or os.environ.get("HMS_CATALOG_REQUIRE_S3") == "1":
            pytest.fail(f"the S3 tests need moto's server in CI: {error}", pytrace=False)
        pytest.skip(f"moto's server is not installed (pip install 'moto[server]'): {error}")
    server = S3Server.start(tmp_path_factory.mktemp("s3"))  # a server that will not start fails the tests
    yield server
    server.stop()


@pytest.fixture(scope="session")
def s3_warehouse(s3_server: S3Server, metastore: EmbeddedMetastore, tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    """A warehouse on :func:`s3_server` written with pyarrow and pyiceberg and registered in the session's
    metastore at ``s3a://`` locations (see tests.support.s3.Warehouse)."""
    return write_warehouse(s3_server, tmp_path_factory.mktemp("s3home"), metastore.uri)


@pytest.fixture
def s3_session(s3_warehouse: Warehouse, home: Path) -> Iterator[Session]:
    """A session whose catalog ``hive`` is the warehouse's metastore with the S3 endpoint's properties."""
    session = open_session(home)
    session.run_one(create_catalog_statement("hive", s3_warehouse.catalog_properties()))
    yield session
    session.manager.close()
