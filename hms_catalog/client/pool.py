"""A bounded, thread-safe pool of metastore connections with multi-URI failover and retries.

Shape taken from the catalogs that run HMS in production: clients are opened lazily, at most
``pool_size`` are out at once, a borrower waits up to ``borrow_timeout`` for one, and a client whose
connection broke is closed and thrown away instead of being handed to the next borrower (a thrift
connection that failed mid-call is out of sync and would poison every later call).

Failover: URIs are tried in the order given. One that refused a connection or broke a call is put in
backoff for ``uri_backoff`` seconds and tried only when no other URI is live. :meth:`HmsClientPool.call`
retries transport failures (never the metastore's own answers, such as NoSuchObjectException) with
capped exponential backoff and jitter.

Versions: :meth:`HmsClientPool.call_forms` asks a question in the first of its forms the metastore
knows. A form a URI refused as an unknown method is remembered for that URI (and forgotten when the URI
fails, as it may come back upgraded), so an old or new metastore costs one refused call per form, once.

Kerberos: with ``config.kerberos`` every new connection negotiates SASL/GSSAPI with credentials the
pool's :class:`KerberosLogin` renews as needed; pooled connections, failover and retries are unchanged.
A URI whose authentication failed is failed over like a refused one, but when no URI could be reached
and one refused the credentials, :class:`AuthenticationError` is raised at once: retrying would only
fail the same way.

Health: :meth:`HmsClientPool.unreachable` says, from what the pool has seen, whether every URI failed its latest
attempt; :meth:`HmsClientPool.probe` asks each URI once, within a short timeout, whether it answers again;
:meth:`HmsClientPool.retry_window` is how long a call's retries ride out; and within
:meth:`HmsClientPool.refusing` a caller that knows the metastore is down makes no call at all (see
:mod:`hms_catalog.client._refusing`). The thrift endpoint uses them to answer a federated catalog whose
metastore is down from its caches at once, to fail calls its caches cannot answer at once once it has been down
longer than its retries ride out, and to find it back in the background.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from thrift.protocol.TProtocol import TProtocolException
from thrift.Thrift import TApplicationException, TException
from thrift.transport.TTransport import TTransportException

from hms_catalog.client._borrowed import BorrowedClient, is_application_error
from hms_catalog.client._refusing import Refusing, refusal
from hms_catalog.client._transport import Connection, open_connection
from hms_catalog.client.config import BORROW_TIMEOUT, ClientConfig, MetastoreUri
from hms_catalog.client.metrics import ClientMetrics
from hms_catalog.client.versions import CallForm, is_unknown_method, unsupported_message
from hms_catalog.errors import (
    AuthenticationError,
    MetastoreUnavailableError,
    PoolClosedError,
    PoolExhaustedError,
    UnsupportedCallError,
)
from hms_catalog.kerberos.config import SASL_ENABLED
from hms_catalog.kerberos.login import KerberosLogin

__all__ = ["HmsClientPool", "BorrowedClient", "CallForm", "is_application_error"]

log = logging.getLogger(__name__)

BACKOFF_CAP_SECONDS = 30.0

Connector = Callable[..., Connection]


class _NoMetastoreReachable(MetastoreUnavailableError):
    """Every URI refused the connection; retried by :meth:`HmsClientPool.call` like a transport error."""


class _Loan:
    """The ``with`` block of :meth:`HmsClientPool.borrow`.

    A class rather than ``@contextmanager``: contextlib assigns ``__traceback__`` on an exception that
    leaves the block, and the generated thrift exceptions (NoSuchObjectException, ...) are immutable,
    so that assignment would replace the metastore's answer with a TypeError.
    """

    def __init__(self, pool: HmsClientPool) -> None:
        self._pool = pool
        self._connection: Connection | None = None
        self._client: BorrowedClient | None = None

    def __enter__(self) -> BorrowedClient:
        self._connection = self._pool._acquire()
        self._client = BorrowedClient(self._connection, self._pool.metrics)
        return self._client

    def __exit__(self, *_: object) -> None:
        if self._connection is not None and self._client is not None:
            connection, self._connection = self._connection, None
            self._pool._release(connection, broken=self._client.broken)


class HmsClientPool:
    """Bounded pool of :class:`BorrowedClient` over the URIs of one :class:`ClientConfig`."""

    def __init__(
        self,
        config: ClientConfig,
        *,
        metrics: ClientMetrics | None = None,
        connect: Connector = open_connection,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        jitter: Callable[[], float] = random.random,
        login: KerberosLogin | None = None,
    ) -> None:
        if not config.uris:
            raise ValueError("a pool needs at least one metastore URI")
        self.config = config
        if login is None and config.kerberos is not None:
            login = KerberosLogin(config.kerberos)
        self._login = login
        self.metrics = metrics if metrics is not None else ClientMetrics()
        self._connect = connect
        self._clock = clock
        self._sleep = sleep
        self._jitter = jitter
        self._slots = threading.BoundedSemaphore(config.pool_size)
        self._lock = threading.Lock()
        self._idle: list[Connection] = []
        self._dead_until: dict[MetastoreUri, float] = {}
        self._last_failure: dict[MetastoreUri, tuple[float, str]] = {}
        self._unsupported: dict[MetastoreUri, set[str]] = {}
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def idle_count(self) -> int:
        with self._lock:
            return len(self._idle)

    def borrow(self) -> _Loan:
        """Lend a client for the ``with`` block; it goes back to the pool unless its connection broke."""
        return _Loan(self)

    def call(self, method: str, *args: Any) -> Any:
        """Call thrift ``method`` with retries over transport failures and failover across URIs.

        When every attempt fails, the error says how each URI failed last since the call began (a hung
        one and a refused one read differently), not only what the last attempt met.
        """
        return self.call_forms((CallForm(method, args),))

    def call_forms(self, forms: Sequence[CallForm]) -> Any:
        """Ask one question in the first of ``forms`` the metastore answers, read by that form.

        Forms the URI is known to refuse are skipped; one it refuses now is remembered and the next is
        asked on the same connection. :class:`UnsupportedCallError` when it refuses them all. Retries and
        failover as :meth:`call`.
        """
        if not forms:
            raise ValueError("call_forms needs at least one form")
        method = forms[0].method
        attempts = self.config.retries + 1
        started = self._clock()
        last_error: BaseException | None = None
        for attempt in range(attempts):
            if attempt:
                self.metrics.retry()
                self._sleep(self._backoff(attempt - 1))
            try:
                with self.borrow() as client:
                    try:
                        answer = self._ask(client, forms)
                        self._answered(client.uri)
                        return answer
                    except (TTransportException, TProtocolException, OSError, EOFError) as error:
                        self._mark_dead(client.uri, _describe(error, self.config))
                        log.warning("metastore call %s to %s failed on transport (attempt %d of %d): %s",
                                    method, client.uri, attempt + 1, attempts, error)
                        raise
            except (PoolClosedError, PoolExhaustedError):
                raise
            except (_NoMetastoreReachable, TTransportException, TProtocolException, OSError, EOFError) as error:
                last_error = error
        raise MetastoreUnavailableError(
            f"metastore call {method} failed after {attempts} attempt(s){self._failures_since(started, last_error)}"
        ) from last_error

    def unsupported_methods(self, uri: MetastoreUri) -> frozenset[str]:
        """The methods ``uri`` refused as unknown since it last failed."""
        with self._lock:
            return frozenset(self._unsupported.get(uri, ()))

    def _ask(self, client: BorrowedClient, forms: Sequence[CallForm]) -> Any:
        refused = self.unsupported_methods(client.uri)
        said: str | None = None
        for form in forms:
            if form.method in refused:
                continue
            try:
                answer = getattr(client, form.method)(*form.args)
            except TApplicationException as error:
                if not is_unknown_method(error):
                    raise
                said = error.message or str(error)
                # Thrift raises the refusal from a frame that holds it, a cycle through the traceback that keeps
                # every frame of this call, and their locals once they return (the next form's answer: a batch
                # of partition objects), until the collector runs, which a plan pauses.
                error.__traceback__ = None
                with self._lock:
                    self._unsupported.setdefault(client.uri, set()).add(form.method)
                log.info("metastore %s does not answer %s (%s); not asking it again", client.uri, form.method, said)
                continue
            return form.read(answer)
        raise UnsupportedCallError(unsupported_message(client.uri, forms, said))

    def retry_window(self) -> float:
        """The longest a call's retries wait between its attempts, in all: the backoff ceilings of its
        ``retries`` summed (each retry waits between half of its ceiling and all of it). A metastore back within
        it fails no call that was waiting on it; a caller that knows it down gives it that long before failing
        calls at once (the thrift endpoint's grace)."""
        return sum(self._backoff_ceiling(retry) for retry in range(self.config.retries))

    def refusing(self, reason: str) -> Refusing:
        """A block within which this pool makes no call: a borrow (so every call) raises
        :class:`MetastoreUnavailableError` saying ``reason`` at once. For this caller's block only; see
        :mod:`hms_catalog.client._refusing`."""
        return Refusing(id(self), reason)

    def unreachable(self) -> str | None:
        """How each URI failed, when every one failed its latest attempt (a connection refused, a call broken or
        unanswered, a probe) and none was opened or answered since; None otherwise. What the pool has seen, with
        no new attempt, so a caller waiting on a call can tell a refusing metastore before its retries are spent."""
        with self._lock:
            if not all(uri in self._dead_until for uri in self.config.uris):
                return None
            return "; ".join(f"{uri}: {self._last_failure[uri][1]}" for uri in self.config.uris if uri in self._last_failure)

    def probe(self, timeout: float) -> MetastoreUri:
        """The first URI that answers now: each in turn, on a connection of its own (not a pooled one, and taking
        no slot), opened and asked ``get_all_databases`` within ``timeout``, with no retry. The one that answers
        leaves backoff, so the next call goes to it; one that fails is marked as a call's failure marks it.

        A caller that knows the metastore is down learns that it is back without waiting out a call's retries
        and socket timeout (a hung metastore holds a call for the whole socket timeout, 60 s by default).
        Raises :class:`MetastoreUnavailableError` saying how each URI failed."""
        connect_timeout = min(timeout, self.config.connect_timeout)
        socket_timeout = min(timeout, self.config.socket_timeout)
        security = {"login": self._login} if self._login is not None else {}
        failures = []
        for uri in self.config.uris:
            try:
                connection = self._connect(uri, connect_timeout=connect_timeout, socket_timeout=socket_timeout, **security)
            except (AuthenticationError, OSError) as error:
                self.metrics.connect_failed()
                reason = str(error) if isinstance(error, AuthenticationError) else f"could not connect: {error or type(error).__name__}"
                self._mark_dead(uri, reason)
                failures.append(f"{uri}: {reason}")
                continue
            self.metrics.opened()
            try:
                connection.client.get_all_databases()
            except (TTransportException, TProtocolException, OSError, EOFError) as error:
                self.metrics.call("get_all_databases")
                self.metrics.error("get_all_databases")
                reason = f"no answer to a probe within {socket_timeout:g}s" if _timed_out(error) else _describe(error, self.config)
                self._mark_dead(uri, reason)
                failures.append(f"{uri}: {reason}")
                continue
            except TException:
                pass  # the metastore's own answer, an error though it is: it answers
            finally:
                connection.close()
            self.metrics.call("get_all_databases")
            self._answered(uri)
            return uri
        raise MetastoreUnavailableError("no metastore answered a probe: " + "; ".join(failures))

    def close(self) -> None:
        """Close idle connections and refuse further borrows; connections still out close on return."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    def _acquire(self) -> Connection:
        if self._closed:
            raise PoolClosedError("the metastore client pool is closed")
        refused = refusal(id(self))
        if refused is not None:
            raise MetastoreUnavailableError(refused)
        started = self._clock()
        if not self._slots.acquire(timeout=self.config.borrow_timeout):
            self.metrics.waited(self._clock() - started)
            raise PoolExhaustedError(
                f"all {self.config.pool_size} metastore clients stayed borrowed for "
                f"{self.config.borrow_timeout:g}s (raise '{BORROW_TIMEOUT}' or the pool size)"
            )
        try:
            self.metrics.waited(self._clock() - started)
            with self._lock:
                if self._closed:
                    raise PoolClosedError("the metastore client pool is closed")
                if self._idle:
                    return self._idle.pop()
            return self._open()
        except BaseException:
            self._slots.release()
            raise

    def _release(self, connection: Connection, *, broken: bool) -> None:
        try:
            with self._lock:
                keep = not broken and not self._closed
                if keep:
                    self._idle.append(connection)
            if not keep:
                if broken:
                    self.metrics.discarded()
                connection.close()
        finally:
            self._slots.release()

    def _open(self) -> Connection:
        failures: list[str] = []
        refused_credentials = False
        security = {"login": self._login} if self._login is not None else {}
        for uri in self._candidates():
            try:
                connection = self._connect(
                    uri, connect_timeout=self.config.connect_timeout, socket_timeout=self.config.socket_timeout,
                    **security,
                )
            except AuthenticationError as error:
                self.metrics.connect_failed()
                self._mark_dead(uri, str(error))
                failures.append(f"{uri}: {error}")
                refused_credentials = True
                continue
            except OSError as error:
                self.metrics.connect_failed()
                self._mark_dead(uri, f"could not connect: {error or type(error).__name__}")
                failures.append(f"{uri}: {error or type(error).__name__}")
                continue
            with self._lock:
                self._dead_until.pop(uri, None)
            self.metrics.opened()
            return connection
        if refused_credentials:
            raise AuthenticationError("could not connect to " + "; ".join(failures))
        raise _NoMetastoreReachable("could not connect to " + "; ".join(failures))

    def _candidates(self) -> list[MetastoreUri]:
        """Live URIs in configured order, then those in backoff, soonest back first."""
        now = self._clock()
        with self._lock:
            dead = dict(self._dead_until)
        live = [uri for uri in self.config.uris if dead.get(uri, 0.0) <= now]
        resting = sorted((uri for uri in self.config.uris if dead.get(uri, 0.0) > now), key=lambda uri: dead[uri])
        return live + resting

    def _answered(self, uri: MetastoreUri) -> None:
        """``uri`` answered a call: out of backoff, even when the connection was opened before it failed."""
        if uri in self._dead_until:  # read without the lock: almost always absent, and popped under it
            with self._lock:
                self._dead_until.pop(uri, None)

    def _mark_dead(self, uri: MetastoreUri, reason: str) -> None:
        """Rest ``uri`` and close its idle connections: after a failure they are likely dead too, and
        handing them out first would spend the retries on them. ``reason`` is kept for error messages."""
        with self._lock:
            now = self._clock()
            self._dead_until[uri] = now + self.config.uri_backoff
            self._last_failure[uri] = (now, reason)
            self._unsupported.pop(uri, None)
            stale = [c for c in self._idle if c.uri == uri]
            self._idle = [c for c in self._idle if c.uri != uri]
        for connection in stale:
            self.metrics.discarded()
            connection.close()

    def _failures_since(self, started: float, last_error: BaseException | None) -> str:
        """``: uri: what went wrong; ...`` for each URI that failed since ``started``, in configured order."""
        with self._lock:
            recent = {uri: reason for uri, (when, reason) in self._last_failure.items() if when >= started}
        described = [f"{uri}: {recent[uri]}" for uri in self.config.uris if uri in recent]
        if described:
            return ": " + "; ".join(described)
        return f" against {', '.join(map(str, self.config.uris))}: {_describe(last_error, self.config)}"

    def _backoff(self, retry: int) -> float:
        return self._backoff_ceiling(retry) * (0.5 + self._jitter() / 2)

    def _backoff_ceiling(self, retry: int) -> float:
        return min(BACKOFF_CAP_SECONDS, self.config.retry_delay * (2**retry))


def _describe(error: BaseException | None, config: ClientConfig) -> str:
    if error is None:
        return "no attempt was made"
    if _timed_out(error):
        return (
            f"no answer within {config.socket_timeout:g}s (hive.metastore.client.socket.timeout): "
            f"{error or type(error).__name__}"
        )
    dropped = isinstance(error, EOFError) or (
        isinstance(error, TTransportException) and error.type == TTransportException.END_OF_FILE
    )
    if dropped and config.kerberos is None:
        return (
            f"{error or type(error).__name__} (the metastore dropped the connection: it may require Kerberos, "
            f"then set '{SASL_ENABLED}'='true' and a principal, or it stopped or restarted)"
        )
    return str(error) or type(error).__name__


def _timed_out(error: BaseException) -> bool:
    return isinstance(error, TimeoutError) or (isinstance(error, TTransportException) and error.type == TTransportException.TIMED_OUT)
