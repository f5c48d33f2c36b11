"""The console on a catalog whose tables live on a real S3 API (moto's server, the session's ``s3_warehouse``):
its definition shown with the secret key masked, its tables listed, a table's page (format, ``s3a://`` location,
columns, partitions) and a pruned plan of it, in the session's chromium.

This module's ``service`` replaces the package's (a Spark-written warehouse it does not need): a server of its
own whose only catalog is the S3 one; the ``console`` fixture of tests/console/conftest.py opens its pages.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.console.conftest import TOKENS, Console
from tests.support.s3 import SALES_FOLDERS, Warehouse
from tests.support.service import Server, served, tokens_file

try:
    from playwright.sync_api import expect
except ImportError:  # the ``browser`` fixture says why the tests skip (or fail, when a browser is required)
    expect = None  # type: ignore[assignment]

pytestmark = [pytest.mark.metastore, pytest.mark.slow]

CATALOG = "s3"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, s3_warehouse: Warehouse) -> Iterator[Server]:
    """A server (with the package's named tokens) whose catalog ``s3`` is the warehouse on the S3 endpoint."""
    directory = tmp_path_factory.mktemp("s3console")
    tokens = tokens_file(directory / "tokens.json", TOKENS)
    with served(directory / "home", "--tokens", str(tokens)) as running:
        client = running.client()
        try:
            client.create_catalog(CATALOG, s3_warehouse.catalog_properties(), comment="a warehouse on S3")
        finally:
            client.close()
        yield running


def _text(console: Console, selector: str) -> str:
    return str(console.page.inner_text(selector)).strip()


def test_an_s3_catalog_its_tables_a_table_and_a_plan(console: Console, s3_warehouse: Warehouse) -> None:
    secret, database = s3_warehouse.server.secret_key, s3_warehouse.database
    console.sign_in()
    page = console.page
    console.go(f"#/catalogs/{CATALOG}")
    page.wait_for_selector(f"ul.links a >> text={database}")
    properties = _text(console, "#catalog-properties")
    assert "s3.secret_key\t******" in properties, properties
    assert f"s3.endpoint\t{s3_warehouse.server.endpoint}" in properties
    assert f"s3.access_key\t{s3_warehouse.server.access_key}" in properties
    assert secret not in page.content()
    console.shot("s3-catalog")

    page.click(f"ul.links a >> text={database}")
    page.wait_for_selector("ul.links a >> text=sales")
    assert {"clicks", "events", "notes", "sales"} <= set(page.locator("ul.links a").all_inner_texts())
    page.click("ul.links a >> text=sales")
    page.wait_for_selector("#columns")
    assert _text(console, "[data-field=format]") == "HIVE"
    assert _text(console, "[data-field=file_format]") == "PARQUET"
    assert _text(console, "[data-field=location]") == f"{s3_warehouse.root}/sales"
    rows = [row.split("\t") for row in page.locator("#columns tbody tr").all_inner_texts()]
    assert [(name, kind) for name, kind, *_ in rows] == [("id", "bigint"), ("name", "string"), ("amount", "double"),
                                                        ("region", "string")]
    page.wait_for_selector("#partitions ul.partitions li")
    assert sorted(page.locator("#partitions ul.partitions li").all_inner_texts()) == sorted(SALES_FOLDERS.values())
    expect(page.locator("#table-changes")).not_to_contain_text("Loading")
    console.shot("s3-table")

    page.click("text=Plan a scan of this table")
    expect(page.locator("#plan-table")).to_have_value("sales")
    page.fill("#plan-where", "region = 'south east'")
    page.press("#plan-where", "Enter")
    page.wait_for_selector("[data-field=partitions_scanned]")
    assert (_text(console, "[data-field=partitions_scanned]"), _text(console, "[data-field=files]")) == ("1", "1")
    shown = page.locator("#plan-result code.path").first
    assert shown.get_attribute("title") == f"{s3_warehouse.root}/sales/region=south east/part-00000.parquet"
    assert "region=south east" in _text(console, "#plan-result")
    assert secret not in page.content()
    console.shot("s3-plan")
