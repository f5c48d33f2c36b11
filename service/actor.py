"""Who is asking, and through which front end: the one description of a request that the change gate audits
and the access policy decides on, whatever protocol brought it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from service.access import Access, Principal

__all__ = ["Actor", "FrontEnd"]


class FrontEnd(str, Enum):
    """The protocol a request came through, as the audit log names it (its ``via``)."""

    REST = "rest"
    ICEBERG_REST = "iceberg-rest"
    THRIFT = "thrift"


@dataclass(frozen=True)
class Actor:
    """One request's actor: ``principal`` is the grant of its credential (a named token, or the Kerberos
    principal of a thrift connection), named as the audit log shows it; ``address`` the client's address;
    ``claimed_user`` the user a thrift client says it is (``set_ugi``), which authenticates nothing."""

    principal: Principal
    front_end: FrontEnd
    address: str | None = None
    claimed_user: str | None = None

    @property
    def name(self) -> str:
        return self.principal.name

    def check(self, need: Access, catalog: str | None, what: str) -> None:
        """ForbiddenError unless the actor's grant allows ``what`` (see :meth:`Principal.check`)."""
        self.principal.check(need, catalog, what)

    def may_read(self, catalog: str) -> bool:
        return self.principal.may_read(catalog)

    def audit_fields(self) -> dict[str, Any]:
        """The audit line's fields beside the token's name: the front end, and the client's address and claim."""
        fields: dict[str, Any] = {"via": self.front_end.value}
        if self.address:
            fields["client"] = self.address
        if self.front_end is FrontEnd.THRIFT:
            fields["user"] = self.claimed_user  # null when the client said nothing (no set_ugi)
        return fields
