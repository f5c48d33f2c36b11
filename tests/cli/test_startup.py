"""The CLI's start: the heavy libraries that only some statements need are imported by those statements.

pyspark (Spark types, SELECT) and pyiceberg (Iceberg schemas) took about a third of a second of every
``hms-catalog`` run's start before any statement ran; their users import them on first use
(:class:`hms_catalog._lazy.LazyModule`)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("pyspark", "pyiceberg")


def _imported_after(code: str) -> list[str]:
    script = f"{code}\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    return result.stdout.split()


def test_the_cli_starts_without_spark_or_iceberg() -> None:
    assert _imported_after("from hms_catalog.cli.main import build_parser\nbuild_parser()") == []


def test_a_spark_type_still_imports_spark_when_made() -> None:
    code = ("from hms_catalog.types import IntType, to_spark_type, to_spark_simple_string\n"
            "assert to_spark_simple_string(IntType()) == 'int'\n"
            "import sys; assert 'pyspark' not in sys.modules\n"
            "assert type(to_spark_type(IntType())).__name__ == 'IntegerType'")
    assert _imported_after(code) == ["pyspark"]
