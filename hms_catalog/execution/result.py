"""What running a statement gives back: columns and rows (empty for DDL) and a short message."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["Result"]


@dataclass(frozen=True)
class Result:
    """A statement's answer. Values in ``rows`` are plain Python (str, int, float, bool, None)."""

    columns: tuple[str, ...] = ()
    rows: tuple[tuple[Any, ...], ...] = ()
    message: str = ""
    # Rows still to come, read once (:meth:`streamed`): the rows of a plan of half a million splits are written
    # as they are cut instead of held. Only a session asked to (``Session.stream_rows``) answers so.
    stream: Iterator[tuple[Any, ...]] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def table(cls, columns: tuple[str, ...] | list[str], rows: list[tuple[Any, ...]] | list[list[Any]],
              message: str = "") -> Result:
        """Rows under ``columns``; ``message`` says what the rows alone cannot (shown under them)."""
        return cls(columns=tuple(columns), rows=tuple(tuple(row) for row in rows), message=message)

    @classmethod
    def streamed(cls, columns: tuple[str, ...] | list[str], rows: Iterator[tuple[Any, ...]]) -> Result:
        """Rows under ``columns`` that come as they are made, to be read once (:meth:`iter_rows`)."""
        return cls(columns=tuple(columns), stream=rows)

    def iter_rows(self) -> Iterator[tuple[Any, ...]]:
        """The rows, the streamed ones as they come (once)."""
        return self.stream if self.stream is not None else iter(self.rows)

    def materialized(self) -> Result:
        """This result with every row held (a text table must see them all to size its columns)."""
        if self.stream is None:
            return self
        return replace(self, rows=tuple(tuple(row) for row in self.stream), stream=None)

    @classmethod
    def done(cls, message: str) -> Result:
        return cls(message=message)

    def as_dicts(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row)) for row in self.rows]

    def column(self, name: str) -> list[Any]:
        index = self.columns.index(name)
        return [row[index] for row in self.rows]


