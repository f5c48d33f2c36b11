"""Compare what two DDL paths leave in the metastore: Spark's own Hive DDL (the reference) and the catalog's.

A case is a few statements with placeholders: ``{db}`` (a database of the case's own, one per side; ``{DB}`` is its
name in upper case) and ``{root}`` (a folder of the side's own, for LOCATION clauses). A case may first have Spark
make tables on both sides (``made_by_spark``: what the catalog does not make, such as a bucketed table, whose
changes are compared all the same). Each side runs the statements on its own
names; after each statement the metastore objects of the side's databases (``{db}`` and any ``{db}_*``)
are read with a raw thrift client and reduced to plain values, with the side's names and folders replaced
by placeholders, and the fields in :data:`IGNORED` dropped. Two sides agree when those values are equal.

What is ignored, and why (keep this list short; docs/statements.md repeats it):

- times the metastore stamps (``createTime``, ``lastAccessTime``, ``transient_lastDdlTime``,
  ``last_modified_time``) and who did it (``owner``, ``ownerName``, ``ownerType``, ``last_modified_by``,
  privileges): they differ between any two runs;
- ``spark.sql.create.version``: the version of the Spark that made the table, which the catalog is not;
- statistics (``numFiles``, ``totalSize``, ``numRows``, ``rawDataSize``, ``COLUMN_STATS_ACCURATE``,
  ``numFilesErasureCoded``, ``spark.sql.statistics.*``): computed from files by whoever looked last;
- ``hms_catalog.ddl.version``: the catalog's own marker of its DDLs, should one be written.

One field may be present on the catalog's side only: ``serialization.null.format`` (``NULL DEFINED AS``),
which Hive's DDL writes and Spark 4's drops; the catalog keeps it, as Hive does, since dropping it would
change what the table's files mean (:data:`KEPT_AS_HIVE`).

Other differences from Spark kept on purpose, so no case runs them (docs/statements.md lists them too):
``STRING COLLATE UTF8_BINARY`` is recorded as a plain string (Spark 4.3's schema record says ``string collate
UTF8_BINARY``); a type with no Hive spelling (``TIMESTAMP_NTZ``, ``VARIANT``, intervals, ``VOID``) or another
collation is refused in a data source table too, where Spark makes a layout only Spark reads (``GEOGRAPHY`` and
``GEOMETRY`` in ``ADD COLUMNS`` of a csv, json or orc table too, which Spark 4.3 takes on a Hive metastore); ``NOT NULL``
on a struct field is refused (a Hive type cannot say it). Read back, ``SHOW TBLPROPERTIES`` leaves out the catalog's
``hms_catalog.*`` keys and names the table as the catalog names it in its sentence for a missing key, and
``DESCRIBE`` shows ``''`` for a column without a comment (Spark: ``NULL``). Not taken at all, so their statements
are left out of the cases: TRUNCATE TABLE, RENAME PARTITION, a partition's SET SERDE[PROPERTIES], STORED AS
INPUTFORMAT, bucketed tables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hms_catalog.client.hive_thrift import ttypes

__all__ = ["IGNORED", "IGNORED_PARAMETERS", "KEPT_AS_HIVE", "Case", "Side", "snapshot", "differences"]

IGNORED = frozenset({"createTime", "lastAccessTime", "owner", "ownerName", "ownerType", "privileges", "catName",
                     "writeId", "isStatsCompliant", "colStats", "creationMetadata", "id"})
IGNORED_PARAMETERS = frozenset({"transient_lastDdlTime", "last_modified_time", "last_modified_by", "spark.sql.create.version",
                                "numFiles", "totalSize", "numRows", "rawDataSize", "COLUMN_STATS_ACCURATE",
                                "numFilesErasureCoded", "hms_catalog.ddl.version"})
_IGNORED_PREFIXES = ("spark.sql.statistics.",)
KEPT_AS_HIVE = frozenset({"serialization.null.format"})


@dataclass(frozen=True)
class Case:
    """Statements run in order on each side; ``connector``: the connector through the service runs them too;
    ``made_by_spark``: statements Spark runs on each side first (tables the statements then change)."""

    name: str
    statements: tuple[str, ...]
    connector: bool = False
    made_by_spark: tuple[str, ...] = ()


@dataclass
class Side:
    """One DDL path: how it runs a statement, and the names it runs it on."""

    label: str
    database: str
    root: Path
    run: Callable[[str], Any]
    prefix: str = ""  # how statements name the side's catalog (``conn.`` for the connector's), if at all
    replacements: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        root = str(self.root).rstrip("/")
        # Longest first: every spelling of the folder a metastore or Spark may store, then the names.
        self.replacements = [(f"file://{root}", "<root>"), (f"file:{root}", "<root>"), (root, "<root>"),
                             (self.database, "<db>")]

    def statement(self, template: str) -> str:
        return (template.replace("{db}", self.prefix + self.database).replace("{DB}", self.prefix + self.database.upper())
                .replace("{root}", self.root.as_uri()))

    def normalised(self, text: str) -> str:
        for old, new in self.replacements:
            text = text.replace(old, new)
        return text


def _plain(value: Any, side: Side) -> Any:
    """A thrift struct as nested dicts without the ignored fields; names and folders as placeholders."""
    if isinstance(value, str):
        return side.normalised(value)
    if isinstance(value, (list, tuple)):
        return [_plain(item, side) for item in value]
    if isinstance(value, dict):
        return {side.normalised(key): _plain(item, side) for key, item in sorted(value.items())
                if key not in IGNORED_PARAMETERS and not key.startswith(_IGNORED_PREFIXES)}
    if hasattr(value, "thrift_spec"):
        return {name: _plain(item, side) for name, item in sorted(vars(value).items()) if name not in IGNORED}
    return value


def snapshot(admin: Any, side: Side) -> dict[str, Any]:
    """The side's databases, their tables and partitions, as plain values keyed by normalised name."""
    call = admin.pool.call
    found: dict[str, Any] = {}
    for database in sorted(call("get_databases", f"{side.database}*")):
        if database != side.database and not database.startswith(side.database + "_"):
            continue
        found[side.normalised(database)] = _plain(call("get_database", database), side)
        for table in sorted(call("get_all_tables", database)):
            struct: ttypes.Table = call("get_table", database, table)
            key = side.normalised(f"{database}.{table}")
            found[key] = _plain(struct, side)
            if struct.partitionKeys:
                partitions = call("get_partitions", database, table, -1)
                found[key + " partitions"] = sorted((_plain(p, side) for p in partitions), key=lambda p: p["values"])
    return found


def differences(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Where ``actual`` differs from ``expected``, one line per leaf: ``path: expected != actual``."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        found: list[str] = []
        for key in sorted(set(expected) | set(actual)):
            where = f"{path}.{key}" if path else key
            if key not in actual:
                found.append(f"{where}: {expected[key]!r} missing")
            elif key not in expected:
                found += [] if key in KEPT_AS_HIVE else [f"{where}: unexpected {actual[key]!r}"]
            else:
                found += differences(expected[key], actual[key], where)
        return found
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return [line for i, (e, a) in enumerate(zip(expected, actual)) for line in differences(e, a, f"{path}[{i}]")]
    return [] if expected == actual else [f"{path}: {expected!r} != {actual!r}"]


def run_both(cases: Iterable[str], reference: Side, tested: Side, admin: Any) -> list[str]:
    """Each statement on both sides, then the differences of their metastore objects (empty when they agree)."""
    found: list[str] = []
    for template in cases:
        reference.run(reference.statement(template))
        tested.run(tested.statement(template))
        found += [f"after {template!r}: {line}" for line in differences(snapshot(admin, reference), snapshot(admin, tested))]
    return found


def describe(lines: Sequence[str], limit: int = 40) -> str:
    return "\n".join(lines[:limit]) + (f"\n... {len(lines) - limit} more" if len(lines) > limit else "")
