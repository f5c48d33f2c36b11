"""One scan request planned: the snapshot (or appends) it names, the planner's tasks, and the spec's JSON of
each, in pages.

The tasks come from the planner (:func:`planner.iceberg_tasks.scan_tasks`, which Spark's plans use too:
pyiceberg's manifest planning, with equality deletes matched to data files by the spec's rule) over the
metadata file the catalog's cache holds; the JSON (content files, partition values, statistics, residual
filters) from :mod:`.scan_json`. Tasks are ordered by data file path, so that every replica cuts the same pages.
A plan lists no file outside the table's location: a table with one is refused, naming it (a client may still
plan it on its own, reading the manifests).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hms_catalog.cache import MetadataCache
from hms_catalog.storage.locations import normalize_location
from planner.iceberg_tasks import appended_snapshots, scan_tasks
from service.iceberg_rest.errors import IcebergError
from service.iceberg_rest.plan_ids import PlanKey
from service.iceberg_rest.scan_json import content_file, expression_json

__all__ = ["Planned", "PlanCache", "plan_scan"]

TASKS_PER_PAGE = 1000  # file scan tasks in one answer; a plan of more answers plan tasks, one per page


@dataclass(frozen=True)
class Planned:
    """A plan's file scan tasks (data file, residual, delete file paths), and its delete files by path."""

    tasks: tuple[tuple[dict[str, Any], Any, tuple[str, ...]], ...]
    delete_files: dict[str, dict[str, Any]]

    @property
    def pages(self) -> int:
        return max(1, -(-len(self.tasks) // TASKS_PER_PAGE))

    def page(self, number: int | None = None) -> dict[str, Any]:
        """The spec's ScanTasks of one page (None: all the tasks), each delete file listed once and referenced."""
        tasks = self.tasks if number is None else self.tasks[number * TASKS_PER_PAGE:(number + 1) * TASKS_PER_PAGE]
        index: dict[str, int] = {}
        answered = []
        for data_file, residual, deletes in tasks:
            task: dict[str, Any] = {"data-file": data_file, "residual-filter": residual}
            if deletes:
                task["delete-file-references"] = [index.setdefault(path, len(index)) for path in deletes]
            answered.append(task)
        return {"file-scan-tasks": answered, "delete-files": [self.delete_files[path] for path in index]}


class PlanCache:
    """Plans made on this replica, by plan id, so that fetching its pages plans once: kept in the catalog's
    ``iceberg_plans`` cache (bounded by count, and under the process's cache memory budget), made once however
    many ask at the same moment."""

    def __init__(self, cache: MetadataCache[str, Planned]) -> None:
        self._cache = cache

    def get(self, key: PlanKey, make: Callable[[], Planned]) -> Planned:
        return self._cache.get(key.plan_id, make)

    def drop(self, key: PlanKey) -> None:
        """Forget the plan (cancelled); a planning of it in flight then keeps nothing either."""
        self._cache.invalidate(key.plan_id)


def _inside(location: str, path: str) -> bool:
    root = normalize_location(location).rstrip("/") + "/"
    found = normalize_location(path)
    return found.startswith(root) and "/../" not in found[len(root) - 1:] and not found.endswith("/..")


def _field_ids(schema: Any, names: list[str], case_sensitive: bool, what: str) -> set[int]:
    """The ids of the fields ``names`` name, and of every field nested in them."""
    from pyiceberg.schema import index_by_name

    by_name = index_by_name(schema)
    ids: set[int] = set()
    for name in names:
        try:
            field = schema.find_field(name, case_sensitive)
        except ValueError:
            raise IcebergError(400, "BadRequestException", f"{what} names field '{name}', which the table's schema "
                                                           f"(id {schema.schema_id}) has not") from None
        full = schema.find_column_name(field.field_id) or name
        ids.add(field.field_id)
        ids.update(i for n, i in by_name.items() if n.startswith(full + "."))
    return ids


def _snapshot(metadata: Any, request: Any, table: str) -> tuple[Any, list[Any] | None]:
    """The snapshot a request scans (None: an empty table), or the appends of an incremental one."""
    if request.start_snapshot_id is not None or request.end_snapshot_id is not None:
        if request.start_snapshot_id is None or request.end_snapshot_id is None:
            raise IcebergError(400, "BadRequestException", "an incremental scan names both start-snapshot-id and "
                                                           "end-snapshot-id")
        try:
            appends = appended_snapshots(metadata, request.start_snapshot_id, request.end_snapshot_id)
        except ValueError as error:
            raise IcebergError(400, "BadRequestException", f"cannot plan appends of table {table}: {error}") from None
        return metadata.snapshot_by_id(request.end_snapshot_id), appends
    if request.snapshot_id is None:
        return metadata.current_snapshot(), None
    snapshot = metadata.snapshot_by_id(request.snapshot_id)
    if snapshot is None:
        raise IcebergError(400, "BadRequestException", f"snapshot {request.snapshot_id} is not a snapshot of table {table}")
    return snapshot, None


def plan_scan(metadata: Any, io: Any, request: Any, table: str, check: Callable[[], None] | None = None) -> Planned:
    """The plan of ``request`` (pyiceberg's PlanTableScanRequest) over one metadata file of ``table``; ``check`` is
    called between manifest entries and tasks, and raises to stop the planning (a cancelled plan)."""
    from pyiceberg.expressions import AlwaysTrue

    snapshot, appends = _snapshot(metadata, request, table)
    schema_id = snapshot.schema_id if request.use_snapshot_schema and snapshot is not None else None
    if schema_id is not None and schema_id != metadata.current_schema_id:
        metadata = metadata.model_copy(update={"current_schema_id": schema_id})  # filters bind to the snapshot's
    schema = metadata.schema()
    _field_ids(schema, list(request.select or []), request.case_sensitive, "select")
    stats = _field_ids(schema, list(request.stats_fields or []), request.case_sensitive, "stats-fields")
    try:
        tasks = scan_tasks(metadata, io, snapshot, request.filter or AlwaysTrue(), case_sensitive=request.case_sensitive,
                           appends=appends, check=check)
    except ValueError as error:  # a filter that does not bind: an unknown field, a literal of the wrong type
        raise IcebergError(400, "BadRequestException", f"cannot plan a scan of table {table}: {error}") from None
    kinds = {spec_id: [f.field_type for f in spec.partition_type(schema).fields] for spec_id, spec in metadata.specs().items()
             if _binds(spec, schema)}
    delete_files: dict[str, dict[str, Any]] = {}
    planned = []
    for task, equality in sorted(tasks, key=lambda pair: pair[0].file.file_path):
        if check is not None:
            check()
        deletes = sorted([*task.delete_files, *equality], key=lambda d: d.file_path)
        for path in [task.file.file_path, *(d.file_path for d in deletes)]:
            if not _inside(metadata.location, path):
                raise IcebergError(403, "ForbiddenException", f"table {table} lists file {path}, outside its location "
                                                              f"{metadata.location}: this catalog plans no scan of it")
        for delete in deletes:
            delete_files.setdefault(delete.file_path, content_file(delete, kinds, schema))
        planned.append((content_file(task.file, kinds, schema, stats), expression_json(task.residual, schema),
                        tuple(d.file_path for d in deletes)))
    return Planned(tuple(planned), delete_files)


def _binds(spec: Any, schema: Any) -> bool:
    try:
        spec.partition_type(schema)
    except (ValueError, KeyError):  # a spec whose source column this schema dropped: its values go untyped
        return False
    return True
