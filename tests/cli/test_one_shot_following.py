"""A one-shot ``hms-catalog -e`` run never starts a metastore event follower (it would abandon it at once):
a service on the home follows for it, and SHOW CHANGES says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hms_catalog.state import SharedState, open_definitions
from tests.support.sessions import EVENTS

pytestmark = pytest.mark.slow  # make test-fast leaves it out: servers, processes or waits of its own take seconds per test


def test_a_one_shot_run_follows_no_events_and_says_who_does(home: Path, metastore_uri: str) -> None:
    properties = ", ".join(f"'{key}'='{value}'" for key, value in
                           {"type": "hms", "hive.metastore.uris": metastore_uri, **EVENTS}.items())
    run = subprocess.run(
        [sys.executable, "-m", "hms_catalog.cli", "--format", "json", "-e",
         f"CREATE CATALOG followed PROPERTIES ({properties}); SHOW DATABASES FROM followed; SHOW CHANGES FROM followed"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "HMS_CATALOG_HOME": str(home)}, check=False,
    )
    assert run.returncode == 0, run.stderr
    changes = [json.loads(line) for line in run.stdout.splitlines() if line.strip()][-1]
    assert "followed by a service on this home, not by this one-shot run" in str(changes["message"]), changes
    definitions = open_definitions(home)
    try:
        assert SharedState(definitions).leases.holders() == {}  # no follower ever claimed the catalog's lease
    finally:
        definitions.database.close()
