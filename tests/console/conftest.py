"""The web console in a real browser: Debian's chromium driven by Playwright, against a real ``hms-catalog
serve`` over a Spark-written table in the embedded metastore.

One browser for the test session (no browser is ever downloaded: ``/usr/bin/chromium`` or a skip, or a
failure when ``HMS_CATALOG_REQUIRE_BROWSER=1``); each test has a page of its own, whose every request is
recorded and checked to stay on the service's origin.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import pytest

from tests.support.service import Server, served, tokens_file

CHROMIUM = Path(os.environ.get("HMS_CATALOG_CHROMIUM", "/usr/bin/chromium"))
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SHOTS = Path("/tmp/console-shots")  # a copy of every screenshot, for a reviewer to look at
DB = f"console{os.getpid()}"
CATALOG = "hive"
TIMEOUT_MS = 30_000
# Named tokens beside the server's own: one that reads, one that may change a catalog other than ``hive``.
READ_TOKEN = "console-read-only-token-0001"
WRITE_ELSEWHERE_TOKEN = "console-write-elsewhere-token-0002"
TOKENS = {"tokens": [{"name": "ro", "token": READ_TOKEN, "access": "read"},
                     {"name": "etl", "token": WRITE_ELSEWHERE_TOKEN, "access": "write", "catalogs": ["elsewhere"]}]}


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("HMS_CATALOG_REQUIRE_BROWSER") == "1":
        pytest.fail(f"HMS_CATALOG_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One chromium for the session, on a fresh profile (a persistent context: the profile is ours, not a
    default one); tests open pages of their own in it."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (pip install playwright; no browser download needed)")
    if not os.access(CHROMIUM, os.X_OK):
        _unavailable(f"no chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=str(CHROMIUM), headless=True,
            args=LAUNCH_ARGS, viewport={"width": 1280, "height": 900}, service_workers="block")
        context.set_default_timeout(TIMEOUT_MS)
        yield context
        context.close()


@pytest.fixture(scope="package")
def warehouse(spark: Any) -> Iterator[str]:
    """A database written by Spark: ``sales``, Parquet partitioned by ``dt`` (three partitions), and ``notes``."""
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")
    spark.sql(f"CREATE DATABASE {DB}")
    spark.sql(f"CREATE TABLE {DB}.sales (id BIGINT, amount DECIMAL(10,2), item STRING) "
              "PARTITIONED BY (dt STRING) STORED AS PARQUET")
    for day, rows in (("2024-01-01", "(1, 1.50, 'tea')"), ("2024-01-02", "(2, 2.50, 'cake'), (3, 4.00, 'jam')"),
                      ("2024-01-03", "(4, 0.99, 'bun')")):
        spark.sql(f"INSERT INTO {DB}.sales PARTITION (dt='{day}') VALUES {rows}")
    spark.sql(f"CREATE TABLE {DB}.notes (id INT, text STRING) STORED AS PARQUET")
    yield DB
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")


@pytest.fixture(scope="package")
def service(tmp_path_factory: pytest.TempPathFactory, warehouse: str, metastore_uri: str) -> Iterator[Server]:
    """The server the console tests share, with catalog ``hive`` over the test metastore and the named
    tokens of ``TOKENS``."""
    directory = tmp_path_factory.mktemp("console")
    tokens = tokens_file(directory / "tokens.json", TOKENS)
    with served(directory / "home", "--tokens", str(tokens)) as running:
        client = running.client()
        try:
            client.create_catalog(CATALOG, {"type": "hms", "hive.metastore.uris": metastore_uri}, comment="the test metastore")
        finally:
            client.close()
        yield running


@dataclass
class Console:
    """A page of the browser on the service, the URLs it requested, and where its screenshots go."""

    page: Any
    server: Server
    shots: Path
    requested: list[str] = field(default_factory=list)

    def open(self, route: str = "") -> None:
        self.page.goto(f"{self.server.url}/ui{route}")

    def sign_in(self, token: str | None = None) -> None:
        self.open()
        self.page.fill("#token", token if token is not None else self.server.token)
        self.page.press("#token", "Enter")
        self.page.wait_for_selector("nav#nav a >> text=Catalogs", state="visible")

    def go(self, route: str) -> None:
        """Follow a console route (``#/catalogs/...``) in the signed-in page."""
        self.page.evaluate("route => { location.hash = route; }", route)

    def shot(self, name: str, *, full_page: bool = True) -> Path:
        """A screenshot under the test's ``screenshots`` folder, copied to ``/tmp/console-shots`` (names are
        unique across the tests)."""
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page)
        SHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, SHOTS / path.name)
        return path

    def foreign_requests(self) -> list[str]:
        return [url for url in self.requested if not url.startswith(self.server.url + "/")]


@pytest.fixture
def console(browser: Any, service: Server, tmp_path: Path) -> Iterator[Console]:
    """A fresh page (its own sessionStorage: signed out); after the test, no request may have left the origin."""
    page = browser.new_page()
    shots = tmp_path / "screenshots"
    shots.mkdir()
    opened = Console(page, service, shots)
    page.on("request", lambda sent: opened.requested.append(sent.url))
    try:
        yield opened
    finally:
        page.close()
    assert opened.requested, "the page made no request at all"
    assert opened.foreign_requests() == [], f"requests left the service's origin {service.url}"
    secrets = (service.token, READ_TOKEN, WRITE_ELSEWHERE_TOKEN)
    assert not any(secret in url for url in opened.requested for secret in secrets), "a token appeared in a URL"
