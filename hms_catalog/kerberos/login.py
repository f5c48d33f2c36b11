"""Kerberos credentials for one catalog, always current: from a keytab without ``kinit``, or a ticket cache.

GSSAPI credentials do not renew themselves, so :meth:`KerberosLogin.credentials` acquires them again
each time a connection is opened. With a keytab that is cheap and self-renewing: the login lives in a
private in-memory cache, and MIT Kerberos fetches a fresh ticket from the keytab whenever the cached one
is expired or past half its life, so a REPL or a service keeps working across any number of ticket
lifetimes. From a ticket cache (after ``kinit``) the cache is read again each time, so a renewal by
``kinit -R`` or k5start is picked up; an expired ticket is an :class:`AuthenticationError` naming the
principal and the cache, never an empty answer. Connections already open stay authenticated: the
metastore checks the ticket only when a connection is made.

``gssapi`` (the ``kerberos`` extra) is imported only here and only when a Kerberos catalog connects.
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from types import ModuleType
from typing import Any

from hms_catalog.errors import AuthenticationError, ConfigurationError
from hms_catalog.kerberos.config import CLIENT_KEYTAB, CLIENT_PRINCIPAL, KerberosConfig, canonical_host_name

__all__ = ["KerberosLogin", "load_gssapi", "describe_gss_error"]

INSTALL_HINT = (
    "Kerberos needs the 'gssapi' package: pip install 'hms-catalog[kerberos]' "
    "(it builds against MIT Kerberos: on Debian or Ubuntu, apt-get install libkrb5-dev gcc first)"
)
HOST_NAME_SECONDS = 30.0
_MAJOR = re.compile(r"Major \(\d+\): (?P<text>.+?)(?:, Minor \(|$)", re.DOTALL)
_MINOR = re.compile(r"Minor \(\d+\): (?P<text>.+)$", re.DOTALL)


def load_gssapi() -> ModuleType:
    """The ``gssapi`` module; ConfigurationError with the install hint when the extra is missing."""
    try:
        import gssapi
    except ImportError as error:
        raise ConfigurationError(INSTALL_HINT) from error
    return gssapi


class KerberosLogin:
    """The client side of one catalog's Kerberos: who it is and fresh credentials for each connection."""

    def __init__(self, config: KerberosConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        # A private cache per login: two catalogs with different keytabs never share or overwrite tickets,
        # and the user's own ticket cache is never written.
        self._memory_cache = f"MEMORY:hms-catalog-{uuid.uuid4().hex}"
        self._host_names: dict[str, tuple[float, str]] = {}

    def service_principal(self, host: str) -> str:
        """The service principal for a metastore on ``host``, its ``_HOST`` resolved at most every
        :data:`HOST_NAME_SECONDS` (as the JVM caches addresses), not with two lookups per connection."""
        return self.config.service_principal_for(host, self._canonical_name)

    def _canonical_name(self, host: str) -> str:
        now = time.monotonic()
        with self._lock:
            known = self._host_names.get(host)
        if known is not None and now - known[0] < HOST_NAME_SECONDS:
            return known[1]
        name = canonical_host_name(host)
        with self._lock:
            self._host_names[host] = (now, name)
        return name

    @property
    def principal(self) -> str:
        """The client principal as configured, or where it is looked up when none is."""
        return self.config.client_principal or f"the principal of the {self.config.login_source}"

    def credentials(self) -> Any:
        """Current initiator credentials (``gssapi.Credentials``); AuthenticationError when there are none.

        Raises rather than returns credentials with no lifetime left, so a caller never connects with a
        ticket the metastore would refuse.
        """
        gssapi = load_gssapi()
        name = None
        if self.config.client_principal is not None:
            name = gssapi.Name(self.config.client_principal, gssapi.NameType.kerberos_principal)
        store: dict[bytes, bytes] | None = None
        if self.config.keytab is not None:
            store = {b"client_keytab": str(self.config.keytab).encode(), b"ccache": self._memory_cache.encode()}
        elif self.config.ticket_cache is not None:
            store = {b"ccache": self.config.ticket_cache.encode()}
        with self._lock:
            try:
                credentials = gssapi.Credentials(name=name, usage="initiate", store=store)
                remaining = credentials.lifetime
            except gssapi.exceptions.GSSError as error:
                keytab = self.config.keytab is not None
                raise AuthenticationError(self._login_failed(describe_gss_error(error, advice=keytab))) from error
        if remaining is not None and remaining <= 0:
            raise AuthenticationError(self._login_failed("the ticket has expired"))
        return credentials

    def _login_failed(self, reason: str) -> str:
        source = self.config.login_source
        if self.config.keytab is not None:
            return f"Kerberos login as {self.principal} from {source} failed: {reason}"
        who = f" as {self.config.client_principal}" if self.config.client_principal else ""
        return (
            f"no usable Kerberos credentials{who} in the {source}: {reason}; run kinit{who and ' ' + who[4:]}, or set "
            f"'{CLIENT_KEYTAB}' and '{CLIENT_PRINCIPAL}' to log in from a keytab, which renews by itself"
        )


def describe_gss_error(error: BaseException, *, advice: bool = True) -> str:
    """The Kerberos reason inside a GSSAPI error (its minor status, else its major one) and, with ``advice``,
    what usually causes it."""
    text = str(error)
    major, minor = _MAJOR.search(text), _MINOR.search(text)
    reason = text
    if minor and minor.group("text").strip().rstrip(".") not in ("Success", "Unknown error", ""):
        reason = minor.group("text").strip()
    elif major:
        reason = major.group("text").strip()
    if advice:
        for pattern, hint in _HINTS:
            if pattern.search(reason):
                return f"{reason} ({hint})"
    return reason


_HINTS = tuple((re.compile(pattern, re.IGNORECASE), hint) for pattern, hint in (
    (r"clock skew", "this machine's clock and the KDC's or the metastore's differ by more than the allowed "
                    "skew (5 minutes by default): synchronise the clocks, for example with NTP"),
    (r"server .*not found in kerberos database", "the KDC knows no such service principal: check "
                                                 "'hive.metastore.kerberos.principal' and the host _HOST became"),
    (r"client .*not found in kerberos database", "the KDC knows no such client principal"),
    (r"expired", "the ticket has expired: renew it with kinit, or log in from a keytab, which renews by itself"),
    (r"can't find client principal", "the ticket cache holds tickets of another principal"),
    (r"cannot contact any kdc", "the realm's KDC is unreachable: check krb5.conf (KRB5_CONFIG)"),
    (r"preauthentication failed", "the keytab's key is not the KDC's: export the keytab again"),
    (r"checksum failed|integrity check failed", "the keys do not match: the keytab is outdated or names another principal"),
))
