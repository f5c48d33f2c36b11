"""Compiling and launching the Hadoop filesystem helper's JVM (``resources/HadoopFsServer.java``).

The helper is compiled with ``javac`` against pyspark's jars (Hadoop's client, Jackson) once per version of
its source, into ``hadoop-fs-server-<digest>`` of the Java cache (``hms_catalog.jdk``), as the planner's block lister is;
a quiet log4j2 configuration beside the classes sends Hadoop's logging to stderr, never stdout, which
carries the answers only.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path

from hms_catalog.errors import ConfigurationError, EmbeddedMetastoreError
from hms_catalog.jdk import compile_into, find_java_tool, java_cache_dir, spark_jars_dir

__all__ = ["MAIN_CLASS", "compile_server", "command_line", "runtime_jars"]

MAIN_CLASS = "HadoopFsServer"
_SOURCE = f"{MAIN_CLASS}.java"
_REQUIRED_JARS = ("hadoop-client-api-*.jar", "hadoop-client-runtime-*.jar", "jackson-core-*.jar",
                  "jackson-databind-*.jar", "jackson-annotations-*.jar")
_RUNTIME_JARS = (*_REQUIRED_JARS, "log4j-api-*.jar", "log4j-core-*.jar", "log4j-slf4j2-impl-*.jar", "slf4j-api-*.jar",
                 "commons-logging-*.jar")
_LOG_CONFIG = "log4j2-hadoop-fs-server.properties"
_LOG_TEXT = (
    "status = ERROR\n"
    "name = hms-catalog-hadoop-fs\n"
    "appender.err.type = Console\n"
    "appender.err.name = err\n"
    "appender.err.target = SYSTEM_ERR\n"
    "appender.err.layout.type = PatternLayout\n"
    "appender.err.layout.pattern = %d{ISO8601} %p %c{1}: %m%n\n"
    "rootLogger.level = WARN\n"
    "rootLogger.appenderRef.err.ref = err\n"
    # the native-library notice is printed on every start of a client without libhadoop
    "logger.native.name = org.apache.hadoop.util.NativeCodeLoader\n"
    "logger.native.level = ERROR\n"
)


def compile_server(cache_dir: Path | None = None) -> Path:
    """The folder holding the compiled helper and its log configuration (compiled once per source digest).

    Raises ConfigurationError when no ``javac`` is found and the helper was never compiled here."""
    source = Path(str(resources.files("hms_catalog.storage.hadoop") / "resources" / _SOURCE))
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    target = (cache_dir or java_cache_dir()) / f"hadoop-fs-server-{digest}"
    if (target / f"{MAIN_CLASS}.class").exists() and (target / _LOG_CONFIG).exists():
        return target
    javac = find_java_tool("javac")
    if javac is None:
        raise ConfigurationError("javac (a JDK 11 or later) is needed once to compile the Hadoop filesystem helper;"
                                 " set JAVA_HOME or put javac on PATH")
    failure = compile_into(javac, source, target, f"{_jars()}/*", files={_LOG_CONFIG: _LOG_TEXT})  # renamed into place once whole
    if failure is not None:
        raise ConfigurationError(f"javac failed on {source.name}:\n{failure}")
    return target


def command_line(classes: Path, settings: Mapping[str, str], *, threads: int, java_options: Sequence[str] = (),
                 classpath: Sequence[str] = ()) -> list[str]:
    """``java ... HadoopFsServer <threads>``: pyspark's jars, then ``classpath`` and ``$HADOOP_CLASSPATH`` (the
    jars of other Hadoop filesystems), the krb5.conf named by ``java.security.krb5.conf`` or ``KRB5_CONFIG``.
    No setting's value goes on the command line except that path: the settings travel on stdin."""
    java = find_java_tool("java")
    if java is None:
        raise ConfigurationError("no java found to run the Hadoop filesystem helper; set JAVA_HOME or put java on PATH")
    extra = [*classpath, *filter(None, os.environ.get("HADOOP_CLASSPATH", "").split(os.pathsep))]
    path = os.pathsep.join([str(classes), *runtime_jars(_jars()), *extra])
    options = [f"-Dlog4j2.configurationFile={classes / _LOG_CONFIG}", "-Djava.awt.headless=true"]
    krb5 = settings.get("java.security.krb5.conf") or os.environ.get("KRB5_CONFIG")
    if krb5:
        options.append(f"-Djava.security.krb5.conf={krb5}")
    return [java, *options, *java_options, "-cp", path, MAIN_CLASS, str(threads)]


def runtime_jars(jars: Path) -> list[str]:
    """The jars the helper needs from pyspark's folder (Hadoop's shaded client, Jackson, logging): a JVM
    opening only these starts about a second sooner than one given the whole folder. The whole folder
    when one of them is not found (another pyspark's layout)."""
    found: list[str] = []
    for pattern in _RUNTIME_JARS:
        matches = sorted(jars.glob(pattern))
        if not matches and pattern in _REQUIRED_JARS:
            return [f"{jars}/*"]
        found.extend(str(match) for match in matches[-1:])
    return found


def _jars() -> Path:
    try:
        return spark_jars_dir()
    except EmbeddedMetastoreError as error:
        raise ConfigurationError(f"the Hadoop filesystem helper runs on pyspark's Hadoop jars: {error}") from None
