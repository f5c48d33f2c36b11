"""The console's files as the service serves them: before the token gate, from a fixed table, read-only,
with a policy that keeps the page on the service's origin; the API behind the gate as before."""

from __future__ import annotations

import re

import pytest

from service.console import CONSOLE_PREFIX, console_files
from tests.support.service import Server

pytestmark = pytest.mark.metastore


def test_the_page_and_its_files_need_no_token(service: Server) -> None:
    page = service.request("GET", "/ui", token=None)
    assert page.status == 200 and page.headers["content-type"] == "text/html; charset=utf-8"
    assert service.request("GET", "/ui/", token=None).body == page.body
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy and "script-src 'self'" in policy
    assert page.headers["referrer-policy"] == "no-referrer" and page.headers["x-content-type-options"] == "nosniff"
    # Every file the page names is served, and nothing it names is off the origin.
    named = re.findall(rb'(?:src|href)="([^"#]+)"', page.body)
    assert named and all(each.startswith(b"/ui/") or each == b"data:," for each in named)
    for each in named:
        if each.startswith(b"/ui/"):
            assert service.request("GET", each.decode(), token=None).status == 200, each
    script = service.request("GET", "/ui/js/app.js", token=None)
    assert script.status == 200 and script.headers["content-type"] == "text/javascript; charset=utf-8"


def test_only_the_shipped_files_are_served_and_only_to_read(service: Server) -> None:
    assert service.request("GET", "/ui/../server.token", token=None).status == 404
    missing = service.request("GET", "/ui/js/nothing.js", token=None)
    assert missing.status == 404 and missing.error()["type"] == "NotFound"
    refused = service.request("POST", "/ui", b"{}", token=None)
    assert refused.status == 405 and refused.error()["type"] == "MethodNotAllowed"
    head = service.request("HEAD", "/ui/console.css", token=None)
    assert head.status == 200 and head.body == b"" and int(head.headers["content-length"]) > 0
    assert set(console_files()) >= {CONSOLE_PREFIX, f"{CONSOLE_PREFIX}/", f"{CONSOLE_PREFIX}/index.html"}


def test_the_api_is_still_behind_the_gate(service: Server) -> None:
    assert service.request("GET", "/v1/catalogs", token=None).status == 401
    assert service.request("GET", "/uix", token=None).status == 401  # only /ui and what is under it is open
    assert service.request("GET", "/v1/catalogs").status == 200
