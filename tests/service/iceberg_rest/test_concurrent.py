"""Four processes, each with its own pyiceberg RestCatalog, append to one table at once: every commit lands
(a client whose commit lost the race retries on the 409), and no row is lost."""

from __future__ import annotations

import multiprocessing
import warnings
from typing import Any

import pyarrow as pa
import pytest

from tests.service.iceberg_rest.conftest import CATALOG, audit_lines, rest_catalog
from tests.support.service import Server

PROCESSES = 4
APPENDS = 5


def _appender(url: str, token: str, namespace: str, worker: int) -> int:
    """``APPENDS`` commits of 2 rows each; pyiceberg retries a commit that lost the race, and so does this loop."""
    from pyiceberg.catalog.rest import RestCatalog
    from pyiceberg.exceptions import CommitFailedException

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        rest = RestCatalog(f"w{worker}", uri=f"{url}/iceberg", warehouse=CATALOG, token=token)
    for index in range(APPENDS):
        rows = pa.table({"worker": [worker] * 2, "n": [index * 2, index * 2 + 1]},
                        schema=pa.schema([pa.field("worker", pa.int64(), False), pa.field("n", pa.int64(), False)]))
        for _ in range(20):
            try:
                rest.load_table((namespace, "shared")).append(rows)
                break
            except CommitFailedException:
                continue
        else:
            raise AssertionError(f"worker {worker}: append {index} never landed")
    rest.close()
    return worker


@pytest.mark.slow
def test_four_processes_append_at_once(iceberg_service: Server, namespace: str) -> None:
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    rest = rest_catalog(iceberg_service)
    rest.create_table((namespace, "shared"), schema=Schema(NestedField(1, "worker", LongType(), required=True),
                                                           NestedField(2, "n", LongType(), required=True)))
    context = multiprocessing.get_context("spawn")
    with context.Pool(PROCESSES) as pool:
        done = pool.starmap(_appender, [(iceberg_service.url, iceberg_service.token, namespace, w) for w in range(PROCESSES)])
    assert sorted(done) == list(range(PROCESSES))
    table: Any = rest.load_table((namespace, "shared"))
    data = table.scan().to_arrow()
    assert data.num_rows == PROCESSES * APPENDS * 2
    assert sorted(zip(data.column("worker").to_pylist(), data.column("n").to_pylist())) == \
        [(w, n) for w in range(PROCESSES) for n in range(APPENDS * 2)]
    assert len(list(table.snapshots())) == PROCESSES * APPENDS  # one snapshot per append, none lost
    commits = [line for line in audit_lines(iceberg_service) if f"commit to {namespace}.shared" in line["statement"]]
    assert sum(line["outcome"] == "ok" for line in commits) == PROCESSES * APPENDS
