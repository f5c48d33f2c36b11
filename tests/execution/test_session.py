"""Statements run through a session against the real embedded metastore."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hms_catalog import open_session
from hms_catalog.errors import AlreadyExistsError, ConfigurationError, NotFoundError
from hms_catalog.execution import Session
from hms_catalog.sql import ast, parse_statement
from tests.support.hms import Admin


@pytest.fixture
def session(home: Path, metastore_uri: str) -> Iterator[Session]:
    session = open_session(home)
    session.run_one(f"CREATE CATALOG hive COMMENT 'test' PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore_uri}')")
    yield session
    session.manager.close()


@pytest.fixture
def sales(admin: Admin, unique_name: str) -> Iterator[str]:
    admin.create_database(unique_name)
    admin.create_table(
        unique_name, "orders",
        [("id", "bigint"), ("amount", "decimal(10,2)"), ("items", "array<struct<sku:string,qty:int>>")],
        partition_keys=[("dt", "string"), ("region", "string")],
        comments={"amount": "in euro"},
    )
    admin.create_table(unique_name, "customers", [("id", "bigint"), ("name", "string")])
    admin.create_table(unique_name, "order_lines", [("id", "bigint")])
    yield unique_name
    admin.drop_database(unique_name)


def test_describe_shows_columns_then_partition_keys(session: Session, sales: str) -> None:
    result = session.run_one(f"DESCRIBE hive.{sales}.orders")
    assert result.columns == ("Field", "Type", "Nullable", "PartitionKey", "Comment")
    assert result.rows == (
        ("id", "bigint", True, False, ""),
        ("amount", "decimal(10,2)", True, False, "in euro"),
        ("items", "array<struct<sku:string,qty:int>>", True, False, ""),
        ("dt", "string", True, True, ""),
        ("region", "string", True, True, ""),
    )


def test_a_cold_describe_costs_one_call_and_a_warm_one_none(session: Session, sales: str, admin: Admin) -> None:
    for extra in range(3):  # more databases must not change the cost
        admin.create_database(f"{sales}_x{extra}")
    catalog = session.manager.catalog("hive")
    before = catalog.metrics()
    session.run_one(f"DESC hive.{sales}.orders")
    middle = catalog.metrics()
    session.run_one(f"DESC hive.{sales}.ORDERS")
    assert middle.calls_since(before) == {"get_table_req": 1}
    assert catalog.metrics().calls_since(middle) == {}
    for extra in range(3):
        admin.drop_database(f"{sales}_x{extra}")


def test_show_tables_is_one_call_and_like_filters(session: Session, sales: str) -> None:
    catalog = session.manager.catalog("hive")
    before = catalog.metrics()
    assert session.run_one(f"SHOW TABLES FROM hive.{sales}").column("Table") == ["customers", "order_lines", "orders"]
    assert catalog.metrics().calls_since(before) == {"get_all_tables": 1}
    assert session.run_one(f"SHOW TABLES FROM hive.{sales} LIKE 'ORDER%'").column("Table") == ["order_lines", "orders"]
    assert session.run_one(f"SHOW TABLES FROM hive.{sales} LIKE 'order\\_lines'").column("Table") == ["order_lines"]
    assert session.run_one(f"SHOW TABLES FROM hive.{sales} LIKE 'orders_'").rows == ()


def test_switch_and_use_resolve_short_names(session: Session, sales: str) -> None:
    with pytest.raises(ConfigurationError, match="no catalog selected"):
        session.run_one("DESC orders")
    session.run_one("SWITCH hive")
    assert sales in session.run_one("SHOW DATABASES").column("Database")
    with pytest.raises(ConfigurationError, match="no database selected"):
        session.run_one("SHOW TABLES")
    assert session.run_one(f"DESC {sales}.customers").column("Field") == ["id", "name"]
    session.run_one(f"USE {sales}")
    assert session.run_one("DESC customers").column("Field") == ["id", "name"]
    assert session.run_one("SHOW TABLES LIKE 'cust%'").column("Table") == ["customers"]
    with pytest.raises(NotFoundError, match="database 'hive.no_such_db' does not exist"):
        session.run_one("USE hive.no_such_db")
    assert (session.current_catalog, session.current_database) == ("hive", sales)


def test_missing_objects_are_named(session: Session, sales: str) -> None:
    with pytest.raises(NotFoundError, match="catalog 'nope' does not exist"):
        session.run_one("SHOW DATABASES FROM nope")
    with pytest.raises(NotFoundError, match=f"table 'hive.{sales}.nope' does not exist"):
        session.run_one(f"DESC hive.{sales}.nope")
    with pytest.raises(NotFoundError, match=f"database 'hive.{sales}_gone' does not exist"):
        session.run_one(f"DESC hive.{sales}_gone.orders")


def test_refresh_table_reloads_the_definition(session: Session, sales: str, admin: Admin) -> None:
    assert session.run_one(f"DESC hive.{sales}.customers").column("Field") == ["id", "name"]
    altered = admin.pool.call("get_table", sales, "customers")
    altered.sd.cols.append(type(altered.sd.cols[0])("email", "string", ""))
    admin.pool.call("alter_table", sales, "customers", altered)
    assert session.run_one(f"DESC hive.{sales}.customers").column("Field") == ["id", "name"]  # cached
    session.run_one(f"REFRESH TABLE hive.{sales}.customers")
    assert session.run_one(f"DESC hive.{sales}.customers").column("Field") == ["id", "name", "email"]


def test_refresh_database_and_catalog_forget_name_lists(session: Session, sales: str, admin: Admin) -> None:
    assert "late" not in session.run_one(f"SHOW TABLES FROM hive.{sales}").column("Table")
    admin.create_table(sales, "late", [("x", "int")])
    assert "late" not in session.run_one(f"SHOW TABLES FROM hive.{sales}").column("Table")
    session.run_one(f"REFRESH DATABASE hive.{sales}")
    assert "late" in session.run_one(f"SHOW TABLES FROM hive.{sales}").column("Table")
    assert f"{sales}_new" not in session.run_one("SHOW DATABASES FROM hive").column("Database")
    admin.create_database(f"{sales}_new")
    assert f"{sales}_new" not in session.run_one("SHOW DATABASES FROM hive").column("Database")
    session.run_one("REFRESH CATALOG hive")
    assert f"{sales}_new" in session.run_one("SHOW DATABASES FROM hive").column("Database")
    admin.drop_database(f"{sales}_new")


def test_catalog_ddl_round_trip(session: Session, metastore_uri: str) -> None:
    session.run_one(
        f"CREATE CATALOG other PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore_uri}', 'oauth.token'='t0p')"
    )
    with pytest.raises(AlreadyExistsError):
        session.run_one(f"CREATE CATALOG other PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore_uri}')")
    session.run_one(f"CREATE CATALOG IF NOT EXISTS other PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore_uri}')")
    shown = session.run_one("SHOW CREATE CATALOG other").rows[0][1]
    assert "t0p" not in shown and "'oauth.token' = '******'" in shown
    reparsed = parse_statement(shown)
    assert isinstance(reparsed, ast.CreateCatalog) and dict(reparsed.properties)["hive.metastore.uris"] == metastore_uri

    session.run_one("ALTER CATALOG other SET PROPERTIES ('hive.metastore.client.pool.size'='2')")
    assert session.manager.catalog("other").config.client.pool_size == 2
    with pytest.raises(ConfigurationError, match="must be an integer"):
        session.run_one("ALTER CATALOG other SET PROPERTIES ('hive.metastore.client.pool.size'='two')")
    assert session.manager.store.get("other").properties["hive.metastore.client.pool.size"] == "2"

    session.run_one("SWITCH other")
    session.run_one("ALTER CATALOG other RENAME third")
    assert session.current_catalog == "third"
    rows = session.run_one("SHOW CATALOGS").as_dicts()
    assert [(r["CatalogName"], r["IsCurrent"], r["Version"]) for r in rows] == [
        ("hive", False, 1), ("third", True, 3),
    ]
    session.run_one("DROP CATALOG third")
    assert session.current_catalog is None
    session.run_one("DROP CATALOG IF EXISTS third")


def test_a_rejected_create_stores_nothing(session: Session) -> None:
    with pytest.raises(ConfigurationError, match="'type' must be 'hms'"):
        session.run_one("CREATE CATALOG bad PROPERTIES ('type'='jdbc', 'hive.metastore.uris'='thrift://h:1')")
    with pytest.raises(ConfigurationError, match="not of the form thrift://host:port"):
        session.run_one("CREATE CATALOG bad PROPERTIES ('type'='hms', 'hive.metastore.uris'='h:1')")
    assert session.manager.store.find("bad") is None


def test_an_altered_catalog_is_rebuilt_with_its_new_config(session: Session, sales: str) -> None:
    first = session.manager.catalog("hive")
    session.run_one(f"DESC hive.{sales}.orders")
    session.run_one("ALTER CATALOG hive SET PROPERTIES ('hive.metastore.client.pool.size'='3')")
    second = session.manager.catalog("hive")
    assert second is not first and second.config.client.pool_size == 3
    assert first.client.pool.closed
