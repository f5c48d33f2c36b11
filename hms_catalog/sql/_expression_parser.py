"""Recursive descent over the expression grammar, on the statement parser's cursor.

One function per precedence level, weakest first::

    or        := and (OR and)*
    and       := not (AND not)*
    not       := NOT not | predicate
    predicate := primary [op primary | [NOT] IN (primary, ...) | IS [NOT] NULL | [NOT] BETWEEN primary AND primary]
    primary   := literal | column | ( or )

Operands of a predicate are primaries, so ``a = b = c`` and ``a = NOT b`` are errors rather than
surprises; parentheses lift any expression to a primary.

Depth is bounded twice: parentheses and NOTs inside one another (each level is a few Python frames
here), and the depth of the finished tree, long AND/OR chains included (the planner and ``to_sql`` walk
trees recursively).  Past either bound the user gets a syntax error, not a ``RecursionError`` later.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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

__all__ = ["MAX_DEPTH", "MAX_NESTING", "expression", "whole_number"]

# Parentheses and NOTs inside one another; five frames each in this parser.
MAX_NESTING = 64
# Levels of the finished tree; a chain of n ANDs is n levels deep (use IN for long lists of alternatives).
MAX_DEPTH = 128

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
    """Parse one whole expression starting at the cursor; refuse it when its tree is too deep to use."""
    start = cur.peek()
    expr = _or(cur)
    depth = _depth(expr)
    if depth > MAX_DEPTH:
        raise cur.error(
            f"expression too deeply nested ({depth} levels, at most {MAX_DEPTH}); "
            "write long lists of alternatives as IN (...)",
            start,
        )
    return expr


def _or(cur: Cursor) -> Expression:
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
        with _nested(cur, cur.advance()):
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
        return Literal(_number(cur, cur.advance()))
    if kind is TokenType.MINUS:
        cur.advance()
        if cur.peek().type is not TokenType.NUMBER:
            raise cur.error("expected a number after '-'", cur.peek())
        value = _number(cur, cur.advance())
        # copy_negate is exact; unary minus would round a long Decimal to the context precision.
        return Literal(value.copy_negate() if isinstance(value, Decimal) else -value)
    if kind is TokenType.LPAREN:
        with _nested(cur, cur.advance()):
            inner = _or(cur)
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


def _number(cur: Cursor, token: Token) -> int | Decimal:
    if "." in token.value:
        return Decimal(token.value)
    return whole_number(cur, token)


def whole_number(cur: Cursor, token: Token) -> int:
    """``int`` of a NUMBER token; Python refuses to convert thousands of digits, and so do we, with a position."""
    try:
        return int(token.value)
    except ValueError as e:
        raise cur.error(f"number too long ({len(token.value)} digits)", token) from e


@contextmanager
def _nested(cur: Cursor, opening: Token) -> Iterator[None]:
    """One level deeper inside parentheses or NOT; an error at ``opening`` past :data:`MAX_NESTING`."""
    if cur.nesting >= MAX_NESTING:
        raise cur.error(f"expression nested too deeply (more than {MAX_NESTING} parentheses or NOTs)", opening)
    cur.nesting += 1
    try:
        yield
    finally:
        cur.nesting -= 1


def _depth(expr: Expression) -> int:
    """Levels of ``expr``, counted without recursion: the tree may be deeper than the stack allows."""
    deepest, pending = 0, [(expr, 1)]
    while pending:
        node, level = pending.pop()
        deepest = max(deepest, level)
        match node:
            case Comparison(_, left, right) | And(left, right) | Or(left, right):
                pending += [(left, level + 1), (right, level + 1)]
            case InList(operand, values):
                pending += [(value, level + 1) for value in (operand, *values)]
            case IsNull(operand) | Not(operand):
                pending.append((operand, level + 1))
    return deepest


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
        year, month, day, hour, minute, second, fraction = shape.groups()
        micros = int((fraction or "0").ljust(6, "0"))
        return datetime.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micros)
    except ValueError as e:
        raise cur.error("invalid TIMESTAMP literal; expected 'yyyy-mm-dd hh:mm:ss[.ffffff]'", token) from e


_CONSTANTS: dict[str, object] = {"NULL": None, "TRUE": True, "FALSE": False}
_TYPED: dict[str, Callable[[Cursor, Token], object]] = {"DATE": _date, "TIMESTAMP": _timestamp}
