"""Queries are checked when they are parsed: sqlglot's failures become positioned SqlSyntaxErrors."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlglot.errors import ParseError, TokenError
from sqlglot.parser import Parser

from hms_catalog import open_session
from hms_catalog.errors import SqlSyntaxError
from hms_catalog.sql import Query, StatementSource, parse, parse_query, parse_statement
from hms_catalog.state import open_definitions

ISSUE = "; ( SELECT = TABLES 'hive.metastore.uris' FROM CREATE /*"

GOOD = [
    ("SELECT 1", "SELECT 1"),
    ("select a, count(*) from hive.db.t where x = 'y' group by a;", "select a, count(*) from hive.db.t where x = 'y' group by a"),
    ("WITH q AS (SELECT 1 AS n) SELECT n FROM q", "WITH q AS (SELECT 1 AS n) SELECT n FROM q"),
    ("(SELECT 1) UNION ALL (SELECT 2)", "(SELECT 1) UNION ALL (SELECT 2)"),
    ("( ( SELECT 1))", "( ( SELECT 1))"),  # blanks between the parentheses used to make it "unknown statement"
    ("/* why */ SELECT 1 -- tail", "/* why */ SELECT 1 -- tail"),
    ("SELECT 'a;b', r'\\' FROM t /* nested /* comment */ */", "SELECT 'a;b', r'\\' FROM t /* nested /* comment */ */"),
]


@pytest.mark.parametrize(("text", "sql"), GOOD)
def test_good_queries_are_kept_as_text(text: str, sql: str) -> None:
    assert parse_statement(text) == Query(sql)


BAD: list[tuple[str, int, int, str, str]] = [
    # lexical errors are found again from where they start, not where sqlglot gave up
    (ISSUE, 1, 55, "/*", "unterminated comment"),
    ("SELECT 'open", 1, 8, "'open", "unterminated string literal"),
    ('SELECT "open', 1, 8, '"open', "unterminated string literal"),
    ("SELECT `open", 1, 8, "`open", "unterminated quoted identifier"),
    ("SELECT /* /* */ 1", 1, 8, "/*", "unterminated comment"),  # Spark's comments nest
    ("SELECT a\nFROM t WHERE x = 'b", 2, 18, "'b", "unterminated string literal"),
    ("SELECT x'zz'", 1, 8, "x'zz'", "invalid query: Numeric string contains invalid characters"),
    # parse errors point at sqlglot's token, with its reprs turned into words
    ("SELECT (1", 1, 9, "1", "invalid query: Expecting )"),
    ("SELECT 1 2 3", 1, 10, "2", "invalid query: Invalid expression / Unexpected token"),
    ("SELECT 1 FROM", 1, 14, "<end of input>", "invalid query: Expected table name but got <end of input>"),
    ("SELECT = TABLES 'x' FROM CREATE", 1, 17, "'x'", "invalid query: Required keyword: 'this' missing for EQ"),
    ("WITH", 1, 1, "WITH", "invalid query: Expected CTE to have alias"),
    # what sqlglot reads but is no query
    ("WITH q AS (SELECT 1) INSERT INTO t SELECT * FROM q", 1, 22, "INSERT", "expected a query (SELECT ...), not INSERT"),
    ("SELECT 1; SELECT 2", 1, 11, "SELECT", "expected end of statement: one query per statement"),
]


@pytest.mark.parametrize(("text", "line", "column", "token", "reason"), BAD)
def test_query_errors_are_positioned(text: str, line: int, column: int, token: str, reason: str) -> None:
    with pytest.raises(SqlSyntaxError) as info:
        if text.startswith(";"):
            parse(text)
        else:
            parse_statement(text)
    err = info.value
    assert (err.reason, err.line, err.column, err.token) == (reason, line, column, token)
    assert err.excerpt.split("\n")[1] == " " * (column - 1) + "^"


def test_the_issue_statement_keeps_sqlglots_error_as_the_cause() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse(ISSUE)
    assert isinstance(info.value.__cause__, TokenError)
    assert str(info.value).startswith("line 1:55: unterminated comment near '/*'\n" + ISSUE + "\n")
    with pytest.raises(SqlSyntaxError) as info:
        parse_statement("SELECT (1")
    assert isinstance(info.value.__cause__, ParseError)


def test_the_issue_statement_through_a_session_is_a_syntax_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with pytest.raises(SqlSyntaxError) as info:
        open_session(home).run_one(ISSUE)  # before this fix: sqlglot's TokenError, after starting Spark
    assert (info.value.line, info.value.column) == (1, 55)
    assert open_definitions(home).list() == []  # nothing stored


def test_a_query_nested_deeper_than_sqlglot_reads_is_a_syntax_error() -> None:
    text = "SELECT " + "(" * 300 + "1" + ")" * 300
    with pytest.raises(SqlSyntaxError) as info:
        parse_statement(text)
    assert (info.value.reason, info.value.line, info.value.column) == ("query nested too deeply to read", 1, 1)
    assert isinstance(info.value.__cause__, RecursionError)


def test_query_error_in_a_later_statement_uses_script_coordinates() -> None:
    script = "SHOW CATALOGS;\n  SELECT a,\n    FROM t WHERE (x = 1"
    with pytest.raises(SqlSyntaxError) as info:
        parse(script)
    err = info.value
    assert (err.line, err.column) == (3, 23)
    assert err.excerpt == "    FROM t WHERE (x = 1\n" + " " * 22 + "^"


def test_query_error_with_an_explicit_origin() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_statement(StatementSource("SELECT 'x", line=5, column=3))
    assert (info.value.line, info.value.column) == (5, 10)


def test_parse_query_is_the_one_door_from_user_text_to_sqlglot() -> None:
    assert parse_query("SELECT a FROM t").sql(dialect="spark") == "SELECT a FROM t"
    for text, reason, token in [
        ("DROP CATALOG c", "expected a query (SELECT ...), not DROP", "DROP"),
        ("  ", "expected a query", "<end of input>"),
        ("SELECT 'x", "unterminated string literal", "'x"),
    ]:
        with pytest.raises(SqlSyntaxError) as info:
            parse_query(text)
        assert (info.value.reason, info.value.token) == (reason, token)


def test_any_other_failure_inside_sqlglot_is_still_a_syntax_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: object, *args: object, **kwargs: object) -> None:
        raise KeyError("an internal table of sqlglot")

    monkeypatch.setattr(Parser, "parse", broken)
    with pytest.raises(SqlSyntaxError) as info:
        parse_statement("SELECT 1")
    assert info.value.reason == "invalid query (KeyError: 'an internal table of sqlglot')"
    assert isinstance(info.value.__cause__, KeyError)
