"""What a start of the embedded metastore needs of its database besides the choice itself: a PostgreSQL server
of its own started first, the JDBC driver on the classpath, and the class its JVM runs.

On Derby the server runs Hive's HiveMetaStore, the database having been prepared before by a JVM of its own
(or copied from one prepared earlier: :mod:`hms_catalog.metastore._derby`). On PostgreSQL the server's JVM
runs the preparer first (``PrepareDatabase --serve``): the database is not the directory's, so no file there
can tell whether it was prepared, and looking at a prepared one costs a few catalog queries where a JVM of
its own would cost seconds.
"""

from __future__ import annotations

from pathlib import Path

from hms_catalog.metastore import _setup
from hms_catalog.metastore._database import MetastoreDatabase, PostgresDatabase, jdbc_driver_jar
from hms_catalog.metastore._postgres_server import PostgresServer, available

__all__ = ["OWN_SERVER_FOLDER", "OWN_USER", "classpath", "main_class", "own_server", "reach", "stop_own_server"]

OWN_SERVER_FOLDER = "postgres"
OWN_USER = "hive"
SERVER_CLASS = "org.apache.hadoop.hive.metastore.HiveMetaStore"


def own_server(directory: Path, database: str = "metastore") -> PostgresServer:
    """The PostgreSQL server of the metastore in ``directory`` (``DIR/postgres``): durable, and detached so that
    it outlives the process that started it, as the metastore does."""
    return PostgresServer(directory / OWN_SERVER_FOLDER, user=OWN_USER, database=database, detached=True)


def reach(directory: Path, database: MetastoreDatabase) -> tuple[MetastoreDatabase, PostgresServer | None]:
    """``database`` as the server will reach it, and the server of its own that was started for it, if any.

    EmbeddedMetastoreError when PostgreSQL's JDBC driver is not installed (saying which package to install),
    or when a server of its own cannot be started (no server binaries, initdb failing: the log's tail).
    """
    if not isinstance(database, PostgresDatabase):
        return database, None
    jdbc_driver_jar()
    if not database.own_server:
        return database, None
    server = own_server(directory, database.database)
    started = not server.running
    try:
        server.start()
        server.ensure_database(database.database)
    except BaseException:
        if started:
            server.stop()
        raise
    return database.on(server.host, server.port, server.user, server.password), server if started else None


def classpath(database: MetastoreDatabase) -> list[str]:
    """What the server's classpath needs beyond the helpers and pyspark's jars."""
    return [str(jdbc_driver_jar())] if isinstance(database, PostgresDatabase) else []


def main_class(database: MetastoreDatabase) -> list[str]:
    """The class the server's JVM runs, with its leading arguments (see the module)."""
    return [_setup.PREPARER_CLASS, "--serve"] if isinstance(database, PostgresDatabase) else [SERVER_CLASS]


def stop_own_server(directory: Path) -> bool:
    """Stop the server of its own in ``directory``, whoever started it; False when there is none running."""
    if not (directory / OWN_SERVER_FOLDER).is_dir() or not available()[0]:
        return False
    return own_server(directory).stop()
