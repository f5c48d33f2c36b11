"""Files the embedded metastore needs in its directory: hive-site.xml, a quiet log4j2 configuration and
the small Java helpers (the notification-log listener, the database preparer, the stub filesystem for
object-store locations and the loopback socket factories).

The helpers are compiled once per source digest and Hive version into the Java cache
(``~/.cache/hms-catalog/java`` or ``$HMS_CATALOG_JAVA_CACHE``, as the connector's jar is) and copied into
each metastore's directory; a freshly prepared, still empty Derby database is kept there too, so a new
metastore directory starts from a copy of it instead of running the preparer again (most of a first start).

Kept apart from the process handling so that the generated configuration can be read and tested
without starting Java.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from xml.sax.saxutils import escape

from hms_catalog._private import private_file
from hms_catalog.errors import EmbeddedMetastoreError
from hms_catalog.jdk import compile_into, find_java_tool, java_cache_dir

__all__ = [
    "LISTENER_CLASS",
    "PREPARER_CLASS",
    "OBJECT_STORE_STUB_CLASS",
    "OBJECT_STORE_SCHEMES",
    "write_hive_site",
    "write_core_site",
    "write_log_config",
    "compile_helpers",
    "copy_prepared_database",
    "keep_prepared_database",
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
def write_hive_site(
    conf_dir: Path, *, db_dir: Path, warehouse: Path, with_events: bool, kerberos: tuple[str, Path] | None = None,
    object_store_stub: bool = False, connection: Mapping[str, str] | None = None,
) -> Path:
    """Write the hive-site.xml the server and the preparer read through HIVE_CONF_DIR, readable by its owner
    only (on PostgreSQL it holds the database's password).

    ``connection``: the JDO connection settings of another database than Derby in ``db_dir``
    (:meth:`PostgresDatabase.hive_settings <hms_catalog.metastore._database.PostgresDatabase.hive_settings>`).
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
    if connection is not None:
        settings.update(connection)
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
    text = f'<?xml version="1.0"?>\n<configuration>\n{body}\n</configuration>\n'
    with os.fdopen(private_file(path, os.O_WRONLY | os.O_TRUNC), "w", encoding="utf-8") as out:
        out.write(text)
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


def _helper_sources() -> list[Path]:
    folder = resources.files("hms_catalog.metastore") / "resources"
    return [Path(str(folder / name)) for name in (*_SOURCES, f"{OBJECT_STORE_STUB_CLASS}.java")]


def _hive_version(jars: Path) -> str:
    return ",".join(sorted(jar.name for jar in jars.glob("hive-metastore-*.jar")) + sorted(jar.name for jar in jars.glob("derby-*.jar")))


def compile_helpers(lib_dir: Path, jars: Path, *, object_store_stub: bool = False) -> bool:
    """Put the compiled Java helpers into ``lib_dir``; False when they are not there and no ``javac`` is.

    They are compiled once per source digest and Hive version into the Java cache (every helper at once: a
    metastore directory of its own, as each test's or demo's is, then costs a copy of a few small files, not
    a javac run) and copied from there when ``lib_dir`` lacks one or holds another version.
    ``object_store_stub``: whether the stub filesystem is needed (it is compiled with the rest either way).
    """
    sources = _helper_sources()
    digest = hashlib.sha256(_hive_version(jars).encode())
    for source in sources:
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    compiled = java_cache_dir() / f"metastore-helpers-{digest.hexdigest()[:12]}"
    if not compiled.is_dir():
        javac = find_java_tool("javac")
        if javac is None:
            return _has_helpers(lib_dir, object_store_stub)  # compiled earlier by a machine with a JDK, or not at all
        compiled.parent.mkdir(parents=True, exist_ok=True)
        failure = compile_into(javac, sources, compiled, f"{jars}/*")
        if failure is not None:
            raise EmbeddedMetastoreError(f"javac failed on the metastore helpers:\n{failure}")
    for found in compiled.rglob("*.class"):
        copy = lib_dir / found.relative_to(compiled)
        if not copy.exists() or copy.read_bytes() != found.read_bytes():
            copy.parent.mkdir(parents=True, exist_ok=True)
            partial = copy.with_name(copy.name + f".{os.getpid()}")
            shutil.copyfile(found, partial)
            os.replace(partial, copy)  # a server starting on this directory never loads half a class
    return True


def _has_helpers(lib_dir: Path, object_store_stub: bool) -> bool:
    names = (*_SOURCES, f"{OBJECT_STORE_STUB_CLASS}.java") if object_store_stub else _SOURCES
    return all((lib_dir / _COMPILED.get(name, name.replace(".java", ".class"))).exists() for name in names)


def _prepared_database_dir(jars: Path, level: str) -> Path:
    digest = hashlib.sha256(f"{_hive_version(jars)}|{level}".encode())
    digest.update((Path(str(resources.files("hms_catalog.metastore") / "resources" / f"{PREPARER_CLASS}.java"))).read_bytes())
    return java_cache_dir() / f"metastore-db-{digest.hexdigest()[:12]}"


def copy_prepared_database(db_dir: Path, jars: Path, level: str) -> bool:
    """Make ``db_dir`` (which must not exist) a copy of a database prepared earlier at ``level`` with these
    jars; False when none was kept. The copy is an empty metastore: tables and columns, no rows."""
    template = _prepared_database_dir(jars, level)
    if not template.is_dir() or db_dir.exists():
        return False
    partial = db_dir.with_name(db_dir.name + f".{os.getpid()}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(template, partial)
    partial.rename(db_dir)
    return True


def keep_prepared_database(db_dir: Path, jars: Path, level: str) -> None:
    """Keep a copy of ``db_dir``, just prepared and never served (so still empty), for the next new
    directory; Derby's files are closed once the preparer has exited, so a folder copy is a whole database."""
    template = _prepared_database_dir(jars, level)
    if template.is_dir():
        return
    template.parent.mkdir(parents=True, exist_ok=True)
    staging = template.with_name(f"{template.name}.{os.getpid()}.{threading.get_ident()}")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(db_dir, staging)
    try:
        staging.rename(template)
    except OSError:  # another process kept one first; it is the same
        shutil.rmtree(staging, ignore_errors=True)
