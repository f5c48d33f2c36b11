"""The class-data archive the suite's Spark drivers start from (tests/support/class_archive.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hms_catalog.jdk import find_java_tool, java_cache_dir, spark_jars_dir
from tests.support import class_archive

# The archive is dumped by sessions that use Java (the metastore marker); its dump and the JVMs here take seconds.
pytestmark = [pytest.mark.metastore, pytest.mark.slow]


@pytest.fixture(scope="module")
def archive() -> Path:
    if os.environ.get("HMS_CATALOG_CLASS_ARCHIVE", "1") == "0":
        pytest.skip("HMS_CATALOG_CLASS_ARCHIVE=0: the drivers start without an archive")
    path = class_archive.archive_path(java_cache_dir() / "class-archives")
    assert path is not None, "pyspark or java is missing"
    assert class_archive.wait_until_dumped(path), f"no class archive was dumped at {path} (see {path}.log)"
    return path


def _java() -> str:
    java = find_java_tool("java")
    assert java is not None
    return java


def test_a_spark_driver_started_as_the_tests_start_them_loads_sparks_classes_from_the_archive(
        archive: Path, tmp_path: Path) -> None:
    """``spark-submit`` with the session's driver options: the classes of Spark's launcher and driver come from
    the archive's top layer ("shared objects file (top)"), not parsed from the jars (with no archive, none do)."""
    options = class_archive.driver_options(os.environ["SPARK_SUBMIT_OPTS"], archive)
    assert f"-XX:SharedArchiveFile={archive}" in options
    log = tmp_path / "classes.log"
    submit = spark_jars_dir().parent / "bin" / "spark-submit"
    env = {**os.environ, "SPARK_SUBMIT_OPTS": f"{options} -Xlog:class+load=info:file={log}"}
    ran = subprocess.run([str(submit), "--version"], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert ran.returncode == 0, ran.stderr[-2000:]
    # Lambda proxies are generated as the driver runs, archived or not: only classes from the jars count.
    loaded = [line for line in log.read_text().splitlines() if " org.apache.spark." in line and "$$Lambda$" not in line]
    assert loaded, "spark-submit loaded no Spark class"
    shared = [line for line in loaded if "shared objects file (top)" in line]
    assert len(shared) >= 0.9 * len(loaded), (len(shared), len(loaded), loaded[:3])


def test_before_the_archive_exists_a_driver_keeps_the_jdks_own_archive(tmp_path: Path) -> None:
    """A driver started before the dump ends is not told of the archive: a ``-XX:SharedArchiveFile`` that
    cannot be opened would turn off the JDK's default archive too, and start every driver slower."""
    missing = tmp_path / "missing.jsa"
    options = class_archive.driver_options("-XX:TieredStopAtLevel=1", missing)
    assert "SharedArchiveFile" not in options
    ran = subprocess.run([_java(), *options.split(), "-Xlog:class+load=info", "-version"], capture_output=True, text=True,
                         timeout=60, check=False)
    assert ran.returncode == 0, ran.stderr
    assert "java.lang.Object source: shared objects file" in ran.stdout, ran.stdout[:500]


def test_an_archive_of_another_class_path_is_passed_over_in_silence(archive: Path, tmp_path: Path) -> None:
    """A JVM whose class path the archive was not made for starts without it and prints nothing about it (the
    JVM's own warning goes to stdout, which is sometimes the output under test)."""
    loud = subprocess.run([_java(), f"-XX:SharedArchiveFile={archive}", "-cp", str(tmp_path), "-version"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert "Unable to use shared archive" in loud.stdout, loud.stdout  # what the options silence
    quiet = subprocess.run([_java(), *class_archive.archive_options(archive).split(), "-cp", str(tmp_path), "-version"],
                           capture_output=True, text=True, timeout=60, check=False)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == "" and "warning" not in quiet.stderr.lower(), (quiet.stdout, quiet.stderr)
