"""Delegation tokens, refused: the endpoint issues none and keeps no token store.

Spark on YARN and Hive jobs ask a secure metastore for a delegation token (``get_delegation_token``) so that
tasks without a Kerberos ticket can connect later over SASL DIGEST-MD5. This endpoint authenticates every
connection with Kerberos (GSSAPI) only, so it refuses these calls with a MetaException saying what to do
instead; forwarded, they would hand the caller a token of the *service's own* identity at the real metastore.
The metastore's token-store calls (``add_token``, ``get_master_keys``, ...; HiveServer2's ``DBTokenStore``)
are refused for the same reason: they would expose the real metastore's token keys. Each refusal is audited.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.thrift.admission import audit_refusal
from service.thrift.context import Caller, EndpointContext
from service.thrift.errors import EndpointRefusal, translated

__all__ = ["DelegationTokens", "NO_DELEGATION_TOKENS"]

NO_DELEGATION_TOKENS = (
    "this metastore endpoint issues no delegation tokens: it authenticates every connection with Kerberos (SASL "
    "GSSAPI) only. Give the job a Kerberos login of its own (Spark: spark.kerberos.principal and spark.kerberos.keytab, "
    "with spark.security.credentials.hive.enabled=false so that Spark asks for no token); see 'Delegation tokens' "
    "in docs/thrift-endpoint.md")
_NO_TOKEN_STORE = "the metastore's delegation-token store is not reachable through this endpoint"


def _refusing(method: str, reason: str) -> Callable[..., Any]:
    @translated(method)
    def refuse(self: DelegationTokens, *args: Any) -> Any:
        audit_refusal(self.endpoint.audit, f"thrift {method}", self.caller.address, self.caller.principal, reason)
        raise EndpointRefusal(f"{method}: {reason}")

    refuse.__name__ = method
    return refuse


class DelegationTokens:
    endpoint: EndpointContext
    caller: Caller

    get_delegation_token = _refusing("get_delegation_token", NO_DELEGATION_TOKENS)
    renew_delegation_token = _refusing("renew_delegation_token", NO_DELEGATION_TOKENS)
    cancel_delegation_token = _refusing("cancel_delegation_token", NO_DELEGATION_TOKENS)
    add_token = _refusing("add_token", _NO_TOKEN_STORE)
    remove_token = _refusing("remove_token", _NO_TOKEN_STORE)
    get_token = _refusing("get_token", _NO_TOKEN_STORE)
    get_all_token_identifiers = _refusing("get_all_token_identifiers", _NO_TOKEN_STORE)
    add_master_key = _refusing("add_master_key", _NO_TOKEN_STORE)
    update_master_key = _refusing("update_master_key", _NO_TOKEN_STORE)
    remove_master_key = _refusing("remove_master_key", _NO_TOKEN_STORE)
    get_master_keys = _refusing("get_master_keys", _NO_TOKEN_STORE)
