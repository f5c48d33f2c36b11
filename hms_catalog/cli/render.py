"""Output renderers: the same results as aligned text tables for people or JSON lines for programs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Protocol

from hms_catalog.execution.result import Result

__all__ = ["Renderer", "TextRenderer", "JsonRenderer", "renderer_for", "FORMATS"]

FORMATS = ("text", "json")
_ROWS_PER_PIECE = 1000


class Renderer(Protocol):
    def result(self, statement: str, result: Result) -> str:
        """What goes to stdout for a statement that succeeded."""

    def pieces(self, statement: str, result: Result) -> Iterator[str]:
        """The same text in pieces, written as they come: a streamed result's rows are not all held."""

    def error(self, statement: str, message: str) -> str | None:
        """What goes to stdout for a statement that failed (None: nothing; the error goes to stderr)."""


def _text_value(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class TextRenderer:
    """MySQL-style boxed tables; multi-line cells (SHOW CREATE CATALOG) keep their lines."""

    def pieces(self, statement: str, result: Result) -> Iterator[str]:
        """One piece: the table's columns are as wide as their widest cell, so every row is needed first."""
        yield self.result(statement, result)

    def result(self, statement: str, result: Result) -> str:
        result = result.materialized()
        if not result.columns:
            return f"OK: {result.message}" if result.message else "OK"
        cells = [[_text_value(v) for v in row] for row in result.rows]
        widths = [len(c) for c in result.columns]
        for row in cells:
            for index, cell in enumerate(row):
                widths[index] = max(widths[index], *(len(line) for line in cell.split("\n")))
        rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
        lines = [rule, self._line(result.columns, widths), rule]
        for row in cells:
            parts = [cell.split("\n") for cell in row]
            for depth in range(max(len(p) for p in parts)):
                lines.append(self._line([p[depth] if depth < len(p) else "" for p in parts], widths))
        lines.append(rule)
        count = len(result.rows)
        lines.append(f"{count} row{'s' if count != 1 else ''} in set")
        if result.message:
            lines.append(result.message)
        return "\n".join(lines)

    def error(self, statement: str, message: str) -> str | None:
        return None

    @staticmethod
    def _line(values: list[str] | tuple[str, ...], widths: list[int]) -> str:
        return "| " + " | ".join(value.ljust(width) for value, width in zip(values, widths)) + " |"


def _json_value(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    return value


class JsonRenderer:
    """One JSON object per statement, on one line."""

    def result(self, statement: str, result: Result) -> str:
        return "".join(self.pieces(statement, result))

    def pieces(self, statement: str, result: Result) -> Iterator[str]:
        """The line ``json.dumps`` would write of the whole answer, a row at a time (a thousand to a piece)."""
        head = json.dumps({"statement": statement, "columns": list(result.columns)}, ensure_ascii=False)
        batch = [head[:-1] + ', "rows": [']
        for count, row in enumerate(result.iter_rows()):
            batch.append((", " if count else "") + json.dumps([_json_value(v) for v in row], ensure_ascii=False))
            if len(batch) >= _ROWS_PER_PIECE:
                yield "".join(batch)
                batch = []
        batch.append("]")
        if result.message and result.columns:
            batch.append(", " + json.dumps({"message": result.message}, ensure_ascii=False)[1:-1])
        batch.append("}")
        yield "".join(batch)

    def error(self, statement: str, message: str) -> str | None:
        return json.dumps({"statement": statement, "error": message}, ensure_ascii=False)


def renderer_for(name: str) -> Renderer:
    return JsonRenderer() if name == "json" else TextRenderer()
