"""The scan tasks of an Iceberg snapshot, or of the appends between two: pyiceberg's manifest planning, with
equality deletes matched here.

pyiceberg (0.12) matches position deletes to data files but refuses equality deletes outright, so its
manifest planner is run with the equality delete entries taken aside, and they are matched here by the
spec's rule: an equality delete applies to a data file of an older data sequence number (strictly)
that is in its partition, or to every data file when its spec is unpartitioned. Both front ends plan with
this: Spark's splits (:mod:`planner.iceberg_planner`) and the Iceberg REST catalog's scan planning.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from typing import Any

__all__ = ["IcebergTask", "appended_snapshots", "scan_tasks"]

IcebergTask = tuple[Any, list[Any]]  # pyiceberg's FileScanTask and the equality delete files that apply to its file


class _EqualityDeletes:
    """Equality delete files by (spec id, partition), each list in data sequence number order."""

    def __init__(self, entries: Iterable[Any], unpartitioned: set[int]) -> None:
        by_key: dict[Any, list[tuple[int, Any]]] = {}
        for entry in entries:
            data = entry.data_file
            key = None if data.spec_id in unpartitioned else (data.spec_id, data.partition)
            by_key.setdefault(key, []).append((entry.sequence_number or 0, data))
        self._files = {key: sorted(pairs, key=lambda pair: pair[0]) for key, pairs in by_key.items()}
        self._sequences = {key: [seq for seq, _ in pairs] for key, pairs in self._files.items()}

    def for_data_file(self, sequence_number: int, data_file: Any) -> list[Any]:
        found: list[Any] = []
        for key in (None, (data_file.spec_id, data_file.partition)):
            if key in self._files:
                first = bisect.bisect_right(self._sequences[key], sequence_number)  # newer deletes only
                found.extend(data for _, data in self._files[key][first:])
        return found


def appended_snapshots(metadata: Any, start_snapshot_id: int, end_snapshot_id: int) -> list[Any]:
    """The ``append`` snapshots after ``start_snapshot_id`` (exclusive) up to ``end_snapshot_id`` (inclusive), as
    Iceberg's incremental append scan takes them; ValueError unless the start is an ancestor of the end."""
    end = metadata.snapshot_by_id(end_snapshot_id)
    if end is None or metadata.snapshot_by_id(start_snapshot_id) is None:
        missing = end_snapshot_id if end is None else start_snapshot_id
        raise ValueError(f"snapshot {missing} is not a snapshot of the table")
    between: list[Any] = []
    snapshot = end
    while snapshot is not None and snapshot.snapshot_id != start_snapshot_id:
        between.append(snapshot)
        parent = snapshot.parent_snapshot_id
        snapshot = metadata.snapshot_by_id(parent) if parent is not None else None
    if snapshot is None:
        raise ValueError(f"snapshot {start_snapshot_id} is not an ancestor of snapshot {end_snapshot_id}")
    return [s for s in between if s.summary is not None and s.summary.operation.value == "append"]


def _planner_class() -> type:
    from pyiceberg.manifest import DataFileContent
    from pyiceberg.table import ManifestGroupPlanner

    class Planner(ManifestGroupPlanner):
        def _build_metrics_evaluator(self) -> Any:
            # Column metrics prune data files only: an equality delete whose values miss the filter can
            # still delete a row that the filter lets through on its other columns.
            might_match = super()._build_metrics_evaluator()
            return lambda file: file.content != DataFileContent.DATA or might_match(file)

    return Planner


def scan_tasks(metadata: Any, io: Any, snapshot: Any, row_filter: Any, *, case_sensitive: bool = False,
               appends: Sequence[Any] | None = None, check: Callable[[], None] | None = None) -> list[IcebergTask]:
    """pyiceberg's scan tasks of ``snapshot`` (none: an empty table), each with the equality delete files for
    its file; the filter is bound to ``metadata``'s current schema. With ``appends`` (snapshots from
    :func:`appended_snapshots`), only the data files those snapshots added, and no delete files. ``check`` is called
    at each manifest entry: it raises to stop the planning (the service's cancelled plans)."""
    from pyiceberg.manifest import DataFileContent, ManifestContent, ManifestEntryStatus

    planner = _planner_class()(metadata, io, row_filter=row_filter, case_sensitive=case_sensitive)

    def go() -> bool:
        if check is not None:
            check()
        return True

    if appends is not None:
        ids = {s.snapshot_id for s in appends}
        manifests = {m.manifest_path: m for s in appends for m in s.manifests(io)
                     if m.content == ManifestContent.DATA and m.added_snapshot_id in ids}
        added = planner.plan_files(manifests.values(), manifest_entry_filter=lambda entry: (
            go() and entry.status == ManifestEntryStatus.ADDED and entry.snapshot_id in ids))
        return [(task, []) for task in added]
    if snapshot is None:
        return []
    equality: list[Any] = []
    sequences: dict[str, int] = {}

    def keep(entry: Any) -> bool:
        go()
        content = entry.data_file.content
        if content == DataFileContent.EQUALITY_DELETES:
            equality.append(entry)
            return False
        if content == DataFileContent.DATA:
            sequences[entry.data_file.file_path] = entry.sequence_number or 0
        return True

    tasks = list(planner.plan_files(snapshot.manifests(io), manifest_entry_filter=keep))
    if not equality:
        return [(task, []) for task in tasks]
    index = _EqualityDeletes(equality, {i for i, spec in metadata.specs().items() if spec.is_unpartitioned()})
    return [(task, index.for_data_file(sequences[task.file.file_path], task.file)) for task in tasks]
