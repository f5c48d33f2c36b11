"""A write's commit that a killed process left unfinished, completed by the next to look.

The commit's metastore calls come after its files are in place (:mod:`hms_catalog.write.commit`): batches of
``add_partitions`` for the new partitions, one ``alter_partitions`` for the replaced and appended ones, batches
of ``drop_partitions`` for the dropped ones, or one ``alter_table`` for an unpartitioned table. The last of
them may still be running in the metastore after the kill, and an undo that ran before it landed would be
undone by it in turn: new partitions added after the undo dropped them (their folders made again, empty),
statistics of the new files over the old ones the undo moved back, partitions dropped after the undo added them
back, the table's new definition over the old one. Everything the commit does is known before its first
call, so it is written down first (:func:`write_intent`) and the restart completes it (see
:mod:`.completion`):

- the renames of the commit's "moved" steps are taken where they were not yet (the source still there, the
  target not yet; :meth:`~.undo.UndoLog.complete` does this before the calls);
- the new partitions are added where missing: the abandoned batch, which adds without skipping, then fails on
  them, and takes away no folder, since theirs were there before it (the files are moved in first);
- each replaced or appended partition, as the metastore has it then, is given the location and parameters the
  commit gave it: the abandoned ``alter_partitions`` writes the same, whichever lands last;
- the dropped partitions are dropped where they still exist, and the unpartitioned table's definition, written
  down whole, is written again: the abandoned call's twins too.

A table dropped since has nothing left to complete.
"""

from __future__ import annotations

import functools
import logging
from typing import Any, cast

from hms_catalog.client.calls import MetastoreCalls
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.client.writes import MetastoreWrites
from hms_catalog.commits._patience import add_missing, deadline, patiently
from hms_catalog.commits.structs import decode_struct, encode_struct, located, partitions_from_text, partitions_text
from hms_catalog.errors import NotFoundError
from hms_catalog.formats.partition_names import DEFAULT_PARTITION, make_partition_name
from hms_catalog.storage.resolver import StorageResolver

__all__ = ["complete_write", "write_intent"]

_log = logging.getLogger(__name__)

_READ_BATCH = 1000  # partition names per get_partitions_by_names call


def write_intent(database: str, table: str, keys: list[str], *, added: list[ttypes.Partition],
                 changed: list[ttypes.Partition], replaced: set[str], dropped: list[str], new_table: ttypes.Table | None,
                 deletes: list[str]) -> dict[str, Any]:
    """What a commit's metastore calls will make of ``database.table``: the ``added`` partitions (alike, so as
    one template), each ``changed`` partition's values, location and parameters (the location None where the
    commit keeps the partition's storage as it is: all but the ``replaced`` names, whose folder, and a data
    source table's ``path``, are the commit's), the ``dropped`` names, an unpartitioned table's ``new_table``,
    and what is deleted once the commit is done."""
    return {
        "database": database, "table": table, "keys": list(keys),
        "added": partitions_text(added) if added else None,
        "altered": [[list(p.values), p.sd.location if _name(keys, p) in replaced and p.sd is not None else None,
                     dict(p.parameters or {})] for p in changed],
        "dropped": list(dropped),
        "new_table": encode_struct(new_table) if new_table is not None else None,
        "deletes": list(deletes),
    }


def complete_write(client: MetastoreWrites, intent: dict[str, Any], storage: StorageResolver) -> bool:
    """Make the commit's metastore calls again, each one as its abandoned twin would leave the table (the
    module's docstring says why); False when the table is gone."""
    database, table = intent["database"], intent["table"]
    until = deadline()
    try:
        if intent.get("added"):
            add_missing(client, partitions_from_text(intent["added"]), until)
        if intent.get("altered"):
            _alter(client, database, table, intent["keys"], intent["altered"], until)
        if intent.get("dropped"):
            patiently(lambda: client.drop_partitions(database, table, intent["dropped"], delete_data=False, if_exists=True), until)
        if intent.get("new_table"):
            new = decode_struct(intent["new_table"], ttypes.Table)
            patiently(lambda: client.alter_table(database, table, new, keep_statistics=True), until)
    except NotFoundError:
        _log.warning("the table %s.%s is gone: its unfinished write is not completed", database, table)
        return False
    return True


def _alter(client: MetastoreWrites, database: str, table: str, keys: list[str], altered: list[list[Any]], until: float) -> None:
    """The altered partitions as the metastore has them now, each given the location and parameters the commit
    gave it, in one call as the commit made it. A partition dropped since is left dropped."""
    reads = cast(MetastoreCalls, client)  # a catalog's client reads as well as writes
    wanted = {tuple(values): (location, parameters) for values, location, parameters in altered}
    names = [make_partition_name(keys, [None if v == DEFAULT_PARTITION else v for v in values]) for values in wanted]
    current: list[ttypes.Partition] = []
    for start in range(0, len(names), _READ_BATCH):
        batch = names[start : start + _READ_BATCH]
        current += patiently(functools.partial(reads.get_partitions_by_names, database, table, batch), until)
    new = []
    for partition in current:
        location, parameters = wanted[tuple(partition.values)]
        sd = located(partition.sd, location) if location is not None and partition.sd is not None else partition.sd
        new.append(ttypes.Partition(**{**partition.__dict__, "sd": sd, "parameters": dict(parameters)}))
    if new:
        patiently(lambda: client.alter_partitions(database, table, new, keep_statistics=True), until)


def _name(keys: list[str], partition: ttypes.Partition) -> str:
    return make_partition_name(keys, [None if v == DEFAULT_PARTITION else v for v in partition.values])
