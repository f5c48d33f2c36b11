"""Who may use the Iceberg endpoint: the OAuth2 client-credentials exchange and the tokens it issues.

An engine configured with credentials instead of a token (pyiceberg's ``credential``, DuckDB's
``CLIENT_ID``/``CLIENT_SECRET``, Spark's ``credential``) first posts them to ``/iceberg/v1/oauth/tokens``:
``client_id`` is a named token's name (``admin`` for the server's own) and ``client_secret`` that token, in the
form body or in an HTTP Basic header. The answer is a bearer token valid for :data:`ISSUED_TTL_SECONDS`.

An issued token holds no access of its own: it names the token it was issued for, its expiry and a
signature keyed by that token's digest and the server's own token (:meth:`TokenTable.signing_key`). Each
request checks it against the token table as it is then, so a named token that is revoked or replaced
takes its issued tokens with it (within the table's re-read interval), a change of its access applies to
them at once, and every replica that shares the store and the server token accepts them, a restarted one
too. Nothing is kept per issued token.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import secrets
import time
from collections.abc import Callable, Mapping

from service.access import Principal
from service.auth import bearer_token
from service.tokens import TokenTable

__all__ = ["ISSUED_TTL_SECONDS", "IssuedTokens", "OAuthError", "exchange"]

ISSUED_TTL_SECONDS = 3600
_PREFIX = "hmsi."  # an issued token: hmsi.<claims>.<signature>, both base64url
_MAX_TOKEN_BYTES = 1024  # an issued token is under 200 bytes; anything much longer is not read


class OAuthError(Exception):
    """A refused exchange, answered in OAuth2's own error shape (``{"error": code, "error_description"}``)."""

    def __init__(self, status: int, code: str, description: str) -> None:
        super().__init__(description)
        self.status = status
        self.code = code
        self.description = description


class IssuedTokens:
    """Issues and checks the exchange's bearer tokens against ``tokens``, the table the named ones come from.
    ``clock`` is wall time (seconds since the epoch): the expiry is read by other replicas too."""

    def __init__(self, tokens: TokenTable, ttl_seconds: float = ISSUED_TTL_SECONDS, clock: Callable[[], float] = time.time) -> None:
        self.tokens = tokens
        self.ttl_seconds = ttl_seconds
        self._clock = clock

    def issue(self, principal: Principal) -> str | None:
        """A token on behalf of the named token of ``principal``; None once that token is gone (revoked since
        its credentials were checked)."""
        found = self.tokens.named(principal.name)
        if found is None:
            return None
        claims = _b64(json.dumps({"sub": principal.name, "exp": int(self._clock() + self.ttl_seconds),
                                  "jti": secrets.token_hex(8)}, separators=(",", ":")).encode("utf-8"))
        return f"{_PREFIX}{claims}.{_b64(self._signature(found[0], claims))}"

    def principal(self, header: str | None) -> Principal | None:
        """The current principal of the named token an issued, unexpired, well-signed token in the
        ``Authorization`` header was issued for, or None (401)."""
        given = bearer_token(header)
        if given is None or not given.startswith(_PREFIX.encode()) or len(given) > _MAX_TOKEN_BYTES:
            return None
        claims, _, signature = given[len(_PREFIX):].decode("ascii", "replace").partition(".")
        try:
            decoded = json.loads(_unb64(claims))
            name, expiry = str(decoded["sub"]), float(decoded["exp"])
            given_signature = _unb64(signature)
        except (ValueError, KeyError, TypeError, OverflowError, RecursionError, binascii.Error):
            return None  # not a token this service issued, whatever its text
        found = self.tokens.named(name)
        if found is None or not hmac.compare_digest(self._signature(found[0], claims), given_signature):
            return None
        return found[1] if expiry > self._clock() else None

    def _signature(self, digest: bytes, claims: str) -> bytes:
        return hmac.new(self.tokens.signing_key(digest), claims.encode("ascii"), "sha256").digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _credentials(form: Mapping[str, str], authorization: str | None) -> tuple[str, str]:
    """(client_id, client_secret) from the form body, else from an HTTP Basic header."""
    client_id, secret = form.get("client_id"), form.get("client_secret")
    if client_id and secret:
        return client_id, secret
    scheme, _, encoded = (authorization or "").partition(" ")
    if scheme.lower() == "basic" and encoded.strip():
        try:
            decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise OAuthError(400, "invalid_request", "the Basic authorization header is not base64 of id:secret") from None
        name, separator, password = decoded.partition(":")
        if separator and name and password:
            return name, password
    raise OAuthError(400, "invalid_request", "client_credentials needs client_id and client_secret (the name and the "
                                               "secret of a named token), in the form body or a Basic header")


def exchange(form: Mapping[str, str], authorization: str | None, issued: IssuedTokens) -> dict[str, object]:
    """The OAuth2 token answer for a client-credentials request (any scope); 401 ``invalid_client`` when the
    name and secret are not a known token's (which of the two was wrong is not said)."""
    grant = form.get("grant_type", "")
    if grant != "client_credentials":
        raise OAuthError(400, "unsupported_grant_type", f"grant_type must be client_credentials, got {grant!r}")
    name, secret = _credentials(form, authorization)
    principal = issued.tokens.principal(f"Bearer {secret}")
    if principal is None or not hmac.compare_digest(principal.name.lower().encode(), name.lower().encode()):
        raise OAuthError(401, "invalid_client", "unknown client: client_id must be a named token's name and "
                                                  "client_secret that token")
    token = issued.issue(principal)
    if token is None:
        raise OAuthError(401, "invalid_client", "unknown client: the named token was revoked")
    return {"access_token": token, "token_type": "bearer", "expires_in": int(issued.ttl_seconds),
            "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"}
