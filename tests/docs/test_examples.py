"""The example files the pages include (``docs/examples/``) run, as the pages say, on the real embedded metastore.

The pages show no copy of a command that can run here: they include these files (pymdownx.snippets,
``--8<-- "docs/examples/..."``), and each file is run by a test below, so a change of syntax or API that
breaks an example fails the suite instead of leaving the docs wrong. Where an example names a metastore
or a service, it uses the address a reader would have (``thrift://localhost:9083``, the compose metastore;
``http://127.0.0.1:8181``, ``serve``'s default), which the test replaces with the one it started.

The metastore holds what a reader's would: a database ``sales`` with a partitioned Parquet table
``orders`` (two days, a file each) and ``customers``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.client import HmsClientPool
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.properties import ClientConfig, parse_uris
from hms_catalog.sql.parser import split_statements
from tests.support.forkserver import run_cli
from tests.support.hms import Admin
from tests.support.postgres import PostgresServer
from tests.support.s3 import S3Server
from tests.support.service import served

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EXAMPLES = DOCS / "examples"
EXAMPLE_URI = "thrift://localhost:9083"  # the metastore the examples name; replaced by the test's
EXAMPLE_SERVER = "http://127.0.0.1:8181"  # the service the pages name; replaced by the test's
TIMEOUT = 180

# Every example file, and the test that runs it: a file is added here with its test, or the suite fails.
TESTED = {
    "getting_started.sql": "test_getting_started_sql_runs_statement_by_statement",
    "ddl.sql": "test_ddl_sql_runs_and_leaves_nothing_behind",
    "python_api.py": "test_python_api_py_runs",
    "planning.py": "test_planning_py_runs",
    "service_client.py": "test_service_client_py_and_the_service_page_commands_run",
    "embedded_metastore.py": "test_embedded_metastore_py_starts_and_stops_a_metastore",
    "storage_s3.sql": "test_storage_s3_sql_runs_against_a_real_s3_endpoint",
    "storage_hadoop.sql": "test_storage_hadoop_and_cloud_sql_define_their_catalogs_with_secrets_masked",
    "storage_cloud.sql": "test_storage_hadoop_and_cloud_sql_define_their_catalogs_with_secrets_masked",
    "thrift_pyiceberg.py": "test_thrift_pyiceberg_py_reads_through_the_services_metastore_endpoint",
    "iceberg_rest_pyiceberg.py": "test_iceberg_rest_pyiceberg_py_creates_appends_and_purges_through_the_endpoint",
    "metastore_index.sql": "test_metastore_index_sql_builds_the_index_on_a_serving_postgresql_metastore",
}
EXAMPLE_S3 = "http://127.0.0.1:9000"  # the MinIO the storage examples name; replaced by the test's moto server
INCLUDE = re.compile(r'^\s*-{2,}8<-{2,}\s+"([^"]+)"\s*$', re.M)
FENCE = re.compile(r"^```(python|sql)\n(.*?)^```", re.M | re.S)
# Pages whose Python is not run yet, and why: each needs a SparkSession of its own, which costs a JVM.
NOT_YET_EXAMPLES = {"pyspark.md": "a SparkSession with the hms source", "spark-connector.md": "Spark and the connector's jar",
                    "thrift-endpoint.md": "a SparkSession with Hive support on the service's thrift endpoint",
                    "iceberg-rest.md": "DuckDB with its extensions loaded by path; tests/service/iceberg_rest/test_duckdb.py "
                                       "runs the same statements"}
SERVER_COMMAND = re.compile(r'^\$ hms-catalog --server (\S+) -e "([^"]+)"', re.M)


# The docs and the list above agree -----------------------------------------------------------------


def _includes() -> dict[str, list[str]]:
    """Each page's included files, as written in it."""
    return {page.name: INCLUDE.findall(page.read_text(encoding="utf-8")) for page in sorted(DOCS.glob("*.md"))}


def test_every_include_names_an_example_that_a_test_runs() -> None:
    included = {target for targets in _includes().values() for target in targets}
    assert included, "no page includes an example: the INCLUDE pattern no longer matches the pages"
    for target in included:
        path = ROOT / target
        assert path.is_file(), f"a page includes {target}, which does not exist"
        assert path.parent == EXAMPLES, f"a page includes {target}: only files of docs/examples/ are run by a test"
        assert path.name in TESTED, f"{target} is included by a page but run by no test: add it to TESTED"


def test_every_example_is_included_and_run() -> None:
    on_disk = {path.name for path in EXAMPLES.iterdir() if path.is_file()}
    assert on_disk == set(TESTED), "docs/examples/ and TESTED differ"
    included = {Path(target).name for targets in _includes().values() for target in targets}
    assert included == set(TESTED), f"examples no page includes: {sorted(set(TESTED) - included)}"
    for test in TESTED.values():
        assert callable(globals().get(test)), f"TESTED names {test}, which is not a test of this module"


def test_the_python_and_sql_the_pages_show_are_included_examples() -> None:
    """A block of Python or SQL written into a page is a copy no test runs: make it an example instead."""
    for page in sorted(DOCS.glob("*.md")):
        if page.name in NOT_YET_EXAMPLES:
            continue
        for language, body in FENCE.findall(page.read_text(encoding="utf-8")):
            assert INCLUDE.fullmatch(body.strip()), f"{page.name} shows {language} of its own:\n{body}"


# Running them ---------------------------------------------------------------------------------------


def _example(name: str, into: Path, **replace: str) -> Path:
    """``docs/examples/name`` copied into ``into`` with the addresses replaced (``old=new``, each must occur)."""
    text = (EXAMPLES / name).read_text(encoding="utf-8")
    for old, new in replace.items():
        assert old in text, f"{name} does not name {old}"
        text = text.replace(old, new)
    copy = into / name
    copy.write_text(text, encoding="utf-8")
    return copy


def _env(home: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "HMS_CATALOG_HOME": str(home), "PYTHONUNBUFFERED": "1", **extra}


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(args, timeout=TIMEOUT, env=_env(home))


def _run_sql(home: Path, script: Path) -> dict[str, dict[str, Any]]:
    """``hms-catalog --format json -f script``: every statement answered, none failed; answers by statement."""
    run = _cli(home, "--format", "json", "-f", str(script))
    assert run.returncode == 0, f"{script.name} failed:\n{run.stdout}\n{run.stderr}"
    answers = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    statements = split_statements(script.read_text(encoding="utf-8"))
    assert len(answers) == len(statements), f"{len(statements)} statements, {len(answers)} answers:\n{run.stdout}"
    failed = [answer for answer in answers if "error" in answer]
    assert not failed, failed
    return {_first_line(answer["statement"]): answer for answer in answers}


def _first_line(statement: str) -> str:
    return statement.strip().splitlines()[0].rstrip(";")


def _run_python(example: Path, home: Path, **env: str) -> str:
    run = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=TIMEOUT,
                         env=_env(home, **env), cwd=home.parent, check=False)
    assert run.returncode == 0, f"{example.name} exited with {run.returncode}:\n{run.stdout}\n{run.stderr}"
    assert "Traceback" not in run.stderr, run.stderr
    return run.stdout


@pytest.fixture(scope="module")
def sales(admin: Admin) -> Iterator[str]:
    """The reader's metastore: ``sales.orders`` (Parquet, partitioned by ``dt``, a file a day) and ``sales.customers``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    location = admin.create_database("sales")
    try:
        admin.create_table("sales", "orders", [("order_id", "bigint"), ("customer_id", "bigint"), ("amount", "decimal(10,2)")],
                           partition_keys=[("dt", "date")])
        admin.create_table("sales", "customers", [("id", "bigint"), ("name", "string")])
        for day, amount in (("2026-11-01", "42.10"), ("2026-11-02", "7.25")):
            folder = location / "orders" / f"dt={day}"
            admin.add_partition("sales", "orders", [day], folder)
            rows = pa.table({"order_id": pa.array([1], pa.int64()), "customer_id": pa.array([1], pa.int64()),
                             "amount": pa.array([Decimal(amount)], pa.decimal128(10, 2))})
            pq.write_table(rows, folder / "part-00000.parquet")
        yield "sales"
    finally:
        admin.drop_database("sales")


@pytest.fixture(scope="module")
def prod_home(tmp_path_factory: pytest.TempPathFactory, metastore_uri: str, sales: str) -> Path:
    """A home whose catalog ``prod`` is the test metastore, made by getting_started.sql's own CREATE CATALOG."""
    home = tmp_path_factory.mktemp("prod") / "home"
    home.mkdir()
    script = _example("getting_started.sql", home.parent, **{EXAMPLE_URI: metastore_uri})
    create = split_statements(script.read_text(encoding="utf-8"))[0].text
    assert create.lstrip().startswith("CREATE CATALOG prod"), create
    made = _cli(home, "-e", create)
    assert made.returncode == 0, made.stderr
    return home


def test_getting_started_sql_runs_statement_by_statement(home: Path, tmp_path: Path, metastore_uri: str, sales: str) -> None:
    answers = _run_sql(home, _example("getting_started.sql", tmp_path, **{EXAMPLE_URI: metastore_uri}))
    assert answers["SHOW CATALOGS"]["rows"][0][:3] == ["prod", "hms", "production HMS"]
    assert ["sales"] in answers["SHOW DATABASES FROM prod"]["rows"]
    assert answers["SHOW TABLES FROM prod.sales"]["rows"] == [["customers"], ["orders"]]
    described = answers["DESCRIBE prod.sales.orders"]
    assert [row[:2] for row in described["rows"]] == [
        ["order_id", "bigint"], ["customer_id", "bigint"], ["amount", "decimal(10,2)"], ["dt", "date"]]
    explained = dict(answers["EXPLAIN SPLITS FROM prod.sales.orders WHERE dt >= DATE '2026-11-02'"]["rows"])
    assert (explained["partitions_scanned"], explained["files"], explained["splits"]) == (1, 1, 1), explained
    changes = answers["SHOW CHANGES FROM prod"]["rows"]
    assert [row[1:] for row in changes] == [["invalidated", "table sales.orders", "refresh"]], changes


def test_ddl_sql_runs_and_leaves_nothing_behind(prod_home: Path, admin: Admin) -> None:
    answers = _run_sql(prod_home, EXAMPLES / "ddl.sql")
    assert answers["SHOW PARTITIONS prod.scratch.events WHERE hour > 0"]["rows"] == [["dt=2026-11-01/hour=1"]]
    created = answers["SHOW CREATE TABLE prod.scratch.events"]["rows"][0][0]
    assert "  source string\n)\nPARTITIONED BY" in created, created  # the column added CASCADE
    assert "scratch" not in admin.pool.call("get_all_databases")


def test_python_api_py_runs(prod_home: Path) -> None:
    shown = _run_python(EXAMPLES / "python_api.py", prod_home)
    assert "('Field', 'Type', 'Nullable', 'PartitionKey', 'Comment')" in shown
    assert "{'Field': 'order_id', 'Type': 'bigint'" in shown
    assert "['customers', 'orders']" in shown
    assert shown.rstrip().endswith("{'get_table_req': 1}"), shown


def test_planning_py_runs(prod_home: Path) -> None:
    shown = _run_python(EXAMPLES / "planning.py", prod_home)
    assert shown.rstrip().endswith("True"), shown


def test_service_client_py_and_the_service_page_commands_run(prod_home: Path) -> None:
    commands = SERVER_COMMAND.findall((DOCS / "service.md").read_text(encoding="utf-8"))
    assert len(commands) >= 2, "service.md shows no `hms-catalog --server URL -e ...` command"
    with served(prod_home) as server:
        shown = _run_python(EXAMPLES / "service_client.py", prod_home,
                            HMS_CATALOG_SERVER=server.url, HMS_CATALOG_TOKEN=server.token)
        assert "['customers', 'orders']" in shown, shown
        for url, statement in commands:
            assert url == EXAMPLE_SERVER, url
            run = _cli(prod_home, "--server", server.url, "-e", statement)
            assert run.returncode == 0, f"{statement}:\n{run.stdout}\n{run.stderr}"
            assert "rows in set" in run.stdout or "row in set" in run.stdout, run.stdout


def test_thrift_pyiceberg_py_reads_through_the_services_metastore_endpoint(prod_home: Path) -> None:
    """The thrift endpoint page's pyiceberg example, on ``serve --thrift-port`` with prod as the primary."""
    with served(prod_home, "--thrift-port", "0", "--thrift-primary", "prod") as server:
        health = server.request("GET", "/v1/health", token=None)
        assert health.status == 200, health
        endpoint = health.json()["thrift"]["uri"]
        example = _example("thrift_pyiceberg.py", prod_home.parent, **{EXAMPLE_URI: endpoint})
        shown = _run_python(example, prod_home).splitlines()
    assert "('sales',)" in shown[0], shown  # prod is the primary: its databases keep their names
    assert shown[1].rstrip("/").endswith("sales.db"), shown
    assert shown[2] == "[]", shown  # pyiceberg lists Iceberg tables only


def test_iceberg_rest_pyiceberg_py_creates_appends_and_purges_through_the_endpoint(prod_home: Path, admin: Admin) -> None:
    """The Iceberg REST page's pyiceberg example, on ``serve`` with prod as the warehouse."""
    with served(prod_home) as server:
        example = _example("iceberg_rest_pyiceberg.py", prod_home.parent, **{EXAMPLE_SERVER: server.url})
        shown = _run_python(example, prod_home, HMS_CATALOG_TOKEN=server.token).splitlines()
    assert shown == ["[('lake', 'events')]", "2"], shown
    assert "lake" not in admin.pool.call("get_all_databases")  # dropped again, with the table's files


def test_embedded_metastore_py_starts_and_stops_a_metastore(tmp_path: Path) -> None:
    example = _example("embedded_metastore.py", tmp_path, **{'"/tmp/hms"': repr(str(tmp_path / "hms"))})
    shown = _run_python(example, tmp_path)
    assert re.fullmatch(r"thrift://127\.0\.0\.1:\d+\n", shown), shown


def test_metastore_index_sql_builds_the_index_on_a_serving_postgresql_metastore(postgres: PostgresServer,
                                                                               tmp_path: Path) -> None:
    """A metastore on PostgreSQL without the key values' index (as a production one made by Hive's schematool is):
    the page's statement, run with psql while the metastore serves, builds it valid, and filters still answer."""
    with postgres.scratch_database() as database:
        metastore = EmbeddedMetastore(tmp_path / "ms", events=False,
                                      database=f"postgresql://{postgres.user}:{postgres.password}@{postgres.host}:"
                                               f"{postgres.port}/{database}")
        try:
            uri = metastore.start()
            postgres.psql(f'\\c {database}\nDROP INDEX "PARTITION_KEY_VALS_BY_VALUE";\n')
            valid_sql = (f"\\c {database}\nSELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                         "WHERE c.relname = 'PARTITION_KEY_VALS_BY_VALUE';\n")
            assert postgres.psql(valid_sql).split() == []
            pool = HmsClientPool(ClientConfig(uris=parse_uris(uri), pool_size=1, socket_timeout=120))
            try:
                admin = Admin(pool, metastore.warehouse)
                admin.create_database("idx")
                table = admin.create_table("idx", "t", [("x", "int")], partition_keys=[("region", "string"), ("day", "string")])
                admin.add_partitions(table, [(region, day) for region in ("r1", "r2") for day in ("d1", "d2")])
                postgres.psql(f"\\c {database}\n" + (EXAMPLES / "metastore_index.sql").read_text(encoding="utf-8"))
                valid = postgres.psql(valid_sql)
                assert valid.split() == ["t"], valid
                found = pool.call("get_partitions_by_filter", "idx", "t", 'region >= "r2" and day < "d2"', -1)
                assert [tuple(p.values) for p in found] == [("r2", "d1")]
            finally:
                pool.close()
        finally:
            metastore.stop()


# Storage: the pages' CREATE CATALOG examples --------------------------------------------------------


@pytest.fixture
def s3_lake(s3_server: S3Server) -> S3Server:
    """The session's S3 server (moto's, signatures checked) holding what storage_s3.sql reads:
    ``s3://lake/raw/web/clicks``, a Parquet folder partitioned by ``dt`` (two days, a file each)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    bucket = s3_server.bucket("lake")
    for day, clicks in (("2026-11-01", [1, 2]), ("2026-11-02", [3])):
        pq.write_table(pa.table({"click_id": pa.array(clicks, pa.int64())}),
                       f"{bucket}/raw/web/clicks/dt={day}/part-00000.parquet", filesystem=s3_server.filesystem())
    return s3_server


def test_storage_s3_sql_runs_against_a_real_s3_endpoint(home: Path, tmp_path: Path, metastore_uri: str,
                                                        s3_lake: S3Server) -> None:
    # the example's MinIO and keys become the test server's (which checks signatures: the keys must reach it)
    script = _example("storage_s3.sql", tmp_path, **{EXAMPLE_URI: metastore_uri, EXAMPLE_S3: s3_lake.endpoint,
                                                     "'minio-secret'": f"'{s3_lake.secret_key}'",
                                                     "'minio'": f"'{s3_lake.access_key}'"})
    s3_endpoint = s3_lake.endpoint
    answers = _run_sql(home, script)
    assert answers["SHOW DATABASES FROM raw"]["rows"] == [["web"]]
    assert answers["SHOW TABLES FROM raw.web"]["rows"] == [["clicks"]]
    assert [row[:2] for row in answers["DESCRIBE raw.web.clicks"]["rows"]] == [["click_id", "bigint"], ["dt", "date"]]
    explained = dict(answers["EXPLAIN SPLITS FROM raw.web.clicks WHERE dt = DATE '2026-11-02'"]["rows"])
    assert (explained["partitions_scanned"], explained["files"], explained["splits"]) == (1, 1, 1), explained
    shown = answers["SHOW CREATE CATALOG lake"]["rows"][0][1]
    assert "'s3.secret_key' = '******'" in shown and f"'s3.endpoint' = '{s3_endpoint}'" in shown, shown
    assert s3_lake.secret_key not in json.dumps(answers), "a secret key was shown"


def test_storage_hadoop_and_cloud_sql_define_their_catalogs_with_secrets_masked(home: Path, tmp_path: Path,
                                                                                metastore_uri: str) -> None:
    from hms_catalog.properties import CatalogConfig
    from hms_catalog.state import open_definitions

    answers = {**_run_sql(home, _example("storage_hadoop.sql", tmp_path, **{EXAMPLE_URI: metastore_uri})),
               **_run_sql(home, _example("storage_cloud.sql", tmp_path, **{EXAMPLE_URI: metastore_uri}))}
    for secret in ("base64-account-key", "service-principal-password", "oss-secret-key", "cos-secret-key", "obs-secret-key"):
        assert secret not in json.dumps(answers), f"{secret} was shown"
    ha = answers["SHOW CREATE CATALOG hdfs_ha"]["rows"][0][1]
    assert "'dfs.ha.namenodes.your-nameservice' = 'nn1,nn2'" in ha and "'hadoop.kerberos.keytab'" in ha, ha
    store = open_definitions(home)
    storage = {name: CatalogConfig.from_properties(store.find(name).properties).storage  # type: ignore[union-attr]
               for name in ("hdfs_ha", "federated", "adls", "oss", "cos", "obs")}
    assert storage["hdfs_ha"].hadoop.nameservices == ("your-nameservice",)  # type: ignore[union-attr]
    assert storage["federated"].hadoop.conf["fs.viewfs.mounttable.cluster.link./logs"] == "hdfs://ns2/logs"  # type: ignore[union-attr]
    assert storage["adls"].azure.key_of("mylake") == "base64-account-key"  # type: ignore[union-attr]
    for scheme, host in (("oss", "oss-cn-hangzhou.aliyuncs.com"), ("cosn", "cos.ap-guangzhou.myqcloud.com"),
                         ("obs", "obs.cn-north-4.myhuaweicloud.com")):
        assert storage[scheme.rstrip("n")].s3_for(scheme).endpoint_host == host  # type: ignore[union-attr]
