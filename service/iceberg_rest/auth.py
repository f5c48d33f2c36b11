"""Who may use the Iceberg endpoint: the OAuth2 client-credentials exchange and the tokens it issues.

An engine configured with credentials instead of a token (pyiceberg's ``credential``, DuckDB's
``CLIENT_ID``/``CLIENT_SECRET``, Spark's ``credential``) first posts them to ``/iceberg/v1/oauth/tokens``:
``client_id`` is a named token's name (``admin`` for the server's own) and ``client_secret`` that token, in the
form body or in an HTTP Basic header. The answer is a new random bearer token with the same principal (so the
same read/write access per catalog) that expires after :data:`ISSUED_TTL_SECONDS`. Issued tokens live in the
memory of the process that issued them: a restarted service, or another replica, answers 401, on which
pyiceberg and Iceberg's Java client exchange their credentials again. Only digests are kept.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable, Mapping

from service.access import Principal
from service.auth import bearer_token
from service.tokens import TokenTable

__all__ = ["ISSUED_TTL_SECONDS", "IssuedTokens", "OAuthError", "exchange"]

ISSUED_TTL_SECONDS = 3600
_MAX_ISSUED = 10_000  # the most live issued tokens kept; the oldest are forgotten first (their clients exchange again)


class OAuthError(Exception):
    """A refused exchange, answered in OAuth2's own error shape (``{"error": code, "error_description"}``)."""

    def __init__(self, status: int, code: str, description: str) -> None:
        super().__init__(description)
        self.status = status
        self.code = code
        self.description = description


class IssuedTokens:
    """Bearer tokens issued by the exchange: digest -> (principal, expiry), bounded, expired ones dropped."""

    def __init__(self, ttl_seconds: float = ISSUED_TTL_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_seconds = ttl_seconds
        self._clock = clock
        self._issued: dict[bytes, tuple[Principal, float]] = {}
        self._lock = threading.Lock()

    def issue(self, principal: Principal) -> str:
        token = "hmsi" + secrets.token_urlsafe(32)
        now = self._clock()
        with self._lock:
            for digest in [d for d, (_, expiry) in self._issued.items() if expiry <= now]:
                del self._issued[digest]
            while len(self._issued) >= _MAX_ISSUED:
                del self._issued[next(iter(self._issued))]
            self._issued[_digest(token.encode("utf-8"))] = (principal, now + self.ttl_seconds)
        return token

    def principal(self, header: str | None) -> Principal | None:
        """Whose issued (and unexpired) token the ``Authorization`` header carries, or None."""
        given = bearer_token(header)
        if given is None or not self._issued:
            return None
        with self._lock:
            found = self._issued.get(_digest(given))
        if found is None or found[1] <= self._clock():
            return None
        return found[0]


def _digest(token: bytes) -> bytes:
    return hashlib.sha256(token).digest()


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


def exchange(form: Mapping[str, str], authorization: str | None, tokens: TokenTable, issued: IssuedTokens) -> dict[str, object]:
    """The OAuth2 token answer for a client-credentials request (any scope); 401 ``invalid_client`` when the
    name and secret are not a known token's (which of the two was wrong is not said)."""
    grant = form.get("grant_type", "")
    if grant != "client_credentials":
        raise OAuthError(400, "unsupported_grant_type", f"grant_type must be client_credentials, got {grant!r}")
    name, secret = _credentials(form, authorization)
    principal = tokens.principal(f"Bearer {secret}")
    if principal is None or not hmac.compare_digest(principal.name.lower().encode(), name.lower().encode()):
        raise OAuthError(401, "invalid_client", "unknown client: client_id must be a named token's name and "
                                                  "client_secret that token")
    return {"access_token": issued.issue(principal), "token_type": "bearer", "expires_in": int(issued.ttl_seconds),
            "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"}
