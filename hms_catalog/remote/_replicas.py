"""The replicas of one catalog service a client may call, and failing over between them.

Several ``hms-catalog serve`` processes over one shared store answer alike, so a client given several
URLs sends each request to the replica that answered last (sticky, for every thread of the client) and
goes on to the next when that one is away. Away means: no connection could be opened (refused, reset,
timed out connecting, TLS failed), the connection died before the answer was read, or the answer was
HTTP 503, the service's "try later".

Which requests may go again elsewhere: a GET or HEAD changes nothing, so it may be sent as often as it
takes, including the change feed's long poll, whose ``since`` numbers the same change on every replica (the
store numbers them), so the same request resumes it. A POST, PUT, PATCH or DELETE goes to the next replica
only when it surely did not reach the one before (no connection was opened) or when that one answered 503
(it refused to act). Once such a request was sent, a connection dying before the answer leaves unknown
whether the server acted on it, and sending it again could apply it twice (an append, a DROP of a table
re-created since), so the caller hears of it instead.

One keep-alive connection per thread, to the replica that thread last used, so threads never mix their
requests and a warm call costs one round trip.
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import ssl
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import urlsplit

from hms_catalog.errors import ConfigurationError, ServiceError

__all__ = ["Answer", "Replica", "Replicas", "parse_urls"]

_REPEATABLE = frozenset({"GET", "HEAD"})  # change nothing: safe to send again, anywhere
_TRY_LATER = 503
_PIECE = 1 << 16  # bytes read at a time from an answer handed on as it arrives


@dataclass(frozen=True)
class Replica:
    """One service URL, checked and split once."""

    url: str  # scheme://host:port, as messages name it
    https: bool
    host: str
    port: int


class Answer(NamedTuple):
    """An HTTP answer and the replica that gave it."""

    url: str
    status: int
    headers: dict[str, str]
    body: bytes


def parse_urls(urls: str | Sequence[str]) -> tuple[Replica, ...]:
    """The replicas of ``urls``: one string of comma-separated URLs, or a sequence of them (each may hold
    commas too). Duplicates are dropped; a malformed URL is a ConfigurationError naming it."""
    pieces = [urls] if isinstance(urls, str) else list(urls)
    replicas: dict[str, Replica] = {}
    for piece in pieces:
        if not isinstance(piece, str):
            raise ConfigurationError(f"catalog service URLs must be strings, got {piece!r}")
        for url in (part.strip() for part in piece.split(",")):
            if url:
                replica = _replica(url)
                replicas.setdefault(replica.url, replica)
    if not replicas:
        raise ConfigurationError(f"no catalog service URL given (http://host:port, comma-separated for replicas), got {urls!r}")
    return tuple(replicas.values())


def _replica(url: str) -> Replica:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port, parts = None, parts._replace(netloc="")  # a port that is not a number: malformed as a whole
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(f"catalog service URL must be http://host:port or https://host:port, got {url!r}")
    https = parts.scheme == "https"
    return Replica(f"{parts.scheme}://{parts.netloc}", https, parts.hostname, port or (443 if https else 80))


class _ConnectFailed(Exception):
    """No connection could be opened: nothing of the request reached the replica."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class _Dropped(_ConnectFailed):
    """The connection died after the request may have reached the replica, before its answer was read."""


class Replicas:
    """Sends requests to the replicas, the one that answered last first; see the module's docstring."""

    def __init__(self, replicas: Sequence[Replica], *, timeout: float, connect_timeout: float,
                 cafile: str | None = None) -> None:
        self.replicas = tuple(replicas)
        self._timeout = timeout
        self._connect_timeout = min(connect_timeout, timeout)
        https = any(replica.https for replica in self.replicas)
        self._context = ssl.create_default_context(cafile=cafile) if https else None
        self._current = 0  # an int swap is atomic: threads share it without a lock
        self._local = threading.local()

    @property
    def current(self) -> Replica:
        """The replica requests go to first: the one that answered last."""
        return self.replicas[self._current]

    def close(self) -> None:
        """Close this thread's connection (others close with their threads)."""
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
        self._local.connection = None
        self._local.replica = None

    def send(self, method: str, path: str, payload: bytes | None, headers: dict[str, str],
             timeout: float | None, *, repeatable: bool = False, sink: Callable[[bytes], None] | None = None) -> Answer:
        """The answer of the first replica that gives one other than 503, trying them from the current one.

        ``repeatable``: the request may be sent again even after a replica may have applied it (a REFRESH, a
        plan, a property merge: twice means the same as once), so a dropped answer moves on as for a GET.
        When every replica answered 503, the last answer is returned (the caller raises what it says, a
        MetastoreUnavailableError as a local run would); when some could not be reached, a ServiceError
        names each URL tried and why it failed.

        ``sink``: a successful answer's body goes to it piece by piece as it arrives instead of into the
        answer (a plan of half a million splits is 170 MB of text). Once a piece has gone to it, an answer cut
        short is a ServiceError, never sent again: the sink would see the start twice.
        """
        failures: list[str] = []
        refused: Answer | None = None  # the last 503
        every_refused = True  # every replica answered, with 503: the caller raises what the last one said
        count = len(self.replicas)
        start = self._current
        for index in ((start + step) % count for step in range(count)):
            replica = self.replicas[index]
            try:
                answer = self._exchange(replica, method, path, payload, headers, timeout, sink)
            except _Dropped as dropped:
                failures.append(f"{replica.url} closed the connection: {dropped.error}")
                every_refused = False
                if repeatable or method in _REPEATABLE:
                    continue
                raise ServiceError(_failed(failures, method, path) + " (it may have been applied, so it was not "
                                   "sent again)") from dropped.error
            except _ConnectFailed as failed:
                failures.append(f"{replica.url} cannot be reached: {failed.error}")
                every_refused = False
                continue
            except TimeoutError as error:
                # Alive but slow (a cold plan, a SELECT): another replica would be as slow, and a change sent
                # again could apply twice.
                raise ServiceError(f"the catalog service at {replica.url} did not answer {method} {path} within "
                                   f"{timeout or self._timeout:g} s: {error}") from error
            if answer.status == _TRY_LATER:
                failures.append(f"{replica.url} answered HTTP 503: {_summary(answer.body)}")
                refused = answer
                continue
            self._current = index
            return answer
        if every_refused and refused is not None:
            return refused
        raise ServiceError(_failed(failures, method, path))

    def _exchange(self, replica: Replica, method: str, path: str, payload: bytes | None, headers: dict[str, str],
                  timeout: float | None, sink: Callable[[bytes], None] | None = None) -> Answer:
        for attempt in (1, 2):  # a kept-alive connection the server closed while idle is reopened once
            connection, reused = self._connection(replica, timeout)
            sent = False
            try:
                connection.request(method, path, body=payload, headers=headers)
                sent = True
                response = connection.getresponse()
                if sink is not None and response.status < 300:
                    _drain(response, sink, f"{replica.url} {method} {path}", self.close)
                    return Answer(replica.url, response.status, dict(response.getheaders()), b"")
                body = response.read()
                return Answer(replica.url, response.status, dict(response.getheaders()), body)
            except TimeoutError:
                self.close()
                raise
            except (OSError, http.client.HTTPException) as error:
                self.close()
                # An idle connection may have been closed as the request went out: on it, a request not
                # yet sent, or one that changes nothing, may go again to the same replica.
                if not (reused and attempt == 1 and (not sent or method in _REPEATABLE)):
                    raise _Dropped(error) from error
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def _connection(self, replica: Replica, timeout: float | None) -> tuple[http.client.HTTPConnection, bool]:
        """This thread's connection to ``replica`` and whether it was open already; opening one that fails
        raises _ConnectFailed."""
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is not None and (getattr(self._local, "replica", None) != replica or
                                       (connection.sock is not None and _closed_by_peer(connection.sock))):
            self.close()  # to another replica, or closed by the server while idle: reopen rather than fail on it
            connection = None
        reused = connection is not None
        if connection is None:
            if replica.https:
                connection = http.client.HTTPSConnection(replica.host, replica.port, timeout=self._connect_timeout,
                                                         context=self._context)
            else:
                connection = http.client.HTTPConnection(replica.host, replica.port, timeout=self._connect_timeout)
            try:
                connection.connect()
                # Requests are small and answered at once: without this, Nagle's algorithm and the peer's
                # delayed ACK hold each exchange for about 40 ms.
                connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError as error:
                connection.close()
                raise _ConnectFailed(error) from error
            self._local.connection, self._local.replica = connection, replica
        connection.timeout = timeout or self._timeout
        if connection.sock is not None:
            connection.sock.settimeout(connection.timeout)
        return connection, reused


def _drain(response: http.client.HTTPResponse, sink: Callable[[bytes], None], what: str, close: Callable[[], None]) -> None:
    """``response``'s body into ``sink`` piece by piece; cut short after the first piece, a ServiceError."""
    handed = 0
    while True:
        try:
            piece = response.read1(_PIECE)
        except (OSError, http.client.HTTPException) as error:
            if not handed:
                raise
            close()
            raise ServiceError(f"the catalog service at {what} cut its answer short after {handed} bytes "
                               f"(it failed while sending it; see its log): {error!r}") from error
        if not piece:
            return
        sink(piece)
        handed += len(piece)


def _failed(failures: list[str], method: str, path: str) -> str:
    if len(failures) == 1:
        return f"the catalog service at {failures[0]}"
    return f"no replica of the catalog service answered {method} {path}: {'; '.join(failures)}"


def _summary(body: bytes) -> str:
    """What a 503 said: the API's error message, else the start of the body."""
    try:
        return str(json.loads(body)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return repr(body[:200])


def _closed_by_peer(sock: socket.socket) -> bool:
    """Whether an idle kept-alive socket was closed by the other end (readable with nothing to read)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)  # an idle HTTP connection has nothing to read unless it was closed
