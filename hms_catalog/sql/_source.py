"""Where a piece of SQL sits in the input, and how an error points back into it.

A statement is tokenized and parsed on its own, yet the user typed it as part of a larger input (a script,
an interactive session).  Every position is therefore kept in the coordinates of that original input, and
errors quote the original line with a caret, so the message is useful without knowing how the input was
cut into statements.
"""

from __future__ import annotations

from dataclasses import dataclass

from hms_catalog.errors import SqlSyntaxError

__all__ = ["END_OF_INPUT", "StatementSource", "excerpt", "position", "shown", "syntax_error"]

END_OF_INPUT = "<end of input>"

# A whole multi-line string literal in an error message would drown the message; show its start only.
_MAX_SHOWN = 40


@dataclass(frozen=True)
class StatementSource:
    """A piece of input text and the 1-based line/column of its first character in the whole input."""

    text: str
    line: int = 1
    column: int = 1


def position(source: StatementSource, offset: int) -> tuple[int, int]:
    """The 1-based line/column in the whole input of ``source.text[offset]``.

    Code that reads ``source.text`` on its own (sqlglot, a regex) only knows offsets into that piece; this
    puts them back where the user typed them.
    """
    offset = max(0, min(offset, len(source.text)))
    newlines = source.text.count("\n", 0, offset)
    if not newlines:
        return source.line, source.column + offset
    return source.line + newlines, offset - source.text.rfind("\n", 0, offset)


def excerpt(context: StatementSource, line: int, column: int) -> str:
    """Return the input line holding ``line``/``column`` and a caret under that column.

    Tabs before the column are repeated in the caret line so the caret stays aligned in a terminal.
    An empty string means the position is not inside ``context`` (nothing honest to show).
    """
    lines = context.text.split("\n")
    index = line - context.line
    if not 0 <= index < len(lines):
        return ""
    text = lines[index].rstrip("\r")
    offset = max(0, column - (context.column if index == 0 else 1))
    pad = "".join("\t" if ch == "\t" else " " for ch in text[:offset])
    pad += " " * max(0, offset - len(text))
    return f"{text}\n{pad}^"


def shown(token_text: str) -> str:
    """Shorten a token for an error message: first line only, at most a few dozen characters."""
    first, newline, _ = token_text.partition("\n")
    if newline or len(first) > _MAX_SHOWN:
        return first[: _MAX_SHOWN - 3] + "..."
    return first


def syntax_error(message: str, context: StatementSource, line: int, column: int, token: str = "") -> SqlSyntaxError:
    """Build the error for ``message`` at ``line``/``column`` with an excerpt taken from ``context``."""
    return SqlSyntaxError(
        message,
        line=line,
        column=column,
        token=shown(token),
        excerpt=excerpt(context, line, column),
    )
