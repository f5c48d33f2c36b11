"""A store that accepts connections and never answers: each statement that reaches it (a plan, a DDL location
check, MSCK REPAIR) fails with an error naming the catalog, the endpoint, what was being done and the timeout,
within the catalog's request timeout plus a margin, however many attempts the engine makes; and the same
settings still serve a store that answers.

The margin, ``MARGIN_S``: what a statement spends before it reaches the store (its metastore calls), the
engine's one-second tick at which it looks for silence, and a loaded machine's scheduling; the attempts,
their back-off and the connection are kept within the timeout itself (:mod:`hms_catalog.storage.timeouts`).
Before, each attempt had the whole timeout (and the ten-second connect timeout) to itself: seven to ten
seconds for a timeout of two, over thirty through TLS, and three minutes with the default.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hms_catalog import open_session
from hms_catalog.errors import HmsCatalogError
from hms_catalog.execution import Session
from tests.support.s3 import Warehouse, create_catalog_statement

TIMEOUT_S = 2
MARGIN_S = 2.0
BOUND_S = TIMEOUT_S + MARGIN_S


@pytest.fixture(params=["http", "https"])
def silent_endpoint(request: pytest.FixtureRequest, silent_uri: str) -> str:
    """A socket that accepts and never answers a byte, as a plain endpoint (the request goes unanswered) and
    as a TLS one (the handshake goes unanswered: the engine is still connecting)."""
    return silent_uri.replace("thrift://", f"{request.param}://")


def _statements(warehouse: Warehouse, catalog: str, name: str) -> dict[str, str]:
    table = f"{catalog}.{warehouse.database}"
    return {
        "show splits": f"SHOW SPLITS FROM {table}.sales",
        "explain splits": f"EXPLAIN SPLITS FROM {table}.sales WHERE region <> 'north'",
        "create table": f"CREATE EXTERNAL TABLE {table}.{name} (id BIGINT) PARTITIONED BY (dt STRING) "
                        f"STORED AS PARQUET LOCATION '{warehouse.root}/{name}'",
        "add partition": f"ALTER TABLE {table}.sales ADD PARTITION (region='{name}') "
                         f"LOCATION '{warehouse.root}/sales/region={name}'",
        "msck repair": f"MSCK REPAIR TABLE {table}.sales",
    }


@pytest.fixture
def silent_session(s3_warehouse: Warehouse, home: Path, silent_endpoint: str) -> Iterator[Session]:
    """A session whose catalog ``silent`` is the warehouse's metastore with its store at the silent endpoint,
    the request timeout set short and the connection timeout left at its default (ten seconds)."""
    session = open_session(home)
    session.run_one(create_catalog_statement("silent", s3_warehouse.catalog_properties(
        **{"s3.endpoint": silent_endpoint, "s3.request.timeout": str(TIMEOUT_S * 1000)})))
    yield session
    session.manager.close()


@pytest.mark.parametrize("statement", ["show splits", "explain splits", "create table", "add partition", "msck repair"])
def test_a_silent_store_fails_each_statement_within_the_request_timeout(
        silent_session: Session, s3_warehouse: Warehouse, silent_endpoint: str, unique_name: str, statement: str) -> None:
    text = _statements(s3_warehouse, "silent", unique_name)[statement]
    started = time.monotonic()
    with pytest.raises(HmsCatalogError) as caught:
        silent_session.run_one(text)
    took = time.monotonic() - started
    message = str(caught.value)
    assert took < BOUND_S, (took, message)
    endpoint = silent_endpoint.split("://", 1)[1]
    assert "catalog 'silent'" in message and endpoint in message, message
    assert f"within {TIMEOUT_S} s" in message and "'s3.request.timeout'" in message, message
    assert s3_warehouse.root in message, message
    assert s3_warehouse.server.secret_key not in message


def test_the_same_timeout_serves_a_store_that_answers(s3_warehouse: Warehouse, home: Path, unique_name: str) -> None:
    """The statements above, against moto's store with the same short timeout, do their work."""
    session = open_session(home)
    try:
        session.run_one(create_catalog_statement("answering", s3_warehouse.catalog_properties(
            **{"s3.request.timeout": str(TIMEOUT_S * 1000)})))
        statements = _statements(s3_warehouse, "answering", unique_name)
        assert len(session.run_one(statements["show splits"]).rows) == 3  # one file per region
        assert dict(session.run_one(statements["explain splits"]).rows)["files"] == 2
        session.run_one(statements["create table"])
        table = f"answering.{s3_warehouse.database}.{unique_name}"
        try:
            session.run_one(f"ALTER TABLE {table} ADD PARTITION (dt='one') LOCATION '{s3_warehouse.root}/{unique_name}/dt=one'")
            session.run_one(f"MSCK REPAIR TABLE {table}")
            assert [row[0] for row in session.run_one(f"SHOW PARTITIONS {table}").rows] == ["dt=one"]
        finally:
            session.run_one(f"DROP TABLE {table}")
        session.run_one(statements["msck repair"])
        assert len(session.run_one(f"SHOW PARTITIONS answering.{s3_warehouse.database}.sales").rows) == 3
    finally:
        session.manager.close()
