"""Which database an embedded metastore keeps its metadata in: Derby in its directory (the default), a
PostgreSQL database it is given, or one on a PostgreSQL server of its own.

Parsed once, where the choice enters (``--db``, ``EmbeddedMetastore(database=...)``), into a frozen value;
what is wrong is said naming the part of the URL, and no message, ``repr`` or description ever holds the
password: :meth:`PostgresDatabase.describe` masks it as catalog properties' secrets are masked.

    derby                                                   Derby in DIR/metastore_db
    postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?OPTIONS]  a database on a server given to it
    postgresql                                              a server of its own in DIR/postgres

OPTIONS are handed to PostgreSQL's JDBC driver as they are (``?ssl=true&sslmode=verify-full``). The
password may also come from ``$HMS_CATALOG_METASTORE_DB_PASSWORD`` (or ``--db-password-file``), which keeps
it out of process listings and shell history.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from hms_catalog._secrets import MASK, is_secret_key
from hms_catalog.errors import ConfigurationError, EmbeddedMetastoreError

__all__ = [
    "DATABASE_PASSWORD_ENV", "JDBC_DRIVER_ENV", "JDBC_PACKAGE", "DerbyDatabase", "MetastoreDatabase",
    "PostgresDatabase", "driver_refusal", "jdbc_driver_jar", "mask_database_url", "parse_database", "same_database",
]

DATABASE_PASSWORD_ENV = "HMS_CATALOG_METASTORE_DB_PASSWORD"
# Debian's PostgreSQL JDBC driver; elsewhere point $HMS_CATALOG_POSTGRES_JDBC_JAR at a postgresql-42.x.jar.
JDBC_DRIVER_ENV = "HMS_CATALOG_POSTGRES_JDBC_JAR"
JDBC_PACKAGE = "libpostgresql-jdbc-java"
_DEBIAN_JAR = Path("/usr/share/java/postgresql.jar")
_SCHEMES = ("postgresql", "postgres")
DEFAULT_POSTGRES_PORT = 5432
_FORMS = "derby, postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE, or postgresql for a server of its own"
# user:password@ in anything that looks like a URL, parsable or not, up to its last @ (a password may hold
# one, or a slash, unencoded): what an error message may quote of it
_USERINFO = re.compile(r"(?P<head>//[^/@:?#]*:).*@", re.DOTALL)
# The JDBC driver's words for a server that refused the connection or the login, as the metastore logs them.
_DRIVER_REFUSAL = re.compile(r"org\.postgresql\.util\.PSQLException: (.+)")


@dataclass(frozen=True)
class DerbyDatabase:
    """Derby in the metastore's directory: nothing to set up, one server at a time."""

    def describe(self) -> str:
        return "derby"

    def url(self) -> str:
        return "derby"

    def __str__(self) -> str:
        return self.describe()


@dataclass(frozen=True, repr=False)
class PostgresDatabase:
    """A PostgreSQL database: on a server given to the metastore, or (``own_server``) on a server of its own in
    its directory, which :func:`hms_catalog.metastore._backend.reach` starts and resolves to a host, a port
    and credentials (:meth:`on`). ``options``: JDBC connection options. The password is kept out of ``repr``
    and equality."""

    host: str | None = None
    port: int = DEFAULT_POSTGRES_PORT
    database: str = "metastore"
    user: str | None = None
    password: str | None = field(default=None, repr=False, compare=False)
    options: tuple[tuple[str, str], ...] = ()
    own_server: bool = False

    def describe(self) -> str:
        """The URL as it may be shown: the password (and any secret option) masked."""
        if self.host is None:
            return "postgresql (a server of its own)"
        return self._url(self.password, masked=True) + (" (a server of its own)" if self.own_server else "")

    def url(self) -> str:
        """The URL with its password, to remember the choice in the metastore's directory (a file only its
        owner reads); a server of its own is remembered as that, not as the port it listened on."""
        if self.own_server:
            return "postgresql" if self.database == "metastore" else f"postgresql:///{quote(self.database, safe='')}"
        return self._url(self.password, masked=False)

    def jdbc_url(self) -> str:
        if self.host is None:
            raise EmbeddedMetastoreError("the metastore's own PostgreSQL server has not been started")
        host = f"[{self.host}]" if ":" in self.host else self.host
        query = "&".join(f"{quote(key, safe='')}={quote(value, safe='')}" for key, value in self.options)
        return f"jdbc:postgresql://{host}:{self.port}/{quote(self.database, safe='')}" + (f"?{query}" if query else "")

    def hive_settings(self) -> dict[str, str]:
        """The hive-site.xml settings that put the metastore's database here."""
        return {
            "javax.jdo.option.ConnectionURL": self.jdbc_url(),
            "javax.jdo.option.ConnectionDriverName": "org.postgresql.Driver",
            "javax.jdo.option.ConnectionUserName": self.user or "",
            "javax.jdo.option.ConnectionPassword": self.password or "",
            # The VERSION row schematool would write, so a Hive that verifies its schema accepts this database.
            "hive.metastore.schema.verification.record.version": "true",
        }

    def on(self, host: str, port: int, user: str, password: str) -> PostgresDatabase:
        """This database on a server that has been started: where it listens and who to log in as."""
        return replace(self, host=host, port=port, user=user, password=password)

    def _url(self, password: str | None, *, masked: bool) -> str:
        assert self.host is not None
        credentials = quote(self.user or "", safe="")
        if password is not None:
            credentials += ":" + (MASK if masked else quote(password, safe=""))
        host = f"[{self.host}]" if ":" in self.host else self.host
        options = "&".join(
            f"{quote(key, safe='')}={MASK if masked and is_secret_key(key) else quote(value, safe='')}"
            for key, value in self.options
        )
        return f"postgresql://{credentials}@{host}:{self.port}/{quote(self.database, safe='')}" + (f"?{options}" if options else "")

    def __str__(self) -> str:
        return self.describe()

    def __repr__(self) -> str:
        return f"PostgresDatabase({self.describe()!r})"


MetastoreDatabase = DerbyDatabase | PostgresDatabase


def mask_database_url(text: str) -> str:
    """``text`` with any ``user:password@`` password and secret option masked: what a message may quote of a
    URL, even one that does not parse."""
    masked = _USERINFO.sub(lambda match: f"{match.group('head')}{MASK}@", text)
    base, mark, query = masked.partition("?")
    options = (_mask_option(pair) for pair in query.split("&"))
    return base + mark + "&".join(options) if mark else masked


def _mask_option(pair: str) -> str:
    key, equals, _ = pair.partition("=")
    return f"{key}={MASK}" if equals and is_secret_key(unquote(key)) else pair


def parse_database(
    given: str | MetastoreDatabase | None, *, password: str | None = None, where: str = "--db"
) -> MetastoreDatabase:
    """The database ``given`` names (see the module); ConfigurationError saying what is wrong, the password
    never quoted. ``password`` is used when the URL carries none, else ``$HMS_CATALOG_METASTORE_DB_PASSWORD``."""
    if isinstance(given, DerbyDatabase | PostgresDatabase):
        return given
    text = (given or "derby").strip()
    if text.lower() == "derby":
        return DerbyDatabase()
    shown = mask_database_url(text)
    scheme, _, rest = text.partition(":")
    if scheme.lower() not in _SCHEMES:
        raise ConfigurationError(f"{where} {shown!r}: not a metastore database; give {_FORMS}")
    if rest in ("", "//", "///"):
        return PostgresDatabase(own_server=True)
    if not rest.startswith("//"):
        raise ConfigurationError(f"{where} {shown!r}: a PostgreSQL URL is postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:  # not chained: urlsplit's message quotes what it took for the port, a password's start
        raise ConfigurationError(f"{where} {shown!r}: the port must be a number from 1 to 65535 (a password holding "
                                 f"'/', '#' or '?' is percent-encoded: %2F, %23, %3F)") from None
    if parts.fragment:
        raise ConfigurationError(f"{where} {shown!r}: a database URL has no #fragment")
    if not parts.hostname:
        if parts.netloc:
            raise ConfigurationError(f"{where} {shown!r}: names no host (postgresql://USER@HOST/DATABASE)")
        name = _database_name(parts.path, shown, where) if parts.path.strip("/") else "metastore"
        return PostgresDatabase(database=name, own_server=True)
    if parts.username is None or not unquote(parts.username):
        raise ConfigurationError(f"{where} {shown!r}: names no user (postgresql://USER[:PASSWORD]@HOST/DATABASE)")
    if port == 0:
        raise ConfigurationError(f"{where} {shown!r}: the port must be a number from 1 to 65535")
    options = tuple(_options(parts.query, shown, where))
    secret = unquote(parts.password) if parts.password is not None else None
    return PostgresDatabase(
        host=parts.hostname, port=port or DEFAULT_POSTGRES_PORT, database=_database_name(parts.path, shown, where),
        user=unquote(parts.username), password=secret or password or os.environ.get(DATABASE_PASSWORD_ENV) or None,
        options=options,
    )


def _database_name(path: str, shown: str, where: str) -> str:
    name = unquote(path[1:]) if path.startswith("/") else ""
    if not name or "/" in name:
        raise ConfigurationError(f"{where} {shown!r}: name one database after the host (.../DATABASE)")
    return name


def _options(query: str, shown: str, where: str) -> list[tuple[str, str]]:
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError as error:
        raise ConfigurationError(f"{where} {shown!r}: options are KEY=VALUE pairs joined by &") from error
    for key, _ in pairs:
        if key.lower() in ("user", "password"):
            raise ConfigurationError(f"{where} {shown!r}: give the {key.lower()} before the host "
                                     "(USER[:PASSWORD]@HOST), not as an option")
    return pairs


def jdbc_driver_jar() -> Path:
    """PostgreSQL's JDBC driver for the metastore's classpath: ``$HMS_CATALOG_POSTGRES_JDBC_JAR``, else Debian's."""
    configured = os.environ.get(JDBC_DRIVER_ENV)
    jar = Path(configured).expanduser() if configured else _DEBIAN_JAR
    if not jar.is_file():
        where = f"{JDBC_DRIVER_ENV}={configured}" if configured else str(jar)
        raise EmbeddedMetastoreError(
            f"a metastore on PostgreSQL needs PostgreSQL's JDBC driver, and {where} does not exist: install "
            f"Debian's {JDBC_PACKAGE} (apt-get install {JDBC_PACKAGE}), or set {JDBC_DRIVER_ENV} to a postgresql-42.x.jar"
        )
    return jar


def same_database(one: MetastoreDatabase, other: MetastoreDatabase) -> bool:
    """Whether two choices are the same database: equal but for the password (never compared) and the order of
    the JDBC options."""
    if isinstance(one, PostgresDatabase) and isinstance(other, PostgresDatabase):
        return replace(one, options=tuple(sorted(one.options))) == replace(other, options=tuple(sorted(other.options)))
    return one == other


def driver_refusal(log: str) -> str | None:
    """The first refusal PostgreSQL's JDBC driver logged in ``log`` (a wrong password or user, a database that
    does not exist, a server that cannot be reached), as one line; None when it logged none."""
    found = _DRIVER_REFUSAL.search(log)
    return found.group(1).strip() if found is not None else None
