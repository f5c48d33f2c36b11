"""The console at ``/ui`` in a real browser: sign-in, browsing to a Spark-written table, a plan, catalog
definitions created, altered and dropped through the page, databases and tables created and dropped, a
read-only token shown no change controls, the change feed live, and a phone-sized screen.
Every test's page is checked (in the ``console`` fixture) to have requested nothing off the service's origin."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.console.conftest import CATALOG, DB, READ_TOKEN, WRITE_ELSEWHERE_TOKEN, Console

try:
    from playwright.sync_api import expect
except ImportError:  # the ``browser`` fixture says why the tests skip (or fail, when a browser is required)
    expect = None

pytestmark = pytest.mark.metastore


def _text(console: Console, selector: str) -> str:
    return str(console.page.inner_text(selector)).strip()


def test_the_page_loads_without_a_token_and_a_wrong_token_is_refused(console: Console) -> None:
    console.open()
    page = console.page
    assert page.get_attribute("#token", "type") == "password"
    assert page.is_hidden("nav#nav")
    console.shot("sign-in")

    page.fill("#token", "not-the-token-of-this-service")
    page.press("#token", "Enter")
    page.wait_for_selector("#sign-in-status .message.error")
    assert "Wrong token" in _text(console, "#sign-in-status")
    assert "401" in _text(console, "#sign-in-status")
    assert page.is_hidden("nav#nav")
    assert page.evaluate("sessionStorage.length") == 0
    console.shot("sign-in-refused")

    page.fill("#token", console.server.token)
    page.press("#token", "Enter")
    page.wait_for_selector("nav#nav", state="visible")
    assert [link.strip() for link in page.locator("nav#nav a").all_inner_texts()] == ["Catalogs", "Plan", "Caches", "Changes"]
    assert page.evaluate("Object.values(sessionStorage)") == [console.server.token]
    assert console.server.token not in page.url
    page.wait_for_selector(f"ul.links a >> text={CATALOG}")
    console.shot("catalogs")

    page.click("#sign-out")
    page.wait_for_selector("#token")
    assert page.evaluate("sessionStorage.length") == 0


def test_browsing_to_a_spark_table_shows_its_columns_formats_partitions_and_changes(console: Console) -> None:
    console.sign_in()
    page = console.page
    page.click(f"ul.links a >> text={CATALOG}")
    page.wait_for_selector(f"ul.links a >> text={DB}")
    page.fill("input[aria-label='Search databases']", DB[:-2])  # the search box filters the list
    assert page.locator("ul.links a").all_inner_texts() == [DB]
    console.shot("catalog")
    page.click(f"ul.links a >> text={DB}")
    page.wait_for_selector("ul.links a >> text=sales")
    page.fill("input[aria-label='Search tables']", "note")
    assert page.locator("ul.links a").all_inner_texts() == ["notes"]
    page.fill("input[aria-label='Search tables']", "")
    console.shot("database")
    page.click("ul.links a >> text=sales")

    page.wait_for_selector("#columns")
    assert _text(console, "[data-field=format]") == "HIVE"
    assert _text(console, "[data-field=file_format]") == "PARQUET"
    assert DB in _text(console, "[data-field=location]")
    rows = [row.split("\t") for row in page.locator("#columns tbody tr").all_inner_texts()]
    assert [(name, kind) for name, kind, *_ in rows] == [("id", "bigint"), ("amount", "decimal(10,2)"), ("item", "string"),
                                                        ("dt", "string")]
    assert [name for name, _, marker in rows if marker.strip()] == ["dt"]  # the partition key marker
    assert "Parquet" in _text(console, "[data-field=serde]")

    page.wait_for_selector("#partitions ul.partitions li")
    assert page.locator("#partitions ul.partitions li").all_inner_texts() == ["dt=2024-01-01", "dt=2024-01-02", "dt=2024-01-03"]
    page.fill("#partition-filter", "dt >= '2024-01-02'")
    page.press("#partition-filter", "Enter")
    expect(page.locator("#partitions ul.partitions li")).to_have_count(2)
    assert "2 partitions" in _text(console, "#partitions")
    page.wait_for_selector("#table-changes h2")
    expect(page.locator("#table-changes")).not_to_contain_text("Loading")
    console.shot("table")


def test_a_plan_with_a_predicate_shows_the_partitions_scanned_and_pruned(console: Console) -> None:
    console.sign_in()
    page = console.page
    console.go(f"#/plan?catalog={CATALOG}&database={DB}&table=sales")
    expect(page.locator("#plan-table")).to_have_value("sales")
    page.fill("#plan-where", "dt = '2024-01-02'")
    page.press("#plan-where", "Enter")  # Enter plans
    page.wait_for_selector("[data-field=partitions_scanned]")
    assert _text(console, "[data-field=partitions_total]") == "3"
    assert _text(console, "[data-field=partitions_scanned]") == "1"
    assert _text(console, "[data-field=partitions_pruned]") == "2"
    assert int(_text(console, "[data-field=splits]")) >= int(_text(console, "[data-field=files]")) >= 1
    assert int(_text(console, "[data-field=bytes]").split()[0]) > 0
    assert page.locator("svg#splits-per-host rect.bar").count() >= 1
    assert page.locator("svg#phases rect.bar").count() == 3
    assert "dt=2024-01-02" in _text(console, "#plan-result")
    console.shot("plan")

    page.fill("#plan-where", "dt = ")  # a syntax error is shown, not thrown away
    page.press("#plan-where", "Enter")
    page.wait_for_selector("#plan-result .message.error")
    assert "Cannot plan" in _text(console, "#plan-result")


def test_a_catalog_is_created_altered_and_dropped_through_the_page(console: Console, metastore_uri: str) -> None:
    console.sign_in()
    page = console.page
    secret = "console-secret-not-to-be-shown"
    page.fill("#new-catalog-name", "made_in_console")
    page.fill("#new-catalog-comment", "made by the console test")
    page.fill("#new-catalog-properties", f"type=hms\nhive.metastore.uris={metastore_uri}\nx.password={secret}\n")
    page.click("#create-catalog button[type=submit]")
    page.wait_for_selector("h1 >> text=Catalog made_in_console")
    properties = _text(console, "#catalog-properties")
    assert "x.password" in properties and secret not in properties  # masked as the API masks it
    assert secret not in page.content()
    assert _text(console, "#definition [data-field=version]") == "1"
    console.shot("catalog-created")

    page.fill("#alter-properties", "x.note=altered in the console")
    page.click("#alter-catalog button[type=submit]")
    page.wait_for_selector("text=now version 2")
    assert "altered in the console" in _text(console, "#catalog-properties")

    client = console.server.client()  # someone else alters it: the page's If-Match version is stale now
    try:
        client.alter_catalog("made_in_console", properties={"x.other": "1"})
        page.fill("#alter-properties", "x.note=lost update")
        page.click("#alter-catalog button[type=submit]")
        page.wait_for_selector("#definition .message.error")
        assert "changed since version 2" in _text(console, "#definition .message.error")
        assert client.catalog("made_in_console")["properties"]["x.note"] == "altered in the console"

        page.click("#reload-definition")
        expect(page.locator("#definition [data-field=version]")).to_have_text("3")
        page.click("#drop-catalog")
        page.click("#confirm-drop")
        page.wait_for_selector("text=Dropped catalog made_in_console.")
        assert "made_in_console" not in page.locator("ul.links").inner_text()
        console.shot("catalog-dropped")
        assert "made_in_console" not in [each["name"] for each in client.catalogs()]
    finally:
        client.close()


CHANGE_CONTROLS = ("#create-catalog", "#alter-catalog", "#drop-catalog", "#create-database", "#drop-database", "#create-table",
                   "#drop-table")


def _no_change_controls(console: Console) -> None:
    shown = [selector for selector in CHANGE_CONTROLS if console.page.locator(selector).count()]
    assert shown == [], f"a token that may not change {CATALOG} is offered {shown}"


def test_a_read_token_sees_catalogs_and_tables_but_no_change_controls(console: Console) -> None:
    answer = console.server.request("GET", "/v1/principal", token=READ_TOKEN)
    assert answer.status == 200 and answer.json() == {"name": "ro", "access": "read", "catalogs": ["*"]}
    assert console.server.request("GET", "/v1/principal").json()["access"] == "admin"

    console.sign_in(READ_TOKEN)
    page = console.page
    assert _text(console, "#who") == "ro · read"
    page.wait_for_selector(f"ul.links a >> text={CATALOG}")
    _no_change_controls(console)
    console.shot("read-only-catalogs")

    page.click(f"ul.links a >> text={CATALOG}")
    page.wait_for_selector(f"ul.links a >> text={DB}")
    assert "hive.metastore.uris" in _text(console, "#catalog-properties")  # the definition is shown, not its forms
    _no_change_controls(console)
    console.shot("read-only-catalog")
    page.click(f"ul.links a >> text={DB}")
    page.wait_for_selector("ul.links a >> text=sales")
    _no_change_controls(console)
    page.click("ul.links a >> text=sales")
    page.wait_for_selector("#columns")
    expect(page.locator("#table-changes")).not_to_contain_text("Loading")
    _no_change_controls(console)
    console.shot("read-only-table")

    page.click("#sign-out")  # a write token for another catalog: it neither reads nor changes this one
    page.wait_for_selector("#token")
    assert page.is_hidden("#who")
    console.sign_in(WRITE_ELSEWHERE_TOKEN)
    assert _text(console, "#who") == "etl · write"
    expect(page.locator("main")).to_contain_text("Catalogs")
    assert CATALOG not in page.locator("main ul.links").all_inner_texts()  # its token's entry does not list it
    console.go(f"#/catalogs/{CATALOG}/{DB}/sales")
    page.wait_for_selector(".message.error")
    assert "may read and change catalog(s) elsewhere" in _text(console, ".message.error")
    _no_change_controls(console)
    console.shot("another-catalogs-token")


def test_a_database_and_tables_are_created_and_dropped_through_the_page(console: Console) -> None:
    console.sign_in()
    page = console.page
    made = f"{DB}_made"
    console.go(f"#/catalogs/{CATALOG}")
    page.fill("#new-database-name", made)
    page.fill("#new-database-comment", "made by the console test")
    console.shot("database-create-form", full_page=True)
    page.click("#create-database button[type=submit]")
    page.wait_for_selector(f"h1 >> text=Database {made}")
    assert f"Created database {made}." in _text(console, "main")
    client = console.server.client()
    try:
        assert made in client.databases(CATALOG)

        # A Hive table partitioned by dt, and an Iceberg one: its columns show their field ids.
        page.fill("#new-table-name", "visits")
        page.fill("#new-table-columns", "id bigint\nurl string\n")
        page.fill("#new-table-partitions", "dt string")
        page.select_option("#new-table-format", "ORC")
        page.click("#create-table button[type=submit]")
        page.wait_for_selector("#columns")
        assert _text(console, "[data-field=file_format]") == "ORC"
        rows = [row.split("\t") for row in page.locator("#columns tbody tr").all_inner_texts()]
        assert [(name, kind) for name, kind, _ in rows] == [("id", "bigint"), ("url", "string"), ("dt", "string")]
        assert page.locator("#columns th").all_inner_texts() == ["Name", "Type", "Partition"]  # a Hive table: no field ids

        console.go(f"#/catalogs/{CATALOG}/{made}")
        page.fill("#new-table-name", "events")
        page.fill("#new-table-columns", "id bigint\nts timestamp\nname string")
        page.fill("#new-table-partitions", "days(ts)")
        page.select_option("#new-table-format", "ICEBERG")
        console.shot("table-create-form")
        page.click("#create-table button[type=submit]")
        page.wait_for_selector("#columns")
        assert _text(console, "[data-field=format]") == "ICEBERG"
        assert page.locator("#columns th").all_inner_texts() == ["Name", "Type", "Field id", "Partition"]
        rows = [row.split("\t") for row in page.locator("#columns tbody tr").all_inner_texts()]
        assert [(name, field_id) for name, _, field_id, _ in rows] == [("id", "1"), ("ts", "2"), ("name", "3")]
        expect(page.locator("#table-changes")).not_to_contain_text("Loading")
        console.shot("table-created-iceberg")
        assert sorted(client.tables(CATALOG, made)) == ["events", "visits"]

        for name in ("events", "visits"):
            console.go(f"#/catalogs/{CATALOG}/{made}/{name}")
            page.wait_for_selector("#drop-table")
            page.click("#drop-table")
            page.click("#confirm-drop-table")
            page.wait_for_selector(f"text=Dropped table {name}.")
            assert name not in client.tables(CATALOG, made)
        console.shot("table-dropped")

        page.click("#drop-database")
        page.click("#confirm-drop-database")
        page.wait_for_selector(f"text=Dropped database {made}.")
        expect(page.locator("ul.links")).not_to_contain_text(made)
        assert made not in client.databases(CATALOG)
        console.shot("database-dropped")
    finally:
        client.drop_database(CATALOG, made, cascade=True, if_exists=True)
        client.close()


def test_the_change_feed_shows_a_refresh_from_the_cli_live(console: Console) -> None:
    console.sign_in()
    page = console.page
    console.go(f"#/changes?catalog={CATALOG}")
    page.wait_for_selector("#feed-status >> text=live")
    before = int(_text(console, "#catalog-version"))
    console.shot("changes-before")

    cli = Path(sys.executable).with_name("hms-catalog")
    ran = subprocess.run([str(cli), "--server", console.server.url, "-e", f"REFRESH CATALOG {CATALOG}"],
                         env={**os.environ, "HMS_CATALOG_TOKEN": console.server.token}, capture_output=True, text=True,
                         timeout=120)
    assert ran.returncode == 0, ran.stderr

    deadline = time.monotonic() + 20
    while int(_text(console, "#catalog-version")) <= before:  # the long poll answers as the change is logged
        assert time.monotonic() < deadline, f"the catalog version stayed at {before}"
        page.wait_for_timeout(100)
    page.wait_for_selector("#changes-table td >> text=refresh")
    assert re.search(r"\brefresh\b", _text(console, "#changes-table"))
    console.shot("changes-after")


def test_the_caches_page_shows_each_catalogs_caches(console: Console) -> None:
    console.sign_in()
    page = console.page
    console.go("#/caches")
    page.wait_for_selector(f"section[data-catalog={CATALOG}] table")
    headings = page.locator(f"section[data-catalog={CATALOG}] th").all_inner_texts()
    assert headings == ["Cache", "Entries", "Bytes", "Capacity", "Hit rate", "Hits / misses", "Loads", "Evictions",
                        "Evicted for memory"]
    assert page.locator(f"section[data-catalog={CATALOG}] tbody tr").count() >= 1
    assert re.fullmatch(r"Cache memory: [\d.]+ (B|KiB|MiB|GiB) held by every catalog's caches, of a budget of 1\.0 GiB",
                        _text(console, "#cache-memory"))
    console.shot("caches")


def test_the_pages_fit_a_phone_screen(console: Console) -> None:
    page = console.page
    page.set_viewport_size({"width": 390, "height": 844})
    console.sign_in()
    for route, ready, name in ((f"#/catalogs/{CATALOG}/{DB}/sales", "#columns", "phone-table"),
                               (f"#/plan?catalog={CATALOG}&database={DB}&table=sales", "#plan-form", "phone-plan")):
        console.go(route)
        page.wait_for_selector(ready)
        if name == "phone-plan":
            expect(page.locator("#plan-table")).to_have_value("sales")
            page.press("#plan-where", "Enter")
            page.wait_for_selector("[data-field=partitions_scanned]")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, f"{route} is wider than the screen"
        console.shot(name)
