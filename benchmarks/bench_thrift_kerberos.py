"""What Kerberos costs at the service's thrift endpoint: a connection's set-up and a warm ``get_table``, SASL against plain.

One embedded metastore, a real MIT KDC on a loopback port (the tests' realm), a catalog on a temporary home, and
four endpoints in this process over it: plain, and Kerberized allowing one protection each (``auth``, ``auth-int``,
``auth-conf``), so the catalog's own client (which takes the first layer offered) gets each. Measured in one run,
in alternating rounds so that the machine's other work falls on every side alike:

- a new connection until its first answer (a warm ``get_table``): TCP, and for SASL the client's credentials from
  its keytab (a service ticket, cached after the first) and the round trips of the GSSAPI negotiation, the
  endpoint's accept included;
- a warm ``get_table`` on an open connection (answered from the catalog's cache): the SASL frame, and the GSSAPI
  wrap and unwrap of both messages for ``auth-int``/``auth-conf``.

    python benchmarks/bench_thrift_kerberos.py [--connections 100] [--calls 1000] [--rounds 5]

Results are printed and saved to benchmarks/results/thrift_kerberos.json, with ratios to plain.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import progress, save

from hms_catalog.client._transport import open_connection
from hms_catalog.client.hive_thrift import ttypes
from hms_catalog.kerberos import KerberosConfig, KerberosLogin
from hms_catalog.manager import CatalogManager
from hms_catalog.metastore import EmbeddedMetastore
from hms_catalog.properties import parse_uris
from hms_catalog.state import open_definitions
from service.access import Access, Principal
from service.audit import AuditLog
from service.thrift import ThriftEndpoint, ThriftSettings
from service.thrift.kerberos import ALL_PROTECTIONS, ServiceKerberos
from service.tokens import KerberosPrincipals, NamedToken
from tests.support.kdc import MiniKdc, missing_programs

SIDES = ("plain", *reversed(ALL_PROTECTIONS))  # plain, auth, auth-int, auth-conf
DATABASE, TABLE = "bench_kerberos", "events"


def _open(uri: str, login: KerberosLogin | None, count: int) -> list[float]:
    target = parse_uris(uri)[0]
    seconds = []
    for _ in range(count):
        started = time.perf_counter()
        connection = open_connection(target, connect_timeout=10, socket_timeout=60, login=login)
        connection.client.get_table(DATABASE, TABLE)  # the first answer: a plain TCP connect alone waits for nobody
        seconds.append(time.perf_counter() - started)
        connection.close()
    return seconds


def _calls(uri: str, login: KerberosLogin | None, count: int) -> list[float]:
    connection = open_connection(parse_uris(uri)[0], connect_timeout=10, socket_timeout=60, login=login)
    try:
        connection.client.get_table(DATABASE, TABLE)  # warm
        seconds = []
        for _ in range(count):
            started = time.perf_counter()
            connection.client.get_table(DATABASE, TABLE)
            seconds.append(time.perf_counter() - started)
        return seconds
    finally:
        connection.close()


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50_ms": round(statistics.median(ordered) * 1000, 3),
            "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1] * 1000, 3), "samples": len(ordered)}


def _with_ratios(figures: dict[str, dict[str, float]]) -> dict[str, Any]:
    plain = figures["plain"]
    return {side: {**values, **({} if side == "plain" else {
        "p50_ratio_to_plain": round(values["p50_ms"] / plain["p50_ms"], 2),
        "p95_ratio_to_plain": round(values["p95_ms"] / plain["p95_ms"], 2),
        "p50_added_ms": round(values["p50_ms"] - plain["p50_ms"], 3)})} for side, values in figures.items()}


def _table(metastore: EmbeddedMetastore, root: Path) -> None:
    from hms_catalog.client import HmsClientPool
    from hms_catalog.properties import CatalogConfig

    pool = HmsClientPool(CatalogConfig.from_properties({"type": "hms", "hive.metastore.uris": metastore.uri}).client)
    try:
        pool.call("create_database", ttypes.Database(name=DATABASE, locationUri=(root / DATABASE).as_uri(), parameters={}))
        columns = [ttypes.FieldSchema(name=f"c{i}", type="string") for i in range(20)]
        serde = ttypes.SerDeInfo(serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")
        storage = ttypes.StorageDescriptor(cols=columns, location=(root / DATABASE / TABLE).as_uri(), serdeInfo=serde,
                                           inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                                           outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat")
        pool.call("create_table", ttypes.Table(tableName=TABLE, dbName=DATABASE, tableType="EXTERNAL_TABLE", sd=storage,
                                               partitionKeys=[], parameters={"EXTERNAL": "TRUE"}))
    finally:
        pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connections", type=int, default=100, help="connections opened per side and round")
    parser.add_argument("--calls", type=int, default=1000, help="warm get_table calls per side and round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if missing_programs():
        raise SystemExit(f"MIT Kerberos programs missing: {', '.join(missing_programs())}")
    with tempfile.TemporaryDirectory(prefix="bench-thrift-kerberos-") as scratch:
        root = Path(scratch)
        with MiniKdc(root / "kdc") as kdc:
            os.environ.update(kdc.env)
            (root / "keytabs").mkdir()
            kdc.add_principal("hive/localhost", root / "keytabs" / "hive.keytab")
            user = kdc.add_principal("etl", root / "keytabs" / "etl.keytab")
            progress("starting the embedded metastore")
            with EmbeddedMetastore(root / "metastore") as metastore:
                _table(metastore, root / "warehouse")
                (root / "home").mkdir()
                manager = CatalogManager(open_definitions(root / "home", None))
                manager.create("hive", {"type": "hms", "hive.metastore.uris": metastore.uri})
                grants = KerberosPrincipals([NamedToken(Principal("etl", Access.READ), None, (user,))])
                audit = AuditLog(root / "home" / "audit.log")
                endpoints: dict[str, ThriftEndpoint] = {}
                for side in SIDES:
                    kerberos = None if side == "plain" else ServiceKerberos.configured(
                        "hive/_HOST@HMS.TEST", root / "keytabs" / "hive.keytab", "127.0.0.1", (side,))
                    endpoints[side] = ThriftEndpoint(manager, audit, ThriftSettings(port=0, kerberos=kerberos),
                                                     principals=grants).start()
                login = KerberosLogin(KerberosConfig(service_principal="hive/_HOST@HMS.TEST", client_principal=user,
                                                     keytab=root / "keytabs" / "etl.keytab"))
                try:
                    opened: dict[str, list[float]] = {side: [] for side in SIDES}
                    called: dict[str, list[float]] = {side: [] for side in SIDES}
                    for side in SIDES:  # one warm-up each: the service ticket, the table in the cache
                        _open(endpoints[side].uri, None if side == "plain" else login, 3)
                        _calls(endpoints[side].uri, None if side == "plain" else login, 50)
                    for number in range(args.rounds):
                        progress(f"round {number + 1} of {args.rounds}")
                        for side in SIDES:
                            who = None if side == "plain" else login
                            opened[side] += _open(endpoints[side].uri, who, args.connections)
                            called[side] += _calls(endpoints[side].uri, who, args.calls)
                finally:
                    for endpoint in endpoints.values():
                        endpoint.stop()
                    manager.close()
    save("thrift_kerberos", {
        "cores": os.cpu_count(), "load_average": [round(value, 2) for value in os.getloadavg()],
        "connection_to_first_answer": _with_ratios({side: _summary(values) for side, values in opened.items()}),
        "warm_get_table": _with_ratios({side: _summary(values) for side, values in called.items()}),
        "notes": "The catalog's own client (Python, gssapi) against the endpoint in the same process: both sides share "
                 "this process's GIL, so the figures are the sum of client and endpoint work. A connection's set-up "
                 "includes the client's credentials (from its keytab, the service ticket cached after the first).",
    })


if __name__ == "__main__":
    main()
