"""A filesystem catalog answering the metastore calls the catalog model makes, from folders and files.

First-level folders under the root are databases; the folders and files in a database folder are its
tables. Each table is described by the thrift structs a metastore would hold for it (columns, partition
keys, input format and serde, or a Spark data source provider with its options), built from its
:class:`TableLayout`, so DESCRIBE, SHOW TABLE STATUS, the caches, REFRESH, the split planner and every
reader treat it as they treat a metastore table. Listings are one level deep for SHOW DATABASES and SHOW
TABLES; a table is listed whole (one recursive listing) only when it is described, promoted or planned.

A table's layout is detected on its first use and kept in the catalog's :class:`PromotionStore`
(``auto_promote``), or only when promoted explicitly.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from hms_catalog._lazy import LazyModule
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.client.metrics import ClientMetrics, MetricsSnapshot
from hms_catalog.errors import ConfigurationError, NotFoundError
from hms_catalog.filesystem.config import FilesystemConfig
from hms_catalog.filesystem.detect import TableLayout, detect_table, layout_as, list_table, partition_folders
from hms_catalog.filesystem.promotions import PromotionStore
from hms_catalog.filesystem.tables import partition_struct, table_struct
from hms_catalog.formats.partition_names import DEFAULT_PARTITION, parse_partition_name
from hms_catalog.storage.locations import is_hidden, join_location
from hms_catalog.storage.resolver import StorageResolver

if TYPE_CHECKING:
    import pyarrow.fs as pafs
else:
    pafs = LazyModule("pyarrow.fs")  # pyarrow (and numpy) only once a folder is listed

__all__ = ["FilesystemClient", "PROMOTE_HINT"]

PROMOTE_HINT = "ALTER TABLE {name} PROMOTE"


class FilesystemClient:
    """The metastore calls of :class:`~hms_catalog.client.MetastoreClient`, answered from a filesystem."""

    metastore_catalog: str | None = None

    def __init__(self, catalog: str, config: FilesystemConfig, promotions: PromotionStore,
                 filesystem: pafs.FileSystem | None = None, *, storage: StorageResolver | None = None) -> None:
        """``storage``: the catalog's resolver, which reaches the root's store with the catalog's settings;
        ``filesystem``: a filesystem to use as it is (tests), the root a path on it."""
        self.catalog = catalog
        self.config = config
        self.promotions = promotions
        resolver = storage if storage is not None else StorageResolver(name=catalog)
        self._storage = resolver
        if filesystem is None:
            try:
                filesystem, self._root = resolver.resolve(config.root)
            except (OSError, ValueError) as error:
                raise resolver.error(config.root, error, "open the root") from None
        else:
            self._root = config.root
        self.filesystem = filesystem
        self._root = self._root.rstrip("/") or "/"
        self._metrics = ClientMetrics()
        self._lock = threading.Lock()
        self._folders: dict[tuple[str, str], dict[str, str]] = {}

    # --- what the model asks ----------------------------------------------------------------------

    def metrics(self) -> MetricsSnapshot:
        return self._metrics.snapshot()

    def close(self) -> None:
        """Nothing to close: no connections are held."""

    def get_all_databases(self) -> list[str]:
        self._metrics.call("list_databases")
        return [name for name, kind in self._children(self._root) if kind == pafs.FileType.Directory]

    def get_database(self, name: str) -> ttypes.Database:
        path = self._database_path(name)
        return ttypes.Database(name=name.lower(), description="", locationUri=self._location(path), parameters={})

    def get_all_tables(self, database: str) -> list[str]:
        path = self._database_path(database)
        self._metrics.call("list_tables")
        present = [name for name, _ in self._children(path)]
        if self.config.auto_promote:
            return present
        promoted = set(self.promotions.tables(database))
        return [name for name in present if name.lower() in promoted]

    def get_table(self, database: str, table: str) -> ttypes.Table:
        path = self._table_path(database, table)
        layout = self.promotions.get(database, table)
        if layout is None:
            if not self.config.auto_promote:
                name = f"{self.catalog}.{database}.{table}"
                raise NotFoundError("table", name, f"{path} is not promoted (auto_promote is off): "
                                                   + PROMOTE_HINT.format(name=name))
            layout = self.promote(database, table)
        metadata = layout.options.get("metadata_location")
        return table_struct(database, table, self._location(path), layout,
                            metadata_location=self._location(metadata) if metadata else None)

    def get_table_objects_by_name(self, database: str, tables: list[str]) -> list[ttypes.Table]:
        found = []
        for name in tables:
            try:
                found.append(self.get_table(database, name))
            except NotFoundError:
                continue
        return found

    def get_partition_names(self, database: str, table: str, max_parts: int = -1) -> list[str]:
        names = list(self._partition_folders(database, table))
        return names if max_parts < 0 else names[:max_parts]

    def get_partition_names_ps(self, database: str, table: str, values: list[str], max_parts: int = -1) -> list[str]:
        names = []
        for name in self.get_partition_names(database, table):
            pairs = parse_partition_name(name)
            if all(not wanted or (value or DEFAULT_PARTITION) == wanted for (_, value), wanted in zip(pairs, values)):
                names.append(name)
        return names if max_parts < 0 else names[:max_parts]

    def get_partitions_by_filter(self, database: str, table: str, expression: str, max_parts: int = -1, *,
                                 fields: Sequence[str] | None = None) -> list[ttypes.Partition]:
        """Every partition: the planner evaluates the filter on the names itself (a superset is allowed)."""
        return self.get_partitions_by_names(database, table, self.get_partition_names(database, table, max_parts))

    def get_table_column_statistics(self, database: str, table: str,
                                    columns: list[str]) -> list[ttypes.ColumnStatisticsObj]:
        """None are kept: files carry no metastore statistics (readers take sizes from the listing)."""
        return []

    def get_partitions_column_statistics(self, database: str, table: str, partition_names: list[str],
                                         columns: list[str]) -> dict[str, list[ttypes.ColumnStatisticsObj]]:
        """None are kept, as for tables."""
        return {}

    def get_current_notification_event_id(self) -> int:
        """No notification log: files change without one (REFRESH and TTLs keep a filesystem catalog fresh)."""
        return 0

    def get_next_notification(self, last_event: int, max_events: int) -> list[ttypes.NotificationEvent]:
        return []

    def get_partitions_by_names(self, database: str, table: str, names: list[str], *,
                                fields: Sequence[str] | None = None) -> list[ttypes.Partition]:
        """Whole partitions (``fields`` is a floor, and a folder costs nothing more to describe in full)."""
        struct = self.get_table(database, table)
        with self._lock:
            folders = self._folders.get((database.lower(), table.lower()), {})
        if any(name not in folders for name in names):
            folders = self._partition_folders(database, table)
        return [partition_struct(struct, name, folders[name]) for name in names if name in folders]

    # --- promotion --------------------------------------------------------------------------------

    def promote(self, database: str, table: str) -> TableLayout:
        """Detect ``database.table``'s layout now and keep it (REFRESH METADATA and PROMOTE)."""
        path = self._table_path(database, table)
        with self._reaching(path):
            listing = list_table(self.filesystem, path)
        self._metrics.call("detect")
        if listing is None:
            raise NotFoundError("table", f"{self.catalog}.{database}.{table}")
        with self._reaching(path):
            layout = detect_table(self.filesystem, listing, self.config.sample_files)
        self.promotions.put(database, table, layout)
        return layout

    def set_format(self, database: str, table: str, settings: dict[str, str]) -> TableLayout:
        """Read ``database.table`` as ``settings`` say from now on (SET FORMAT); ConfigurationError naming
        a wrong setting, and then nothing is kept."""
        path = self._table_path(database, table)
        with self._reaching(path):
            listing = list_table(self.filesystem, path)
        if listing is None:
            raise NotFoundError("table", f"{self.catalog}.{database}.{table}")
        try:
            layout = layout_as(self.filesystem, listing, settings, self.config.sample_files)
        except ValueError as error:
            raise ConfigurationError(f"SET FORMAT of {self.catalog}.{database}.{table}: {error}") from None
        self.promotions.put(database, table, layout)
        return layout

    def layout(self, database: str, table: str) -> TableLayout | None:
        return self.promotions.get(database, table)

    # --- helpers ----------------------------------------------------------------------------------

    def _partition_folders(self, database: str, table: str) -> dict[str, str]:
        """The table's partitions and their folders, from one listing (kept for the partitions asked next)."""
        keys = [name for name, _ in self._layout(database, table).partition_keys]
        folders: dict[str, str] = {}
        if keys:
            path = self._table_path(database, table)
            with self._reaching(path):
                listing = list_table(self.filesystem, path)
            self._metrics.call("list_partitions")
            folders = partition_folders(listing, keys) if listing is not None else {}
        with self._lock:
            self._folders[(database.lower(), table.lower())] = folders
        return folders

    def _layout(self, database: str, table: str) -> TableLayout:
        layout = self.promotions.get(database, table)
        if layout is None:
            self.get_table(database, table)
            layout = self.promotions.get(database, table)
        assert layout is not None
        return layout

    def _children(self, path: str) -> list[tuple[str, pafs.FileType]]:
        try:
            with self._reaching(path):
                entries = self.filesystem.get_file_info(pafs.FileSelector(path))
        except FileNotFoundError:
            return []
        return sorted((entry.base_name, entry.type) for entry in entries
                      if not is_hidden(entry.base_name) and entry.type != pafs.FileType.NotFound)

    def _child(self, parent: str, name: str, kind: str, full_name: str) -> str:
        """The path of ``name`` under ``parent``, found case-insensitively as the catalog lower-cases names.

        A name is one visible folder or file: never a path (``..``, ``a/b``), so no statement reaches outside
        the root, and never a hidden entry.
        """
        if not name or "/" in name or "\\" in name or name in (".", "..") or is_hidden(name):
            raise NotFoundError(kind, full_name, f"'{name}' is not a folder or file name under {parent}")
        exact = f"{parent.rstrip('/')}/{name}"
        with self._reaching(exact):
            found = self.filesystem.get_file_info(exact).type != pafs.FileType.NotFound
        if found:
            return exact
        for child, _ in self._children(parent):
            if child.lower() == name.lower():
                return f"{parent.rstrip('/')}/{child}"
        raise NotFoundError(kind, full_name, f"no {exact}")

    def _database_path(self, database: str) -> str:
        return self._child(self._root, database, "database", f"{self.catalog}.{database}")

    def _table_path(self, database: str, table: str) -> str:
        return self._child(self._database_path(database), table, "table", f"{self.catalog}.{database}.{table}")

    @contextlib.contextmanager
    def _reaching(self, path: str) -> Iterator[None]:
        """A store's refusal (credentials, a missing bucket, an endpoint out of reach) as a StorageError naming
        the catalog and the location; a missing path stays a FileNotFoundError for the caller to answer."""
        try:
            yield
        except FileNotFoundError:
            raise
        except OSError as error:
            raise self._storage.error(self._location(path), error, "read") from None

    def _location(self, path: str) -> str:
        return join_location(self.config.root, path)
