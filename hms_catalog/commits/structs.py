"""Metastore structs as text an undo log can hold: thrift's binary encoding, in base64; and many partitions
of one table, made alike, as one template and what differs in each."""

from __future__ import annotations

import base64
from typing import Any

from thrift.protocol.TBinaryProtocol import TBinaryProtocolFactory
from thrift.TSerialization import deserialize, serialize

from hms_catalog.client.hive_thrift import ttypes

__all__ = ["decode_struct", "encode_struct", "located", "partitions_from_text", "partitions_text"]

_PROTOCOL = TBinaryProtocolFactory()


def encode_struct(struct: Any) -> str:
    """A metastore struct as text the log can hold (thrift's binary encoding, base64)."""
    return base64.b64encode(serialize(struct, _PROTOCOL)).decode("ascii")


def decode_struct(text: str, kind: type) -> Any:
    return deserialize(kind(), base64.b64decode(text), _PROTOCOL)


def partitions_text(partitions: list[ttypes.Partition]) -> dict[str, Any]:
    """``partitions`` of one table made alike (differing in values, location and parameters, as a statement or a
    write makes them) as one struct, the template, and each partition's values and location, and its parameters
    where they are not the template's: ten thousand partitions are a few hundred kilobytes of log, not their
    structs over and over."""
    template = partitions[0] if partitions else ttypes.Partition()
    kept = template.parameters or {}
    entries: list[list[Any]] = []
    for partition in partitions:
        entry: list[Any] = [list(partition.values), partition.sd.location if partition.sd is not None else None]
        if (partition.parameters or {}) != kept:
            entry.append(dict(partition.parameters or {}))
        entries.append(entry)
    return {"template": encode_struct(template), "partitions": entries}


def partitions_from_text(text: dict[str, Any]) -> list[ttypes.Partition]:
    """The partitions :func:`partitions_text` wrote down."""
    template = decode_struct(text["template"], ttypes.Partition)
    found = []
    for values, location, *parameters in text["partitions"]:
        sd = None if template.sd is None else located(template.sd, location, follow=_path_follows(template.sd))
        found.append(ttypes.Partition(**{**template.__dict__, "values": list(values), "sd": sd,
                                         "parameters": dict(parameters[0] if parameters else template.parameters or {})}))
    return found


def located(sd: ttypes.StorageDescriptor, location: str | None, *, follow: bool = True) -> ttypes.StorageDescriptor:
    """``sd`` at ``location``; with ``follow``, a Spark data source table's ``path`` serde property too."""
    moved = ttypes.StorageDescriptor(**{**sd.__dict__, "location": location})
    parameters = sd.serdeInfo.parameters if sd.serdeInfo is not None else None
    if follow and parameters and "path" in parameters:
        moved.serdeInfo = ttypes.SerDeInfo(**{**sd.serdeInfo.__dict__, "parameters": {**parameters, "path": location}})
    return moved


def _path_follows(sd: ttypes.StorageDescriptor) -> bool:
    """Whether a template's ``path`` is its own location (a write's partitions), so each partition's is its own;
    otherwise (ADD PARTITION's: the table's) every partition keeps the template's."""
    parameters = (sd.serdeInfo.parameters if sd.serdeInfo is not None else None) or {}
    return "path" in parameters and parameters["path"] == sd.location
