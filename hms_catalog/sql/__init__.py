"""The catalog DSL: statements such as ``CREATE CATALOG`` and ``SHOW TABLES``, parsed to frozen nodes.

Executing statements lives elsewhere; this package only turns text into values, so it can be used by the
CLI, a notebook magic or tests without touching a metastore.
"""

from __future__ import annotations

from hms_catalog.sql.ast import (
    AlterCatalogProperties,
    CreateCatalog,
    DatabaseName,
    DescribeTable,
    DropCatalog,
    ExplainSplits,
    Properties,
    Query,
    RefreshCatalog,
    RefreshDatabase,
    RefreshTable,
    RenameCatalog,
    ShowCache,
    ShowCatalogs,
    ShowCreateCatalog,
    ShowDatabases,
    ShowSchemaCache,
    ShowSplits,
    ShowTables,
    ShowTableStatus,
    Statement,
    SwitchCatalog,
    TableName,
    UseDatabase,
)
from hms_catalog.sql.expressions import (
    And,
    ColumnRef,
    Comparison,
    Expression,
    InList,
    IsNull,
    Literal,
    Not,
    Or,
    columns,
    conjuncts,
    to_sql,
)
from hms_catalog.sql.parser import (
    StatementBuffer,
    StatementSource,
    parse,
    parse_expression,
    parse_query,
    parse_spark_statement,
    parse_statement,
    split_statements,
)
from hms_catalog.sql.tokens import Token, TokenType, tokenize

__all__ = [
    # parsing
    "parse",
    "parse_statement",
    "parse_expression",
    "parse_query",
    "parse_spark_statement",
    "split_statements",
    "StatementBuffer",
    "StatementSource",
    # tokens
    "Token",
    "TokenType",
    "tokenize",
    # syntax tree
    "Statement",
    "TableName",
    "DatabaseName",
    "Properties",
    "CreateCatalog",
    "DropCatalog",
    "AlterCatalogProperties",
    "RenameCatalog",
    "Query",
    "ShowCache",
    "ShowCatalogs",
    "ShowSchemaCache",
    "ShowTableStatus",
    "ShowCreateCatalog",
    "SwitchCatalog",
    "UseDatabase",
    "ShowDatabases",
    "ShowTables",
    "DescribeTable",
    "RefreshCatalog",
    "RefreshDatabase",
    "RefreshTable",
    "ShowSplits",
    "ExplainSplits",
    # expressions
    "Expression",
    "ColumnRef",
    "Literal",
    "Comparison",
    "InList",
    "IsNull",
    "Not",
    "And",
    "Or",
    "columns",
    "conjuncts",
    "to_sql",
]
