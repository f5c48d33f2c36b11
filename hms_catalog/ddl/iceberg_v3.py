"""Iceberg format version 3 where pyiceberg (0.12) reads it but will not write it.

pyiceberg parses v3 metadata, applies updates to it and answers it over REST, but its ``TableMetadataV3``
refuses to serialize itself ("Writing V3 is not yet supported"), its fresh field ids drop the columns'
``initial-default`` and ``write-default``, and it never starts a v3 table's ``next-row-id``. These are the
pieces that close those gaps, to the spec and as Java's ``TableMetadata.Builder`` and ``TableMetadataParser``
do; :mod:`hms_catalog.ddl._hive_v3` puts them into the HiveCatalog every Iceberg commit goes through, so
that a v3 metadata file is written and swapped into the metastore exactly as a v2 one is.

Types no client here can read or write (``variant``, ``geometry``, ``geography``, ``unknown``) are refused
when a schema is proposed (:func:`refuse_unreadable`): a table that pyiceberg, DuckDB and the Spark connector
could only fail on is better not created.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from hms_catalog.errors import UnsupportedTypeError

__all__ = ["INITIAL_ROW_ID", "ROW_LINEAGE_VERSION", "check_row_lineage", "fresh_metadata", "metadata_bytes",
           "refuse_unreadable", "started", "unreadable_columns", "with_defaults"]

ROW_LINEAGE_VERSION = 3  # the first format version whose tables track row ids (Java's MIN_FORMAT_VERSION_ROW_LINEAGE)
INITIAL_ROW_ID = 0  # a new or upgraded table's next-row-id (the spec's "Row Lineage")

_UNREADABLE = {"variant": "variant", "unknown": "unknown", "geometry": "geometry", "geography": "geography"}
_NANO_TIMESTAMPS = ("timestamp_ns", "timestamptz_ns")
_DEFAULTS = ("initial-default", "write-default")


def _type_name(node: Any) -> str:
    if isinstance(node, str):
        return node.split("(", 1)[0].strip().lower()  # geometry('OGC:CRS84') is a geometry
    if isinstance(node, dict):
        return str(node.get("type", "")).lower()
    return ""


def _fields(node: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every field of a schema's JSON (``a.b`` for nested ones), a list's element and a map's key and value
    included, each with its dotted name."""
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if kind == "struct":
        for field in node.get("fields") or []:
            if isinstance(field, dict):
                name = f"{path}{field.get('name')}"
                yield name, field
                yield from _fields(field.get("type"), name + ".")
    elif kind == "list":
        yield f"{path}element", {"type": node.get("element")}
        yield from _fields(node.get("element"), f"{path}element.")
    elif kind == "map":
        for part in ("key", "value"):
            yield f"{path}{part}", {"type": node.get(part)}
            yield from _fields(node.get(part), f"{path}{part}.")


def unreadable_columns(schema: Any) -> list[tuple[str, str]]:
    """(column, why) of every column of a schema's JSON that no client here can read or write."""
    found = []
    for name, field in _fields(schema, ""):
        type_name = _type_name(field.get("type"))
        if type_name in _UNREADABLE:
            found.append((name, f"type {_UNREADABLE[type_name]}"))
        elif type_name in _NANO_TIMESTAMPS and any(key in field for key in _DEFAULTS):
            found.append((name, f"a default on a {type_name} column (pyiceberg cannot read it back)"))
    return found


def refuse_unreadable(schema: Any, what: str) -> None:
    """UnsupportedTypeError naming every column of ``schema`` (its JSON) that :func:`unreadable_columns` finds."""
    found = unreadable_columns(schema)
    if found:
        listed = ", ".join(f"{name} ({why})" for name, why in found)
        raise UnsupportedTypeError(f"{what}: {listed} not supported: no client of this catalog (pyiceberg 0.12, "
                                   "DuckDB, the Spark connector) can read or write it")


def metadata_bytes(metadata: Any) -> bytes:
    """A v3 metadata file's JSON, as Java's TableMetadataParser writes it: pyiceberg's own fields and names
    (the same document its v2 serializer writes), and ``next-row-id``, required in v3."""
    document = metadata.model_dump(mode="json", by_alias=True, exclude_none=True)
    if document.get("format-version", 0) >= ROW_LINEAGE_VERSION:
        document["next-row-id"] = INITIAL_ROW_ID if metadata.next_row_id is None else metadata.next_row_id
    return json.dumps(document).encode("utf-8")


def _copy_defaults(fresh: Any, given: Any) -> None:
    if not isinstance(fresh, dict) or not isinstance(given, dict):
        return
    for key in _DEFAULTS:
        if key in given:
            fresh[key] = given[key]
    for key in ("type", "element", "key", "value"):
        _copy_defaults(fresh.get(key), given.get(key))
    for fresh_field, given_field in zip(fresh.get("fields") or [], given.get("fields") or []):
        _copy_defaults(fresh_field, given_field)


def with_defaults(fresh: Any, given: Any) -> Any:
    """``fresh`` (pyiceberg's ``assign_fresh_schema_ids(given)``, the same tree renumbered) with ``given``'s
    column defaults, which that renumbering drops and Java's ``TypeUtil.assignFreshIds`` keeps."""
    from pyiceberg.schema import Schema

    document = json.loads(fresh.model_dump_json())
    _copy_defaults(document, json.loads(given.model_dump_json()))
    return Schema.model_validate(document)


def fresh_metadata(schema: Any, spec: Any, order: Any, location: str, properties: dict[str, str]) -> Any:
    """A new table's metadata (pyiceberg's ``new_table_metadata``), with its columns' defaults, and a v3
    table's row lineage started at ``next-row-id`` 0."""
    from pyiceberg.table.metadata import new_table_metadata

    metadata = new_table_metadata(schema, spec, order, location, dict(properties))
    return started(metadata, schema)


def started(metadata: Any, given: Any) -> Any:
    """``metadata`` made from the schema ``given`` (a pyiceberg Schema, or an Arrow one, which has no defaults)
    with what :func:`fresh_metadata` adds."""
    from pyiceberg.schema import Schema

    update: dict[str, Any] = {}
    if isinstance(given, Schema) and any(f.initial_default is not None or f.write_default is not None
                                         for f in given._lazy_id_to_field.values()):
        update["schemas"] = [with_defaults(metadata.schemas[0], given)]
    if metadata.format_version >= ROW_LINEAGE_VERSION and metadata.next_row_id is None:
        update["next_row_id"] = INITIAL_ROW_ID
    return metadata.model_copy(update=update) if update else metadata


def check_row_lineage(base: Any, updates: Sequence[Any]) -> int | None:
    """The table's ``next-row-id`` once ``updates`` apply to ``base`` (None: not a v3 table), every added
    snapshot checked as Java's ``TableMetadata.Builder.addSnapshot`` checks it: its ``first-row-id`` is set
    (else ValidationError, 400) and not behind the table's ``next-row-id`` (else CommitFailedException, 409,
    which a client answers by refreshing and retrying, as the spec asks of a writer: a snapshot's
    ``first-row-id`` is the table's ``next-row-id`` at the commit that adds it), and the table's
    ``next-row-id`` then advances by the snapshot's ``added-rows``."""
    from pyiceberg.exceptions import CommitFailedException, ValidationError
    from pyiceberg.table.update import AddSnapshotUpdate, UpgradeFormatVersionUpdate

    version = base.format_version if base is not None else 1
    next_row_id = getattr(base, "next_row_id", None) if version >= ROW_LINEAGE_VERSION else None
    next_row_id = INITIAL_ROW_ID if next_row_id is None else next_row_id
    for update in updates:
        if isinstance(update, UpgradeFormatVersionUpdate):
            version = max(version, update.format_version)
        elif isinstance(update, AddSnapshotUpdate) and version >= ROW_LINEAGE_VERSION:
            snapshot = update.snapshot
            if snapshot.first_row_id is None:
                raise ValidationError(f"Cannot add snapshot {snapshot.snapshot_id}: first-row-id is null (a v3 table's "
                                      f"snapshots start at the table's next-row-id, {next_row_id})")
            if snapshot.first_row_id < next_row_id:
                raise CommitFailedException(f"Cannot add snapshot {snapshot.snapshot_id}: its first-row-id is behind the "
                                            f"table's next-row-id ({snapshot.first_row_id} < {next_row_id}); refresh the "
                                            "table and retry")
            if snapshot.added_rows is None:
                raise ValidationError(f"Cannot add snapshot {snapshot.snapshot_id}: added-rows is null (a v3 table's "
                                      "snapshots say how many row ids they assign)")
            next_row_id += snapshot.added_rows
    return next_row_id if version >= ROW_LINEAGE_VERSION else None
