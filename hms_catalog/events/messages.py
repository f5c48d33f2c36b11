"""Decoding the metastore's notification events into what a catalog needs to know about each change.

A NotificationEvent carries a JSON message whose fields embed thrift objects serialised with thrift's
JSON protocol (``tableObjJson``, ``partitionListJson``, ...). Hive 2 writes ``json-0.2``; Hive 3 and 4
write ``json-2.0`` or ``gzip(json-2.0)`` (the same JSON, gzipped and base64-encoded). The field names
are shared, so one decoder reads all three.

An ADD_PARTITION event carries every partition of its call: one MSCK REPAIR TABLE or Spark insert with
dynamic partitions makes a single event of 10,000 partitions and megabytes of JSON. Those partitions are
read with the json module (:func:`_listed_partition`), not with thrift's JSON protocol reader: that one is
pure Python and takes 5.6 s for those 10,000 (12 s on a busy machine), json 0.16 s. The table objects of
every event are read the same way (:func:`_read_table`): at 10,000 events a minute, thrift's reader of one
table per event was a fifth of the follower's time.
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.errors import MetastoreError
from hms_catalog.formats.partition_names import make_partition_name

__all__ = ["EventDecodeError", "PartitionChange", "MetastoreEvent", "decode_event", "METADATA_LOCATION"]

METADATA_LOCATION = "metadata_location"  # where an Iceberg table's current metadata file is


def _field_id(kind: Any, name: str) -> str:  # a generated thrift struct class
    """The key thrift's JSON protocol writes field ``name`` of ``kind`` under: its id, from the generated spec."""
    return next(str(spec[0]) for spec in kind.thrift_spec if spec is not None and spec[2] == name)


_PARTITION_VALUES = _field_id(ttypes.Partition, "values")
_PARTITION_SD = _field_id(ttypes.Partition, "sd")
_SD_LOCATION = _field_id(ttypes.StorageDescriptor, "location")
_TABLE_NAME = _field_id(ttypes.Table, "tableName")
_TABLE_DATABASE = _field_id(ttypes.Table, "dbName")
_TABLE_KEYS = _field_id(ttypes.Table, "partitionKeys")
_TABLE_PARAMETERS = _field_id(ttypes.Table, "parameters")
_COLUMN_NAME = _field_id(ttypes.FieldSchema, "name")


class EventDecodeError(MetastoreError):
    """A notification event whose message cannot be read."""


@dataclass(frozen=True)
class PartitionChange:
    """One partition an event touched: its name (as the metastore spells it) and location when known."""

    name: str
    location: str | None = None


@dataclass(frozen=True)
class MetastoreEvent:
    """One decoded notification event. Names are lower-case; ``table`` is None for database events.

    For an ALTER_TABLE, ``new_database``/``new_table`` are the names after it (a rename when they differ)
    and ``metadata_location`` the Iceberg metadata file after it, if any. For ALTER_PARTITION,
    ``partitions`` are the partitions after the change and ``previous_partitions`` before it.
    """

    event_id: int
    event_type: str
    database: str
    table: str | None = None
    new_database: str | None = None
    new_table: str | None = None
    partitions: tuple[PartitionChange, ...] = ()
    previous_partitions: tuple[PartitionChange, ...] = ()
    metadata_location: str | None = None
    previous_metadata_location: str | None = None

    @property
    def renamed(self) -> bool:
        return self.new_table is not None and (self.new_database, self.new_table) != (self.database, self.table)


def decode_event(event: ttypes.NotificationEvent) -> MetastoreEvent:
    """The catalog's view of ``event``; raises :class:`EventDecodeError` naming the event when unreadable."""
    kind = (event.eventType or "").upper()
    database = (event.dbName or "").lower()
    table = event.tableName.lower() if event.tableName else None
    try:
        message = _message(event)
        return _DECODERS.get(kind, _plain)(event.eventId, kind, database, table, message)
    except EventDecodeError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError, EOFError, OSError) as error:
        raise EventDecodeError(f"event {event.eventId} ({kind} on {database}.{table}): cannot read its message: {error}") from error


def _message(event: ttypes.NotificationEvent) -> Mapping[str, Any]:
    text = event.message or "{}"
    kind = (event.messageFormat or "json").lower()
    if kind.startswith("gzip"):
        text = gzip.decompress(base64.b64decode(text)).decode("utf-8")
    elif not kind.startswith("json"):
        raise EventDecodeError(f"event {event.eventId}: message format {event.messageFormat!r} is not JSON")
    decoded = json.loads(text)
    if not isinstance(decoded, dict):
        raise ValueError("the message is not a JSON object")
    return decoded


@dataclass(frozen=True)
class _Table:
    """What an event's table object tells the catalog: its names, partition keys and parameters."""

    database: str
    name: str
    keys: tuple[str, ...]
    parameters: Mapping[str, str]


def _table(message: Mapping[str, Any], field: str) -> _Table | None:
    text = message.get(field)
    return _read_table(text) if text else None


@functools.lru_cache(maxsize=64)
def _read_table(text: str) -> _Table:
    """A Table in thrift's JSON protocol, read with the json module (a struct is ``{"<field id>": {"<type>":
    value}}``, a list ``["<type>", size, *elements]``, a map ``["<key type>", "<value type>", size, {...}]``):
    thrift's own reader is pure Python and was a fifth of a follower's time per event. The events of one table
    in a batch carry the same text, so it is read once (the texts are kept by a small bounded cache)."""
    fields = json.loads(text)
    columns = fields.get(_TABLE_KEYS, {}).get("lst", [])[2:]
    mapped = fields.get(_TABLE_PARAMETERS, {}).get("map", [])
    return _Table(fields.get(_TABLE_DATABASE, {}).get("str", ""), fields.get(_TABLE_NAME, {}).get("str", ""),
                  tuple(column[_COLUMN_NAME]["str"].lower() for column in columns),
                  mapped[3] if len(mapped) > 3 else {})


def _keys(table: _Table | None) -> Sequence[str]:
    return table.keys if table is not None else ()


def _metadata_location(table: _Table | None) -> str | None:
    return table.parameters.get(METADATA_LOCATION) if table is not None else None


def _partition(message: Mapping[str, Any], field: str, keys: Sequence[str]) -> PartitionChange | None:
    text = message.get(field)
    return _listed_partition(text, keys) if text else None


def _listed_partition(text: str, keys: Sequence[str]) -> PartitionChange:
    """One Partition in thrift's JSON protocol (an entry of ``partitionListJson``, or the partition of an ALTER
    or INSERT): its values and location are a few lookups in what ``json.loads`` returns."""
    fields = json.loads(text)
    values = fields[_PARTITION_VALUES]["lst"][2:]
    location = fields.get(_PARTITION_SD, {}).get("rec", {}).get(_SD_LOCATION, {}).get("str")
    return PartitionChange(make_partition_name(keys, values), location)


def _named(values: Mapping[str, Any], keys: Sequence[str]) -> PartitionChange:
    """A partition given as a key -> value map (its order is not to be trusted: the table's keys decide)."""
    lowered = {str(k).lower(): v for k, v in values.items()}
    order = list(keys) or list(lowered)
    return PartitionChange(make_partition_name(order, [lowered.get(key) for key in order]))


def _plain(event_id: int, kind: str, database: str, table: str | None, message: Mapping[str, Any]) -> MetastoreEvent:
    return MetastoreEvent(event_id, kind, database, table)


def _alter_table(event_id: int, kind: str, database: str, table: str | None, message: Mapping[str, Any]) -> MetastoreEvent:
    before = _table(message, "tableObjBeforeJson")
    after = _table(message, "tableObjAfterJson")
    if after is None:
        raise EventDecodeError(f"event {event_id} (ALTER_TABLE on {database}.{table}) has no table after the change")
    return MetastoreEvent(
        event_id, kind, (before.database if before is not None else database).lower(),
        (before.name if before is not None else table or after.name).lower(),
        new_database=after.database.lower(), new_table=after.name.lower(),
        metadata_location=_metadata_location(after), previous_metadata_location=_metadata_location(before),
    )


def _add_partition(event_id: int, kind: str, database: str, table: str | None, message: Mapping[str, Any]) -> MetastoreEvent:
    keys = _keys(_table(message, "tableObjJson"))
    listed = message.get("partitionListJson") or []
    if listed:
        partitions = tuple(_listed_partition(text, keys) for text in listed)
    else:
        partitions = tuple(_named(values, keys) for values in message.get("partitions") or [])
    return MetastoreEvent(event_id, kind, database, table, partitions=partitions)


def _drop_partition(event_id: int, kind: str, database: str, table: str | None, message: Mapping[str, Any]) -> MetastoreEvent:
    keys = _keys(_table(message, "tableObjJson"))
    partitions = tuple(_named(values, keys) for values in message.get("partitions") or [])
    return MetastoreEvent(event_id, kind, database, table, partitions=partitions)


def _alter_partition(event_id: int, kind: str, database: str, table: str | None, message: Mapping[str, Any]) -> MetastoreEvent:
    keys = _keys(_table(message, "tableObjJson"))
    before = _partition(message, "partitionObjBeforeJson", keys)
    after = _partition(message, "partitionObjAfterJson", keys)
    changed: tuple[PartitionChange, ...] = (after,) if after is not None else ()
    if after is None and message.get("keyValues"):
        changed = (_named(message["keyValues"], keys),)
    return MetastoreEvent(event_id, kind, database, table, partitions=changed,
                          previous_partitions=(before,) if before is not None else ())


def _insert(event_id: int, kind: str, database: str, table: str | None, message: Mapping[str, Any]) -> MetastoreEvent:
    keys = _keys(_table(message, "tableObjJson"))
    partition = _partition(message, "ptnObjJson", keys)
    if partition is not None:
        changed: tuple[PartitionChange, ...] = (partition,)
    elif message.get("partKeyVals"):
        changed = (_named(message["partKeyVals"], keys),)
    else:
        changed = ()
    return MetastoreEvent(event_id, kind, database, table, partitions=changed)


_DECODERS = {
    "ALTER_TABLE": _alter_table,
    "ADD_PARTITION": _add_partition,
    "DROP_PARTITION": _drop_partition,
    "ALTER_PARTITION": _alter_partition,
    "INSERT": _insert,
}
