"""A session whose statements run on a catalog service, with the same interface as a local one.

Statements are parsed here first, so a syntax error reads exactly as it does locally and never costs a
request; then their text goes to the server with the session's current catalog and database, and the
position the server answers with (after SWITCH or USE) is kept for the next statement. Options set with
``SET key = value`` (``sync_ddl``) are kept here too and sent with every statement, since each request runs
in a server session of its own.
"""

from __future__ import annotations

from typing import Any

from hms_catalog.execution.result import Result
from hms_catalog.execution.session import StatementSession
from hms_catalog.remote.client import CatalogServiceClient
from hms_catalog.remote.values import decode_value
from hms_catalog.sql import ast, ast_ddl

__all__ = ["RemoteSession"]


class RemoteSession(StatementSession):
    """Runs statements on the service ``client`` talks to; ``run``/``run_one``/``execute`` as :class:`Session`."""

    def __init__(self, client: CatalogServiceClient) -> None:
        self.client = client
        self.engine_options: dict[str, str] = {}  # SELECT runs on the server's engine; kept for the same interface
        self.options: dict[str, str] = {}  # SET key = value, lower-case keys, as a local session keeps them
        self._catalog: str | None = None
        self._database: str | None = None

    @property
    def current_catalog(self) -> str | None:
        return self._catalog

    @property
    def current_database(self) -> str | None:
        return self._database

    def set_position(self, catalog: str | None, database: str | None) -> None:
        self._catalog = catalog.lower() if catalog else None
        self._database = database.lower() if database else None

    def execute(self, statement: ast.Statement) -> Result:
        answer = self.client.statement(statement.text, self._catalog, self._database, options=self.options)
        self.set_position(answer.get("catalog"), answer.get("database"))
        if isinstance(statement, ast_ddl.SetOption) and statement.value is not None:
            self.options[statement.key.lower()] = statement.value  # the server took it: keep it for what follows
        return _result(answer)

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> RemoteSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _result(answer: dict[str, Any]) -> Result:
    rows = [tuple(decode_value(value) for value in row) for row in answer.get("rows", [])]
    return Result(columns=tuple(answer.get("columns", [])), rows=tuple(rows), message=str(answer.get("message", "")))
