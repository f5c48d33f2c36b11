"""The client-credentials exchange and the tokens it issues, in process: expiry, the bound, and refusals."""

from __future__ import annotations

import base64

import pytest

from service.access import Access, Principal
from service.iceberg_rest.auth import IssuedTokens, OAuthError, exchange
from service.tokens import NamedToken, TokenTable

ADMIN_TOKEN = "admin-token-of-the-unit-tests-0001"
READER = NamedToken(Principal("reader", Access.READ), "reader-token-of-the-unit-tests-02")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_an_issued_token_has_the_principal_and_expires() -> None:
    clock = Clock()
    issued = IssuedTokens(ttl_seconds=10, clock=clock)
    answer = exchange({"grant_type": "client_credentials", "client_id": "reader", "client_secret": READER.secret, "scope": "x"},
                      None, TokenTable(ADMIN_TOKEN, [READER]), issued)
    token = str(answer["access_token"])
    assert token not in (READER.secret, ADMIN_TOKEN) and answer["expires_in"] == 10
    assert issued.principal(f"Bearer {token}") == READER.principal
    assert issued.principal("Bearer something-else") is None and issued.principal(None) is None
    clock.now = 10.5
    assert issued.principal(f"Bearer {token}") is None


def test_basic_header_and_the_admin() -> None:
    issued = IssuedTokens()
    basic = "Basic " + base64.b64encode(f"admin:{ADMIN_TOKEN}".encode()).decode()
    answer = exchange({"grant_type": "client_credentials"}, basic, TokenTable(ADMIN_TOKEN, [READER]), issued)
    principal = issued.principal(f"Bearer {answer['access_token']}")
    assert principal is not None and principal.access is Access.ADMIN


@pytest.mark.parametrize(("form", "header", "status", "code"), [
    ({"grant_type": "password", "client_id": "reader", "client_secret": READER.secret}, None, 400, "unsupported_grant_type"),
    ({"grant_type": "client_credentials"}, None, 400, "invalid_request"),
    ({"grant_type": "client_credentials"}, "Basic !!!", 400, "invalid_request"),
    ({"grant_type": "client_credentials", "client_id": "admin", "client_secret": READER.secret}, None, 401, "invalid_client"),
    ({"grant_type": "client_credentials", "client_id": "reader", "client_secret": "not-a-token-at-all-0"}, None, 401,
     "invalid_client"),
])
def test_refusals(form: dict[str, str], header: str | None, status: int, code: str) -> None:
    with pytest.raises(OAuthError) as refused:
        exchange(form, header, TokenTable(ADMIN_TOKEN, [READER]), IssuedTokens())
    assert (refused.value.status, refused.value.code) == (status, code)
    assert READER.secret not in refused.value.description


def test_the_issued_tokens_are_bounded() -> None:
    from service.iceberg_rest import auth

    issued = IssuedTokens()
    first = issued.issue(READER.principal)
    bound = auth._MAX_ISSUED
    auth._MAX_ISSUED = 3
    try:
        for _ in range(3):
            issued.issue(READER.principal)
    finally:
        auth._MAX_ISSUED = bound
    assert issued.principal(f"Bearer {first}") is None  # the oldest forgotten: its client exchanges again
