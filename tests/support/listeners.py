"""The TCP sockets a process tree listens on, read from /proc (Linux): which addresses its servers bind.

Used to check that what the tests start (metastores, Spark's driver and block manager, S3, PostgreSQL, the
KDC, the service) listens on the loopback address only, never on the machine's other addresses.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Listener", "descendants", "listeners", "not_on_loopback"]

_LISTEN = "0A"


@dataclass(frozen=True)
class Listener:
    pid: int
    command: str
    address: str
    port: int

    @property
    def loopback(self) -> bool:
        return ipaddress.ip_address(self.address).is_loopback


def descendants(root: int) -> list[int]:
    """``root`` and every process below it, by their parents in /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _address(hex_address: str) -> tuple[str, int]:
    host, port = hex_address.split(":")
    raw = bytes.fromhex(host)
    if len(raw) == 4:
        return str(ipaddress.IPv4Address(raw[::-1])), int(port, 16)
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))  # four host-order 32-bit words
    address = ipaddress.IPv6Address(words)
    return str(address.ipv4_mapped or address), int(port, 16)


def _listening_inodes() -> dict[str, tuple[str, int]]:
    found: dict[str, tuple[str, int]] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == _LISTEN:
                found[fields[9]] = _address(fields[1])
    return found


def listeners(pids: list[int]) -> list[Listener]:
    """Every listening TCP socket open in one of ``pids``."""
    inodes = _listening_inodes()
    found: list[Listener] = []
    for pid in pids:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:160]
            links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            continue
        for link in links:
            if link.startswith("socket:[") and link[8:-1] in inodes:
                address, port = inodes[link[8:-1]]
                found.append(Listener(pid, command, address, port))
    return found


def not_on_loopback(root: int | None = None) -> list[Listener]:
    """What ``root``'s process tree (this process by default) listens on outside the loopback address."""
    return [found for found in listeners(descendants(root or os.getpid())) if not found.loopback]
