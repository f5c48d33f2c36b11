"""Every partition name of the scale table: the metastore's own answer, the service's SHOW PARTITIONS (REST), and
``get_partition_names`` through the service's thrift endpoint, each cold (the catalog's caches dropped first).

The thrift clients use the accelerated binary protocol, as the project's own client does, so decoding a million names
is not what is measured. The service's memory is read around each call as :func:`_scale_planning.cold_service_call`
reads it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from _common import progress
from _scale_planning import Rig, audited, cold_service_call, start_service, stop_service
from _scale_table import DATABASE, TABLE
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport import TSocket, TTransport

from hms_catalog.client.hive_thrift import MetastoreThriftClient

__all__ = ["listing"]


@contextlib.contextmanager
def _thrift(port: int, timeout_seconds: float = 3600.0) -> Iterator[MetastoreThriftClient]:
    socket = TSocket.TSocket("127.0.0.1", port)
    socket.setTimeout(int(timeout_seconds * 1000))
    transport = TTransport.TBufferedTransport(socket)
    transport.open()
    try:
        yield MetastoreThriftClient(TBinaryProtocolAccelerated(transport))
    finally:
        transport.close()


def _names(port: int) -> list[str]:
    with _thrift(port) as client:
        return list(client.get_partition_names(DATABASE, TABLE, -1))


def listing(rig: Rig, catalog: str, thrift_port: int, *, show_partitions: bool) -> dict[str, Any]:
    """The whole table's names; the service is started afresh before each of its cold measurements, so memory an
    earlier one left to the allocator does not hide what the next one needs."""
    metastore_port = int(rig.metastore.uri.rsplit(":", 1)[1])
    report: dict[str, Any] = {}
    progress("get_partition_names: the metastore's own answer")
    for label in ("metastore get_partition_names, first", "metastore get_partition_names, again"):
        seconds, calls, names = audited(rig.metastore, lambda: _names(metastore_port))
        report[label] = {"seconds": seconds, "calls": calls, "names": len(names)}
    progress("get_partition_names through the thrift endpoint, cold")
    stop_service(rig)
    start_service(rig, thrift_port, catalog)
    found = cold_service_call(rig, catalog, lambda _: _names(thrift_port))
    found["names"] = len(found.pop("value"))
    report["endpoint get_partition_names, cold"] = found
    seconds, calls, names = audited(rig.metastore, lambda: _names(thrift_port))
    report["endpoint get_partition_names, warm"] = {"seconds": seconds, "calls": calls, "names": len(names)}
    if show_partitions:
        progress("SHOW PARTITIONS of the whole table through the service (REST), cold")
        stop_service(rig)
        start_service(rig, thrift_port, catalog)
        found = cold_service_call(rig, catalog, lambda client: client.partitions(catalog, DATABASE, TABLE))
        found["names"] = len(found.pop("value"))
        report["service SHOW PARTITIONS, cold"] = found
    for row in report.values():
        row.setdefault("names", None)
    return report


def print_listing(report: dict[str, Any]) -> None:
    print(f"{'whole-table names':<40} {'s':>8} {'calls':>6} {'names':>9} {'service peak MiB':>17} {'before':>8}")
    for label, row in report.items():
        peak = row.get("service_peak_rss_mib")
        before = row.get("service_rss_before_mib")
        print(f"{label:<40} {row['seconds']:>8.2f} {sum(row['calls'].values()):>6} {row['names'] or 0:>9} "
              f"{'' if peak is None else peak:>17} {'' if before is None else before:>8}")

