"""The endpoint's own Kerberos identity: its service principal, its keytab and the protections it allows.

Given as HMS takes them (``hive.metastore.kerberos.principal``, ``hive.metastore.kerberos.keytab.file``,
``hadoop.rpc.protection``): a principal such as ``hive/_HOST@REALM`` whose ``_HOST`` becomes a host name the
way Hadoop's ``SecurityUtil.getServerPrincipal`` makes it, so the keytab an HMS on this machine uses works
here unchanged. Checked once, when ``serve`` starts: a keytab that is missing, unreadable or without the
principal stops the start saying which, rather than failing every client's handshake later.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hms_catalog.errors import ConfigurationError
from hms_catalog.kerberos import KeytabFormatError, canonical_host_name, keytab_principals
from hms_catalog.kerberos.config import HOST_PATTERN
from hms_catalog.kerberos.login import describe_gss_error, load_gssapi
from service import defaults

__all__ = ["ALL_PROTECTIONS", "Protection", "ServiceKerberos", "parse_protections", "server_principal"]

# The SASL security layers (RFC 4752), as bits of the server's offer, by the names SASL gives them.
Protection = str
ALL_PROTECTIONS: tuple[Protection, ...] = defaults.ALL_PROTECTIONS
LAYER_BITS: dict[Protection, int] = {"auth": 1, "auth-int": 2, "auth-conf": 4}
# hadoop.rpc.protection's names for them, accepted as well: users copy them from core-site.xml.
_HADOOP_NAMES = {"authentication": "auth", "integrity": "auth-int", "privacy": "auth-conf"}
_PRINCIPAL = re.compile(r"^[^/@\s]+/[^/@\s]+@[^/@\s]+$")
_EVERY_ADDRESS = frozenset({"0.0.0.0", "::", ""})


def parse_protections(text: str, option: str = "--thrift-qop") -> tuple[Protection, ...]:
    """``auth``, ``auth-int``, ``auth-conf`` (or Hadoop's ``authentication``, ``integrity``, ``privacy``), comma
    separated: the protections a client may choose from."""
    chosen: list[Protection] = []
    for word in (part.strip().lower() for part in text.split(",")):
        name = _HADOOP_NAMES.get(word, word)
        if name not in LAYER_BITS:
            raise ConfigurationError(f"{option}: '{word}' is not a protection; give auth, auth-int or auth-conf "
                                     "(or authentication, integrity, privacy), comma separated")
        if name not in chosen:
            chosen.append(name)
    return tuple(chosen)


def server_principal(principal: str, host: str, *, resolve: Callable[[str], str] = canonical_host_name,
                     own_name: Callable[[], str] = socket.gethostname) -> str:
    """``principal`` with ``_HOST`` replaced as Hadoop's ``SecurityUtil.getServerPrincipal`` replaces it: by the
    lower-cased canonical name of the bound address ``host``, and by this machine's own canonical name where the
    endpoint binds every address (``0.0.0.0``, ``::``)."""
    service, _, rest = principal.partition("/")
    instance, _, realm = rest.partition("@")
    if instance != HOST_PATTERN:
        return principal
    named = own_name() if host.strip("[]") in _EVERY_ADDRESS else host
    return f"{service}/{resolve(named).lower()}@{realm}"


@dataclass(frozen=True)
class ServiceKerberos:
    """``serve --thrift-principal --thrift-keytab``: who the endpoint is to its Kerberos clients.

    ``principal`` is the resolved one (no ``_HOST``); ``protections`` the security layers offered, most
    protective first.
    """

    principal: str
    keytab: Path
    protections: tuple[Protection, ...] = ALL_PROTECTIONS

    @classmethod
    def configured(cls, principal: str, keytab: Path, host: str,
                   protections: tuple[Protection, ...] = ALL_PROTECTIONS) -> ServiceKerberos:
        """The settings as given, ``_HOST`` resolved for the address ``host`` the endpoint binds; ConfigurationError
        naming the option when the principal is malformed or the keytab does not hold it."""
        if _PRINCIPAL.match(principal) is None:
            raise ConfigurationError(f"--thrift-principal must be of the form service/host@REALM, such as "
                                     f"'hive/_HOST@EXAMPLE.COM'; got '{principal}'")
        if not protections:
            raise ConfigurationError("--thrift-qop names no protection")
        resolved = cls(server_principal(principal, host), keytab.expanduser().absolute(),
                       tuple(name for name in ALL_PROTECTIONS if name in protections))
        resolved.check_keytab()
        resolved.credentials()  # the bindings installed and the keys usable, before anything binds
        return resolved

    def check_keytab(self) -> None:
        try:
            held = keytab_principals(self.keytab)
        except FileNotFoundError:
            raise ConfigurationError(f"--thrift-keytab {self.keytab}: no such file") from None
        except PermissionError:
            raise ConfigurationError(f"--thrift-keytab {self.keytab}: not readable by this user") from None
        except (OSError, KeytabFormatError) as error:
            raise ConfigurationError(f"--thrift-keytab {self.keytab}: {error}") from None
        if self.principal not in held:
            raise ConfigurationError(
                f"--thrift-keytab {self.keytab} holds no key of {self.principal} (the endpoint's principal, _HOST "
                f"resolved for its address); it holds: {', '.join(sorted(held)) or 'nothing'}")

    @property
    def offer(self) -> int:
        """The security-layer bits offered to every client."""
        bits = 0
        for name in self.protections:
            bits |= LAYER_BITS[name]
        return bits

    def credentials(self) -> Any:
        """Acceptor credentials (``gssapi.Credentials``) from the keytab; ConfigurationError when they cannot be had.

        Taken once, when the endpoint starts: accepting reads the keytab's keys only, never the KDC."""
        gssapi = load_gssapi()
        try:
            return gssapi.Credentials(name=gssapi.Name(self.principal, gssapi.NameType.kerberos_principal), usage="accept",
                                      store={b"keytab": str(self.keytab).encode()})
        except gssapi.exceptions.GSSError as error:
            raise ConfigurationError(f"--thrift-keytab {self.keytab}: cannot accept as {self.principal}: "
                                     f"{describe_gss_error(error)}") from error
