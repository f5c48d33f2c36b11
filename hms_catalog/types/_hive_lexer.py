"""Tokenizer for Hive type strings.

Kept apart from the parser so that quoting rules (backquoted names, comment literals and their
escapes) live in one place and the parser only ever sees whole tokens with their offsets, which is
what lets every parse error name the exact position where the input went wrong.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from hms_catalog.errors import SchemaError

PUNCTUATION = frozenset("<>(),:")

# Hive's unescapeSQLString: these escapes stand for a character; '%' and '_' keep their backslash
# (they are LIKE wildcards), and any other escaped character stands for itself.
_ESCAPES = {
    "0": "\0",
    "b": "\b",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "Z": "\x1a",
    "%": "\\%",
    "_": "\\_",
}


class Kind(enum.Enum):
    WORD = "word"  # a run of letters, digits and underscores: type names, field names, numbers
    NAME = "name"  # a backquoted field name
    STRING = "string"  # a quoted comment literal
    PUNCT = "punct"  # one of < > ( ) , :
    OTHER = "other"  # any other single character; only ever valid inside an unquoted field name
    END = "end"


@dataclass(frozen=True)
class Token:
    kind: Kind
    text: str  # the source text of the token, as written
    value: str  # the decoded value: words as written, names and strings without quotes or escapes
    pos: int  # 0-based offset of the first character

    @property
    def end(self) -> int:
        return self.pos + len(self.text)

    def describe(self) -> str:
        """How the token is named in an error message."""
        return "end of type string" if self.kind is Kind.END else f"'{self.text}'"


def is_word_char(ch: str) -> bool:
    """Characters of an unquoted identifier; shared with the renderer so quoting matches parsing."""
    return ch.isalnum() or ch == "_"


def tokenize(text: str, column: str | None = None) -> list[Token]:
    """Split ``text`` into tokens, ending with an END token at ``len(text)``."""
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif is_word_char(ch):
            j = i + 1
            while j < n and is_word_char(text[j]):
                j += 1
            tokens.append(Token(Kind.WORD, text[i:j], text[i:j], i))
            i = j
        elif ch == "`":
            j, value = _backquoted(text, i, column)
            tokens.append(Token(Kind.NAME, text[i:j], value, i))
            i = j
        elif ch in "'\"":
            j, value = _string(text, i, column)
            tokens.append(Token(Kind.STRING, text[i:j], value, i))
            i = j
        elif ch in PUNCTUATION:
            tokens.append(Token(Kind.PUNCT, ch, ch, i))
            i += 1
        else:
            tokens.append(Token(Kind.OTHER, ch, ch, i))
            i += 1
    tokens.append(Token(Kind.END, "", "", n))
    return tokens


def _backquoted(text: str, start: int, column: str | None) -> tuple[int, str]:
    """Read a backquoted name; a doubled backquote stands for one backquote."""
    parts: list[str] = []
    i = start + 1
    while True:
        close = text.find("`", i)
        if close < 0:
            raise SchemaError("unterminated backquoted name", column=column, position=start)
        parts.append(text[i:close])
        if text.startswith("``", close):
            parts.append("`")
            i = close + 2
        else:
            return close + 1, "".join(parts)


def _string(text: str, start: int, column: str | None) -> tuple[int, str]:
    """Read a quoted literal with Hive's backslash escapes."""
    quote = text[start]
    parts: list[str] = []
    i, n = start + 1, len(text)
    while i < n:
        ch = text[i]
        if ch == quote:
            return i + 1, "".join(parts)
        if ch == "\\" and i + 1 < n:
            escaped = text[i + 1]
            parts.append(_ESCAPES.get(escaped, escaped))
            i += 2
        else:
            parts.append(ch)
            i += 1
    raise SchemaError("unterminated string literal", column=column, position=start)


def quote_string(value: str) -> str:
    """Render ``value`` as a single-quoted literal that :func:`tokenize` reads back unchanged."""
    escaped = (
        value.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    )
    return f"'{escaped}'"


def quote_name(name: str) -> str:
    """Backquote a field name only when it is not a plain identifier."""
    if name and all(is_word_char(ch) for ch in name):
        return name
    return "`" + name.replace("`", "``") + "`"
