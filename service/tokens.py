"""Named tokens (``serve --tokens PATH``) beside the server's own, the Kerberos principals their entries list,
and the grant a request's token or a connection's principal carries.

The file is read and checked once, at start: a service that starts has a token table that means what its
author meant, or it does not start and the error names the file, the entry and what is wrong (never a
secret). Each request's token is compared with every known token in constant time, all of them every
time, so neither a prefix nor which entry matched shows in the time an answer takes.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import re
import stat
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hms_catalog.errors import ConfigurationError, HmsCatalogError
from hms_catalog.state import StoredToken, token_digest
from service.access import ADMIN, Access, AccessPolicy, Principal
from service.auth import MIN_TOKEN_LENGTH, bearer_token

__all__ = ["KerberosPrincipals", "NamedToken", "TokenTable", "load_tokens", "stored_tokens"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
# primary[/instance]@REALM, as a KDC names a principal (the realm is required: a name without one is ambiguous)
_KERBEROS_NAME = re.compile(r"^[^/@\s]+(/[^/@\s]+)?@[^/@\s]+$")
_ENTRY_KEYS = frozenset({"name", "token", "access", "catalogs", "principals"})
_ACCESS = {"read": Access.READ, "write": Access.WRITE}


@dataclass(frozen=True)
class NamedToken:
    """One entry of the tokens file: its grant, its token (None: the entry names principals only) and the
    Kerberos principals that carry the same grant."""

    principal: Principal
    secret: str | None = field(repr=False)
    kerberos: tuple[str, ...] = ()


class KerberosPrincipals(AccessPolicy):
    """The grant of a thrift connection's Kerberos principal: the entry of the tokens file that lists it,
    with that entry's access and catalogs. A principal that no entry lists gets nothing (None)."""

    def __init__(self, named: Sequence[NamedToken] = ()) -> None:
        self._grants = {name.lower(): Principal(name, t.principal.access, t.principal.catalogs, kind="principal")
                        for t in named for name in t.kerberos}

    def __bool__(self) -> bool:
        return bool(self._grants)

    def principal(self, credential: str | None) -> Principal | None:
        return None if not credential else self._grants.get(credential.lower())


class TokenTable(AccessPolicy):
    """The server's own token (the admin) and the named ones, looked up by a request's ``Authorization`` header.

    Tokens are compared as SHA-256 digests, so the named ones may come from the catalog store (``stored``),
    which holds only digests: replicas sharing a store accept the same named tokens, re-read every
    ``refresh_seconds`` so a ``serve --tokens`` on one replica reaches the others. A store that cannot be
    read keeps the tokens last read.
    """

    def __init__(self, admin_token: str, named: Sequence[NamedToken] = (), *,
                 stored: Callable[[], Sequence[StoredToken]] | None = None, refresh_seconds: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._admin = (_digest(admin_token), ADMIN)
        self._entries = [(_digest(t.secret), t.principal) for t in named if t.secret is not None]
        self._stored = stored
        self._refresh_seconds = refresh_seconds
        self._clock = clock
        self._read_at = float("-inf")
        self._lock = threading.Lock()

    def principal(self, credential: str | None) -> Principal | None:
        """Whose token an ``Authorization`` header (``credential``) carries, or None (401)."""
        given = bearer_token(credential)
        if given is None:
            return None
        digest = _digest(given)
        found = None
        for known, principal in [self._admin, *self._named()]:  # every entry, whatever matched: the time says nothing
            if hmac.compare_digest(digest, known) and found is None:
                found = principal
        return found

    def named(self, name: str) -> tuple[bytes, Principal] | None:
        """The current digest and principal of the token named ``name`` (``admin`` for the server's own), or
        None once it is gone: what an Iceberg token issued for it is checked against at every request."""
        wanted = name.lower()
        for digest, principal in [self._admin, *self._named()]:
            if principal.name.lower() == wanted:
                return digest, principal
        return None

    def signing_key(self, digest: bytes) -> bytes:
        """A key for tokens issued on behalf of the token whose digest is ``digest``: derived from the server's
        own token as well, so a reader of the store (which holds digests) cannot make one, and every replica
        started with the same server token derives the same key."""
        return hmac.new(self._admin[0], b"hms-catalog issued token\0" + digest, "sha256").digest()

    def _named(self) -> list[tuple[bytes, Principal]]:
        if self._stored is None or self._clock() - self._read_at < self._refresh_seconds:
            return self._entries
        with self._lock:
            if self._clock() - self._read_at >= self._refresh_seconds:
                with contextlib.suppress(HmsCatalogError):  # the store is away: the tokens last read still hold
                    self._entries = [(bytes.fromhex(t.digest), Principal(t.name, _ACCESS[t.access], t.catalogs))
                                     for t in self._stored()]
                self._read_at = self._clock()
        return self._entries


def stored_tokens(named: Sequence[NamedToken]) -> list[StoredToken]:
    """``named`` as the store keeps them: digests, never the tokens."""
    return [StoredToken(t.principal.name, token_digest(t.secret), t.principal.access.value, t.principal.catalogs)
            for t in named if t.secret is not None]


def _digest(token: str | bytes) -> bytes:
    return bytes.fromhex(token_digest(token))


def load_tokens(path: Path, admin_token: str) -> tuple[tuple[NamedToken, ...], list[str]]:
    """The named tokens of ``path`` and warnings about the file (readable by others); ConfigurationError
    naming the file and the entry for anything malformed."""
    where = f"--tokens {path}"
    try:
        text = path.expanduser().read_text(encoding="utf-8")
        mode = path.expanduser().stat().st_mode
    except OSError as error:
        raise ConfigurationError(f"{where}: cannot read it: {error.strerror}") from error
    warnings = []
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        warnings.append(f"warning: {where} may be read by others (mode {stat.S_IMODE(mode):o}); it holds secrets: chmod 600 it")
    try:
        document = json.loads(text)
    except ValueError as error:
        raise ConfigurationError(f"{where}: not valid JSON: {error}") from None  # the error quotes no more than a position
    if not isinstance(document, Mapping) or not isinstance(document.get("tokens"), list) or set(document) != {"tokens"}:
        raise ConfigurationError(f'{where}: expected {{"tokens": [{{"name", "token", "access", "catalogs", "principals"}}, ...]}}')
    named: list[NamedToken] = []
    for index, entry in enumerate(document["tokens"], start=1):
        named.append(_entry(f"{where}: entry {index}", entry, admin_token))
    _check_unique(where, named)
    return tuple(named), warnings


def _entry(where: str, entry: Any, admin_token: str) -> NamedToken:
    if not isinstance(entry, Mapping):
        raise ConfigurationError(f'{where}: expected an object {{"name", "token", "access", "catalogs", "principals"}}')
    name = entry.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ConfigurationError(f"{where}: 'name' must be a word of letters, digits, '_', '.', '@' or '-' (up to 64), "
                                 f"got {name!r}")
    where = f"{where} ('{name}')"
    unknown = sorted(set(entry) - _ENTRY_KEYS)
    if unknown:
        raise ConfigurationError(f"{where}: unknown key(s) {', '.join(unknown)} (known: access, catalogs, name, principals, token)")
    if name.lower() == ADMIN.name:
        raise ConfigurationError(f"{where}: the name '{ADMIN.name}' is the server's own token's, in the audit log too")
    kerberos = _kerberos_names(where, entry.get("principals"))
    secret = entry.get("token")
    if secret is not None or not kerberos:  # an entry may list Kerberos principals alone, without a token
        if not isinstance(secret, str) or len(secret.strip()) < MIN_TOKEN_LENGTH or secret != secret.strip():
            raise ConfigurationError(f"{where}: 'token' must be a string of at least {MIN_TOKEN_LENGTH} characters, "
                                     "without blanks around it (or leave it out and list 'principals')")
        if hmac.compare_digest(secret.encode("utf-8"), admin_token.encode("utf-8")):
            raise ConfigurationError(f"{where}: its token is the server's own (admin) token; give it a token of its own")
    access = entry.get("access")
    if access not in _ACCESS:
        raise ConfigurationError(f"{where}: 'access' must be 'read' or 'write', got {access!r}")
    catalogs = entry.get("catalogs", ["*"])
    if not isinstance(catalogs, list) or not catalogs or not all(isinstance(c, str) and c.strip() for c in catalogs):
        raise ConfigurationError(f"{where}: 'catalogs' must be a non-empty list of catalog names, or [\"*\"] for every catalog")
    lowered = tuple(dict.fromkeys(c.strip().lower() for c in catalogs))
    if "*" in lowered and len(lowered) > 1:
        raise ConfigurationError(f"{where}: 'catalogs' lists \"*\" (every catalog) beside names; give one or the other")
    return NamedToken(Principal(name, _ACCESS[access], lowered), secret, kerberos)


def _kerberos_names(where: str, value: Any) -> tuple[str, ...]:
    """The entry's ``principals``: full Kerberos names (``etl@REALM``, ``spark/host@REALM``)."""
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        raise ConfigurationError(f"{where}: 'principals' must be a non-empty list of Kerberos principals (\"etl@REALM\")")
    for name in value:
        if not isinstance(name, str) or not _KERBEROS_NAME.match(name):
            raise ConfigurationError(f"{where}: 'principals' has {name!r}, which is not a Kerberos principal: write "
                                     "primary[/instance]@REALM, such as etl@EXAMPLE.COM")
    return tuple(dict.fromkeys(value))


def _check_unique(where: str, named: list[NamedToken]) -> None:
    seen_names: dict[str, int] = {}
    seen_principals: dict[str, int] = {}
    for index, token in enumerate(named, start=1):
        key = token.principal.name.lower()
        if key in seen_names:
            raise ConfigurationError(f"{where}: entries {seen_names[key]} and {index} are both named '{token.principal.name}'")
        seen_names[key] = index
        for kerberos in token.kerberos:
            if seen_principals.setdefault(kerberos.lower(), index) != index:
                raise ConfigurationError(f"{where}: entries {seen_principals[kerberos.lower()]} and {index} both list "
                                         f"principal '{kerberos}'; a principal has one entry, so one grant")
        for other_index, other in enumerate(named[: index - 1], start=1):
            if token.secret is not None and other.secret is not None and \
                    hmac.compare_digest(token.secret.encode("utf-8"), other.secret.encode("utf-8")):
                raise ConfigurationError(f"{where}: entries {other_index} ('{other.principal.name}') and {index} "
                                         f"('{token.principal.name}') have the same token")
