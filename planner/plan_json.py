"""A split plan's JSON text written and read a piece at a time, the same text :meth:`SplitPlan.dumps` writes.

The service's plan route, the CLI and the remote client deal in plans of half a million splits. Written
whole, such a plan is a 170 MB string on top of a dict per split; read whole, the same again. Here the text
is written as the splits come (:func:`plan_json_pieces`: the plan's fields before ``splits``, then the splits,
then the summary and the rest), byte for byte what ``dumps`` writes, so every reader of plans (the Spark
connector's Jackson, ``SplitPlan.loads``) reads it unchanged; and :class:`PlanReader` reads it as it arrives,
keeping the splits it has parsed and never the text.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from planner.plan import Split, SplitPlan
from planner.streaming import PlanStream

if TYPE_CHECKING:
    from hms_catalog.remote import CatalogServiceClient

__all__ = ["PlanReader", "fetch_plan", "plan_json_pieces", "SPLITS_PER_PIECE"]

SPLITS_PER_PIECE = 2000  # about 400 KB of text: few enough writes, small enough to forget at once
_SEPARATORS = (",", ":")
_WHITESPACE = " \t\n\r"


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=_SEPARATORS)


def plan_json_pieces(stream: PlanStream, *, splits_per_piece: int = SPLITS_PER_PIECE) -> Iterator[str]:
    """The JSON text of ``stream``'s plan in pieces. The first piece comes once the first ``splits_per_piece``
    splits are cut (or the plan is done), so a failure of the first batch of partitions comes before any
    text; the last piece carries the summary."""
    head = stream.header.to_json()
    keys = list(head)
    at = keys.index("splits")
    pieces = [_dumps({key: head[key] for key in keys[:at]})[:-1] + ',"splits":[']
    for count, split in enumerate(stream, 1):
        pieces.append(("," if count > 1 else "") + _dumps(split.to_json()))
        if count % splits_per_piece == 0:
            yield "".join(pieces)
            pieces = []
    done = stream.finished().to_json()
    pieces.append("]," + _dumps({key: done[key] for key in keys[at + 1 :]})[1:])
    yield "".join(pieces)


def fetch_plan(client: CatalogServiceClient, catalog: str, database: str, table: str, where: str | None = None,
               columns: list[str] | None = None) -> SplitPlan:
    """The service's plan of a table, read as the service streams it: the splits are parsed as they arrive,
    and the text is never held whole (``SplitPlan.loads(client.plan(...))`` holds it, twice over)."""
    reader = PlanReader()
    client.plan(catalog, database, table, where, columns, into=reader.feed)
    return reader.plan()


class PlanReader:
    """Reads a plan's JSON text as it arrives (:meth:`feed` each piece, then :meth:`plan`): the fields other
    than ``splits`` are parsed when each is whole, each split as soon as it is, and the text is dropped as it
    is parsed. It reads any plan text ``dumps`` writes, in whatever pieces it was cut into."""

    def __init__(self) -> None:
        self._decoder = json.JSONDecoder()
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._text = ""
        self._state = "start"  # start, key, value, splits, done
        self._key = ""
        self._fields: dict[str, Any] = {}
        self._splits: list[Split] = []

    def feed(self, piece: bytes | str) -> None:
        self._text += piece if isinstance(piece, str) else self._utf8.decode(piece)
        self._text = self._text[self._advance(self._text):]

    def plan(self) -> SplitPlan:
        """The plan read; a ValueError when the text ended before the plan did (a stream cut short)."""
        self.feed(self._utf8.decode(b"", final=True))
        if self._state != "done" or self._text.strip(_WHITESPACE):
            raise ValueError(f"the split plan's text ended early or has more after it (read {len(self._splits)} splits)")
        plan = SplitPlan.from_json({**self._fields, "splits": []})
        return replace(plan, splits=tuple(self._splits))

    def _advance(self, text: str) -> int:
        """Parses what is whole in ``text``; the index of the first character not parsed."""
        at = 0
        while True:
            at = _skip(text, at)
            if at >= len(text) or self._state == "done":
                return at
            char = text[at]
            if self._state == "start":
                if char != "{":
                    raise ValueError(f"a split plan's text starts with '{{', not {char!r}")
                at, self._state = at + 1, "key"
            elif self._state == "key":
                if char in ",}":
                    at += 1
                    if char == "}":
                        self._state = "done"
                    continue
                parsed = self._value(text, at)
                if parsed is None:
                    return at
                key, after = parsed
                after = _skip(text, after)
                if after + 1 >= len(text):  # the colon, and the character after it (the array's bracket)
                    return at
                if text[after] != ":":
                    raise ValueError(f"a split plan's text has {text[after]!r} after the key {key!r}")
                after = _skip(text, after + 1)
                if after >= len(text):
                    return at
                self._key = str(key)
                if self._key == "splits":
                    if text[after] != "[":
                        raise ValueError("a split plan's splits are not a list")
                    at, self._state = after + 1, "splits"
                else:
                    at, self._state = after, "value"
            elif self._state == "value":
                parsed = self._value(text, at)
                if parsed is None:
                    return at
                self._fields[self._key], at = parsed
                self._state = "key"
            else:  # splits
                if char in ",]":
                    at += 1
                    if char == "]":
                        self._state = "key"
                    continue
                parsed = self._value(text, at)
                if parsed is None:
                    return at
                value, at = parsed
                self._splits.append(Split.from_json(value))

    def _value(self, text: str, at: int) -> tuple[Any, int] | None:
        """The JSON value at ``at`` and the index after it, or None when it is not whole yet. A value must be
        followed by a character (a plan's every value is), so a number cut in two is not taken for a shorter one."""
        try:
            value, end = self._decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            return None
        return (value, end) if end < len(text) else None


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WHITESPACE:
        at += 1
    return at
