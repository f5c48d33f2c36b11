"""One state per home: a CLI session and a running service see each other's changes at their next statement,
and a serving process follows metastore events from the moment a catalog is defined, and from its start."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hms_catalog import open_session
from hms_catalog.execution import Session
from tests.service.conftest import EVENTS, hms_properties
from tests.support.hms import Admin
from tests.support.service import Server, served

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test


def _tables(session: Session, database: str) -> list[str]:
    return sorted(str(row[0]) for row in session.run_one(f"SHOW TABLES FROM hive.{database}").rows)


def _eventually(check: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {check}")
        time.sleep(0.1)


def _logged_by_long_poll(server: Server, catalog: str, wanted: str, timeout: float = 30.0) -> list[dict[str, Any]]:
    """What a subscriber that only long-polls the change feed sees, until it sees ``wanted`` (an object)."""
    client = server.client()
    try:
        since, seen = 0, []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            answer = client.changes(catalog, since, wait=2.0)
            seen.extend(answer["changes"])
            since = max([since, *(change["version"] for change in answer["changes"])])
            if any(change["object"] == wanted for change in seen):
                return seen
        raise AssertionError(f"{wanted} never reached the change feed; it logged {seen}")
    finally:
        client.close()


def _health(server: Server) -> dict[str, Any]:
    client = server.client()
    try:
        return dict(client.health())
    finally:
        client.close()


def _follower(server: Server, catalog: str) -> dict[str, Any] | None:
    health = _health(server)
    follower = health["followers"].get(catalog)
    lease = health.get("store", {}).get("event_followers", {}).get(catalog)
    if follower is None or not follower["running"] or follower["last_event_id"] is None or lease is None or not lease["live"]:
        return None  # not following yet: a table made now might precede the event id it begins after
    return {**follower, "lease": lease}


def test_a_cli_session_and_the_service_see_each_others_ddl_at_the_next_statement(
        home: Path, metastore_uri: str, admin: Admin, unique_name: str) -> None:
    admin.create_database(unique_name)
    admin.create_table(unique_name, "first", [("id", "int")])
    session = open_session(home)  # the CLI's and a notebook's way in: the home's shared manager
    try:
        session.run_one(f"CREATE CATALOG hive PROPERTIES ('type'='hms', 'hive.metastore.uris'='{metastore_uri}')")
        with served(home) as server:
            client = server.client()
            try:
                assert _tables(session, unique_name) == ["first"]  # cached here, for a day by default
                assert client.tables("hive", unique_name) == ["first"]  # and cached in the service
                client.statement(f"CREATE TABLE hive.{unique_name}.by_service (id INT) STORED AS PARQUET")
                assert _tables(session, unique_name) == ["by_service", "first"]  # no REFRESH, no expiry

                session.run_one(f"CREATE TABLE hive.{unique_name}.by_cli (id INT) STORED AS PARQUET")
                assert client.tables("hive", unique_name) == ["by_cli", "by_service", "first"]
                session.run_one(f"DROP TABLE hive.{unique_name}.by_service")
                assert client.tables("hive", unique_name) == ["by_cli", "first"]

                # One change log: the CLI's changes are numbered in the store, as the service's are.
                logged = [(c["kind"], c["object"], c["source"]) for c in client.changes("hive")["changes"]]
                assert logged == [("added", f"table {unique_name}.by_service", "ddl"),
                                  ("added", f"table {unique_name}.by_cli", "ddl"),
                                  ("dropped", f"table {unique_name}.by_service", "ddl")]
                shown = [(row[1], row[2], row[3]) for row in session.run_one("SHOW CHANGES FROM hive").rows]
                assert shown == logged
            finally:
                client.close()
    finally:
        session.manager.close()


def test_a_change_feed_subscriber_sees_tables_made_behind_the_service_from_the_catalogs_definition(
        home: Path, metastore_uri: str, admin: Admin, unique_name: str) -> None:
    admin.create_database(unique_name)
    with served(home) as server:
        client = server.client()
        try:
            client.create_catalog("followed", hms_properties(metastore_uri, **EVENTS))
        finally:
            client.close()
        # Nobody lists anything: the service follows from the definition on, and /v1/health says so.
        follower = _eventually(lambda: _follower(server, "followed"))
        assert follower["holds_lease"] and follower["lease"]["holder"] == _health(server)["store"]["replica"]
        admin.create_table(unique_name, "made_outside", [("id", "int")])
        seen = _logged_by_long_poll(server, "followed", f"table {unique_name}.made_outside")
        assert [(c["kind"], c["source"]) for c in seen if c["object"] == f"table {unique_name}.made_outside"] == [
            ("added", "event")]

    # A restarted service follows again at once, before any client asks anything of the catalog.
    with served(home) as again:
        _eventually(lambda: _follower(again, "followed"))
        admin.create_table(unique_name, "made_while_up_again", [("id", "int")])
        seen = _logged_by_long_poll(again, "followed", f"table {unique_name}.made_while_up_again")
        assert [c["source"] for c in seen if c["object"] == f"table {unique_name}.made_while_up_again"] == ["event"]


def test_a_catalog_defined_from_a_cli_is_followed_by_the_running_service(
        home: Path, metastore_uri: str, admin: Admin, unique_name: str) -> None:
    admin.create_database(unique_name)
    with served(home) as server:
        session = open_session(home)
        try:
            properties = ", ".join(f"'{k}'='{v}'" for k, v in hms_properties(metastore_uri, **EVENTS).items())
            session.run_one(f"CREATE CATALOG from_cli PROPERTIES ({properties})")
            _eventually(lambda: _follower(server, "from_cli"))
            admin.create_table(unique_name, "seen", [("id", "int")])
            _logged_by_long_poll(server, "from_cli", f"table {unique_name}.seen")
        finally:
            session.manager.close()
