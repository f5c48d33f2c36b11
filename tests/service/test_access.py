"""What each statement needs (read, write or admin), the catalog it changes, and who may run it."""

from __future__ import annotations

import pytest

from hms_catalog.ddl import specs
from hms_catalog.sql import ast, ast_ddl
from service.access import ADMIN, Access, ForbiddenError, Principal, required_access, statement_title, target_catalog

T = ast.TableName(None, "db", "t")
RO = Principal("ro", Access.READ)
ETL = Principal("etl", Access.WRITE, ("prod",))
ANY = Principal("any", Access.WRITE)
READ_LAKE = Principal("lake-ro", Access.READ, ("lake",))
NOBODY = Principal("x@REALM", Access.READ, (), kind="principal")  # a Kerberos principal no entry lists

READS = [ast.ShowCatalogs(), ast.ShowTables(), ast.DescribeTable(T), ast.RefreshTable(T), ast.RefreshCatalog("c"),
         ast.Query("SELECT 1"), ast.ShowChanges(), ast_ddl.ShowPartitions(T), ast_ddl.ShowCreateTable(T),
         ast_ddl.SetOption("sync_ddl", "true"), ast.AlterTableFormat(T, "REFRESH METADATA"), ast.UseDatabase(ast.DatabaseName(None, "d"))]
WRITES = [ast_ddl.CreateDatabase(ast.DatabaseName("prod", "d"), specs.DatabaseSpec("d")),
          ast_ddl.DropDatabase(ast.DatabaseName(None, "d")), ast_ddl.AlterDatabase(ast.DatabaseName(None, "d"), ()),
          ast_ddl.CreateTable(T, specs.TableSpec("d", "t", ())),
          ast_ddl.DropTable(T), ast_ddl.AlterTable(T, specs.AddPartitions(())), ast_ddl.AlterTableRename(T, T),
          ast_ddl.CreateTableLike(T, T), ast.CreateTableLikePath(T, "/x"), ast.AlterTableFormat(T, "PROMOTE")]
DEFINITIONS = [ast.CreateCatalog("c", ()), ast.DropCatalog("c"), ast.AlterCatalogProperties("c", ()), ast.RenameCatalog("c", "d")]


@pytest.mark.parametrize("statement", READS)
def test_reads_need_read(statement: ast.Statement) -> None:
    assert required_access(statement) is Access.READ


@pytest.mark.parametrize("statement", WRITES)
def test_changes_need_write(statement: ast.Statement) -> None:
    assert required_access(statement) is Access.WRITE


@pytest.mark.parametrize("statement", DEFINITIONS)
def test_catalog_definitions_need_admin(statement: ast.Statement) -> None:
    assert required_access(statement) is Access.ADMIN


def test_every_ddl_statement_needs_write_and_an_unknown_statement_too() -> None:
    assert set(ast_ddl.DDL_STATEMENTS) <= {type(statement) for statement in WRITES}

    class NewKind(ast.Statement):
        pass

    assert required_access(NewKind()) is Access.WRITE  # fail closed


def test_the_target_catalog_is_the_named_one_else_the_current_one() -> None:
    assert target_catalog(ast_ddl.DropTable(ast.TableName("PROD", "db", "t")), "other") == "prod"
    assert target_catalog(ast_ddl.DropTable(T), "Cur") == "cur"
    assert target_catalog(ast_ddl.DropTable(T), None) is None
    assert target_catalog(ast_ddl.DropDatabase(ast.DatabaseName("prod", "d")), None) == "prod"
    assert target_catalog(ast.RenameCatalog("Old", "new"), "cur") == "old"


def test_titles_name_the_statement() -> None:
    assert statement_title(ast_ddl.CreateTable(T, specs.TableSpec("d", "t", ()))) == "CREATE TABLE"
    assert statement_title(ast_ddl.AlterTable(T, specs.AddColumns(()))) == "ALTER TABLE ADD COLUMNS"


def test_who_may_do_what() -> None:
    for principal in (RO, ANY, ADMIN):
        principal.check(Access.READ, "anything", "SHOW TABLES")
    ETL.check(Access.READ, "Prod", "SHOW TABLES")
    ETL.check(Access.READ, None, "SHOW TABLES")  # no catalog: the statement itself says so
    ETL.check(Access.WRITE, "PROD", "DROP TABLE")
    ANY.check(Access.WRITE, "prod", "DROP TABLE")
    ANY.check(Access.WRITE, None, "DROP TABLE")  # no catalog: the statement itself says so
    ADMIN.check(Access.ADMIN, "c", "DROP CATALOG")
    refusals = [
        (RO, Access.WRITE, "prod", ["token 'ro'", "read every catalog, but change none", "DROP TABLE changes catalog 'prod'"]),
        (ETL, Access.WRITE, "hive", ["token 'etl'", "read and change catalog(s) prod", "catalog 'hive'"]),
        (ETL, Access.READ, "hive", ["token 'etl'", "read and change catalog(s) prod", "DROP TABLE reads catalog 'hive'"]),
        (READ_LAKE, Access.READ, "hive", ["token 'lake-ro'", "read catalog(s) lake, but change none"]),
        (NOBODY, Access.READ, "lake", ["principal 'x@REALM'", "do nothing", "tokens file"]),
        (ETL, Access.WRITE, None, ["token 'etl'", "a catalog"]),
        (ANY, Access.ADMIN, "c", ["token 'any'", "catalog definitions", "server's own token"]),
    ]
    for principal, need, catalog, words in refusals:
        with pytest.raises(ForbiddenError) as refused:
            principal.check(need, catalog, "DROP TABLE")
        assert str(refused.value).startswith("permission denied") and all(w in str(refused.value) for w in words), refused.value
        assert (refused.value.token, refused.value.access, refused.value.catalogs) == (
            principal.name, principal.access.value, list(principal.catalogs))
