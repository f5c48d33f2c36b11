"""A session runs parsed statements against the catalogs and remembers SWITCH and USE.

Statements are dispatched through a table keyed by node type, so adding a statement is adding a handler
function and one entry. Handlers live in small modules by theme and receive the session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar, cast

from hms_catalog.errors import ConfigurationError
from hms_catalog.execution.extensions import load_extensions
from hms_catalog.execution.result import Result
from hms_catalog.manager import CatalogManager
from hms_catalog.model import ExternalCatalog, ExternalDatabase, ExternalTable
from hms_catalog.sql import ast
from hms_catalog.sql.parser import StatementSource, parse_statement, split_statements

__all__ = ["HANDLERS", "Session", "StatementSession", "Handler", "register"]

Handler = Callable[["Session", ast.Statement], Result]
Progress = Callable[[str, int, int], None]  # (what, done, total): long work reports as it goes
_HANDLERS: dict[type[ast.Statement], Handler] = {}
# The statement registry, read-only: ``register`` is its only writer (house rule 3).
HANDLERS: Mapping[type[ast.Statement], Handler] = MappingProxyType(_HANDLERS)


S = TypeVar("S", bound=ast.Statement)


def register(kind: type[S]) -> Callable[[Callable[[Session, S], Result]], Callable[[Session, S], Result]]:
    """Decorator that makes ``handler`` the runner of statements of type ``kind``.

    Typed by the statement class, so a handler declares the node it really receives; the registry
    stores it under that class and ``execute`` only ever hands it a node of that class.
    """

    def add(handler: Callable[[Session, S], Result]) -> Callable[[Session, S], Result]:
        _HANDLERS[kind] = cast(Handler, handler)
        return handler

    return add


@dataclass
class _Position:
    catalog: str | None = None
    database: str | None = None


class StatementSession:
    """Runs the statements of a text through :meth:`execute`: what a local and a remote session share."""

    def execute(self, statement: ast.Statement) -> Result:
        raise NotImplementedError

    def run(self, text: str) -> Iterator[tuple[str, Result]]:
        """Parse and run each statement of ``text`` in turn, yielding its text and result.

        A statement that fails raises; those before it stay applied.
        """
        context = StatementSource(text)  # errors quote whole lines of the input, not of one statement
        for source in split_statements(text):
            statement = parse_statement(source, context=context)
            yield statement.text, self.execute(statement)

    def run_one(self, text: str) -> Result:
        """Run the statements of ``text`` and return the last result."""
        result = Result()
        for _, last in self.run(text):
            result = last
        return result


class Session(StatementSession):
    """Runs statements for one user: current catalog and database, and the catalogs they reach."""

    def __init__(self, manager: CatalogManager, *, progress: Progress | None = None) -> None:
        load_extensions()
        self.manager = manager
        self.progress = progress
        # A statement may answer rows as an iterator (Result.streamed): the CLI writes them as they come. Off for
        # every other caller, who reads ``rows``.
        self.stream_rows = False
        self.engine_options: dict[str, str] = {}  # e.g. Spark's master or remote URL, set by the CLI
        self.options: dict[str, str] = {}  # SET key = value (sync_ddl, ...), lower-case keys
        # State of statement extensions (SELECT's Spark runner): each value with a ``close()`` is closed
        # with the session, so an engine a statement started does not outlive the session that asked.
        self.extras: dict[str, Any] = {}
        self._position = _Position()

    def close(self) -> None:
        """Close what the session's statements started; the shared catalogs stay open for other sessions.

        Idempotent. Every extra is closed even when one fails; the first failure is raised afterwards.
        """
        extras, self.extras = list(self.extras.values()), {}
        failure: BaseException | None = None
        for extra in extras:
            close = getattr(extra, "close", None)
            if close is None:
                continue
            try:
                close()
            except Exception as error:  # noqa: BLE001 - close the rest, then report the first
                failure = failure or error
        if failure is not None:
            raise failure

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def current_catalog(self) -> str | None:
        return self._position.catalog

    @property
    def current_database(self) -> str | None:
        return self._position.database

    def set_position(self, catalog: str | None, database: str | None) -> None:
        self._position = _Position(catalog.lower() if catalog else None, database.lower() if database else None)

    def execute(self, statement: ast.Statement) -> Result:
        handler = _HANDLERS.get(type(statement))
        if handler is None:
            raise ConfigurationError(f"statement {type(statement).__name__} is not supported here")
        return handler(self, statement)

    # Name resolution -----------------------------------------------------------------------------

    def catalog(self, name: str | None = None) -> ExternalCatalog:
        if name is None:
            name = self._position.catalog
            if name is None:
                raise ConfigurationError("no catalog selected: run SWITCH <catalog> or qualify the name as catalog.db.table")
        return self.manager.catalog(name)

    def database(self, target: ast.DatabaseName | None) -> ExternalDatabase:
        if target is None:
            catalog = self.catalog()
            if self._position.database is None:
                raise ConfigurationError("no database selected: run USE <db> or name one (FROM [catalog.]db)")
            return catalog.database(self._position.database)
        return self.catalog(target.catalog).database(target.database)

    def table(self, name: ast.TableName) -> ExternalTable:
        if name.database is None:
            return self.database(None).table(name.table)
        return self.catalog(name.catalog).database(name.database).table(name.table)
