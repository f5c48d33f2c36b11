"""Kerberos catalog properties: which keys turn SASL/GSSAPI on, who logs in, and whom the client talks to.

Both generations of names are accepted, as users copy them from Doris's and Trino's documentation:
``hive.metastore.sasl.enabled`` with ``hive.metastore.kerberos.principal`` and ``hadoop.kerberos.*``, or
``hive.metastore.authentication.type=kerberos`` with ``hive.metastore.service.principal`` and
``hive.metastore.client.*``. Giving both names of one setting with different values is an error rather
than a silent pick.

:meth:`KerberosConfig.from_properties` checks the text only, so a stored catalog can always be loaded;
:meth:`KerberosConfig.check_files` also reads the keytab and runs at CREATE and ALTER, so a catalog whose
keytab is missing, unreadable or without its principal is never stored.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from hms_catalog._property_values import property_as_bool
from hms_catalog.errors import ConfigurationError
from hms_catalog.kerberos.keytab import KeytabFormatError, keytab_principals

__all__ = [
    "SASL_ENABLED",
    "AUTHENTICATION_TYPE",
    "SERVICE_PRINCIPAL",
    "SERVICE_PRINCIPAL_ALIAS",
    "CLIENT_PRINCIPAL",
    "CLIENT_PRINCIPAL_ALIAS",
    "CLIENT_KEYTAB",
    "CLIENT_KEYTAB_ALIAS",
    "TICKET_CACHE",
    "HOST_PATTERN",
    "KerberosConfig",
    "canonical_host_name",
]

SASL_ENABLED = "hive.metastore.sasl.enabled"
AUTHENTICATION_TYPE = "hive.metastore.authentication.type"
SERVICE_PRINCIPAL = "hive.metastore.kerberos.principal"
SERVICE_PRINCIPAL_ALIAS = "hive.metastore.service.principal"
CLIENT_PRINCIPAL = "hadoop.kerberos.principal"
CLIENT_PRINCIPAL_ALIAS = "hive.metastore.client.principal"
CLIENT_KEYTAB = "hadoop.kerberos.keytab"
CLIENT_KEYTAB_ALIAS = "hive.metastore.client.keytab"
# Trino's name for a ticket cache other than the default one (KRB5CCNAME, else /tmp/krb5cc_<uid>).
TICKET_CACHE = "hive.metastore.client.credential-cache.location"
HOST_PATTERN = "_HOST"

_AUTHENTICATION_TYPES = ("none", "kerberos")

# service/host@REALM: Hive's SASL server splits the principal into these three parts.
_SERVICE_PRINCIPAL = re.compile(r"^(?P<service>[^/@\s]+)/(?P<host>[^/@\s]+)@(?P<realm>[^/@\s]+)$")
_CLIENT_PRINCIPAL = re.compile(r"^[^@\s]+(@[^@\s]+)?$")


@dataclass(frozen=True)
class KerberosConfig:
    """How one catalog authenticates to its metastores with SASL/GSSAPI.

    ``service_principal`` may hold ``_HOST``, replaced per URI by :meth:`service_principal_for`. Without a
    ``keytab`` the client logs in from ``ticket_cache`` (or the default cache), as ``client_principal``
    when one is given. The ``*_key`` fields name the property each value came from, for error messages.
    """

    service_principal: str
    client_principal: str | None = None
    keytab: Path | None = None
    ticket_cache: str | None = None
    service_principal_key: str = SERVICE_PRINCIPAL
    client_principal_key: str = CLIENT_PRINCIPAL
    keytab_key: str = CLIENT_KEYTAB

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> KerberosConfig | None:
        """The catalog's Kerberos settings; None when its metastores are reached without SASL."""
        if not _sasl_requested(props):
            return None
        service_key, service = _one_of(props, SERVICE_PRINCIPAL, SERVICE_PRINCIPAL_ALIAS)
        if service is None:
            raise ConfigurationError(
                f"property '{SERVICE_PRINCIPAL}' is required with Kerberos: the metastore's principal, "
                "such as 'hive/_HOST@EXAMPLE.COM'"
            )
        if _SERVICE_PRINCIPAL.match(service) is None:
            problem = "has no realm" if "@" not in service else "is not of the form service/host@REALM"
            raise ConfigurationError(
                f"property '{service_key}' {problem}: got '{service}', expected such as 'hive/_HOST@EXAMPLE.COM'"
            )
        principal_key, principal = _one_of(props, CLIENT_PRINCIPAL, CLIENT_PRINCIPAL_ALIAS)
        if principal is not None and _CLIENT_PRINCIPAL.match(principal) is None:
            raise ConfigurationError(
                f"property '{principal_key}' must be a principal such as 'etl@EXAMPLE.COM', got '{principal}'"
            )
        keytab_key, keytab = _one_of(props, CLIENT_KEYTAB, CLIENT_KEYTAB_ALIAS)
        if keytab is not None and principal is None:
            raise ConfigurationError(
                f"property '{keytab_key}' needs '{CLIENT_PRINCIPAL}': the principal to log in as from the keytab"
            )
        cache = props.get(TICKET_CACHE, "").strip() or None
        return cls(
            service_principal=service,
            client_principal=principal,
            keytab=_keytab_path(keytab) if keytab is not None else None,
            ticket_cache=cache,
            service_principal_key=service_key,
            client_principal_key=principal_key,
            keytab_key=keytab_key,
        )

    @property
    def login_source(self) -> str:
        """Where credentials come from, for messages: a keytab path or a ticket cache."""
        if self.keytab is not None:
            return f"keytab {self.keytab}"
        return f"ticket cache {self.ticket_cache or os.environ.get('KRB5CCNAME') or f'/tmp/krb5cc_{os.getuid()}'}"

    def service_principal_for(self, host: str, resolve: Callable[[str], str] | None = None) -> str:
        """The service principal for a metastore on ``host``: ``_HOST`` becomes the host's canonical name
        (``resolve``, default :func:`canonical_host_name`), lower-cased, as Hive's own client resolves it (per
        URI: a catalog may span hosts)."""
        if HOST_PATTERN not in self.service_principal:
            return self.service_principal
        return self.service_principal.replace(HOST_PATTERN, (resolve or canonical_host_name)(host))

    def check_files(self) -> None:
        """Check the keytab is readable and holds the client principal; ConfigurationError naming the key.

        Only the principal names are read from the keytab, never shown with its keys.
        """
        if self.keytab is None or self.client_principal is None:
            return
        path = self.keytab
        if not path.exists():
            raise ConfigurationError(f"property '{self.keytab_key}': keytab {path} does not exist")
        if not path.is_file():
            raise ConfigurationError(f"property '{self.keytab_key}': keytab {path} is not a file")
        try:
            principals = keytab_principals(path)
        except PermissionError:
            raise ConfigurationError(
                f"property '{self.keytab_key}': keytab {path} is not readable by this user (uid {os.getuid()})"
            ) from None
        except (OSError, KeytabFormatError) as error:
            raise ConfigurationError(f"property '{self.keytab_key}': {error}") from None
        if not _principal_in(self.client_principal, principals):
            held = ", ".join(sorted(principals)) or "none"
            raise ConfigurationError(
                f"property '{self.client_principal_key}': principal {self.client_principal} has no key in keytab "
                f"{path} (it holds: {held})"
            )


def canonical_host_name(host: str) -> str:
    """The name the host's address resolves back to, lower-cased; ``host`` itself when lookups fail.

    Java's ``InetAddress.getCanonicalHostName`` as Hive's ``SecurityUtil.getServerPrincipal`` uses it:
    ``127.0.0.1`` becomes ``localhost``.
    """
    try:
        addresses = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
        # IPv4 first, as the JVM prefers it (java.net.preferIPv6Addresses=false): ``localhost`` must not
        # become ``ip6-localhost`` through ::1 where the JVM would say ``localhost``.
        addresses.sort(key=lambda found: found[0] != socket.AF_INET)
        return socket.gethostbyaddr(str(addresses[0][4][0]))[0].lower()
    except (OSError, UnicodeError, IndexError):
        return host.lower()


def _sasl_requested(props: Mapping[str, str]) -> bool:
    sasl = property_as_bool(props, SASL_ENABLED, False) if SASL_ENABLED in props else None
    kind_text = props.get(AUTHENTICATION_TYPE)
    kind: str | None = None
    if kind_text is not None:
        kind = kind_text.strip().lower()
        if kind not in _AUTHENTICATION_TYPES:
            raise ConfigurationError(
                f"property '{AUTHENTICATION_TYPE}' must be one of {', '.join(_AUTHENTICATION_TYPES)}, got '{kind_text}'"
            )
    if sasl is not None and kind is not None and sasl != (kind == "kerberos"):
        raise ConfigurationError(
            f"properties '{SASL_ENABLED}'='{props[SASL_ENABLED]}' and '{AUTHENTICATION_TYPE}'='{kind_text}' contradict "
            "each other; give one of them"
        )
    return bool(sasl) or kind == "kerberos"


def _one_of(props: Mapping[str, str], key: str, alias: str) -> tuple[str, str | None]:
    """The value of ``key`` or of its ``alias`` and the key it came from; an error when both differ."""
    value = (props.get(key) or "").strip() or None
    other = (props.get(alias) or "").strip() or None
    if value is not None and other is not None and value != other:
        raise ConfigurationError(f"properties '{key}' and '{alias}' name the same setting with different values")
    if value is None and other is not None:
        return alias, other
    return key, value


def _keytab_path(text: str) -> Path:
    """A keytab path as Kerberos writes it (``FILE:`` prefix allowed), absolute and with ``~`` expanded."""
    bare = text[len("FILE:"):] if text.upper().startswith("FILE:") else text
    return Path(bare).expanduser().absolute()


def _principal_in(principal: str, principals: frozenset[str]) -> bool:
    """Whether ``principal`` is among ``principals``; without a realm it matches the name in any realm."""
    if "@" in principal:
        return principal in principals
    return any(held.rsplit("@", 1)[0] == principal for held in principals)
