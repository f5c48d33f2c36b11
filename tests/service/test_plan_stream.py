"""The plan route streams: a plan of many partitions is sent chunked as its batches are cut, the text is what
``SplitPlan.dumps`` writes (so every client parses it unchanged), and the remote client reads it as it
arrives (``fetch_plan``); a refusal before the first split is still an error answer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import PlanningError
from hms_catalog.remote import CatalogServiceClient
from planner import SplitPlan, fetch_plan, plan_table
from planner.plan_json import SPLITS_PER_PIECE
from tests.service.conftest import hms_properties
from tests.support.hms import Admin
from tests.support.service import Server
from tests.support.sessions import open_catalog

pytestmark = pytest.mark.metastore

DATABASE = "streamed_plans"
PARTITIONS = 30
FILES = 120  # 2,400 splits of 20 partitions: more than one piece of the streamed text
CATALOG = "streamed"


@pytest.fixture(scope="module")
def table(admin: Admin, api: CatalogServiceClient, metastore_uri: str) -> Iterator[str]:
    """``streamed_plans.t`` (p string) of 30 partitions of 120 small files each, and the service's catalog
    ``streamed`` on the test metastore, planning 7 partitions at a time, at most 40 per scan."""
    admin.create_database(DATABASE)
    struct = admin.create_table(DATABASE, "t", [("x", "int")], partition_keys=[("p", "string")])
    root = admin.warehouse / f"{DATABASE}.db" / "t"
    added = []
    for index in range(PARTITIONS):
        folder = root / f"p=v{index:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        for part in range(FILES):
            (folder / f"part-{part:03d}.parquet").write_bytes(b"x" * 8)
        sd = ttypes.StorageDescriptor(**{**struct.sd.__dict__, "location": f"file://{folder}"})
        added.append(ttypes.Partition(values=[f"v{index:02d}"], dbName=DATABASE, tableName="t", sd=sd, parameters={}))
    admin.pool.call("add_partitions", added)
    api.create_catalog(CATALOG, hms_properties(metastore_uri, **{"planner.partition.batch": "7",
                                                                 "max_partitions_per_scan": "20"}))
    yield "t"
    api.drop_catalog(CATALOG)
    admin.pool.call("drop_database", DATABASE, False, True)


def test_a_plan_is_sent_chunked_as_the_text_dumps_writes(service: Server, table: str, tmp_path: object,
                                                         metastore_uri: str) -> None:
    answer = service.request("POST", f"/v1/catalogs/{CATALOG}/databases/{DATABASE}/tables/{table}/plan",
                             {"where": "p >= 'v10'", "columns": ["x"]})
    assert answer.status == 200 and answer.headers["content-type"] == "application/json"
    assert answer.headers.get("transfer-encoding") == "chunked" and "content-length" not in answer.headers
    plan = SplitPlan.loads(answer.body.decode("utf-8"))
    assert plan.summary.partitions_scanned == PARTITIONS - 10 and len(plan.splits) == (PARTITIONS - 10) * FILES
    assert len(plan.splits) > SPLITS_PER_PIECE and plan.options["columns"] == "x"
    assert answer.body.decode("utf-8") == plan.dumps()  # the text dumps writes: every client's parser reads it


def test_the_remote_client_reads_the_plan_as_it_streams(api: CatalogServiceClient, table: str, tmp_path: object,
                                                         metastore_uri: str) -> None:
    read = fetch_plan(api, CATALOG, DATABASE, table, "p > 'v10'")  # cold: the filter's one call
    assert read.summary.metastore_calls == {"get_partitions_by_filter": 1}
    whole = SplitPlan.loads(api.plan(CATALOG, DATABASE, table, "p > 'v10'"))  # warm: the same splits
    assert read.splits == whole.splits and read.summary.files == whole.summary.files
    assert len(read.splits) == (PARTITIONS - 11) * FILES and read.summary.splits == len(read.splits)
    assert {split.partition_values for split in read.splits} == {(("p", f"v{i:02d}"),) for i in range(11, PARTITIONS)}


def test_a_refusal_before_the_first_split_is_an_error_answer(api: CatalogServiceClient, table: str) -> None:
    with pytest.raises(PlanningError, match="would read 30 partitions, more than max_partitions_per_scan=20"):
        fetch_plan(api, CATALOG, DATABASE, table)
    with pytest.raises(PlanningError, match="would read 30 partitions"):
        api.plan(CATALOG, DATABASE, table)


def test_the_streamed_plan_is_the_local_plan(api: CatalogServiceClient, table: str, tmp_path: object,
                                            metastore_uri: str) -> None:
    from pathlib import Path

    session = open_catalog(Path(str(tmp_path)), metastore_uri)
    try:
        catalog = session.manager.catalog("hive")
        local = plan_table(catalog, catalog.table(DATABASE, table), "p < 'v05'")
    finally:
        session.manager.close()
    remote = fetch_plan(api, CATALOG, DATABASE, table, "p < 'v05'")
    assert remote.splits == local.splits and remote.summary.partitions_scanned == local.summary.partitions_scanned == 5
