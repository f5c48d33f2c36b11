"""HDFS and any Hadoop filesystem (``viewfs://``, ``file://``, others whose jar is on the classpath) through
Hadoop's own Java client in a long-lived helper process: no libhdfs needed."""

from hms_catalog.storage.hadoop.filesystem import HadoopFileSystemHandler, hadoop_filesystem
from hms_catalog.storage.hadoop.helper import HadoopBlocks, HadoopFile, HadoopHelper, HadoopIdentity

__all__ = ["HadoopHelper", "HadoopFile", "HadoopBlocks", "HadoopIdentity", "HadoopFileSystemHandler", "hadoop_filesystem"]
