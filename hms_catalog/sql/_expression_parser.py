"""Recursive descent over the expression grammar, on the statement parser's cursor.

One function per precedence level, weakest first::

    or        := and (OR and)*
    and       := not (AND not)*
    not       := NOT not | predicate
    predicate := primary [op primary | [NOT] IN (primary, ...) | IS [NOT] NULL | [NOT] BETWEEN primary AND primary]
    primary   := literal | column | ( or )

Operands of a predicate are primaries, so ``a = b = c`` and ``a = NOT b`` are errors rather than
surprises; parentheses lift any expression to a primary.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from decimal import Decimal

from hms_catalog.errors import SqlSyntaxError
from hms_catalog.sql._cursor import NAMES, Cursor, dotted_name
from hms_catalog.sql.expressions import (
    RESERVED_WORDS,
    And,
    ColumnRef,
    Comparison,
    Expression,
    InList,
    IsNull,
    Literal,
    Not,
    Or,
)
from hms_catalog.sql.tokens import Token, TokenType

__all__ = ["expression"]

_COMPARISONS = {
    TokenType.EQ: "=",
    TokenType.NE: "<>",
    TokenType.LT: "<",
    TokenType.LE: "<=",
    TokenType.GT: ">",
    TokenType.GE: ">=",
}

_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_TIMESTAMP = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?")


def expression(cur: Cursor) -> Expression:
    """Parse one expression (the OR level) starting at the cursor."""
    left = _and(cur)
    while cur.match_keyword("OR"):
        left = Or(left, _and(cur))
    return left


def _and(cur: Cursor) -> Expression:
    left = _not(cur)
    while cur.match_keyword("AND"):
        left = And(left, _not(cur))
    return left


def _not(cur: Cursor) -> Expression:
    # Peeked, not matched: a missing NOT is no alternative worth listing in "expected ..." messages.
    if cur.peek().is_keyword("NOT"):
        cur.advance()
        return Not(_not(cur))
    return _predicate(cur)


def _predicate(cur: Cursor) -> Expression:
    left = _primary(cur)
    token = cur.peek()
    if token.type in _COMPARISONS:
        cur.advance()
        _refuse_glued_operator(cur, token)
        return Comparison(_COMPARISONS[token.type], left, _primary(cur))
    negated = token.is_keyword("NOT")
    if negated:
        cur.advance()
        token = cur.peek()
        if not (token.is_keyword("IN") or token.is_keyword("BETWEEN")):
            raise cur.error("expected IN or BETWEEN after NOT", token)
    if token.is_keyword("IN"):
        cur.advance()
        return InList(left, _in_values(cur), negated)
    if token.is_keyword("BETWEEN"):
        cur.advance()
        low = _primary(cur)
        if not cur.peek().is_keyword("AND"):
            raise cur.error("expected AND between the bounds of BETWEEN", cur.peek())
        cur.advance()
        between = And(Comparison(">=", left, low), Comparison("<=", left, _primary(cur)))
        return Not(between) if negated else between
    if token.is_keyword("IS"):
        cur.advance()
        negated = cur.peek().is_keyword("NOT")
        if negated:
            cur.advance()
        if not cur.peek().is_keyword("NULL"):
            raise cur.error(f"expected NULL after IS{' NOT' if negated else ''}", cur.peek())
        cur.advance()
        return IsNull(left, negated)
    cur.tried("comparison operator", "IN", "IS", "BETWEEN")
    return left


def _refuse_glued_operator(cur: Cursor, first: Token) -> None:
    """Name ``==``, ``=>``, ``<<`` ... as one unknown operator instead of complaining about its second half."""
    last, ahead = first, 0
    while (glued := cur.peek(ahead)).type in _COMPARISONS and glued.offset == last.end:
        last, ahead = glued, ahead + 1
    if ahead:
        operator = cur.text[first.offset : last.end]
        raise cur.error(f"unknown operator '{operator}'", first, operator)


def _in_values(cur: Cursor) -> tuple[Expression, ...]:
    if cur.peek().type is not TokenType.LPAREN:
        raise cur.error("expected '(' after IN", cur.peek())
    cur.advance()
    values = [_primary(cur)]
    while cur.peek().type is TokenType.COMMA:
        cur.advance()
        values.append(_primary(cur))
    if cur.peek().type is not TokenType.RPAREN:
        raise cur.error("expected ')' to close IN list", cur.peek())
    cur.advance()
    return tuple(values)


def _primary(cur: Cursor) -> Expression:
    token = cur.peek()
    kind = token.type
    if kind is TokenType.STRING:
        return Literal(cur.advance().value)
    if kind is TokenType.NUMBER:
        return Literal(_number(cur.advance()))
    if kind is TokenType.MINUS:
        cur.advance()
        if cur.peek().type is not TokenType.NUMBER:
            raise cur.error("expected a number after '-'", cur.peek())
        value = _number(cur.advance())
        # copy_negate is exact; unary minus would round a long Decimal to the context precision.
        return Literal(value.copy_negate() if isinstance(value, Decimal) else -value)
    if kind is TokenType.LPAREN:
        cur.advance()
        inner = expression(cur)
        cur.expect_symbol(TokenType.RPAREN)
        return inner
    if kind is TokenType.IDENTIFIER:
        word = token.value.upper()
        if word in _CONSTANTS:
            cur.advance()
            return Literal(_CONSTANTS[word])
        if word in _TYPED and cur.peek(1).type is TokenType.STRING:
            cur.advance()
            return Literal(_TYPED[word](cur, cur.advance()))
        if word in RESERVED_WORDS:
            raise _no_expression(cur)
    if kind in NAMES:
        return ColumnRef(dotted_name(cur, "column name", 1, "column")[0])
    raise _no_expression(cur)


def _no_expression(cur: Cursor) -> SqlSyntaxError:
    previous = cur.previous()
    if previous is None:
        return cur.expected("an expression")
    after = previous.value.upper() if previous.type is TokenType.IDENTIFIER else f"'{previous.raw}'"
    return cur.expected("an expression", after=after)


def _number(token: Token) -> int | Decimal:
    return Decimal(token.value) if "." in token.value else int(token.value)


def _date(cur: Cursor, token: Token) -> datetime.date:
    shape = _DATE.fullmatch(token.value)
    try:
        if shape is None:
            raise ValueError(token.value)
        return datetime.date(*map(int, shape.groups()))
    except ValueError as e:
        raise cur.error("invalid DATE literal; expected 'yyyy-mm-dd'", token) from e


def _timestamp(cur: Cursor, token: Token) -> datetime.datetime:
    shape = _TIMESTAMP.fullmatch(token.value)
    try:
        if shape is None:
            raise ValueError(token.value)
        *fields, fraction = shape.groups()
        micros = int((fraction or "0").ljust(6, "0"))
        return datetime.datetime(*map(int, fields), micros)
    except ValueError as e:
        raise cur.error("invalid TIMESTAMP literal; expected 'yyyy-mm-dd hh:mm:ss[.ffffff]'", token) from e


_CONSTANTS: dict[str, object] = {"NULL": None, "TRUE": True, "FALSE": False}
_TYPED: dict[str, Callable[[Cursor, Token], object]] = {"DATE": _date, "TIMESTAMP": _timestamp}
