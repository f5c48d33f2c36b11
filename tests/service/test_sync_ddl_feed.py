"""sync_ddl over a real server: a DDL answers once the followers of the change feed have seen it, and names
the ones that lag when they do not in time (the change is done either way)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest

from hms_catalog.errors import HmsCatalogError
from hms_catalog.remote import RemoteSession
from tests.service.conftest import hms_properties
from tests.service.test_ddl import ok, refused
from tests.support.service import Server

pytestmark = [pytest.mark.metastore, pytest.mark.slow]


class Follower:
    """A client following a catalog's change feed as a Spark driver does: polls from where it is, naming itself."""

    def __init__(self, server: Server, catalog: str, name: str) -> None:
        self._client = server.client()  # used by the follower's thread only: a client's connections are per thread
        self._stop = threading.Event()
        self._started = threading.Event()
        self.position = 0
        self._thread = threading.Thread(target=self._follow, args=(catalog, name), name=f"follower-{name}")
        self._thread.start()
        assert self._started.wait(timeout=30), f"follower {name} did not start"

    def _follow(self, catalog: str, name: str) -> None:
        try:
            self.position = int(self._client.changes(catalog, follower=name)["current"])
            self._started.set()
            while not self._stop.is_set():
                self.position = int(self._client.changes(catalog, since=self.position, wait=1, follower=name)["current"])
        finally:
            self._client.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


@pytest.fixture
def catalog(ddl_service: Server, metastore_uri: str, unique_name: str) -> Iterator[str]:
    """A catalog of its own: the followers a test leaves behind stay live for 30 s, and must not slow others."""
    name = f"{unique_name}_sync"
    client = ddl_service.client()
    client.create_catalog(name, hms_properties(metastore_uri))
    try:
        yield name
    finally:
        client.drop_database(name, unique_name, cascade=True, if_exists=True)
        client.drop_catalog(name)
        client.close()


def test_sync_ddl_waits_for_followers_and_names_the_ones_that_lag(ddl_service: Server, catalog: str, unique_name: str) -> None:
    server, db = ddl_service, unique_name
    base = f"/v1/catalogs/{catalog}/databases"
    alone = ok(server.request("POST", f"{base}?sync_ddl=true", {"name": db}))
    assert alone["result"].endswith("(sync_ddl: no live follower of the change feed, nothing to wait for)")

    quick = Follower(server, catalog, "quick")
    try:
        created = ok(server.request("POST", f"{base}/{db}/tables?sync_ddl=true", {"name": "t", "columns": [{"name": "a", "type": "int"}]}))
        assert created["result"].endswith("(sync_ddl: seen by every live follower of the change feed (1))")
        assert quick.position >= created["version"]  # what it acknowledged is what the answer waited for
        unchanged = ok(server.request("POST", f"{base}/{db}/tables?sync_ddl=true", {"name": "t", "columns": [{"name": "a", "type": "int"}],
                                                                                   "if_not_exists": True}))
        assert "nothing changed, nothing to wait for" in unchanged["result"]

        stuck = server.request("GET", f"/v1/catalogs/{catalog}/changes?since=0&follower=stuck")  # and never again
        assert stuck.status == 200
        table = f"{base}/{db}/tables/t"
        late = server.request("PATCH", f"{table}?sync_ddl=true&sync_ddl_timeout=1",
                              {"changes": [{"op": "set_properties", "properties": {"k": "v"}}]})
        error = refused(late, 504, "SyncDdlTimeoutError", "'stuck' at version 0", "within 1 s", "1 of 2 lag", "the change is done")
        assert error["lagging"] == {"stuck": 0} and "quick" not in error["message"]
        assert server.request("GET", table).json()["storage"]["table_parameters"]["k"] == "v"  # done all the same
        refused(server.request("PATCH", f"{table}?sync_ddl=true&sync_ddl_timeout=0", {"changes": [
            {"op": "set_properties", "properties": {"k": "w"}}]}), 400, "BadRequest", "sync_ddl_timeout")

        # The statement path: the request's flag, or SET sync_ddl in the statements (a remote session keeps it).
        sql = f"ALTER TABLE {catalog}.{db}.t SET TBLPROPERTIES ('k'='x')"
        answer = server.request("POST", "/v1/statements", {"sql": f"SET sync_ddl_timeout = 1; {sql}", "sync_ddl": True})
        refused(answer, 504, "SyncDdlTimeoutError", "'stuck' at version 0")
        line = json.loads((server.home / "audit.log").read_text(encoding="utf-8").splitlines()[-1])
        assert line["statement"] == sql and line["outcome"] == "ok" and "'stuck'" in line["sync_ddl"]
        with RemoteSession(server.client()) as remote:
            remote.run_one("SET sync_ddl = true")
            remote.run_one("SET sync_ddl_timeout = 1")
            assert remote.run_one("SET sync_ddl_timeout").rows == (("sync_ddl_timeout", "1"),)
            with pytest.raises(HmsCatalogError, match="'stuck' at version 0"):
                remote.run_one(sql)
    finally:
        quick.stop()


def test_sync_ddl_through_statements_waits_for_a_follower(ddl_service: Server, catalog: str, unique_name: str) -> None:
    server = ddl_service
    ok(server.request("POST", f"/v1/catalogs/{catalog}/databases", {"name": unique_name}))
    quick = Follower(server, catalog, "quick")
    try:
        answer = server.request("POST", "/v1/statements", {
            "sql": f"SET sync_ddl = true; CREATE TABLE {catalog}.{unique_name}.t (a int) STORED AS PARQUET"})
        assert answer.status == 200, answer
        body = answer.json()
        assert body["columns"][0] == "Result" and "version" in body["columns"][1].lower()
        assert body["sync_ddl"] == "sync_ddl: seen by every live follower of the change feed (1)"
        assert quick.position >= body["rows"][0][1]
    finally:
        quick.stop()
