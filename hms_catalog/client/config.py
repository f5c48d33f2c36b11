"""What the pooled metastore client needs, and the catalog properties it is read from.

The keys live here, with the client that reads them, as the Kerberos and filesystem keys live with theirs:
:mod:`hms_catalog.properties` validates a catalog's properties into a :class:`ClientConfig` and names these
keys again for its callers, so the client never imports the catalog's properties (which import the
filesystem catalog's settings, whose code reads tables through this client).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hms_catalog.errors import ConfigurationError

if TYPE_CHECKING:
    from hms_catalog.kerberos.config import KerberosConfig

__all__ = [
    "METASTORE_URIS", "POOL_SIZE", "POOL_SIZE_DEFAULT", "SOCKET_TIMEOUT", "SOCKET_TIMEOUT_DEFAULT", "CONNECT_TIMEOUT",
    "CONNECT_TIMEOUT_DEFAULT", "FAILURE_RETRIES", "FAILURE_RETRIES_DEFAULT", "RETRY_DELAY", "RETRY_DELAY_DEFAULT",
    "BORROW_TIMEOUT", "BORROW_TIMEOUT_DEFAULT", "URI_BACKOFF", "URI_BACKOFF_DEFAULT", "PARTITION_BATCH_SIZE",
    "PARTITION_BATCH_SIZE_DEFAULT", "THRIFT_PORT_DEFAULT", "MetastoreUri", "ClientConfig", "parse_uris",
]

METASTORE_URIS = "hive.metastore.uris"
POOL_SIZE = "hive.metastore.client.pool.size"
POOL_SIZE_DEFAULT = 8
SOCKET_TIMEOUT = "hive.metastore.client.socket.timeout"
SOCKET_TIMEOUT_DEFAULT = 60.0
CONNECT_TIMEOUT = "hive.metastore.client.connect.timeout"
CONNECT_TIMEOUT_DEFAULT = 10.0
FAILURE_RETRIES = "hive.metastore.failure.retries"
FAILURE_RETRIES_DEFAULT = 3
RETRY_DELAY = "hive.metastore.client.connect.retry.delay"
RETRY_DELAY_DEFAULT = 1.0
BORROW_TIMEOUT = "hive.metastore.client.pool.borrow.timeout"
BORROW_TIMEOUT_DEFAULT = 30.0
URI_BACKOFF = "hive.metastore.uri.backoff"
URI_BACKOFF_DEFAULT = 30.0
# Partitions per add/drop/alter call of the catalog's DDL, MSCK and writes' commits: smaller calls for a
# metastore whose database limits one statement's size (Spark's spark.sql.addPartitionInBatch.size and
# Hive's hive.msck.repair.batch.size do the same for theirs).
PARTITION_BATCH_SIZE = "hive.metastore.partition.batch.size"
PARTITION_BATCH_SIZE_DEFAULT = 1000

THRIFT_PORT_DEFAULT = 9083
_URI = re.compile(r"^thrift://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(?P<port>\d{1,5}))?/?$")


@dataclass(frozen=True)
class MetastoreUri:
    """One ``thrift://host:port`` entry of ``hive.metastore.uris``."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"thrift://{self.host}:{self.port}"


@dataclass(frozen=True)
class ClientConfig:
    """What the pooled client needs: where the metastores are and how patient to be with them.

    Times are in seconds. ``retries`` counts attempts after the first one that failed on transport.
    ``metastore_catalog`` is the Hive 3+ catalog every request names (None: the metastore's default).
    ``kerberos``: how connections authenticate with SASL/GSSAPI (None: plain connections).
    """

    uris: tuple[MetastoreUri, ...]
    pool_size: int = POOL_SIZE_DEFAULT
    socket_timeout: float = SOCKET_TIMEOUT_DEFAULT
    connect_timeout: float = CONNECT_TIMEOUT_DEFAULT
    retries: int = FAILURE_RETRIES_DEFAULT
    retry_delay: float = RETRY_DELAY_DEFAULT
    borrow_timeout: float = BORROW_TIMEOUT_DEFAULT
    uri_backoff: float = URI_BACKOFF_DEFAULT
    metastore_catalog: str | None = None
    kerberos: KerberosConfig | None = None
    partition_batch_size: int = PARTITION_BATCH_SIZE_DEFAULT


def parse_uris(text: str) -> tuple[MetastoreUri, ...]:
    """Parse a comma-separated list of ``thrift://host[:port]`` (port defaults to 9083)."""
    parts = [part.strip() for part in text.split(",")]
    if not any(parts):
        raise ConfigurationError(f"property '{METASTORE_URIS}' is empty; expected thrift://host:port[,thrift://...]")
    uris: list[MetastoreUri] = []
    for position, part in enumerate(parts, start=1):
        match = _URI.match(part)
        if match is None:
            raise ConfigurationError(
                f"property '{METASTORE_URIS}': entry {position} '{part}' is not of the form thrift://host:port"
            )
        port = int(match.group("port") or THRIFT_PORT_DEFAULT)
        if not 0 < port < 65536:
            raise ConfigurationError(f"property '{METASTORE_URIS}': entry {position} '{part}' has port {port} out of range")
        uris.append(MetastoreUri(host=match.group("host").strip("[]"), port=port))
    return tuple(uris)
