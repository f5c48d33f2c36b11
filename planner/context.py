"""What every format's planner gets: the catalog's client, caches and scan settings, and the table."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from hms_catalog.cache import CatalogCaches
from hms_catalog.client.calls import MetastoreCalls
from hms_catalog.formats import TableMetadata
from hms_catalog.properties import ScanConfig
from hms_catalog.storage.resolver import StorageResolver
from planner.aggregates import AggregateAnswer, AggregateRequest
from planner.listing import BlockLocator
from planner.plan import PartitionField, Split
from planner.statistics import PlanStatistics

__all__ = ["PlanningContext", "FormatPlan", "Progress"]

Progress = Callable[[str, int, int], None]


@dataclass
class PlanningContext:
    client: MetastoreCalls
    caches: CatalogCaches
    config: ScanConfig
    metadata: TableMetadata
    locator: BlockLocator
    io_properties: dict[str, str]
    storage: StorageResolver  # the catalog's: how its locations are reached
    parallelism: int = 1
    progress: Progress | None = None
    statistics: bool = False  # gather row counts and column statistics (an optimizer asks; SHOW SPLITS does not)
    aggregate: AggregateRequest | None = None  # answer these aggregates from metadata, if it can


@dataclass
class FormatPlan:
    """What a format's planner returns; the core adds identity, schema and totals.

    ``splits`` may be an iterator (the Hive planner's, a batch of partitions at a time) that fills in the
    counts, seconds, notes, statistics and aggregate as it is consumed: they are final once it is."""

    splits: Iterable[Split]
    files: int
    bytes: int
    partitions_total: int | None = None
    partitions_scanned: int = 0
    absent_locations: int = 0
    hms_seconds: float = 0.0
    listing_seconds: float = 0.0
    splitting_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    statistics: PlanStatistics | None = None
    aggregate: AggregateAnswer | None = None
    partition_fields: tuple[PartitionField, ...] = ()
