"""``python -m hms_catalog.demo --store s3`` (``make demo STORE=s3``) runs from start to end: moto's S3 server on
127.0.0.1, the warehouse written to it with pyarrow, registered at ``s3a://`` locations in an embedded metastore
of the demo's own, planned with pruning, and the plan's files read back through the catalog's storage."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _demo(directory: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hms_catalog.demo", "--dir", str(directory), "--store", "s3"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT, check=False,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})


@pytest.mark.slow
def test_the_s3_demo_reads_back_what_it_wrote_with_the_secret_masked(tmp_path: Path) -> None:
    run = _demo(tmp_path)
    assert run.returncode == 0, f"{run.stdout}\n{run.stderr}"
    out = run.stdout
    assert "demo-secret-key" not in out + run.stderr, "the demo's secret key was shown"
    assert "'s3.secret_key' = '******'" in out
    assert re.search(r"'s3.endpoint' = 'http://127\.0\.0\.1:\d+'", out), out
    # MSCK found the three day folders by listing the bucket; the plan scanned two of them, a file each
    assert "partitions of 'demo_s3.sales.orders' recovered: 3 added" in out, out
    assert all(f"| dt={day} " in out for day in ("2026-11-01", "2026-11-02", "2026-11-03")), out
    assert re.search(r"\| partitions_scanned\s+\| 2\s+\|", out), out
    assert re.search(r"\| files\s+\| 2\s+\|", out), out
    # pyiceberg's table, written with the catalog's settings, is found and detected on S3
    assert re.search(r"\| returns\s+\| ICEBERG\s+\| iceberg\s+\| s3a://demo-warehouse/sales.db/returns", out), out
    # the rows read from the plan's files, joined with the customers read from S3 too
    read = out[out.index("reading the plan's files"):]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in read.splitlines() if line.startswith("| 2026-")]
    assert rows == [["2026-11-02", "3", "Ada", "42.10"], ["2026-11-02", "4", "Edsger", "7.25"],
                    ["2026-11-03", "5", "Grace", "13.00"]], out
    assert "read from the plans' files on S3 with pyarrow" in read
    # a second run starts afresh (moto's objects are gone), and the metastore it left was stopped
    again = _demo(tmp_path)
    assert again.returncode == 0, f"{again.stdout}\n{again.stderr}"
