"""Following the metastore's notification log so that caches see changes without REFRESH."""

from hms_catalog.events.apply import BatchOutcome, EventApplier, without_superseded
from hms_catalog.events.follower import EventFollower, FollowerStatus
from hms_catalog.events.messages import EventDecodeError, MetastoreEvent, PartitionChange, decode_event

__all__ = [
    "BatchOutcome", "EventApplier", "EventDecodeError", "EventFollower", "FollowerStatus", "MetastoreEvent",
    "PartitionChange", "decode_event", "without_superseded",
]
