"""The client-credentials exchange and the tokens it issues, in process: expiry, revocation, replicas and refusals
(a real pair of replicas in tests/service/test_replicas.py)."""

from __future__ import annotations

import base64
import json

import pytest

from hms_catalog.state import StoredToken
from service.access import Access, Principal
from service.iceberg_rest.auth import IssuedTokens, OAuthError, exchange
from service.tokens import NamedToken, TokenTable, stored_tokens

ADMIN_TOKEN = "admin-token-of-the-unit-tests-0001"
READER = NamedToken(Principal("reader", Access.READ), "reader-token-of-the-unit-tests-02")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_an_issued_token_has_the_principal_and_expires() -> None:
    clock = Clock()
    clock.now = 1_800_000_000.0
    issued = IssuedTokens(TokenTable(ADMIN_TOKEN, [READER]), ttl_seconds=10, clock=clock)
    answer = exchange({"grant_type": "client_credentials", "client_id": "reader", "client_secret": READER.secret, "scope": "x"},
                      None, issued)
    token = str(answer["access_token"])
    assert token not in (READER.secret, ADMIN_TOKEN) and answer["expires_in"] == 10
    assert issued.principal(f"Bearer {token}") == READER.principal
    assert issued.principal("Bearer something-else") is None and issued.principal(None) is None
    clock.now += 10.5
    assert issued.principal(f"Bearer {token}") is None


def test_basic_header_and_the_admin() -> None:
    issued = IssuedTokens(TokenTable(ADMIN_TOKEN, [READER]))
    basic = "Basic " + base64.b64encode(f"admin:{ADMIN_TOKEN}".encode()).decode()
    answer = exchange({"grant_type": "client_credentials"}, basic, issued)
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
        exchange(form, header, IssuedTokens(TokenTable(ADMIN_TOKEN, [READER])))
    assert (refused.value.status, refused.value.code) == (status, code)
    assert READER.secret not in refused.value.description


def _stored(*named: NamedToken) -> list[StoredToken]:
    return stored_tokens(named)


def test_a_revoked_or_replaced_token_takes_its_issued_tokens_with_it_and_a_changed_access_applies() -> None:
    """The named tokens as the store holds them, re-read at every request (refresh 0): what an issued token
    may do is what its named token may do now."""
    store = [READER]
    table = TokenTable(ADMIN_TOKEN, stored=lambda: _stored(*store), refresh_seconds=0)
    issued = IssuedTokens(table)
    token = issued.issue(READER.principal)
    assert token is not None and issued.principal(f"Bearer {token}") == READER.principal
    writer = NamedToken(Principal("reader", Access.WRITE, ("sales",)), READER.secret)
    store = [writer]
    assert issued.principal(f"Bearer {token}") == writer.principal
    store = [NamedToken(READER.principal, "a-new-secret-for-the-reader-00003")]
    assert issued.principal(f"Bearer {token}") is None  # replaced: the old secret's issued tokens end with it
    store = [READER]
    assert issued.principal(f"Bearer {token}") == READER.principal
    store = []
    assert issued.principal(f"Bearer {token}") is None  # revoked


def test_another_replica_with_the_same_server_token_accepts_it_and_a_forgery_is_refused() -> None:
    token = IssuedTokens(TokenTable(ADMIN_TOKEN, [READER])).issue(READER.principal)
    assert token is not None
    assert IssuedTokens(TokenTable(ADMIN_TOKEN, [READER])).principal(f"Bearer {token}") == READER.principal
    assert IssuedTokens(TokenTable("another-server-token-of-the-tests-9", [READER])).principal(f"Bearer {token}") is None
    claims, signature = token.removeprefix("hmsi.").split(".")
    forged = json.loads(base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4)))
    forged["sub"] = "admin"
    forged_claims = base64.urlsafe_b64encode(json.dumps(forged).encode()).rstrip(b"=").decode()
    issued = IssuedTokens(TokenTable(ADMIN_TOKEN, [READER]))
    assert issued.principal(f"Bearer hmsi.{forged_claims}.{signature}") is None
    for garbage in ("hmsi.", "hmsi.x.y", "hmsi.!!!.???", f"hmsi.{claims}", token[:-2]):
        assert issued.principal(f"Bearer {garbage}") is None


def test_a_token_that_is_no_issued_one_is_refused_whatever_its_text() -> None:
    """Claims are read before the signature is checked (they name the key): whatever they hold is a 401, not a
    failure of the server."""
    issued = IssuedTokens(TokenTable(ADMIN_TOKEN, [READER]))

    def claims(text: str) -> str:
        return base64.urlsafe_b64encode(text.encode()).rstrip(b"=").decode()

    for text in ('{"sub": "reader", "exp": 1' + "0" * 400 + "}", "[" * 5000, '{"sub": ["reader"], "exp": "soon"}', "null"):
        assert issued.principal(f"Bearer hmsi.{claims(text)}.AAAA") is None
    assert issued.principal("Bearer hmsi." + "A" * 5000) is None


def test_no_token_is_issued_for_a_token_revoked_after_its_credentials_were_checked() -> None:
    store = [READER]
    issued = IssuedTokens(TokenTable(ADMIN_TOKEN, stored=lambda: _stored(*store), refresh_seconds=0))
    store = []
    assert issued.issue(READER.principal) is None
