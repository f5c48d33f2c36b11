"""The one exception hierarchy of hms-catalog.

Every error the package raises on purpose derives from :class:`HmsCatalogError`, so a caller (the CLI,
a notebook, a scheduler) can catch one class and still tell the cases apart by subclass when it needs to
act differently: fix a property, create a missing object, retry a metastore outage.

Every class also has an :class:`ErrorKind`, what the failure lets a caller do. The front ends answer by kind,
each from one table of its own (the REST status, Iceberg's error type, the metastore's thrift exception), so a
new class needs no change to any of them, and the same failure is the same answer on every protocol.
"""

from __future__ import annotations

from enum import Enum
from typing import ClassVar

__all__ = [
    "ErrorKind",
    "kind_of",
    "HmsCatalogError",
    "ConfigurationError",
    "NotFoundError",
    "AlreadyExistsError",
    "VersionMismatchError",
    "UnsupportedTableError",
    "MetastoreError",
    "MetastoreUnavailableError",
    "MetastoreRejectedError",
    "UnsupportedCallError",
    "AuthenticationError",
    "PoolClosedError",
    "PoolExhaustedError",
    "SqlSyntaxError",
    "PlanningError",
    "StorageError",
    "StorageUnavailableError",
    "VendingDisabledError",
    "EmbeddedMetastoreError",
    "SchemaError",
    "UnsupportedTypeError",
    "ServiceError",
    "WriteConflictError",
    "StoreUnavailableError",
    "LeaseLostError",
]


class ErrorKind(str, Enum):
    """What a failure lets its caller do; each protocol maps every kind to its own answer."""

    INVALID = "invalid"  # the request is wrong (a property, a statement, a name): fix it
    FORBIDDEN = "forbidden"  # the caller may not do this: ask with other credentials
    NOT_FOUND = "not_found"  # the object named does not exist: create it or name another
    ALREADY_EXISTS = "already_exists"  # an object of that name exists: pick another name
    CONFLICT = "conflict"  # a concurrent change got there first; nothing of this one was applied: run it again
    STALE = "stale"  # made conditional on a version that has changed since: read again, then retry
    UNSUPPORTED = "unsupported"  # valid, but the catalog or the metastore behind it cannot do it
    UPSTREAM_REFUSED = "upstream_refused"  # the metastore or a store answered, and refused
    UNAVAILABLE = "unavailable"  # the metastore, a store or the catalog's store cannot be reached now: retry later
    TIMED_OUT = "timed_out"  # done, but not confirmed within the time given (followers still behind)
    INTERNAL = "internal"  # a fault of hms-catalog itself


class HmsCatalogError(Exception):
    """Root of every error raised by hms-catalog.

    ``error_kind`` (a class attribute; an instance may narrow it) says what the failure lets a caller do.
    """

    error_kind: ClassVar[ErrorKind] = ErrorKind.INVALID


def kind_of(error: BaseException) -> ErrorKind:
    """The kind of any exception: a catalog error's own, INTERNAL for everything else (a fault to log)."""
    if isinstance(error, HmsCatalogError):
        return error.error_kind
    return ErrorKind.INTERNAL


class ConfigurationError(HmsCatalogError):
    """A property, option or argument is missing or malformed; the message names it."""

    error_kind = ErrorKind.INVALID


class NotFoundError(HmsCatalogError):
    """A catalog, database or table does not exist.

    ``kind`` is ``"catalog"``, ``"database"`` or ``"table"`` and ``name`` the dotted name asked for,
    so that callers can offer to create it or fall back without parsing the message.
    """

    error_kind = ErrorKind.NOT_FOUND

    def __init__(self, kind: str, name: str, detail: str = "") -> None:
        self.kind = kind
        self.name = name
        message = f"{kind} '{name}' does not exist"
        super().__init__(f"{message}: {detail}" if detail else message)


class AlreadyExistsError(HmsCatalogError):
    """An object of that name exists already (CREATE without IF NOT EXISTS, RENAME onto a name)."""

    error_kind = ErrorKind.ALREADY_EXISTS

    def __init__(self, kind: str, name: str) -> None:
        self.kind = kind
        self.name = name
        super().__init__(f"{kind} '{name}' already exists")


class VersionMismatchError(HmsCatalogError):
    """A change was made conditional on an object's version (If-Match), and the object has changed since."""

    error_kind = ErrorKind.STALE


class WriteConflictError(HmsCatalogError):
    """Another write changed the partitions (or the table) a write replaces since it began: nothing of the
    later write was applied, and it may be run again."""

    error_kind = ErrorKind.CONFLICT


class UnsupportedTableError(HmsCatalogError):
    """The table exists but cannot be read by hms-catalog; the message carries the reason."""

    error_kind = ErrorKind.UNSUPPORTED


class MetastoreError(HmsCatalogError):
    """The metastore answered with an error that is not a missing object."""

    error_kind = ErrorKind.UPSTREAM_REFUSED


class MetastoreUnavailableError(MetastoreError):
    """No metastore URI answered within the retries and timeouts configured."""

    error_kind = ErrorKind.UNAVAILABLE


class MetastoreRejectedError(MetastoreError):
    """The metastore refused the request itself as invalid (an object name it does not accept, an operation it does
    not allow): the request must change, so it is a bad request, not a failure of the metastore."""

    error_kind = ErrorKind.INVALID


class UnsupportedCallError(MetastoreError):
    """The metastore answers none of the thrift calls that could ask it this (it is too old or too new);
    the message names the calls tried and the metastore versions that answer each."""

    error_kind = ErrorKind.UNSUPPORTED


class AuthenticationError(MetastoreUnavailableError):
    """Kerberos or SASL refused the connection to a metastore: missing or expired credentials, an unknown
    or wrong service principal, clock skew, or a client and a metastore that disagree on SASL. Not
    retried, since the next attempt would fail the same way; the message names the principal, the URI
    and what to change."""


class PoolClosedError(HmsCatalogError):
    """A client was asked of a pool that has been closed."""

    error_kind = ErrorKind.UNAVAILABLE


class PoolExhaustedError(MetastoreUnavailableError):
    """Every pooled client stayed borrowed for longer than the borrow timeout."""


class SqlSyntaxError(HmsCatalogError):
    """A statement could not be parsed.

    Carries the 1-based ``line`` and ``column`` of the offending ``token`` and an ``excerpt`` of the
    input line with a caret under the position, which the CLI prints as is.
    """

    error_kind = ErrorKind.INVALID

    def __init__(self, message: str, *, line: int, column: int, token: str = "", excerpt: str = "") -> None:
        self.line = line
        self.column = column
        self.token = token
        self.excerpt = excerpt
        self.reason = message
        where = f"line {line}:{column}"
        near = f" near '{token}'" if token else ""
        text = f"{where}: {message}{near}"
        if excerpt:
            text = f"{text}\n{excerpt}"
        super().__init__(text)


class PlanningError(HmsCatalogError):
    """A split plan could not be made (too many partitions, unreadable location, ...)."""

    error_kind = ErrorKind.INVALID


class StorageError(HmsCatalogError):
    """A store (an object store, HDFS, any Hadoop filesystem) refused a request or could not be reached.

    The message names the catalog and the location, never a credential.
    """

    error_kind = ErrorKind.UPSTREAM_REFUSED


class StorageUnavailableError(StorageError):
    """A store did not answer within its timeouts, or could not be connected to: retry later (503)."""

    error_kind = ErrorKind.UNAVAILABLE


class VendingDisabledError(HmsCatalogError):
    """Storage credentials were asked of a catalog that vends none (``'storage.vending'='none'``): the engine
    reaches the store with its own settings. A refusal (403), not a fault: the catalog's definition decides."""

    error_kind = ErrorKind.FORBIDDEN


class EmbeddedMetastoreError(HmsCatalogError):
    """The embedded metastore could not be started, reached or stopped; the message has the log tail."""

    error_kind = ErrorKind.UNAVAILABLE


class SchemaError(HmsCatalogError):
    """A type string or table schema could not be understood.

    ``column`` names the column (when known) and ``position`` the 0-based offset in the type string
    where parsing stopped, so a malformed schema is reported where it is wrong.
    """

    error_kind = ErrorKind.INVALID

    def __init__(self, message: str, *, column: str | None = None, position: int | None = None) -> None:
        self.column = column
        self.position = position
        self.reason = message
        where = []
        if column is not None:
            where.append(f"column '{column}'")
        if position is not None:
            where.append(f"position {position}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class UnsupportedTypeError(SchemaError):
    """A type exists in the source schema but has no counterpart where it must be rendered (Spark, Arrow)."""

    error_kind = ErrorKind.UNSUPPORTED


class ServiceError(HmsCatalogError):
    """The catalog service could not be reached, or answered with something that is not its API."""

    error_kind = ErrorKind.UNAVAILABLE


class StoreUnavailableError(HmsCatalogError):
    """The catalog store (the SQLite file, or the PostgreSQL server replicas share) cannot be reached now.

    Nothing was changed by the failed call; the service answers 503 and the same request may be retried.
    """

    error_kind = ErrorKind.UNAVAILABLE


class LeaseLostError(HmsCatalogError):
    """A replica acted on a lease (following a metastore's events) that another replica has since taken over.

    What it was about to record was not recorded: the new holder resumes from the position last stored.
    """

    error_kind = ErrorKind.UNAVAILABLE
