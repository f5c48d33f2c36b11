"""Storage: how a catalog reaches the files its tables' locations name (local disk, S3 and S3-compatible
stores, GCS, ADLS, HDFS and any Hadoop filesystem), configured by the catalog's properties."""

from hms_catalog.storage.properties import StorageConfig
from hms_catalog.storage.resolver import StorageResolver, split_location

__all__ = ["StorageConfig", "StorageResolver", "split_location"]
