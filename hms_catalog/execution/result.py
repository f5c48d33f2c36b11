"""What running a statement gives back: columns and rows (empty for DDL) and a short message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Result"]


@dataclass(frozen=True)
class Result:
    """A statement's answer. Values in ``rows`` are plain Python (str, int, float, bool, None)."""

    columns: tuple[str, ...] = ()
    rows: tuple[tuple[Any, ...], ...] = ()
    message: str = ""

    @classmethod
    def table(cls, columns: tuple[str, ...] | list[str], rows: list[tuple[Any, ...]] | list[list[Any]],
              message: str = "") -> Result:
        """Rows under ``columns``; ``message`` says what the rows alone cannot (shown under them)."""
        return cls(columns=tuple(columns), rows=tuple(tuple(row) for row in rows), message=message)

    @classmethod
    def done(cls, message: str) -> Result:
        return cls(message=message)

    def as_dicts(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row)) for row in self.rows]

    def column(self, name: str) -> list[Any]:
        index = self.columns.index(name)
        return [row[index] for row in self.rows]


