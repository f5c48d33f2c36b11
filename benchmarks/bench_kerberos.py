"""What Kerberos costs: opening a connection and calling on an open one, SASL/GSSAPI against plain.

Both metastores are the embedded one on this machine, one plain and one secure, with a real MIT KDC on a
loopback port (the tests' realm), measured in the same run:
- a new connection: TCP, and for SASL the login from the keytab, a service ticket and the handshake;
- a call on an open connection (``get_all_databases``), where SASL's "auth" layer adds nothing but a
  4-byte frame length.

    python benchmarks/bench_kerberos.py [--connections 50] [--calls 500]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import progress, save

from hms_catalog.client._transport import Connection, open_connection
from hms_catalog.kerberos import KerberosConfig, KerberosLogin
from hms_catalog.metastore import EmbeddedMetastore, MetastoreKerberos
from hms_catalog.properties import parse_uris
from tests.support.kdc import MiniKdc, missing_programs


def _open_seconds(uri: str, login: KerberosLogin | None, count: int) -> list[float]:
    target = parse_uris(uri)[0]
    seconds = []
    for _ in range(count):
        started = time.perf_counter()
        connection = open_connection(target, connect_timeout=10, socket_timeout=60, login=login)
        seconds.append(time.perf_counter() - started)
        connection.close()
    return seconds


def _call_seconds(connection: Connection, count: int) -> list[float]:
    seconds = []
    for _ in range(count):
        started = time.perf_counter()
        connection.client.get_all_databases()
        seconds.append(time.perf_counter() - started)
    return seconds


def _ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    if missing_programs():
        raise SystemExit(f"needs MIT Kerberos's programs: {', '.join(missing_programs())}")
    with tempfile.TemporaryDirectory(prefix="bench-kerberos-") as scratch:
        root = Path(scratch)
        with MiniKdc(root / "kdc") as kdc:
            os.environ.update(kdc.env)
            kdc.add_principal("hive/localhost", root / "hive.keytab")
            user = kdc.add_principal("etl", root / "etl.keytab")
            secure_setup = MetastoreKerberos(kdc.principal("hive/_HOST"), root / "hive.keytab", kdc.krb5_conf)
            progress("starting a plain and a secure metastore")
            with EmbeddedMetastore(root / "plain") as plain, EmbeddedMetastore(root / "secure", kerberos=secure_setup) as secure:
                login = KerberosLogin(KerberosConfig(service_principal=kdc.principal("hive/_HOST"), client_principal=user,
                                                     keytab=root / "etl.keytab"))
                _open_seconds(plain.uri, None, 5)  # warm both servers' thread pools and this process's imports
                _open_seconds(secure.uri, login, 5)
                progress(f"opening {args.connections} connections each way")
                plain_open = _open_seconds(plain.uri, None, args.connections)
                sasl_open = _open_seconds(secure.uri, login, args.connections)
                progress(f"{args.calls} calls on one open connection each way")
                plain_connection = open_connection(parse_uris(plain.uri)[0], connect_timeout=10, socket_timeout=60)
                sasl_connection = open_connection(parse_uris(secure.uri)[0], connect_timeout=10, socket_timeout=60, login=login)
                _call_seconds(plain_connection, 50)
                _call_seconds(sasl_connection, 50)
                plain_calls = _call_seconds(plain_connection, args.calls)
                sasl_calls = _call_seconds(sasl_connection, args.calls)
                plain_connection.close()
                sasl_connection.close()
    report = {
        "connections": args.connections,
        "calls": args.calls,
        "new_connection_ms": {"plain": _ms(plain_open), "sasl_gssapi": _ms(sasl_open),
                              "added_by_sasl": round(_ms(sasl_open) - _ms(plain_open), 3)},
        "call_on_open_connection_ms": {"plain": _ms(plain_calls), "sasl_gssapi": _ms(sasl_calls),
                                       "ratio_sasl_to_plain": round(_ms(sasl_calls) / _ms(plain_calls), 2)},
    }
    save("kerberos", report)


if __name__ == "__main__":
    main()
