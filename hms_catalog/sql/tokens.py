"""Cut catalog DSL text into tokens that remember where they came from.

Keywords are not a token type of their own: a bare word is an identifier, and the parser decides from
context whether it reads it as a keyword.  That keeps the word list in one place (the parser's statement
table) and lets users name a table ``comment`` or ``tables`` without quoting it.

A number is digits with an optional fraction (``1.5``); its sign is a token of its own (``-``), so the
parser decides where a negative number may stand, the same way it decides about keywords.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from hms_catalog.errors import SqlSyntaxError
from hms_catalog.sql._source import END_OF_INPUT, StatementSource, syntax_error

__all__ = ["Token", "TokenType", "tokenize"]


class TokenType(Enum):
    IDENTIFIER = "identifier"
    QUOTED_IDENTIFIER = "quoted identifier"
    STRING = "string"
    NUMBER = "number"
    DOT = "'.'"
    COMMA = "','"
    LPAREN = "'('"
    RPAREN = "')'"
    EQ = "'='"
    NE = "'<>'"  # also written '!='
    LT = "'<'"
    LE = "'<='"
    GT = "'>'"
    GE = "'>='"
    MINUS = "'-'"
    COLON = "':'"  # only inside column types: struct<a:int>
    SEMICOLON = "';'"
    EOF = END_OF_INPUT


_PUNCTUATION = {
    ".": TokenType.DOT,
    ",": TokenType.COMMA,
    "(": TokenType.LPAREN,
    ")": TokenType.RPAREN,
    "=": TokenType.EQ,
    "<": TokenType.LT,
    ">": TokenType.GT,
    "-": TokenType.MINUS,  # '--' starts a comment, which is skipped before we get here
    ":": TokenType.COLON,
    ";": TokenType.SEMICOLON,
}

# Tried before single characters, so '<=' is one token and not '<' then '='.
_OPERATORS = {"<=": TokenType.LE, "<>": TokenType.NE, "!=": TokenType.NE, ">=": TokenType.GE}

# Unknown escapes keep their backslash, so Windows paths and regexes survive being typed unescaped.
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "'": "'", '"': '"'}

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_WORD_TAIL = re.compile(r"[A-Za-z0-9_$]+")


@dataclass(frozen=True)
class Token:
    """One token: its decoded ``value``, the ``raw`` source text, and where that text starts.

    ``line``/``column`` are 1-based positions in the original input; ``offset`` is the index into the
    text that was tokenized, so callers can slice the source between two tokens.
    """

    type: TokenType
    value: str
    raw: str
    line: int
    column: int
    offset: int

    @property
    def end(self) -> int:
        """Index just past the token in the tokenized text."""
        return self.offset + len(self.raw)

    @property
    def display(self) -> str:
        """How the token is named in error messages."""
        return END_OF_INPUT if self.type is TokenType.EOF else self.raw

    def is_keyword(self, word: str) -> bool:
        """True for a bare word equal to ``word`` (upper case) ignoring case; quoting makes a name."""
        return self.type is TokenType.IDENTIFIER and self.value.upper() == word


def tokenize(
    text: str,
    *,
    line: int = 1,
    column: int = 1,
    context: StatementSource | None = None,
) -> list[Token]:
    """Return the tokens of ``text``, ending with one EOF token.

    ``line``/``column`` say where ``text`` starts in the original input; ``context`` is the input to quote
    in error excerpts (``text`` itself when omitted).  Raises :class:`SqlSyntaxError` on an unterminated
    string, quoted identifier or comment (at its start) and on a character no token can begin with.
    """
    return _Lexer(text, line, column, context or StatementSource(text, line, column)).run()


class _Lexer:
    """Single pass over the text; ``line``/``column`` always describe ``text[pos]``."""

    def __init__(self, text: str, line: int, column: int, context: StatementSource) -> None:
        self.text = text
        self.context = context
        self.pos = 0
        self.line = line
        self.column = column
        self.tokens: list[Token] = []
        self.end = (line, column, 0)  # where the EOF token goes: just after the last token

    def run(self) -> list[Token]:
        text = self.text
        while True:
            self._skip_blanks()
            if self.pos >= len(text):
                break
            ch = text[self.pos]
            if (pair := text[self.pos : self.pos + 2]) in _OPERATORS:
                self._emit(_OPERATORS[pair], pair, self.pos + 2)
            elif ch in _PUNCTUATION:
                self._emit(_PUNCTUATION[ch], ch, self.pos + 1)
            elif ch in "'\"":
                self._string(ch)
            elif ch == "`":
                self._quoted_identifier()
            elif word := _WORD.match(text, self.pos):
                self._emit(TokenType.IDENTIFIER, word.group(), word.end())
            elif number := _NUMBER.match(text, self.pos):
                self._number(number.end())
            else:
                raise self._error("unexpected character", ch)
        line, column, offset = self.end
        self.tokens.append(Token(TokenType.EOF, "", "", line, column, offset))
        return self.tokens

    def _skip_blanks(self) -> None:
        text = self.text
        while self.pos < len(text):
            if text[self.pos].isspace():
                self._move_to(self.pos + 1)
            elif text.startswith("--", self.pos):
                newline = text.find("\n", self.pos)
                self._move_to(len(text) if newline < 0 else newline)
            elif text.startswith("/*", self.pos):
                close = text.find("*/", self.pos + 2)
                if close < 0:
                    raise self._error("unterminated comment", "/*")
                self._move_to(close + 2)
            else:
                return

    def _string(self, quote: str) -> None:
        text = self.text
        i = self.pos + 1
        parts: list[str] = []
        while True:
            if i >= len(text):
                raise self._error("unterminated string literal", self._rest_of_line())
            ch = text[i]
            if ch == "\\" and i + 1 < len(text):
                parts.append(_ESCAPES.get(text[i + 1], "\\" + text[i + 1]))
                i += 2
            elif ch == "\\":
                i += 1  # a lone trailing backslash: the string is unterminated anyway
            elif ch == quote and text.startswith(quote, i + 1):
                parts.append(quote)
                i += 2
            elif ch == quote:
                self._emit(TokenType.STRING, "".join(parts), i + 1)
                return
            else:
                parts.append(ch)
                i += 1

    def _quoted_identifier(self) -> None:
        text = self.text
        i = self.pos + 1
        parts: list[str] = []
        while True:
            close = text.find("`", i)
            if close < 0:
                raise self._error("unterminated quoted identifier", self._rest_of_line())
            parts.append(text[i:close])
            if text.startswith("`", close + 1):
                parts.append("`")
                i = close + 2
                continue
            name = "".join(parts)
            if not name:
                raise self._error("empty quoted identifier", "``")
            self._emit(TokenType.QUOTED_IDENTIFIER, name, close + 1)
            return

    def _number(self, end: int) -> None:
        tail = _WORD_TAIL.match(self.text, end)
        if tail:
            written = self.text[self.pos : tail.end()]
            if "." in self.text[self.pos : end]:
                raise self._error("malformed number", written)
            raise self._error("identifier cannot start with a digit; quote it with backquotes", written)
        self._emit(TokenType.NUMBER, self.text[self.pos : end], end)

    def _emit(self, kind: TokenType, value: str, end: int) -> None:
        raw = self.text[self.pos : end]
        self.tokens.append(Token(kind, value, raw, self.line, self.column, self.pos))
        self._move_to(end)
        self.end = (self.line, self.column, self.pos)

    def _move_to(self, stop: int) -> None:
        newlines = self.text.count("\n", self.pos, stop)
        if newlines:
            self.line += newlines
            self.column = stop - self.text.rfind("\n", self.pos, stop)
        else:
            self.column += stop - self.pos
        self.pos = stop

    def _rest_of_line(self) -> str:
        newline = self.text.find("\n", self.pos)
        return self.text[self.pos : len(self.text) if newline < 0 else newline]

    def _error(self, message: str, token: str) -> SqlSyntaxError:
        return syntax_error(message, self.context, self.line, self.column, token)
