"""One client connection's handler: the calls answered from the caches, and every other call forwarded.

The generated processor calls the handler's method of each call's name. Those defined by the read mixins
are answered here; any other name of the bindings becomes, through ``__getattr__``, a forwarder to the
metastore owning the call's object, a change (:mod:`.changes`) when its name says it changes something.
fb303's calls and the connection's own state (``set_ugi``, ``getMetaConf``) are answered here too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import hms_catalog
from hms_catalog.errors import NotFoundError
from service.thrift.changes import is_change, run_change
from service.thrift.context import Caller, EndpointContext
from service.thrift.delegation import DelegationTokens
from service.thrift.errors import translated
from service.thrift.partition_reads import PartitionReads
from service.thrift.reads import TableReads

__all__ = ["ConnectionHandler", "SERVICE_NAME"]

_log = logging.getLogger(__name__)

SERVICE_NAME = "hms-catalog"
_ALIVE = 2  # fb_status.ALIVE


class ConnectionHandler(TableReads, PartitionReads, DelegationTokens):
    def __init__(self, endpoint: EndpointContext, caller: Caller) -> None:
        self.endpoint = endpoint
        self.caller = caller

    # The connection and the service ------------------------------------------------------------------

    def set_ugi(self, user_name: str, group_names: list[str]) -> list[str]:
        """The client's word for who it is: kept for the audit log (a plain endpoint authenticates nobody). A
        Kerberos connection is the user its principal names, whatever it claims, as on a secure metastore."""
        if self.caller.principal is None:
            self.caller.user = user_name or ""
        self.caller.groups = list(group_names or [])
        return list(self.caller.groups)

    def getName(self) -> str:  # noqa: N802 - fb303's name
        return SERVICE_NAME

    def getVersion(self) -> str:  # noqa: N802
        return hms_catalog.__version__

    def getStatus(self) -> int:  # noqa: N802
        return _ALIVE

    def getStatusDetails(self) -> str:  # noqa: N802
        return "serving catalogs " + ", ".join(self.endpoint.names.catalogs())

    def aliveSince(self) -> int:  # noqa: N802
        return int(self.endpoint.started)

    def getCounters(self) -> dict[str, int]:  # noqa: N802
        return {}

    def shutdown(self) -> None:
        """Hive's client says this as it closes (HiveMetaStoreClient.close): it ends that client's connection
        only; no client stops the service."""

    def reinitialize(self) -> None:
        """fb303's reinitialize: nothing to do."""

    def getCounter(self, key: str) -> int:  # noqa: N802
        return 0

    def getOptions(self) -> dict[str, str]:  # noqa: N802
        return {}

    def getOption(self, key: str) -> str:  # noqa: N802
        return ""

    def setOption(self, key: str, value: str) -> None:  # noqa: N802
        """Options of the service are its own configuration; a client may not set them."""

    def getCpuProfile(self, profileDurationInSec: int) -> str:  # noqa: N802, N803
        return ""

    @translated("get_config_value")
    def get_config_value(self, name: str, defaultValue: str) -> str:  # noqa: N803 - the binding's argument name
        return str(self.endpoint.forwarder.call("get_config_value", (name, defaultValue)))

    @translated("getMetaConf")
    def getMetaConf(self, key: str) -> str:  # noqa: N802
        if key in self.caller.meta_conf:
            return self.caller.meta_conf[key]
        return str(self.endpoint.forwarder.call("getMetaConf", (key,)))

    def setMetaConf(self, key: str, value: str) -> None:  # noqa: N802
        """Kept for this connection only: forwarded, it would change a pooled connection every client shares."""
        self.caller.meta_conf[key] = value

    # Everything else ---------------------------------------------------------------------------------

    def __getattr__(self, method: str) -> Callable[..., Any]:
        if method.startswith("_"):
            raise AttributeError(method)
        endpoint, caller = self.endpoint, self.caller

        @translated(method)
        def forwarded(*args: Any) -> Any:
            route = endpoint.forwarder.route_of(method, args)
            if is_change(method):
                return run_change(endpoint, caller, method, args, route)  # the change gate decides
            if not endpoint.may_read(caller, route.catalog):
                raise NotFoundError("database", route.database or "''")  # as the reads answer (readable_route)
            return endpoint.forwarder.call(method, args, route)

        return forwarded
