"""``serve --cache-memory``: a service whose budget is far below what its catalog's tables need keeps its caches
under it, says so in ``/metrics`` and SHOW CACHE, and answers what the metastore holds for what it evicted."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from hms_catalog.client.hive_thrift import ttypes
from tests.service.conftest import hms_properties, metric
from tests.support.forkserver import run_cli
from tests.support.hms import Admin
from tests.support.service import served

pytestmark = pytest.mark.metastore

BUDGET = 48 * 1024  # a few tables' worth
TABLES = 40
COLUMNS = [("id", "int"), ("name", "string"), ("amount", "decimal(10,2)")]


def gauge(text: str, name: str) -> float:
    """The value of an unlabelled series of Prometheus ``text``."""
    values = [float(line.split()[1]) for line in text.splitlines() if line.split(" ", 1)[0] == name]
    assert len(values) == 1, f"{name} is not one unlabelled series of:\n{text}"
    return values[0]


@pytest.fixture(scope="module")
def database(admin: Admin) -> Iterator[str]:
    name = f"cachemem{os.getpid()}"
    admin.create_database(name)
    for number in range(TABLES):
        admin.create_table(name, f"t{number:02d}", COLUMNS)
    yield name
    admin.drop_database(name)


def add_column(admin: Admin, database: str, table: str, column: str) -> None:
    """Change a table behind the service's back (no events followed): only a reload can show it."""
    changed = admin.pool.call("get_table", database, table)
    changed.sd.cols.append(ttypes.FieldSchema(column, "string", ""))
    admin.pool.call("alter_table", database, table, changed)


def test_a_budget_below_the_catalogs_needs_holds_and_evicted_tables_are_loaded_as_they_are_now(
        tmp_path: Path, metastore_uri: str, admin: Admin, database: str) -> None:
    with served(tmp_path / "home", "--cache-memory", "48KiB") as server:
        client = server.client()
        try:
            client.create_catalog("hive", hms_properties(metastore_uri))
            for number in range(TABLES):
                view = client.table("hive", database, f"t{number:02d}")
                assert [column["name"] for column in view["columns"]] == [name for name, _ in COLUMNS]
                assert gauge(server.metrics(), "hms_catalog_cache_memory_bytes") <= BUDGET
            text = server.metrics()
            assert gauge(text, "hms_catalog_cache_memory_limit_bytes") == BUDGET
            held = metric(text, "hms_catalog_cache_bytes", catalog="hive")
            assert 0 < held == gauge(text, "hms_catalog_cache_memory_bytes") <= BUDGET
            evicted = metric(text, "hms_catalog_cache_memory_evictions_total", catalog="hive", cache="schema")
            assert evicted > 0 and metric(text, "hms_catalog_cache_evictions_total", catalog="hive", cache="schema") >= evicted
            entries = metric(text, "hms_catalog_cache_entries", catalog="hive", cache="schema")
            assert 0 < entries < TABLES and entries + evicted == TABLES

            listed = client.schema_cache("hive")
            cached = {dict(zip(listed["columns"], row))["Table"] for row in listed["rows"]}
            first, last = "t00", f"t{TABLES - 1:02d}"
            assert first not in cached and last in cached  # the least recently used went first
            for table in (first, last):
                add_column(admin, database, table, "late")
            # Evicted: loaded again, as the metastore holds it now. Still cached: served as it was loaded (without
            # events, a change behind the service shows when the entry expires, is refreshed, or is evicted).
            assert [column["name"] for column in client.table("hive", database, first)["columns"]][-1] == "late"
            assert [column["name"] for column in client.table("hive", database, last)["columns"]][-1] == "amount"

            shown = client.cache("hive")
            rows = {row[0]: dict(zip(shown["columns"], row)) for row in shown["rows"]}
            assert rows["schema"]["MemoryEvictions"] == evicted + 1  # the reload of t00 made room for itself
            assert 0 < rows["schema"]["Bytes"] <= BUDGET
            assert sum(row["Bytes"] for row in rows.values()) <= BUDGET
            assert "of a budget of 48.0 KiB" in shown["message"]
            assert gauge(server.metrics(), "hms_catalog_cache_memory_bytes") <= BUDGET
        finally:
            client.close()
    assert "cache memory 48.0 KiB" in server.stderr()


def test_a_cache_memory_that_cannot_be_read_stops_the_start_naming_it(home: Path) -> None:
    ran = run_cli(["--home", str(home), "serve", "--port", "0", "--cache-memory", "lots"], timeout=60)
    assert ran.returncode == 2 and "--cache-memory" in ran.stderr and "'lots'" in ran.stderr, ran.stderr  # a bad argument
    ran = run_cli(["--home", str(home), "serve", "--port", "0"], env={**os.environ, "HMS_CATALOG_CACHE_MEMORY": "2XB"},
                  timeout=60)
    assert ran.returncode == 1 and "$HMS_CATALOG_CACHE_MEMORY" in ran.stderr and "'2XB'" in ran.stderr, ran.stderr
    assert "Traceback" not in ran.stderr
