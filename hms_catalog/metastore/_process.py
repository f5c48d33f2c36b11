"""Process and port probes of the embedded metastore: is the server answering, listening, alive; is a
port free."""

from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path

from hms_catalog.client._transport import open_connection
from hms_catalog.kerberos.login import KerberosLogin
from hms_catalog.properties import MetastoreUri

__all__ = ["alive", "answers", "free_port", "listening", "port_free", "read_port"]



def answers(uri: MetastoreUri, *, timeout: float, login: KerberosLogin | None = None) -> bool:
    """Whether the server answers a call (over SASL with ``login``); AuthenticationError when it refuses it."""
    try:
        connection = open_connection(uri, connect_timeout=timeout, socket_timeout=timeout, login=login)
    except OSError:
        return False
    try:
        connection.client.get_all_databases()
        return True
    except Exception:  # noqa: BLE001 - any failure means "not ready yet"
        return False
    finally:
        connection.close()



def listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=2.0):
        return True
    return False



def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"



def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])



def port_free(port: int) -> bool:
    """Whether a server could bind ``port`` on the loopback address now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds: TIME_WAIT is fine
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def read_port(path: Path) -> int | None:
    """The port a file remembers (a number on its own); None when it is missing, unreadable or no port."""
    try:
        port = int(path.read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None
    return port if 0 < port < 65536 else None
