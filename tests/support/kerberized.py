"""An in-process thrift endpoint with Kerberos (SASL GSSAPI) over a metastore, for the Kerberos tests: its service
principal and keytab are the test realm's ``hive/_HOST``, and the realm's user may read and change every catalog."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hms_catalog.manager import CatalogManager
from hms_catalog.state import open_definitions
from service.access import Access, Principal
from service.audit import AuditLog
from service.thrift import ThriftEndpoint, ThriftSettings
from service.thrift.kerberos import ALL_PROTECTIONS, Protection, ServiceKerberos
from service.tokens import KerberosPrincipals, NamedToken
from tests.kerberos.conftest import Realm

__all__ = ["Kerberized", "kerberized"]


@dataclass
class Kerberized:
    """An in-process endpoint with Kerberos over the session's (plain) metastore; ``realm.user`` may write."""

    manager: CatalogManager
    endpoint: ThriftEndpoint
    audit_path: Path

    @property
    def port(self) -> int:
        return self.endpoint.address[1]

    def audit(self) -> list[dict[str, Any]]:
        if not self.audit_path.exists():
            return []
        return [json.loads(line) for line in self.audit_path.read_text().splitlines()]

    def close(self) -> None:
        self.endpoint.stop()
        self.manager.close()


@contextlib.contextmanager
def kerberized(home: Path, metastore_uri: str, realm: Realm, protections: tuple[Protection, ...] = ALL_PROTECTIONS,
               named: Sequence[NamedToken] | None = None) -> Iterator[Kerberized]:
    """``named``: the tokens file's entries whose principals the endpoint grants (default: ``realm.user`` writes)."""
    manager = CatalogManager(open_definitions(home, None))
    manager.create("hive", {"type": "hms", "hive.metastore.uris": metastore_uri, "thrift.access": "write",
                            "hive.metastore.failure.retries": "0"})
    kerberos = ServiceKerberos.configured(realm.service, realm.service_keytab, "127.0.0.1", protections)
    grants = KerberosPrincipals(named if named is not None else [NamedToken(Principal("etl", Access.WRITE), None, (realm.user,))])
    endpoint = ThriftEndpoint(manager, AuditLog(home / "audit.log"), ThriftSettings(port=0, kerberos=kerberos),
                              principals=grants).start()
    opened = Kerberized(manager, endpoint, home / "audit.log")
    try:
        yield opened
    finally:
        opened.close()
