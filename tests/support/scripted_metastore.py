"""A scripted thrift client and a pool over it: what a metastore of a given release answers, without one.

The client knows only the methods it is given; any other is refused with UNKNOWN_METHOD, as Hive refuses
a method it lacks, so the pool's fallback between call forms can be exercised for any release.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from thrift.Thrift import TApplicationException

from hms_catalog.client import HmsClientPool
from hms_catalog.client._transport import Connection
from hms_catalog.properties import ClientConfig, MetastoreUri, parse_uris

__all__ = ["URI", "ScriptedMetastore", "scripted_pool"]

URI = "thrift://old:9083"


class ScriptedMetastore:
    """A thrift client that knows only ``answers`` (method -> function); any other method is refused as Hive refuses it."""

    def __init__(self, answers: dict[str, Callable[..., Any]]) -> None:
        self.answers = answers
        self.sent: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, name: str) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            self.sent.append((name, args))
            if name not in self.answers:
                raise TApplicationException(TApplicationException.UNKNOWN_METHOD, f"Invalid method name: '{name}'")
            return self.answers[name](*args)

        return call


class _Transport:
    def close(self) -> None:
        pass


def scripted_pool(metastore: ScriptedMetastore, **config: Any) -> tuple[HmsClientPool, list[MetastoreUri]]:
    """A pool whose every connection is ``metastore``, and the URIs it opened connections to."""
    opened: list[MetastoreUri] = []

    def connect(uri: MetastoreUri, **_: float) -> Connection:
        opened.append(uri)
        return Connection(uri, _Transport(), metastore)  # type: ignore[arg-type]

    settings: dict[str, Any] = {"uris": parse_uris(URI), "retry_delay": 0.0, **config}
    return HmsClientPool(ClientConfig(**settings), connect=connect, sleep=lambda _: None), opened
