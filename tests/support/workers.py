"""How ``make test`` shares the suite between two workers (pytest-xdist: ``-n 2 --dist loadgroup``).

Each worker is a test session of its own, with its own metastore and SparkSession; a worker takes a group of
tests whole. A package whose tests share a set-up made once for that package alone (a service, the faults
metastore, the KDC, the browser, the tables Spark writes for the connector's and the planner's tests) is one
group, so that set-up is made once; every other test file is a group of its own, so the two workers stay
evenly loaded to the end. The package groups, the longest, are handed out first: a worker that took one late
would run on alone.

The groups are read from each test's id by :class:`GroupScheduling` (xdist's own ``xdist_group`` marks do not
reach the ids of pytest 9's items).
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from xdist.scheduler import LoadScopeScheduling

__all__ = ["SHARED_SETUP_PACKAGES", "GroupScheduling", "group_of", "in_worker_order"]

# tests/<package>/: the packages whose conftest starts something for the package's tests alone. Longest first
# (seconds in a serial run on two cores: spark_connector 370, service 270, faults 180, kerberos 80, planner 50,
# console 20). tests/test_workers.py checks that every package whose conftest makes such a set-up is here.
SHARED_SETUP_PACKAGES = ("spark_connector", "service", "faults", "kerberos", "planner", "console")
TESTS_DIR = "tests"


def group_of(test_file: str) -> str:
    """The group of a test file, given as its path under the ``tests`` folder (``faults/test_x.py``): its
    package when that package shares a set-up, else the file itself."""
    parts = PurePosixPath(test_file).parts
    if len(parts) > 1 and parts[0] in SHARED_SETUP_PACKAGES:
        return parts[0]
    return test_file


def in_worker_order(test_files: list[str]) -> list[int]:
    """The order to hand tests out in (indexes into ``test_files``, one file per test): the shared-set-up
    packages first, longest first, then the files as collected. Stable, so each group's tests keep their order."""
    rank = {package: place for place, package in enumerate(SHARED_SETUP_PACKAGES)}
    return sorted(range(len(test_files)), key=lambda index: rank.get(group_of(test_files[index]), len(rank)))


class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
    """xdist's scheduling by scope, the scope of a test being its group (:func:`group_of`). Groups are handed out
    in the workers' collection order (``--no-loadscope-reorder``), which :func:`in_worker_order` makes."""

    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        prefix = f"{TESTS_DIR}/"
        return group_of(path[len(prefix):]) if path.startswith(prefix) else path

    def __repr__(self) -> str:
        return f"GroupScheduling({len(self.nodes)} workers)"


def make_scheduler(config: Any, log: Any) -> GroupScheduling | None:
    """For ``--dist loadgroup``: the groups above; other modes are xdist's own."""
    return GroupScheduling(config, log) if config.getvalue("dist") == "loadgroup" else None
