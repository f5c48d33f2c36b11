"""Queries (``SELECT``, ``WITH ... SELECT``): recognised by the DSL, checked by sqlglot, run by Spark.

A query is not this language, yet it is typed at the same prompt, so a mistake in one must be reported
the same way as a mistake in a catalog statement: a :class:`SqlSyntaxError` at the line and column of the
whole input, raised while parsing, before any engine starts.  sqlglot is the only code here that reads
query text, and every way it can fail on user text (``TokenError``, ``ParseError``, an ``IndexError`` or
``RecursionError`` from inside it) is turned into that one error right where it is called.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hms_catalog.errors import SqlSyntaxError
from hms_catalog.sql._source import (
    END_OF_INPUT,
    StatementSource,
    position,
    syntax_error,
)

if TYPE_CHECKING:
    from sqlglot import expressions as exp

__all__ = ["DIALECT", "is_query", "parse_query", "parse_spark_statement"]

# The engine that runs queries; sqlglot reads them as that engine will.
DIALECT = "spark"

# Blanks and comments may stand before a query, and any number of opening parentheses.  The repetition is
# possessive: a comment that never closes must not make the regex try every way of splitting the rest.
_BLANK = r"(?:\s|--[^\n]*|/\*.*?\*/)*+"
_QUERY_START = re.compile(rf"(?is){_BLANK}(?:\({_BLANK})*+(?:select|with)\b")

# sqlglot names tokens and node classes by their repr in messages; users know them by their text.
_TOKEN_REPR = re.compile(r"<Token token_type: TokenType\.(\w+), text: (.*?), line: \d+, col: \d+, start: \d+, end: \d+, comments: \[.*?\]>")
_CLASS_REPR = re.compile(r"<class 'sqlglot\.[\w.]*?(\w+)'>")
_TOKENIZER_WHERE = re.compile(r" from \d+:(\d+)$")


def is_query(text: str) -> bool:
    """Whether ``text`` is a query (Spark SQL) rather than a catalog statement."""
    return _QUERY_START.match(text) is not None


def parse_query(source: StatementSource | str, *, context: StatementSource | None = None) -> exp.Query:
    """Parse the one query in ``source`` as Spark will read it; every failure is a :class:`SqlSyntaxError`.

    Positions are in the coordinates of the whole input (``context``, or ``source`` itself).  Code that
    hands user text to sqlglot (the Spark query runner) calls this rather than sqlglot, so no sqlglot error
    reaches a user.
    """
    return _parse(source, context, queries_only=True)  # type: ignore[return-value]


def parse_spark_statement(source: StatementSource | str, *, context: StatementSource | None = None) -> exp.Expr:
    """Parse one Spark SQL statement of any kind (``spark.sql`` also takes DESCRIBE, CREATE, INSERT, ...);
    errors as :func:`parse_query`'s. Statements sqlglot does not model come back as a ``Command``."""
    return _parse(source, context, queries_only=False)


def _parse(source: StatementSource | str, context: StatementSource | None, *, queries_only: bool) -> exp.Expr:
    # Imported here: sqlglot is needed only once a query is typed, and catalog statements start faster.
    from sqlglot import errors
    from sqlglot import expressions as exp
    from sqlglot.dialects.dialect import Dialect

    if isinstance(source, str):
        source = StatementSource(source)
    context = context or source
    text = source.text
    dialect = Dialect.get_or_raise(DIALECT)
    try:
        tokens = dialect.tokenize(text)  # wraps whatever goes wrong inside it in a TokenError
    except errors.TokenError as e:
        message, offset = _tokenizer_failure(text, e)
        raise _error(message, source, context, offset) from e
    try:
        # A context as long as the text makes the error's start_context end exactly at the bad token.
        trees = dialect.parser(error_message_context=len(text) + 1).parse(tokens, text)
    except errors.ParseError as e:
        message, offset, shown = _parser_failure(text, e)
        raise _error(message, source, context, offset, shown) from e
    except RecursionError as e:
        raise _error("query nested too deeply to read", source, context, 0) from e
    except Exception as e:  # sqlglot's own bugs on odd input are still this input's fault
        raise _error(f"invalid query ({type(e).__name__}: {e})", source, context, 0) from e
    queries = [tree for tree in trees if tree is not None]
    if len(queries) > 1:
        raise _error("expected end of statement: one query per statement", source, context, _second_statement(tokens))
    if not queries:  # unreachable through is_query, but parse_query is callable on any text
        raise _error("expected a query", source, context, 0)
    tree = queries[0]
    if queries_only and not isinstance(tree, exp.Query):
        # Statements sqlglot does not model come back as a Command named by their first word.
        kind = str(tree.this if isinstance(tree, exp.Command) else tree.key).upper()
        offset = next((token.start for token in tokens if kind in (token.token_type.name, token.text.upper())), 0)
        raise _error(f"expected a query (SELECT ...), not {kind}", source, context, offset)
    return tree


def _error(message: str, source: StatementSource, context: StatementSource, offset: int, shown: str | None = None) -> SqlSyntaxError:
    """The error at ``offset`` into ``source.text``, naming ``shown`` or else the word that starts there."""
    line, column = position(source, offset)
    if shown is None:
        words = source.text[offset:].split(None, 1)
        shown = words[0] if words else END_OF_INPUT
    return syntax_error(message, context, line, column, shown)


def _parser_failure(text: str, error: Exception) -> tuple[str, int, str | None]:
    """Message, offset into ``text`` and token to name for a sqlglot ``ParseError``."""
    details = getattr(error, "errors", None) or [{}]
    detail = details[0]
    description = str(detail.get("description") or error)
    if "TokenType.SENTINEL" in description:  # the parser ran out of tokens: the problem is at the end
        offset, shown = len(text.rstrip()), END_OF_INPUT
    else:
        offset, shown = len(detail.get("start_context") or ""), str(detail.get("highlight") or "")
    description = _CLASS_REPR.sub(r"\1", _TOKEN_REPR.sub(lambda m: f"'{m.group(2)}'", description))
    description = description.replace("'SENTINEL'", END_OF_INPUT)
    return f"invalid query: {description}", offset, shown


def _tokenizer_failure(text: str, error: Exception) -> tuple[str, int]:
    """Message and offset into ``text`` for a sqlglot ``TokenError``.

    sqlglot quotes a window of text around where it stopped, not the construct that caused it, so an
    unterminated string or comment is found again here from its opening; failing that, the cause's own
    "from line:offset" is used.
    """
    unterminated = _unterminated(text)
    if unterminated is not None:
        return unterminated
    cause = error.__cause__ if error.__cause__ is not None else error
    where = _TOKENIZER_WHERE.search(str(cause))
    if where is not None:
        return f"invalid query: {_TOKENIZER_WHERE.sub('', str(cause))}", int(where.group(1))
    return f"invalid query: cannot read its tokens ({cause})", 0


def _unterminated(text: str) -> tuple[str, int] | None:
    """The first string, quoted identifier or comment that never ends, read with Spark's rules.

    Only consulted once sqlglot has failed, so an approximation here cannot reject a good query.
    """
    i, size = 0, len(text)
    while i < size:
        if text.startswith("--", i):
            newline = text.find("\n", i)
            if newline < 0:
                return None
            i = newline + 1
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while depth and j < size:  # Spark's comments nest
                if text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                elif text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                else:
                    j += 1
            if depth:
                return "unterminated comment", i
            i = j
        elif text[i] in "'\"":
            raw = i > 0 and text[i - 1] in "rR" and not (i > 1 and (text[i - 2].isalnum() or text[i - 2] == "_"))
            j = i + 1
            while j < size and text[j] != text[i]:
                j += 2 if text[j] == "\\" and not raw else 1
            if j >= size:
                return "unterminated string literal", i - raw
            i = j + 1
        elif text[i] == "`":
            close = text.find("`", i + 1)
            if close < 0:
                return "unterminated quoted identifier", i
            i = close + 1
        else:
            i += 1
    return None


def _second_statement(tokens: Sequence[Any]) -> int:
    """Offset of the first token after a ``;`` that follows a statement."""
    seen_semicolon = False
    for token in tokens:
        if token.token_type.name == "SEMICOLON":
            seen_semicolon = True
        elif seen_semicolon:
            return int(token.start)
    return 0
