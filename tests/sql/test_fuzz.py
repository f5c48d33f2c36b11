"""Fuzzing the DSL through a real session: whatever a user types, the answer is a result or an error of ours.

Inputs are built by a seeded generator from the language's own vocabulary -- every statement's keywords,
names, strings, numbers, operators, quotes and comments, terminated or not -- partly as random token
streams and partly as valid statements with a few tokens deleted, inserted, swapped or cut off.  Each runs
through :meth:`Session.run` over a temporary home whose one catalog points at a closed port with no
retries, so a statement that reaches the metastore fails at once with ``MetastoreUnavailableError``; no
metastore and no Java are needed.  Queries are parsed (that is where their syntax errors belong) but not
run: running them is Spark's part.

Three properties are checked for every statement:

* nothing but an :class:`HmsCatalogError` escapes;
* a :class:`SqlSyntaxError` points at a line and column inside the input and quotes it;
* a statement that raised left the catalog store byte-for-byte as it was.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlglot

from hms_catalog import open_session
from hms_catalog.errors import (
    HmsCatalogError,
    MetastoreUnavailableError,
    SqlSyntaxError,
)
from hms_catalog.execution import Result, Session
from hms_catalog.sql import Expression, Statement, ast, parse, parse_expression
from hms_catalog.state import open_definitions
from hms_catalog.store import CatalogDefinition

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test

SEED = 20240611
INPUTS = 2400
MINIMUM_STATEMENTS = 2000

# The one catalog of the home: a closed local port, and no patience at all.
CATALOG = (
    "CREATE CATALOG hive PROPERTIES ('type'='hms', 'hive.metastore.uris'='thrift://127.0.0.1:1', "
    "'hive.metastore.failure.retries'='0', 'hive.metastore.client.connect.retry.delay'='0', "
    "'hive.metastore.client.connect.timeout'='100ms', 'hive.metastore.client.socket.timeout'='100ms', "
    "'hive.metastore.client.pool.borrow.timeout'='100ms')"
)

# Valid statements of every kind; mutations of these reach deep into each statement's grammar.
TEMPLATES = [
    (
        "CREATE CATALOG IF NOT EXISTS fuzz COMMENT 'made by the fuzzer' PROPERTIES ('type'='hms', "
        "'hive.metastore.uris'='thrift://127.0.0.1:1', 'hive.metastore.failure.retries'='0', "
        "'hive.metastore.client.connect.retry.delay'='0')"
    ),
    "CREATE CATALOG fuzz PROPERTIES (\"type\"=\"hms\", \"hive.metastore.uris\"=\"thrift://[::1]:1\")",
    "ALTER CATALOG hive SET PROPERTIES ('schema.cache.ttl-second'='0', 'file_split_size'='-1')",
    "ALTER CATALOG hive RENAME `hive two`",
    "DROP CATALOG IF EXISTS fuzz",
    "DROP CATALOG hive",
    "SHOW CATALOGS",
    "SHOW CREATE CATALOG hive",
    "SHOW DATABASES FROM hive",
    "SHOW TABLES FROM hive.db LIKE 'ord%'",
    "SHOW TABLE STATUS FROM `hive`.`db` LIKE \"o*\"",
    "SHOW CACHE FROM hive",
    "SHOW SCHEMA CACHE FROM hive",
    "SHOW CHANGES FROM hive SINCE 3",
    "SHOW SPLITS FROM hive.db.t WHERE dt = '2024-01-01' AND n IN (1, -2, 3.5) OR region IS NOT NULL",
    "EXPLAIN SPLITS FROM hive.db.t WHERE NOT (a <> DATE '2024-02-29' OR b NOT BETWEEN 1 AND 2.5)",
    "SWITCH hive",
    "USE hive.db",
    "DESCRIBE hive.db.t",
    "DESC t",
    "REFRESH CATALOG hive",
    "REFRESH DATABASE hive.db",
    "REFRESH TABLE hive.db.t",
    # DDL (issue 22): Spark's and Hive's spellings, nested types, transforms, partition specs
    "CREATE DATABASE IF NOT EXISTS hive.fuzzdb COMMENT 'x' LOCATION 'file:///tmp/fuzzdb' WITH DBPROPERTIES ('k'='v')",
    "DROP SCHEMA IF EXISTS hive.fuzzdb CASCADE",
    "ALTER SCHEMA hive.db SET PROPERTIES (owner.team = 'bi', n = 3)",
    (
        "CREATE EXTERNAL TABLE IF NOT EXISTS hive.db.t (id INT NOT NULL COMMENT 'k', m MAP<STRING, ARRAY<DECIMAL(10, 2)>>, "
        "s STRUCT<x: DOUBLE, `a b`: STRING>) COMMENT 'c' PARTITIONED BY (dt STRING, hr INT) ROW FORMAT DELIMITED "
        "FIELDS TERMINATED BY '\\001' NULL DEFINED AS '' STORED AS TEXTFILE LOCATION 'file:///tmp/t' TBLPROPERTIES ('a' = '1')"
    ),
    "CREATE TABLE hive.db.e (id BIGINT, ts TIMESTAMP, name STRING) USING iceberg PARTITIONED BY (days(ts), bucket(16, id))",
    "CREATE TABLE db.s (id INT, dt STRING) USING parquet OPTIONS (header true) PARTITIONED BY (dt)",
    "CREATE TABLE hive.db.c LIKE hive.db.t LOCATION 'file:///tmp/c'",
    "DROP TABLE IF EXISTS hive.db.t PURGE",
    "ALTER TABLE hive.db.t ADD COLUMNS (note STRING COMMENT 'n', v VARCHAR(10)) CASCADE",
    "ALTER TABLE hive.db.t CHANGE COLUMN id id BIGINT COMMENT 'k' RESTRICT",
    "ALTER TABLE hive.db.t ALTER COLUMN id TYPE BIGINT",
    "ALTER TABLE hive.db.t ADD IF NOT EXISTS PARTITION (dt='2024-01-01', hr=1) LOCATION 'file:///tmp/p' PARTITION (dt='x', hr=NULL)",
    "ALTER TABLE hive.db.t DROP IF EXISTS PARTITION (dt='x'), PARTITION (hr=-1) PURGE",
    "ALTER TABLE hive.db.t PARTITION (dt='x') SET LOCATION 'file:///tmp/q'",
    "ALTER TABLE hive.db.t UNSET TBLPROPERTIES IF EXISTS ('a', b.c)",
    "ALTER TABLE hive.db.t RENAME TO hive.db.t2",
    "MSCK REPAIR TABLE hive.db.t SYNC PARTITIONS",
    "SHOW PARTITIONS FROM hive.db.t PARTITION (dt='x') WHERE hr > 2",
    "SHOW CREATE TABLE hive.db.t",
    "SHOW TBLPROPERTIES hive.db.t ('a')",
    "SET sync_ddl = true",
    "SELECT a, count(*) AS n FROM hive.db.t WHERE x = 'y' GROUP BY a ORDER BY n DESC",
    "WITH q AS (SELECT 1 AS n) SELECT n FROM q",
    "(SELECT 1) UNION ALL (SELECT 2)",
]

KEYWORDS = sorted(
    {word for template in TEMPLATES for word in re.findall(r"\b[A-Z]{2,}\b", template)}
    | {"CATALOGS", "DATABASE", "DATABASES", "TABLES", "STATUS", "SCHEMA", "CHANGES", "SINCE", "SPLITS", "SET",
       "RENAME", "COMMENT", "EXISTS", "LIKE", "TRUE", "FALSE", "TIMESTAMP", "INSERT", "INTO", "VALUES", "JOIN"}
)
NAMES = ["hive", "fuzz", "db", "t", "a", "n", "`a.b`", "`back``tick`", "`hive`", "`é`", "_x$1", "TABLES", "comment"]
STRINGS = [
    "'hms'", "'type'", "'hive.metastore.uris'", "'thrift://127.0.0.1:1'", "'thrift://[::1]:1'", "'0'", "'-1'",
    "'1ms'", "'true'", "''", "'it''s'", "'a\\nb'", "\"dq\"", "'2024-13-01'", "'2024-01-01 00:00:00.5'",
    "'schema.cache.ttl-second'", "'hive.metastore.failure.retries'", "'ünïcödé ✓'", "'x\\'", "'; DROP CATALOG hive; --'",
]
UNTERMINATED = ["'open", "\"open", "`open", "/* open", "'", "`", "\\"]
NUMBERS = ["0", "1", "42", "1.5", "007", "-", "-1", "9" * 40, "9" * 5000, "1e5", "1.", ".5", "3.14.15"]
SYMBOLS = ["(", ")", ",", ".", "=", "==", "<>", "!=", "<", "<=", ">", ">=", ";", "*", "+", "/", "%", "!", "?", "[", "]",
           "{", "}", ":", "|", "@", "#", "$", "~", "^", "&"]
COMMENTS = ["-- a comment\n", "/* a comment */", "/* nested /* comment */ */", "*/", "--", "/*/"]
ODD = ["é", "表", "\u00a0", "\u2028", "\x00", "\x7f", "\ufeff", "\U0001f600", "\r", "\t", "\\", "\\\\"]
VOCABULARY = KEYWORDS + NAMES + STRINGS + UNTERMINATED + NUMBERS + SYMBOLS + COMMENTS + ODD
SEPARATORS = [" ", " ", " ", "\n", "\t", "", "\r\n", "  \n  "]

# One token of a template: a string, a backquoted name, a comment, a number, a word or one character.
_TOKEN = re.compile(r"'(?:[^'\\]|\\.|'')*'|\"[^\"]*\"|`(?:[^`]|``)*`|[0-9]+(?:\.[0-9]+)?|\w+|<>|<=|>=|!=|\S")

# Found by this fuzzer, or by the issue that asked for it; always run.
REGRESSIONS = [
    "; ( SELECT = TABLES 'hive.metastore.uris' FROM CREATE /*",
    "SELECT 'open",
    "SELECT /* /* */ 1",
    "SELECT " + "(" * 300 + "1" + ")" * 300,
    "WITH q AS (SELECT 1) INSERT INTO t SELECT * FROM q",
    "SHOW SPLITS FROM hive.db.t WHERE " + "(" * 300 + "a = 1" + ")" * 300,
    "SHOW SPLITS FROM hive.db.t WHERE " + "NOT " * 1000 + "a = 1",
    "SHOW SPLITS FROM hive.db.t WHERE " + " OR ".join(["a = 1"] * 2000),
    "SHOW SPLITS FROM hive.db.t WHERE a = " + "9" * 5000,
    "SHOW CHANGES FROM hive SINCE " + "9" * 5000,
]


def _inputs(rng: random.Random, count: int) -> Iterator[str]:
    """``count`` inputs: a third random token streams, the rest templates mutated one to three times."""
    for _ in range(count):
        if rng.random() < 0.35:
            tokens = [rng.choice(VOCABULARY) for _ in range(rng.randint(1, 12))]
        else:
            tokens = _TOKEN.findall(rng.choice(TEMPLATES))
            for _ in range(rng.choice([0, 1, 1, 2, 3])):
                tokens = _mutate(rng, tokens)
        if rng.random() < 0.1:
            tokens.insert(0, rng.choice([";", "(", "/* c */", "-- c\n"]))
        yield "".join(token + rng.choice(SEPARATORS) for token in tokens).rstrip(" ")


def _mutate(rng: random.Random, tokens: list[str]) -> list[str]:
    tokens = list(tokens)
    at = rng.randrange(len(tokens)) if tokens else 0
    match rng.randrange(6):
        case 0 if tokens:
            del tokens[at]
        case 1:
            tokens.insert(at, rng.choice(VOCABULARY))
        case 2 if tokens:
            tokens[at] = rng.choice(VOCABULARY)
        case 3 if len(tokens) > 1:
            other = rng.randrange(len(tokens))
            tokens[at], tokens[other] = tokens[other], tokens[at]
        case 4:
            tokens = tokens[:at]  # cut off mid-statement, as a user who pressed enter too soon
        case _:
            tokens.insert(at, tokens[at] if tokens else rng.choice(VOCABULARY))
    return tokens


class _QueriesParsedOnly(Session):
    """The real session, except that a query is not handed to Spark.

    The query runner's first step is kept: sqlglot reads the query as Spark SQL, which must succeed for
    any query the DSL accepted (its syntax errors are the DSL's to report, with a position).
    """

    def execute(self, statement: ast.Statement) -> Result:
        if isinstance(statement, ast.Query):
            sqlglot.parse_one(statement.sql, read="spark")
            return Result.done("query parsed")
        return super().execute(statement)


def _position_problem(error: SqlSyntaxError, text: str) -> str | None:
    """What is wrong with where ``error`` points in ``text``, or None when it points inside it."""
    lines = text.split("\n")
    if not 1 <= error.line <= len(lines):
        return f"line {error.line} outside 1..{len(lines)}"
    if not 1 <= error.column <= len(lines[error.line - 1]) + 1:
        return f"column {error.column} outside 1..{len(lines[error.line - 1]) + 1}"
    if not error.reason or not error.excerpt.endswith("^"):
        return f"no message or no excerpt with a caret: {str(error)!r}"
    return None


class _Fuzz:
    """Runs inputs through a session over ``home`` and collects every broken property."""

    def __init__(self, home: Path) -> None:
        open_session(home).run_one(CATALOG)
        self.home = home
        self.store = open_definitions(home)
        self.baseline = self._stored()
        self.session = self._session()
        self.statements = 0
        self.outcomes: dict[str, int] = {}
        self.failures: list[str] = []

    def _session(self) -> Session:
        session = open_session(self.home)
        return _QueriesParsedOnly(session.manager)

    def run(self, text: str) -> None:
        self._through_session(text)
        self._parse_only(text)
        if self._stored() != self.baseline:  # a statement succeeded: start the next input afresh
            self.session.manager.close()
            for definition in self.store.list():
                self.store.drop(definition.name)
            for definition in self.baseline:
                self.store.create(definition)
            self.session = self._session()

    def _stored(self) -> list[CatalogDefinition]:
        return self.store.list()

    def _through_session(self, text: str) -> None:
        statements = self.session.run(text)
        while True:
            before = self._stored()
            self.statements += 1
            try:
                next(statements)
            except StopIteration:
                self.statements -= 1
                return
            except HmsCatalogError as error:
                self._count(type(error).__name__)
                if self._stored() != before:
                    self.failures.append(f"store changed by a rejected statement ({error}) in {text!r}")
                if isinstance(error, SqlSyntaxError) and (problem := _position_problem(error, text)):
                    self.failures.append(f"{problem} in {text!r}")
                return
            except Exception as error:  # noqa: BLE001 - the property under test
                self.failures.append(f"{type(error).__name__} escaped: {error} in {text!r}")
                return
            else:
                self._count("ok")

    def _parse_only(self, text: str) -> None:
        """``parse`` quotes whole input lines; ``parse_expression`` never answers with a statement."""
        for parser in (parse, parse_expression):
            try:
                parsed = parser(text)
            except SqlSyntaxError as error:
                if problem := _position_problem(error, text):
                    self.failures.append(f"{parser.__name__}: {problem} in {text!r}")
                elif error.excerpt.split("\n")[0] != text.split("\n")[error.line - 1].rstrip("\r"):
                    self.failures.append(f"{parser.__name__}: excerpt is not input line {error.line} in {text!r}")
            except Exception as error:  # noqa: BLE001 - the property under test
                self.failures.append(f"{parser.__name__}: {type(error).__name__} escaped: {error} in {text!r}")
            else:
                wanted = Expression if parser is parse_expression else list
                if not isinstance(parsed, wanted) or isinstance(parsed, Statement):
                    self.failures.append(f"{parser.__name__} returned {parsed!r} for {text!r}")

    def _count(self, outcome: str) -> None:
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1


@pytest.fixture
def fuzz(tmp_path: Path) -> Iterator[_Fuzz]:
    runner = _Fuzz(tmp_path / "home")
    yield runner
    runner.session.manager.close()


def test_regressions_found_by_fuzzing(fuzz: _Fuzz) -> None:
    for text in REGRESSIONS:
        fuzz.run(text)
    assert fuzz.failures == []
    assert fuzz.outcomes == {"SqlSyntaxError": len(REGRESSIONS)}


def test_fuzzed_statements_fail_only_with_positioned_errors_of_ours(fuzz: _Fuzz) -> None:
    started = time.monotonic()
    for text in _inputs(random.Random(SEED), INPUTS):
        fuzz.run(text)
    elapsed = time.monotonic() - started
    assert fuzz.failures[:10] == [], f"{len(fuzz.failures)} failures"
    assert fuzz.statements >= MINIMUM_STATEMENTS
    # The generator must reach past the parser too: successes, syntax errors and metastore failures.
    assert fuzz.outcomes.get("ok", 0) > 50
    assert fuzz.outcomes.get("SqlSyntaxError", 0) > 500
    assert fuzz.outcomes.get(MetastoreUnavailableError.__name__, 0) > 20
    assert elapsed < 60, f"{fuzz.statements} statements took {elapsed:.1f}s"
