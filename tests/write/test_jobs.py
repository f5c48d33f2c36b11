"""Write jobs' bookkeeping (pure logic): which jobs are alive, what commits touched since a job began, and
which staging folders are a dead job's."""

from __future__ import annotations

from pathlib import Path

from hms_catalog.commits import staging
from hms_catalog.storage import StorageResolver
from hms_catalog.write.jobs import SILENT_SECONDS, WHOLE_TABLE, WriteJobs
from hms_catalog.write.target import WriteTarget

TARGET = WriteTarget("db", "t", "file:///x", "parquet", True, ("dt",))


def test_a_job_silent_for_a_minute_is_taken_for_dead_and_a_renewed_one_is_not() -> None:
    jobs = WriteJobs()
    silent, renewed = jobs.begin("db", "t", "/x", TARGET), jobs.begin("db", "t", "/x", TARGET)
    silent.heard -= SILENT_SECONDS + 1
    renewed.heard -= SILENT_SECONDS - 5
    jobs.renew(renewed.id)
    assert jobs.live("db", "t") == [renewed.id]
    assert jobs.live("db", "other") == []


def test_commits_since_a_job_began_are_its_conflicts_and_old_ones_are_forgotten() -> None:
    jobs = WriteJobs()
    early = jobs.begin("db", "t", "/x", TARGET)
    winner = jobs.begin("db", "t", "/x", TARGET)
    jobs.record(winner, {"dt=a"})
    jobs.end(winner.id)
    late = jobs.begin("db", "t", "/x", TARGET)
    assert jobs.touched_since(early, {"dt=a", "dt=b"}) == ({"dt=a"}, winner.id)
    assert jobs.touched_since(late, {"dt=a"}) == (set(), None)
    jobs.record(late, {WHOLE_TABLE})
    assert jobs.touched_since(early, {"dt=z"})[0] == {"dt=z"}  # a whole-table overwrite touches every partition
    jobs.end(early.id)
    jobs.end(late.id)
    assert jobs._journal == []


def test_stale_staging_folders_are_those_of_no_live_job_and_no_current_location(tmp_path: Path) -> None:
    root = tmp_path / "t"
    for name in ("live", "dead", "current"):
        (root / f"{staging.STAGING_PREFIX}{name}0000" / "dt=a").mkdir(parents=True)
    (root / "dt=b").mkdir()
    current = [f"file://{root}/{staging.STAGING_PREFIX}current0000/dt=a"]
    stale = staging.stale_staging(StorageResolver(), f"file://{root}", ["live0000"], current)
    assert [Path(s.removeprefix("file://")).name for s in stale] == [f"{staging.STAGING_PREFIX}dead0000"]
    assert staging.table_root(f"file://{root}/{staging.STAGING_PREFIX}current0000") == f"file://{root}"
