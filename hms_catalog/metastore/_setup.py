"""Files the embedded metastore needs in its directory: hive-site.xml, a quiet log4j2 configuration and
the small Java helpers (the notification-log listener, the database preparer and the stub filesystem for
object-store locations).

Kept apart from the process handling so that the generated configuration can be read and tested
without starting Java.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import threading
from importlib import resources
from pathlib import Path
from xml.sax.saxutils import escape

from hms_catalog.errors import EmbeddedMetastoreError

__all__ = [
    "LISTENER_CLASS",
    "PREPARER_CLASS",
    "OBJECT_STORE_STUB_CLASS",
    "OBJECT_STORE_SCHEMES",
    "spark_jars_dir",
    "find_java_tool",
    "write_hive_site",
    "write_core_site",
    "write_log_config",
    "compile_helpers",
]

LISTENER_CLASS = "NotificationLogListener"
PREPARER_CLASS = "PrepareDatabase"
OBJECT_STORE_STUB_CLASS = "ObjectStoreStub"
# The schemes the stub answers for: the ones Hadoop, Spark and most metastores record for S3.
OBJECT_STORE_SCHEMES = ("s3a", "s3", "s3n")
# Hive's socket factories with a server socket on 127.0.0.1 (Hive 2.3's metastore has no bind-address setting),
# compiled into its package folder so that the helpers' folder, first on the classpath, shadows Hive's class.
LOOPBACK_SOCKETS_CLASS = "org/apache/hadoop/hive/common/auth/HiveAuthUtils"
_SOURCES = (f"{LISTENER_CLASS}.java", f"{PREPARER_CLASS}.java", "HiveAuthUtils.java")
_COMPILED = {"HiveAuthUtils.java": f"{LOOPBACK_SOCKETS_CLASS}.class"}  # classes in a package: their folder


def spark_jars_dir() -> Path:
    """The ``jars`` folder of the installed pyspark, which carries Hive 2.3's metastore and Derby."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedMetastoreError("pyspark is not installed; the embedded metastore runs from its Hive jars")
    jars = Path(next(iter(spec.submodule_search_locations))) / "jars"
    if not any(jars.glob("hive-metastore-*.jar")):
        raise EmbeddedMetastoreError(f"no hive-metastore jar under {jars}; reinstall pyspark")
    return jars


def find_java_tool(name: str) -> str | None:
    """``$JAVA_HOME/bin/<name>`` when set, else ``<name>`` on PATH; None when neither exists."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(name)


def compile_into(javac: str, source: Path, target: Path, classpath: str, *, files: dict[str, str] | None = None) -> str | None:
    """Compile ``source`` (and write ``files``, name -> text, beside it) into a private folder, then rename
    that folder to ``target``: a process or thread that finds the class in ``target`` never reads half of it.
    Another compile that finished first keeps its (same) folder. javac's error text when it fails, else None."""
    staging = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}")
    staging.mkdir(parents=True, exist_ok=True)
    result = subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "-d", str(staging), "-cp", classpath, str(source)],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        return result.stderr[-2000:]
    for name, text in (files or {}).items():
        (staging / name).write_text(text, encoding="utf-8")
    try:
        staging.rename(target)
    except OSError:  # another compile finished first; its copy is the same
        shutil.rmtree(staging, ignore_errors=True)
    return None


def write_hive_site(
    conf_dir: Path, *, db_dir: Path, warehouse: Path, with_events: bool, kerberos: tuple[str, Path] | None = None,
    object_store_stub: bool = False,
) -> Path:
    """Write the hive-site.xml the server and the preparer read through HIVE_CONF_DIR.

    ``kerberos``: the service principal and its keytab; the server then accepts SASL/GSSAPI only.
    ``object_store_stub``: S3's schemes served by the stub filesystem (``ObjectStoreStub.java``), which
    accepts their locations and touches no store (the metastore's Warehouse reads ``fs.<scheme>.impl`` from
    this file's configuration).
    """
    settings = {
        "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={db_dir};create=true",
        "datanucleus.schema.autoCreateAll": "true",
        "hive.metastore.schema.verification": "false",
        "hive.metastore.warehouse.dir": warehouse.as_uri(),
        # Without HikariCP, DataNucleus looks for BoneCP (not shipped) and drops connections on
        # drop_database and lock calls.
        "datanucleus.connectionPoolingType": "HikariCP",
        "hive.metastore.disallow.incompatible.col.type.changes": "false",
        # Copying the parent's owner, group and mode onto each new directory (removed in Hive 3) runs
        # chgrp/chmod/ls processes per directory on a local filesystem without Hadoop's native library:
        # two thirds of the time of an add_partitions whose directories do not exist yet (2,000 deep
        # partitions: 61 s with it, 22 s without).
        "hive.warehouse.subdir.inherit.perms": "false",
    }
    if with_events:
        settings["hive.metastore.transactional.event.listeners"] = LISTENER_CLASS
    if object_store_stub:
        settings.update({f"fs.{scheme}.impl": OBJECT_STORE_STUB_CLASS for scheme in OBJECT_STORE_SCHEMES})
    if kerberos is not None:
        principal, keytab = kerberos
        settings["hive.metastore.sasl.enabled"] = "true"
        settings["hive.metastore.kerberos.principal"] = principal
        settings["hive.metastore.kerberos.keytab.file"] = str(keytab)
    return _write_configuration(conf_dir / "hive-site.xml", settings)


def write_core_site(conf_dir: Path) -> Path:
    """A core-site.xml turning Hadoop's Kerberos on: read from the classpath only (in hive-site.xml the
    server ignores it), so ``conf_dir`` must be on the server's classpath."""
    conf_dir.mkdir(parents=True, exist_ok=True)
    return _write_configuration(conf_dir / "core-site.xml", {"hadoop.security.authentication": "kerberos"})


def _write_configuration(path: Path, settings: dict[str, str]) -> Path:
    body = "\n".join(
        f"  <property><name>{escape(key)}</name><value>{escape(value)}</value></property>"
        for key, value in settings.items()
    )
    path.write_text(f'<?xml version="1.0"?>\n<configuration>\n{body}\n</configuration>\n', encoding="utf-8")
    return path


def write_log_config(conf_dir: Path, log_file: Path, audit_file: Path | None = None) -> Path:
    """A log4j2 configuration that keeps the terminal silent and sends warnings to ``log_file``.

    With ``audit_file``, Hive's audit logger writes one line per metastore call there (``cmd=get_table``
    and so on): a count of calls made by any client, measured at the server.
    """
    text = (
        "status = ERROR\n"
        "name = hms-catalog-metastore\n"
        "appender.file.type = File\n"
        "appender.file.name = file\n"
        f"appender.file.fileName = {log_file}\n"
        "appender.file.layout.type = PatternLayout\n"
        "appender.file.layout.pattern = %d{ISO8601} %p %c{1}: %m%n\n"
        "rootLogger.level = WARN\n"
        "rootLogger.appenderRef.file.ref = file\n"
    )
    if audit_file is not None:
        text += (
            "appender.audit.type = File\n"
            "appender.audit.name = audit\n"
            f"appender.audit.fileName = {audit_file}\n"
            "appender.audit.immediateFlush = true\n"
            "appender.audit.layout.type = PatternLayout\n"
            "appender.audit.layout.pattern = %m%n\n"
            "logger.audit.name = org.apache.hadoop.hive.metastore.HiveMetaStore.audit\n"
            "logger.audit.level = INFO\n"
            "logger.audit.additivity = false\n"
            "logger.audit.appenderRef.audit.ref = audit\n"
        )
    path = conf_dir / "log4j2.properties"
    path.write_text(text, encoding="utf-8")
    return path


def compile_helpers(lib_dir: Path, jars: Path, *, object_store_stub: bool = False) -> bool:
    """Compile the Java helpers into ``lib_dir`` once; False when no ``javac`` is available.

    Recompiles only when a class is missing or older than its packaged source. The stub filesystem is
    compiled only for a metastore that uses it (javac takes most of a second more with it).
    """
    sources = resources.files("hms_catalog.metastore") / "resources"
    lib_dir.mkdir(parents=True, exist_ok=True)
    stale = []
    for name in (*_SOURCES, f"{OBJECT_STORE_STUB_CLASS}.java") if object_store_stub else _SOURCES:
        compiled = lib_dir / _COMPILED.get(name, name.replace(".java", ".class"))
        source = Path(str(sources / name))
        if not compiled.exists() or compiled.stat().st_mtime < source.stat().st_mtime:
            stale.append(source)
    if not stale:
        return True
    javac = find_java_tool("javac")
    if javac is None:
        return False
    result = subprocess.run(
        [javac, "-nowarn", "-encoding", "UTF-8", "-d", str(lib_dir), "-cp", f"{jars}/*", *map(str, stale)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise EmbeddedMetastoreError(f"javac failed on the metastore helpers:\n{result.stderr[-2000:]}")
    return True
