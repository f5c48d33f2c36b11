"""The session's real PostgreSQL server: reachable the way a catalog will reach it, and across a restart."""

from __future__ import annotations

import stat

import psycopg
import pytest
import sqlalchemy

from tests.support.postgres import PostgresServer


def _connect(server: PostgresServer) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(
        host=server.host, port=server.port, user=server.user, password=server.password, dbname=server.database,
        connect_timeout=10,
    )


def test_accepts_the_hms_user_over_tcp_with_its_password(postgres: PostgresServer) -> None:
    with _connect(postgres) as connection:
        assert connection.execute("select 1").fetchone() == (1,)
    # the URL carries no secret; the password comes apart, from the 0600 file as a deployed catalog reads it
    assert postgres.password not in postgres.url
    assert stat.S_IMODE(postgres.password_file.stat().st_mode) == 0o600
    engine = sqlalchemy.create_engine(postgres.url, connect_args={"password": postgres.password_file.read_text()})
    try:
        with engine.connect() as connection:
            assert connection.execute(sqlalchemy.text("select current_user, current_database()")).one() == (
                "hms", "hms_catalog",
            )
    finally:
        engine.dispose()


def test_refuses_a_wrong_password(postgres: PostgresServer) -> None:
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(host=postgres.host, port=postgres.port, user=postgres.user, password="wrong",
                        dbname=postgres.database, connect_timeout=10)


def test_restart_drops_connections_and_keeps_the_data(postgres: PostgresServer) -> None:
    with _connect(postgres) as connection:
        connection.execute("create table if not exists survives_restart (n int)")
        connection.execute("insert into survives_restart values (1)")
    held = _connect(postgres)
    try:
        postgres.restart()
        with pytest.raises(psycopg.OperationalError):
            held.execute("select 1")
    finally:
        held.close()
    with _connect(postgres) as connection:
        assert connection.execute("select count(*) from survives_restart").fetchone() == (1,)
        connection.execute("drop table survives_restart")
