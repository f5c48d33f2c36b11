"""The CLI's start: the heavy libraries that only some statements or commands need are imported by those.

pyspark (Spark types, SELECT) and pyiceberg (Iceberg schemas) took about a third of a second of every
``hms-catalog`` run's start before any statement ran; their users import them on first use
(:class:`hms_catalog._lazy.LazyModule`). The ``serve`` command's parser, built at every start, took another half
second importing FastAPI, uvicorn and the thrift server, and the SELECT statement's module imported pyspark's data
source and sqlglot: both now import them when they run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HEAVY = ("pyspark", "pyiceberg", "fastapi", "uvicorn", "sqlglot", "service.thrift.server")


def _imported_after(code: str) -> list[str]:
    script = f"{code}\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    return result.stdout.splitlines()[-1].split()  # the last line: what a run printed before it is not a module


def test_the_cli_starts_without_spark_or_iceberg() -> None:
    assert _imported_after("from hms_catalog.cli.main import build_parser\nbuild_parser()") == []


def test_a_statement_that_needs_none_of_them_imports_none(tmp_path: Path) -> None:
    """A whole run, as ``hms-catalog --home H -e "SHOW CATALOGS"`` makes it: the parser with every command's
    arguments (``serve``'s too), a session with every statement extension loaded (SELECT's too), the statement."""
    code = (f"from hms_catalog.cli.main import main\n"
            f"assert main(['--home', {str(tmp_path)!r}, '--format', 'json', '-e', 'SHOW CATALOGS']) == 0")
    assert _imported_after(code) == []


def test_serve_still_shows_its_defaults_in_its_help() -> None:
    result = subprocess.run([sys.executable, "-m", "hms_catalog.cli", "serve", "--help"], capture_output=True, text=True,
                            check=True, timeout=120)
    for default in ("default 8181", "else 5", "else all three", "else 'hive'", "default 64"):
        assert default in " ".join(result.stdout.split()), default


def test_a_spark_type_still_imports_spark_when_made() -> None:
    code = ("from hms_catalog.types import IntType, to_spark_type, to_spark_simple_string\n"
            "assert to_spark_simple_string(IntType()) == 'int'\n"
            "import sys; assert 'pyspark' not in sys.modules\n"
            "assert type(to_spark_type(IntType())).__name__ == 'IntegerType'")
    assert _imported_after(code) == ["pyspark"]


def test_a_schema_is_checked_against_sparks_types_without_spark() -> None:
    """Every table's schema records the columns Spark cannot represent: asked of the type's Spark string, which
    refuses exactly what the Spark type does, so a CLI's plan or the service does not import pyspark for it."""
    code = ("from hms_catalog.formats.schema import Column, TableSchema\n"
            "from hms_catalog.types import parse_hive_type\n"
            "columns = [Column(name, parse_hive_type(text), text) for name, text in\n"
            "           [('id', 'int'), ('u', 'uniontype<int,string>'), ('m', 'map<string,array<decimal(10,2)>>')]]\n"
            "schema = TableSchema(tuple(columns), 'hive')\n"
            "problems = [(c.name, c.problem) for c in schema.columns]\n"
            "assert problems[0] == ('id', None) and problems[2] == ('m', None), problems\n"
            "assert 'union' in problems[1][1], problems")
    assert _imported_after(code) == []
