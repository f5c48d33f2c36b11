"""Named tokens: the file ``serve --tokens`` reads, checked at start, and the principal a header names."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.errors import ConfigurationError
from service.access import ADMIN, Access, Principal
from service.tokens import KerberosPrincipals, TokenTable, load_tokens, stored_tokens

ADMIN_TOKEN = "admin-token-0123456789"
READ = {"name": "ro", "token": "read-only-secret-0123", "access": "read", "catalogs": ["*"]}
WRITE = {"name": "etl", "token": "etl-secret-0123456789", "access": "write", "catalogs": ["Prod"]}


def _file(tmp_path: Path, document: Any, mode: int = 0o600) -> Path:
    path = tmp_path / "tokens.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    path.chmod(mode)
    return path


def test_a_good_file_gives_each_token_its_principal(tmp_path: Path) -> None:
    anywhere = {**WRITE, "name": "any", "token": "x" * 20, "catalogs": ["*"]}
    named, warnings = load_tokens(_file(tmp_path, {"tokens": [READ, WRITE, anywhere]}), ADMIN_TOKEN)
    assert warnings == []
    assert [t.principal for t in named] == [Principal("ro", Access.READ, ("*",)), Principal("etl", Access.WRITE, ("prod",)),
                                            Principal("any", Access.WRITE, ("*",))]
    assert all(READ["token"] not in repr(t) for t in named)  # secrets stay out of reprs (and so of logs)
    table = TokenTable(ADMIN_TOKEN, named)
    assert table.principal(f"Bearer {ADMIN_TOKEN}") == ADMIN
    assert table.principal(f"bearer {READ['token']}") == named[0].principal
    assert table.principal(f"Bearer {WRITE['token']}") == named[1].principal
    for header in (None, "", "Bearer", f"Basic {ADMIN_TOKEN}", "Bearer nope", f"Bearer {ADMIN_TOKEN}x"):
        assert table.principal(header) is None, header


def test_catalogs_default_to_every_one(tmp_path: Path) -> None:
    named, _ = load_tokens(_file(tmp_path, {"tokens": [{"name": "ro", "token": "r" * 16, "access": "read"}]}), ADMIN_TOKEN)
    assert named[0].principal == Principal("ro", Access.READ, ("*",))


def test_principals_carry_their_entrys_grant_and_others_get_nothing(tmp_path: Path) -> None:
    document = {"tokens": [
        {**WRITE, "principals": ["etl@EXAMPLE.COM", "spark/host1.example.com@EXAMPLE.COM"]},
        {"name": "lake-ro", "access": "read", "catalogs": ["Lake"], "principals": ["analyst@EXAMPLE.COM"]},  # no token
    ]}
    named, _ = load_tokens(_file(tmp_path, document), ADMIN_TOKEN)
    principals = KerberosPrincipals(named)
    etl = principals.principal("ETL@EXAMPLE.COM")
    assert etl == Principal("etl@EXAMPLE.COM", Access.WRITE, ("prod",), kind="principal")
    assert etl.may_change("prod") and not etl.may_read("lake")
    analyst = principals.principal("analyst@EXAMPLE.COM")
    assert analyst is not None and analyst.may_read("lake") and not analyst.may_read("prod")
    assert not analyst.may_change("lake")
    assert principals.principal("spark/host1.example.com@EXAMPLE.COM") == Principal(
        "spark/host1.example.com@EXAMPLE.COM", Access.WRITE, ("prod",), kind="principal")
    for unknown in (None, "", "etl@OTHER.REALM", "etl", "mallory@EXAMPLE.COM"):
        assert principals.principal(unknown) is None, unknown
    # the entry without a token is no bearer token, and is not put in the store (which holds token digests)
    table = TokenTable(ADMIN_TOKEN, named)
    assert table.principal(f"Bearer {WRITE['token']}") == named[0].principal
    assert [stored.name for stored in stored_tokens(named)] == ["etl"]


def test_a_read_entry_may_limit_its_catalogs(tmp_path: Path) -> None:
    named, _ = load_tokens(_file(tmp_path, {"tokens": [{**READ, "catalogs": ["Lake", "lake", "hive"]}]}), ADMIN_TOKEN)
    assert named[0].principal == Principal("ro", Access.READ, ("lake", "hive"))


def test_a_file_others_may_read_is_warned_about(tmp_path: Path) -> None:
    _, warnings = load_tokens(_file(tmp_path, {"tokens": [READ]}, mode=0o644), ADMIN_TOKEN)
    assert len(warnings) == 1 and "chmod 600" in warnings[0] and "644" in warnings[0] and READ["token"] not in warnings[0]


@pytest.mark.parametrize(("document", "words"), [
    ("{not json", ["not valid JSON"]),
    ([READ], ['{"tokens"']),
    ({"tokens": [READ], "more": 1}, ['{"tokens"']),
    ({"tokens": ["ro"]}, ["entry 1", "expected an object"]),
    ({"tokens": [{**READ, "name": ""}]}, ["entry 1", "'name'"]),
    ({"tokens": [{**READ, "name": "has space"}]}, ["entry 1", "'name'"]),
    ({"tokens": [READ, {**WRITE, "access": "admin"}]}, ["entry 2 ('etl')", "'access'", "'admin'"]),
    ({"tokens": [{**READ, "token": "short"}]}, ["entry 1 ('ro')", "at least 16"]),
    ({"tokens": [{**READ, "token": None}]}, ["entry 1 ('ro')", "'token'"]),
    ({"tokens": [{**READ, "token": ADMIN_TOKEN}]}, ["entry 1 ('ro')", "server's own"]),
    ({"tokens": [{**READ, "name": "Admin"}]}, ["entry 1", "'admin'"]),
    ({"tokens": [{**READ, "owner": "me"}]}, ["entry 1 ('ro')", "unknown key", "owner"]),
    ({"tokens": [{**WRITE, "catalogs": []}]}, ["entry 1 ('etl')", "'catalogs'"]),
    ({"tokens": [{**WRITE, "catalogs": "prod"}]}, ["entry 1 ('etl')", "'catalogs'"]),
    ({"tokens": [{**READ, "catalogs": ["prod", "*"]}]}, ["entry 1 ('ro')", "every catalog", "beside names"]),
    ({"tokens": [{**READ, "principals": "etl@R"}]}, ["entry 1 ('ro')", "'principals'", "list"]),
    ({"tokens": [{**READ, "principals": ["etl"]}]}, ["entry 1 ('ro')", "'etl'", "not a Kerberos principal",
                                                     "primary[/instance]@REALM"]),
    ({"tokens": [{"name": "k", "access": "read"}]}, ["entry 1 ('k')", "'token'", "'principals'"]),
    ({"tokens": [{**READ, "principals": ["a@R"]}, {**WRITE, "principals": ["A@R"]}]},
     ["entries 1 and 2", "principal 'A@R'", "one grant"]),
    ({"tokens": [READ, {**WRITE, "name": "RO"}]}, ["entries 1 and 2", "named 'RO'"]),
    ({"tokens": [READ, {**WRITE, "token": READ["token"]}]}, ["entries 1 ('ro') and 2 ('etl')", "same token"]),
])
def test_a_bad_file_is_refused_naming_the_file_and_the_entry(tmp_path: Path, document: Any, words: list[str]) -> None:
    path = _file(tmp_path, document)
    with pytest.raises(ConfigurationError) as refused:
        load_tokens(path, ADMIN_TOKEN)
    message = str(refused.value)
    assert message.startswith(f"--tokens {path}: ") and all(word in message for word in words), message
    assert READ["token"] not in message and ADMIN_TOKEN not in message  # never a secret


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot read it"):
        load_tokens(tmp_path / "nope.json", ADMIN_TOKEN)


def test_serve_refuses_a_bad_tokens_file_before_it_starts(home: Path, tmp_path: Path) -> None:
    bad = _file(tmp_path, {"tokens": [READ, {**WRITE, "access": "owner"}]})
    ran = subprocess.run([sys.executable, "-m", "hms_catalog.cli", "--home", str(home), "serve", "--port", "0", "--tokens", str(bad)],
                         capture_output=True, text=True, timeout=60, check=False)
    assert ran.returncode == 1 and "Traceback" not in ran.stderr, ran.stderr
    assert f"--tokens {bad}: entry 2 ('etl'): 'access' must be 'read' or 'write', got 'owner'" in ran.stderr
    assert "hms-catalog service at" not in ran.stderr and READ["token"] not in ran.stderr
