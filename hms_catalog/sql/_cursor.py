"""The token cursor shared by the statement parser and the expression parser.

It lives apart from ``parser`` so that the expression grammar (used inside statements, and on its own
through ``parse_expression``) can walk the same tokens and build the same errors without a circular import.
"""

from __future__ import annotations

from hms_catalog.errors import SqlSyntaxError
from hms_catalog.sql._source import StatementSource, syntax_error
from hms_catalog.sql.tokens import Token, TokenType

__all__ = ["NAMES", "Cursor", "alternatives", "dotted_name"]

NAMES = (TokenType.IDENTIFIER, TokenType.QUOTED_IDENTIFIER)


def alternatives(options: list[str]) -> str:
    unique = list(dict.fromkeys(options))
    return unique[0] if len(unique) == 1 else f"{', '.join(unique[:-1])} or {unique[-1]}"


class Cursor:
    """Walks the tokens of one statement and builds errors positioned in the original input.

    Optional clauses that were looked for and not found at the current token are remembered, so the next
    error there can list them too ("expected LIKE or end of statement").
    """

    def __init__(self, tokens: list[Token], source: StatementSource, context: StatementSource) -> None:
        self.tokens = tokens
        self.text = source.text
        self.context = context
        self.index = 0
        self.nesting = 0  # parentheses and NOTs open around the current token (the expression parser's)
        self._tried: list[str] = []

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.index + ahead, len(self.tokens) - 1)]

    def previous(self) -> Token | None:
        """The last token consumed, or None at the start."""
        return self.tokens[self.index - 1] if self.index else None

    def advance(self) -> Token:
        token = self.peek()
        if token.type is not TokenType.EOF:
            self.index += 1
            self._tried.clear()
        return token

    def tried(self, *options: str) -> None:
        """Remember options looked for (without a ``match_*`` call) at the current token."""
        self._tried.extend(options)

    def match_keyword(self, word: str) -> bool:
        if self.peek().is_keyword(word):
            self.advance()
            return True
        self._tried.append(word)
        return False

    def expect_keyword(self, word: str) -> Token:
        if self.peek().is_keyword(word):
            return self.advance()
        raise self.expected(word)

    def match_symbol(self, kind: TokenType) -> bool:
        if self.peek().type is kind:
            self.advance()
            return True
        self._tried.append(kind.value)
        return False

    def expect_symbol(self, kind: TokenType) -> Token:
        if self.peek().type is kind:
            return self.advance()
        raise self.expected(kind.value)

    def expect_string(self, what: str) -> str:
        if self.peek().type is TokenType.STRING:
            return self.advance().value
        raise self.expected(what)

    def expected(self, what: str, *, after: str = "") -> SqlSyntaxError:
        where = f" after {after}" if after else ""
        return self.error(f"expected {alternatives([*self._tried, what])}{where}", self.peek())

    def error(self, message: str, token: Token, shown: str | None = None) -> SqlSyntaxError:
        return syntax_error(message, self.context, token.line, token.column, token.display if shown is None else shown)


def dotted_name(cur: Cursor, what: str, most: int, shape: str) -> list[str]:
    """Read ``a.b.c`` (parts bare or backquoted) and refuse more than ``most`` parts."""
    first = cur.peek()
    if first.type not in NAMES:
        raise cur.expected(what)
    parts = [cur.advance().value]
    last = first
    while cur.peek().type is TokenType.DOT:
        cur.advance()
        if cur.peek().type not in NAMES:
            raise cur.expected("identifier", after=f"'.' in {what}")
        last = cur.advance()
        parts.append(last.value)
    if len(parts) > most:
        written = cur.text[first.offset : last.end]
        problem = "must be a single identifier" if most == 1 else f"has too many parts; expected {shape}"
        raise cur.error(f"{what} {problem}", first, written)
    return parts
