"""What a forwarded change locks, expects and logs, read from its arguments (pure: no metastore)."""

from __future__ import annotations

from hms_catalog.cache.versions import CatalogObject, ChangeKind
from hms_catalog.client.hive_thrift import ttypes
from service.thrift.changes import is_change, plan_change
from service.thrift.forwarder import Forwarder
from service.thrift.names import FederatedNames, Route

NAMES = FederatedNames("hive", lambda: ["hive", "other"])


def test_hive_4_request_structs_name_their_table() -> None:
    created = plan_change("create_table_req", (ttypes.CreateTableRequest(table=ttypes.Table(dbName="db", tableName="T")),),
                          Route("hive", "db"), NAMES)
    assert created.objects == [("db", "t")]
    assert created.events == [("CREATE_TABLE", "db", "t", 1)]
    assert created.changes == [(ChangeKind.ADDED, CatalogObject.for_table("db", "t"))]


def test_a_hive_4_rename_is_a_drop_and_an_add() -> None:
    request = ttypes.AlterTableRequest(dbName="db", tableName="old", table=ttypes.Table(dbName="db", tableName="new"))
    renamed = plan_change("alter_table_req", (request,), Route("hive", "db"), NAMES)
    assert renamed.objects == [("db", "old"), ("db", "new")]
    assert renamed.changes == [(ChangeKind.DROPPED, CatalogObject.for_table("db", "old")),
                               (ChangeKind.ADDED, CatalogObject.for_table("db", "new"))]


def test_a_rename_across_databases_is_routed_by_the_table_it_renames() -> None:
    forwarder = Forwarder(None, NAMES, None)  # type: ignore[arg-type]  # routing reads names only
    args = ("other__db_b", "t", ttypes.Table(dbName="other__db_a", tableName="t"))
    route = forwarder.route_of("alter_table", args)
    assert route == Route("other", "db_b")
    plan = plan_change("alter_table", args, route, NAMES)
    assert plan.changes == [(ChangeKind.DROPPED, CatalogObject.for_table("db_b", "t")),
                            (ChangeKind.ADDED, CatalogObject.for_table("db_a", "t"))]


def test_compactions_need_write_access_and_connection_settings_do_not() -> None:
    assert is_change("compact2") and is_change("compact")
    assert not is_change("setMetaConf") and not is_change("set_ugi") and not is_change("get_table")
