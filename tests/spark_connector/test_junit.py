"""The connector's JUnit tests (``spark_connector/javatest``): its pure logic (split packing, partition
filters, Iceberg's transforms) checked on the JVM, compiled against the connector's classes and pyspark's jars.

They need Debian's ``junit4`` (``/usr/share/java/junit4.jar`` and hamcrest); without it the test is skipped,
unless ``HMS_CATALOG_REQUIRE_JUNIT`` is set (as CI sets it), where it fails.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hms_catalog.jdk import find_java_tool, spark_jars_dir
from spark_connector.build import connector_jar

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test

JAVATEST = Path(__file__).resolve().parents[2] / "spark_connector" / "javatest"
JAVA_SHARE = Path(os.environ.get("HMS_CATALOG_JUNIT_DIR", "/usr/share/java"))
REQUIRE_ENV = "HMS_CATALOG_REQUIRE_JUNIT"
# What Spark's own launcher opens on Java 17 so a local SparkSession starts
OPENS = [f"--add-opens=java.base/{pkg}=ALL-UNNAMED" for pkg in (
    "java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio", "java.util",
    "java.util.concurrent", "java.util.concurrent.atomic", "sun.nio.ch", "sun.nio.cs", "sun.security.action",
    "sun.util.calendar")]


def _junit_jars() -> list[Path]:
    jars = [JAVA_SHARE / "junit4.jar", JAVA_SHARE / "hamcrest-core.jar"]
    missing = [str(jar) for jar in jars if not jar.is_file()]
    if missing:
        reason = f"JUnit 4 is not installed ({', '.join(missing)} missing): apt-get install junit4"
        if os.environ.get(REQUIRE_ENV):
            pytest.fail(f"{reason} ({REQUIRE_ENV} is set)")
        pytest.skip(reason)
    return jars


def test_connector_junit_suite(tmp_path: Path) -> None:
    junit = _junit_jars()
    javac, java = find_java_tool("javac"), find_java_tool("java")
    if javac is None or java is None:
        pytest.fail("the JUnit tests need a JDK 17 (javac and java): set JAVA_HOME or put them on PATH")
    sources = sorted(JAVATEST.rglob("*Test.java"))
    assert sources, f"no JUnit tests under {JAVATEST}"
    classpath = os.pathsep.join([str(connector_jar()), f"{spark_jars_dir()}/*", *map(str, junit)])
    classes = tmp_path / "classes"
    compiled = subprocess.run(
        [javac, "-nowarn", "-encoding", "UTF-8", "--release", "17", "-d", str(classes), "-cp", classpath,
         *map(str, sources)], capture_output=True, text=True, check=False)
    assert compiled.returncode == 0, f"javac refused the JUnit tests:\n{compiled.stderr}"
    names = [".".join(source.relative_to(JAVATEST).with_suffix("").parts) for source in sources]
    ran = subprocess.run(
        [java, *OPENS, "-Xmx1g", "-cp", os.pathsep.join([str(classes), classpath]), "org.junit.runner.JUnitCore",
         *names], capture_output=True, text=True, check=False, timeout=600)
    assert ran.returncode == 0, f"JUnit failed:\n{ran.stdout[-20000:]}\n{ran.stderr[-5000:]}"
    assert "OK (" in ran.stdout, f"JUnit ran no test:\n{ran.stdout}"
