"""A thrift proxy between a catalog service and the metastore that kills the service in the middle of a call
and keeps the call, for the test to deliver to the metastore when it chooses.

A process killed while the metastore runs its last call leaves that call to the metastore, which finishes it
whenever it does (it does not stop a call whose client went away). The proxy makes that moment the test's:
armed with a method and a process, it takes the ``nth`` call of that method whole from the process, kills the
process (``SIGKILL``) and cuts its connection, and keeps the call's bytes. :meth:`deliver` sends them on a raw
connection of its own, as the killed process's socket had: the metastore runs the call exactly as it would
have, whether or not anyone reads its answer.

Every other call is passed on byte for byte (``tests.support.thrift_proxy.read_message`` finds where each
ends), so the service, the restarted one and the test's own clients all work through it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
from typing import Any
from urllib.parse import urlsplit

from thrift.Thrift import TMessageType

from tests.support.thrift_proxy import Message, read_message

__all__ = ["AbandoningProxy"]


class AbandoningProxy:
    """A TCP proxy on 127.0.0.1 to the metastore at ``upstream`` (a ``thrift://`` URI)."""

    def __init__(self, upstream: str) -> None:
        address = urlsplit(upstream)
        self.upstream = (address.hostname or "127.0.0.1", address.port or 9083)
        self.fired = threading.Event()
        self.held: Message | None = None
        self._lock = threading.Lock()
        self._armed: tuple[str, int, int] | None = None  # (method, nth, pid)
        self._seen = 0
        self._closing = threading.Event()
        self._sockets: set[socket.socket] = set()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self.uri = f"thrift://127.0.0.1:{self._listener.getsockname()[1]}"
        self._acceptor = threading.Thread(target=self._accept, name="abandoning-proxy", daemon=True)
        self._acceptor.start()

    def arm(self, method: str, pid: int, nth: int = 1) -> None:
        """Kill ``pid`` at its ``nth`` call of ``method`` from now on, keeping that call."""
        with self._lock:
            self._armed, self._seen, self.held = (method, nth, pid), 0, None
            self.fired.clear()

    def deliver(self, *, answer: bool) -> Message | None:
        """Send the kept call to the metastore on a connection of its own. ``answer``: wait for the metastore's
        answer (then it has ended) and return it; otherwise close the connection right after sending, as the
        killed process's socket was closed."""
        assert self.held is not None, "no call was kept"
        with socket.create_connection(self.upstream) as raw:
            raw.sendall(self.held.data)
            if not answer:
                return None
            with raw.makefile("rb") as replies:
                return read_message(replies)

    def close(self) -> None:
        self._closing.set()
        self._acceptor.join(5)
        self._listener.close()
        with self._lock:
            live = list(self._sockets)
        for sock in live:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> AbandoningProxy:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.settimeout(None)
            threading.Thread(target=self._serve, args=(client,), name="abandoning-proxy-connection", daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream = None
        try:
            upstream = socket.create_connection(self.upstream)
            with self._lock:
                self._sockets.update((client, upstream))
            with client.makefile("rb") as from_client, upstream.makefile("rb") as from_upstream:
                while (request := read_message(from_client)) is not None:
                    if self._kept(request):
                        return
                    upstream.sendall(request.data)
                    if request.type == TMessageType.ONEWAY:
                        continue
                    reply = read_message(from_upstream)
                    if reply is None:
                        return
                    client.sendall(reply.data)
        except Exception:  # noqa: BLE001 - a peer went away (or the proxy closed): this connection is over
            pass
        finally:
            for sock in (client, upstream):
                if sock is not None:
                    with self._lock:
                        self._sockets.discard(sock)
                    sock.close()

    def _kept(self, request: Message) -> bool:
        """Whether ``request`` is the armed call: then it is kept and its process killed."""
        with self._lock:
            if self._armed is None or request.name != self._armed[0]:
                return False
            self._seen += 1
            method, nth, pid = self._armed
            if self._seen < nth:
                return False
            self._armed, self.held = None, request
        os.kill(pid, signal.SIGKILL)
        self.fired.set()
        return True
