"""Building the connector's jar with ``javac`` against the installed pyspark's jars.

The jar is built on first use and cached per Spark version and source digest under
``~/.cache/hms-catalog/java`` (or ``$HMS_CATALOG_JAVA_CACHE``), so an upgraded pyspark or changed sources
build a new one and nothing else ever rebuilds. A build goes to a temporary file renamed into place:
concurrent first uses never see half a jar.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
import zipfile
from importlib import resources
from pathlib import Path

from hms_catalog.errors import ErrorKind, HmsCatalogError
from hms_catalog.jdk import JAVA_CACHE_ENV, find_java_tool, java_cache_dir, spark_jars_dir

__all__ = ["ConnectorBuildError", "connector_jar", "java_sources"]

CACHE_ENV = JAVA_CACHE_ENV  # one Java cache for every helper (hms_catalog.jdk)


class ConnectorBuildError(HmsCatalogError):
    """The connector's jar could not be built (no JDK, or javac refused the sources); the message says why."""

    error_kind = ErrorKind.INVALID


def java_sources() -> list[Path]:
    root = Path(str(resources.files("spark_connector") / "java"))
    return sorted(root.rglob("*.java"))


def _spark_version() -> str:
    import pyspark

    return str(pyspark.__version__)


def connector_jar(cache_dir: Path | None = None) -> Path:
    """The path of the connector's jar for the installed pyspark, built first if need be."""
    sources = java_sources()
    if not sources:
        raise ConnectorBuildError("the connector's Java sources are missing from the installed package")
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    directory = cache_dir or java_cache_dir()
    jar = directory / f"hms-catalog-spark-{_spark_version()}-{digest.hexdigest()[:12]}.jar"
    if jar.is_file():
        return jar
    javac = find_java_tool("javac")
    if javac is None:
        raise ConnectorBuildError("building the Spark connector needs javac (a JDK 17): set JAVA_HOME or put javac on PATH")
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="hms-catalog-javac-", dir=directory) as scratch:
        classes = Path(scratch) / "classes"
        command = [javac, "-nowarn", "-encoding", "UTF-8", "--release", "17", "-d", str(classes),
                   "-cp", f"{spark_jars_dir()}/*", *map(str, sources)]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise ConnectorBuildError(f"javac failed building the Spark connector against pyspark {_spark_version()}:\n"
                                      f"{result.stderr[-3000:]}")
        partial = Path(scratch) / jar.name
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\nCreated-By: hms-catalog\r\n\r\n")
            for path in sorted(classes.rglob("*.class")):
                archive.write(path, path.relative_to(classes).as_posix())
        os.replace(partial, jar)
    return jar
