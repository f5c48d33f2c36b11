"""Predicate expressions of the catalog DSL (``WHERE`` clauses): frozen nodes and a few pure helpers.

The node set is deliberately small -- column references, literals, comparisons, ``IN``, ``IS NULL`` and
boolean connectives -- because predicates are only used to prune partitions and files, never evaluated
row by row.  ``BETWEEN`` has no node: the parser spells it as two comparisons, so consumers see one form.
``to_sql`` renders any tree back into text that parses to an equal tree.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from decimal import Decimal

__all__ = [
    "Expression",
    "ColumnRef",
    "Literal",
    "Comparison",
    "InList",
    "IsNull",
    "Not",
    "And",
    "Or",
    "COMPARISON_OPERATORS",
    "RESERVED_WORDS",
    "columns",
    "conjuncts",
    "to_sql",
]

COMPARISON_OPERATORS = frozenset({"=", "<>", "<", "<=", ">", ">="})

# Bare words that never name a column inside an expression (quote such a column with backquotes).
# DATE and TIMESTAMP are not here: they start a literal only when a string follows, so ``date = 1``
# still names the usual partition column.
RESERVED_WORDS = frozenset({"AND", "OR", "NOT", "IN", "IS", "NULL", "TRUE", "FALSE", "BETWEEN"})

# A name the tokenizer reads back as one bare identifier.
_BARE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


@dataclass(frozen=True)
class Expression:
    """Base of every expression node."""


@dataclass(frozen=True)
class ColumnRef(Expression):
    """A column, named as written (the planner decides about case)."""

    name: str


@dataclass(frozen=True, eq=False)
class Literal(Expression):
    """A constant: ``str``, ``int``, ``Decimal``, ``bool``, ``None`` (NULL), ``date`` or ``datetime``.

    Equality also compares the value's type, so ``TRUE`` is not ``1`` and ``1.0`` is not ``1`` -- Python
    alone would call them equal, and a syntax tree that cannot tell them apart cannot be tested.
    """

    value: object

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Literal):
            return NotImplemented
        return type(self.value) is type(other.value) and self.value == other.value

    def __hash__(self) -> int:
        return hash((type(self.value), self.value))


@dataclass(frozen=True)
class Comparison(Expression):
    """``left op right`` with ``op`` one of :data:`COMPARISON_OPERATORS` (``!=`` is read as ``<>``)."""

    op: str
    left: Expression
    right: Expression

    def __post_init__(self) -> None:
        if self.op not in COMPARISON_OPERATORS:
            raise ValueError(f"unknown comparison operator {self.op!r}")


@dataclass(frozen=True)
class InList(Expression):
    """``operand [NOT] IN (values...)``; there is always at least one value."""

    operand: Expression
    values: tuple[Expression, ...]
    negated: bool = False

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError("an IN list needs at least one value")


@dataclass(frozen=True)
class IsNull(Expression):
    """``operand IS [NOT] NULL``."""

    operand: Expression
    negated: bool = False


@dataclass(frozen=True)
class Not(Expression):
    operand: Expression


@dataclass(frozen=True)
class And(Expression):
    left: Expression
    right: Expression


@dataclass(frozen=True)
class Or(Expression):
    left: Expression
    right: Expression


def columns(expr: Expression) -> frozenset[str]:
    """The lower-cased names of all columns ``expr`` refers to (Hive column names ignore case)."""
    match expr:
        case ColumnRef(name):
            return frozenset({name.lower()})
        case Literal():
            return frozenset()
        case Comparison(_, left, right) | And(left, right) | Or(left, right):
            return columns(left) | columns(right)
        case InList(operand, values):
            return columns(operand).union(*(columns(value) for value in values))
        case IsNull(operand) | Not(operand):
            return columns(operand)
    raise TypeError(f"not an expression: {expr!r}")


def conjuncts(expr: Expression) -> list[Expression]:
    """Split ``expr`` at its top-level ANDs, left to right, however they are nested.

    A planner prunes with each conjunct on its own, so ``(a AND b) AND c`` and ``a AND (b AND c)`` must
    give the same three parts.
    """
    if isinstance(expr, And):
        return [*conjuncts(expr.left), *conjuncts(expr.right)]
    return [expr]


# --- rendering -------------------------------------------------------------------------------------

# Binding strength, weakest first; mirrors the parser: OR < AND < NOT < predicate < primary.
_OR, _AND, _NOT, _PREDICATE, _PRIMARY = range(5)


def _strength(expr: Expression) -> int:
    match expr:
        case Or():
            return _OR
        case And():
            return _AND
        case Not():
            return _NOT
        case Comparison() | InList() | IsNull():
            return _PREDICATE
    return _PRIMARY


def _operand(expr: Expression, weakest: int) -> str:
    """Render ``expr`` where nothing weaker than ``weakest`` may stand unparenthesised."""
    text = to_sql(expr)
    return f"({text})" if _strength(expr) < weakest else text


def to_sql(expr: Expression) -> str:
    """Render ``expr`` as DSL text; ``parse_expression(to_sql(e)) == e`` for every tree.

    AND and OR associate to the left when parsed, so a right-nested chain keeps its parentheses.
    """
    match expr:
        case Or(left, right):
            return f"{_operand(left, _OR)} OR {_operand(right, _AND)}"
        case And(left, right):
            return f"{_operand(left, _AND)} AND {_operand(right, _NOT)}"
        case Not(operand):
            return f"NOT {_operand(operand, _NOT)}"
        case Comparison(op, left, right):
            return f"{_operand(left, _PRIMARY)} {op} {_operand(right, _PRIMARY)}"
        case InList(operand, values, negated):
            items = ", ".join(_operand(value, _PRIMARY) for value in values)
            return f"{_operand(operand, _PRIMARY)} {'NOT ' if negated else ''}IN ({items})"
        case IsNull(operand, negated):
            return f"{_operand(operand, _PRIMARY)} IS {'NOT ' if negated else ''}NULL"
        case ColumnRef(name):
            return _name_sql(name)
        case Literal(value):
            return _literal_sql(value)
    raise TypeError(f"not an expression: {expr!r}")


def _name_sql(name: str) -> str:
    if not name:
        raise ValueError("a column name cannot be empty")
    if _BARE_NAME.fullmatch(name) and name.upper() not in RESERVED_WORDS | {"DATE", "TIMESTAMP"}:
        return name
    return "`" + name.replace("`", "``") + "`"


def _literal_sql(value: object) -> str:
    # bool before int and datetime before date: each is a subclass of the other.
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"cannot write {value} as a literal")
        text = format(value, "f")
        return text if "." in text else f"{text}.0"  # keep the fraction, or it reads back as an int
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            raise ValueError("TIMESTAMP literals have no time zone")
        fraction = f".{value.microsecond:06d}" if value.microsecond else ""
        return f"TIMESTAMP '{_date_text(value)} {value:%H:%M:%S}{fraction}'"
    if isinstance(value, datetime.date):
        return f"DATE '{_date_text(value)}'"
    raise TypeError(f"no literal syntax for {type(value).__name__} value {value!r}")


def _date_text(value: datetime.date) -> str:
    # Not strftime: its %Y does not pad years before 1000 on every platform.
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
