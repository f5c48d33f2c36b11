"""The audit log: one whole JSON line per change, 0600, secrets masked, outcomes told apart, no interleaving."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from hms_catalog.errors import NotFoundError
from service.access import Access, ForbiddenError, Principal
from service.audit import AuditLog

SECRET = "hunter2-not-to-be-shown"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_each_outcome_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "home" / "audit.log"
    log = AuditLog(path)
    versions = iter([3, 4, 4, 4])
    with log.recording("etl", "prod", f"ALTER TABLE t SET TBLPROPERTIES ('x.password'='{SECRET}')", lambda: next(versions)):
        pass
    with pytest.raises(ForbiddenError), log.recording("ro", "prod", "DROP TABLE t", lambda: 4):
        raise ForbiddenError("permission denied", Principal("ro", Access.READ))
    with pytest.raises(NotFoundError), log.recording("admin", "prod", "DROP TABLE nope", lambda: 4):
        raise NotFoundError("table", "prod.db.nope")

    def gone() -> int:
        raise NotFoundError("catalog", "prod")

    with log.recording("admin", "prod", "DROP CATALOG prod", gone) as entry:
        entry.settle("ok", note="x")
    assert path.stat().st_mode & 0o777 == 0o600
    lines = _lines(path)
    assert [(line["token"], line["outcome"], line["version_before"], line["version_after"]) for line in lines] == [
        ("etl", "ok", 3, 4), ("ro", "refused", 4, 4), ("admin", "error: table 'prod.db.nope' does not exist", 4, 4),
        ("admin", "ok", None, None)]
    assert lines[0]["catalog"] == "prod" and lines[0]["time"].endswith("Z") and "T" in lines[0]["time"]
    assert SECRET not in path.read_text(encoding="utf-8") and "******" in lines[0]["statement"]
    assert lines[3]["note"] == "x"


def test_a_failure_after_a_settled_change_keeps_the_settled_outcome(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.log")
    with pytest.raises(TimeoutError), log.recording("admin", "c", "X", lambda: 1) as entry:
        entry.settle("ok", sync_ddl="timed out")
        raise TimeoutError("late")
    assert [(line["outcome"], line["sync_ddl"]) for line in _lines(tmp_path / "audit.log")] == [("ok", "timed out")]


def test_an_existing_file_is_made_private_and_appended_to(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    path.write_text('{"old": 1}\n', encoding="utf-8")
    os.chmod(path, 0o644)
    AuditLog(path).append({"token": "admin"})
    assert path.stat().st_mode & 0o777 == 0o600 and _lines(path) == [{"old": 1}, {"token": "admin"}]


def test_concurrent_appends_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    log = AuditLog(path)
    threads = [threading.Thread(target=lambda n=n: [log.append({"thread": n, "i": i, "pad": "x" * 5000}) for i in range(50)])
               for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = _lines(path)
    assert len(lines) == 400 and {(line["thread"], line["i"]) for line in lines} == {(n, i) for n in range(8) for i in range(50)}
