from __future__ import annotations

import datetime
import pickle
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hms_catalog.errors import SqlSyntaxError
from hms_catalog.sql import (
    And,
    ColumnRef,
    Comparison,
    ExplainSplits,
    Expression,
    InList,
    IsNull,
    Literal,
    Not,
    Or,
    ShowSplits,
    Statement,
    StatementSource,
    TableName,
    columns,
    conjuncts,
    parse,
    parse_expression,
    parse_statement,
    to_sql,
)

a, b, c, x = ColumnRef("a"), ColumnRef("b"), ColumnRef("c"), ColumnRef("x")
ONE, TWO, THREE = Literal(1), Literal(2), Literal(3)


def eq(left: Expression, right: Expression) -> Comparison:
    return Comparison("=", left, right)


def between(operand: Expression, low: Expression, high: Expression) -> And:
    return And(Comparison(">=", operand, low), Comparison("<=", operand, high))


GOOD: list[tuple[str, Expression]] = [
    # primaries
    ("a", a),
    ("`a`", a),
    ("`my col`", ColumnRef("my col")),
    ("`a``b`", ColumnRef("a`b")),
    ("`and`", ColumnRef("and")),
    ("Mixed_Case$1", ColumnRef("Mixed_Case$1")),
    ("date", ColumnRef("date")),
    ("timestamp", ColumnRef("timestamp")),
    ("(a)", a),
    ("((a))", a),
    ("1", ONE),
    ("007", Literal(7)),
    ("-42", Literal(-42)),
    ("- 42", Literal(-42)),
    ("1.5", Literal(Decimal("1.5"))),
    ("1.50", Literal(Decimal("1.50"))),
    ("-0.25", Literal(Decimal("-0.25"))),
    ("'text'", Literal("text")),
    ('"double"', Literal("double")),
    ("'it''s'", Literal("it's")),
    ("''", Literal("")),
    ("NULL", Literal(None)),
    ("null", Literal(None)),
    ("TRUE", Literal(True)),
    ("false", Literal(False)),
    ("DATE '2024-02-29'", Literal(datetime.date(2024, 2, 29))),
    ("date '0001-01-01'", Literal(datetime.date(1, 1, 1))),
    ("TIMESTAMP '2024-01-31 23:59:58'", Literal(datetime.datetime(2024, 1, 31, 23, 59, 58))),
    ("timestamp '2024-01-31 00:00:00.5'", Literal(datetime.datetime(2024, 1, 31, 0, 0, 0, 500000))),
    ("TimeStamp '2024-01-31 00:00:00.000001'", Literal(datetime.datetime(2024, 1, 31, 0, 0, 0, 1))),
    # comparisons
    ("a = 1", eq(a, ONE)),
    ("a=1", eq(a, ONE)),
    ("a <> 1", Comparison("<>", a, ONE)),
    ("a != 1", Comparison("<>", a, ONE)),
    ("a < 1", Comparison("<", a, ONE)),
    ("a <= 1", Comparison("<=", a, ONE)),
    ("a > 1", Comparison(">", a, ONE)),
    ("a >= 1", Comparison(">=", a, ONE)),
    ("a<-1", Comparison("<", a, Literal(-1))),
    ("a =-1.5", eq(a, Literal(Decimal("-1.5")))),
    ("'x' < col", Comparison("<", Literal("x"), ColumnRef("col"))),
    ("1 = 1", eq(ONE, ONE)),
    ("a = b", eq(a, b)),
    ("a = NULL", eq(a, Literal(None))),
    ("date = DATE '2024-01-01'", eq(ColumnRef("date"), Literal(datetime.date(2024, 1, 1)))),
    ("`x y` >= 'm'", Comparison(">=", ColumnRef("x y"), Literal("m"))),
    ("(a = 1) = TRUE", eq(eq(a, ONE), Literal(True))),
    # IN
    ("a IN (1)", InList(a, (ONE,), False)),
    ("a in (1, 2, 3)", InList(a, (ONE, TWO, THREE), False)),
    ("a NOT IN ('x', 'y')", InList(a, (Literal("x"), Literal("y")), True)),
    ("a not in (-1, 2.5, NULL, b)", InList(a, (Literal(-1), Literal(Decimal("2.5")), Literal(None), b), True)),
    ("1 IN (a, b)", InList(ONE, (a, b), False)),
    ("a IN ((b = 1))", InList(a, (eq(b, ONE),), False)),
    # IS [NOT] NULL
    ("a IS NULL", IsNull(a, False)),
    ("a is not null", IsNull(a, True)),
    ("`is` IS NOT NULL", IsNull(ColumnRef("is"), True)),
    # BETWEEN, desugared
    ("a BETWEEN 1 AND 3", between(a, ONE, THREE)),
    ("a between -1 and 1.5", between(a, Literal(-1), Literal(Decimal("1.5")))),
    ("a NOT BETWEEN 1 AND 3", Not(between(a, ONE, THREE))),
    ("a BETWEEN 1 AND 3 AND b = 2", And(between(a, ONE, THREE), eq(b, TWO))),
    (
        "d BETWEEN DATE '2024-01-01' AND DATE '2024-12-31'",
        between(ColumnRef("d"), Literal(datetime.date(2024, 1, 1)), Literal(datetime.date(2024, 12, 31))),
    ),
    # precedence: OR < AND < NOT < predicate
    ("a = 1 OR b = 2 AND c = 3", Or(eq(a, ONE), And(eq(b, TWO), eq(c, THREE)))),
    ("a = 1 AND b = 2 OR c = 3", Or(And(eq(a, ONE), eq(b, TWO)), eq(c, THREE))),
    ("(a = 1 OR b = 2) AND c = 3", And(Or(eq(a, ONE), eq(b, TWO)), eq(c, THREE))),
    ("a = 1 AND (b = 2 OR c = 3)", And(eq(a, ONE), Or(eq(b, TWO), eq(c, THREE)))),
    ("NOT a = 1 AND b = 2", And(Not(eq(a, ONE)), eq(b, TWO))),
    ("NOT (a = 1 AND b = 2)", Not(And(eq(a, ONE), eq(b, TWO)))),
    ("NOT NOT a", Not(Not(a))),
    ("NOT a IS NULL", Not(IsNull(a, False))),
    ("NOT a IN (1) OR b", Or(Not(InList(a, (ONE,), False)), b)),
    ("a AND b AND c", And(And(a, b), c)),
    ("a OR b OR c", Or(Or(a, b), c)),
    ("a AND (b AND c)", And(a, And(b, c))),
    ("a OR b AND NOT c", Or(a, And(b, Not(c)))),
    # keywords in any case, blanks and comments anywhere
    ("a = 1 and b = 2 Or NOT c Is Not Null", Or(And(eq(a, ONE), eq(b, TWO)), Not(IsNull(c, True)))),
    ("a /* x */ = -- y\n 1", eq(a, ONE)),
    ("\n  a\n  IN\n  (1\n  ,2)\n", InList(a, (ONE, TWO), False)),
]


@pytest.mark.parametrize(("text", "expected"), GOOD)
def test_parse_expression(text: str, expected: Expression) -> None:
    assert parse_expression(text) == expected


@pytest.mark.parametrize(("text", "expected"), GOOD)
def test_good_expressions_round_trip_through_to_sql(text: str, expected: Expression) -> None:
    assert parse_expression(to_sql(expected)) == expected


BAD: list[tuple[str, int, int, str, str]] = [
    # text, line, column, token, reason
    ("", 1, 1, "<end of input>", "expected an expression"),
    ("AND a", 1, 1, "AND", "expected an expression"),
    ("a = 1 AND", 1, 10, "<end of input>", "expected an expression after AND"),
    ("a = 1 OR", 1, 9, "<end of input>", "expected an expression after OR"),
    ("NOT", 1, 4, "<end of input>", "expected an expression after NOT"),
    ("a =", 1, 4, "<end of input>", "expected an expression after '='"),
    ("a != )", 1, 6, ")", "expected an expression after '!='"),
    ("a = NOT b", 1, 5, "NOT", "expected an expression after '='"),
    ("a = in", 1, 5, "in", "expected an expression after '='"),
    ("a == 1", 1, 3, "==", "unknown operator '=='"),
    ("a <>= 1", 1, 3, "<>=", "unknown operator '<>='"),
    ("a => 1", 1, 3, "=>", "unknown operator '=>'"),
    ("a << 1", 1, 3, "<<", "unknown operator '<<'"),
    ("a = 1 = 2", 1, 7, "=", "expected AND, OR or end of expression"),
    ("a garbage", 1, 3, "garbage", "expected comparison operator, IN, IS, BETWEEN, AND, OR or end of expression"),
    ("a = 1 garbage", 1, 7, "garbage", "expected AND, OR or end of expression"),
    ("a = 1)", 1, 6, ")", "expected AND, OR or end of expression"),
    ("(a = 1", 1, 7, "<end of input>", "expected AND, OR or ')'"),
    ("()", 1, 2, ")", "expected an expression after '('"),
    ("t.col = 1", 1, 1, "t.col", "column name must be a single identifier"),
    ("a = `t`.`c`", 1, 5, "`t`.`c`", "column name must be a single identifier"),
    ("a = t.", 1, 7, "<end of input>", "expected identifier after '.' in column name"),
    # IN
    ("a IN 1", 1, 6, "1", "expected '(' after IN"),
    ("a IN ()", 1, 7, ")", "expected an expression after '('"),
    ("a IN (1 2)", 1, 9, "2", "expected ')' to close IN list"),
    ("a IN (1,", 1, 9, "<end of input>", "expected an expression after ','"),
    ("a IN (1, 2", 1, 11, "<end of input>", "expected ')' to close IN list"),
    ("a NOT = 1", 1, 7, "=", "expected IN or BETWEEN after NOT"),
    ("a NOT NULL", 1, 7, "NULL", "expected IN or BETWEEN after NOT"),
    # IS
    ("a IS 1", 1, 6, "1", "expected NULL after IS"),
    ("a IS", 1, 5, "<end of input>", "expected NULL after IS"),
    ("a IS NOT TRUE", 1, 10, "TRUE", "expected NULL after IS NOT"),
    # BETWEEN
    ("a BETWEEN 1 OR 2", 1, 13, "OR", "expected AND between the bounds of BETWEEN"),
    ("a BETWEEN 1", 1, 12, "<end of input>", "expected AND between the bounds of BETWEEN"),
    ("a BETWEEN AND 2", 1, 11, "AND", "expected an expression after BETWEEN"),
    ("a BETWEEN 1 AND", 1, 16, "<end of input>", "expected an expression after AND"),
    # literals
    ("a = -b", 1, 6, "b", "expected a number after '-'"),
    ("a = - 'x'", 1, 7, "'x'", "expected a number after '-'"),
    ("a = 1.5x", 1, 5, "1.5x", "malformed number"),
    ("a = 1x", 1, 5, "1x", "identifier cannot start with a digit; quote it with backquotes"),
    ("a = 1.", 1, 6, ".", "expected AND, OR or end of expression"),
    ("d = DATE '2024-02-30'", 1, 10, "'2024-02-30'", "invalid DATE literal; expected 'yyyy-mm-dd'"),
    ("d = DATE '2024-1-1'", 1, 10, "'2024-1-1'", "invalid DATE literal; expected 'yyyy-mm-dd'"),
    ("d = DATE '20240101'", 1, 10, "'20240101'", "invalid DATE literal; expected 'yyyy-mm-dd'"),
    ("d = DATE '0000-01-01'", 1, 10, "'0000-01-01'", "invalid DATE literal; expected 'yyyy-mm-dd'"),
    (
        "t = TIMESTAMP '2024-01-01'",
        1,
        15,
        "'2024-01-01'",
        "invalid TIMESTAMP literal; expected 'yyyy-mm-dd hh:mm:ss[.ffffff]'",
    ),
    (
        "t = TIMESTAMP '2024-01-01 24:00:00'",
        1,
        15,
        "'2024-01-01 24:00:00'",
        "invalid TIMESTAMP literal; expected 'yyyy-mm-dd hh:mm:ss[.ffffff]'",
    ),
    (
        "t = TIMESTAMP '2024-01-01T10:00:00'",
        1,
        15,
        "'2024-01-01T10:00:00'",
        "invalid TIMESTAMP literal; expected 'yyyy-mm-dd hh:mm:ss[.ffffff]'",
    ),
    (
        "t = TIMESTAMP '2024-01-01 10:00:00.1234567'",
        1,
        15,
        "'2024-01-01 10:00:00.1234567'",
        "invalid TIMESTAMP literal; expected 'yyyy-mm-dd hh:mm:ss[.ffffff]'",
    ),
    ("d = DATE x", 1, 10, "x", "expected AND, OR or end of expression"),  # DATE names a column here
    # lexical errors surface too
    ("a ! b", 1, 3, "!", "unexpected character"),
    ("a = 'x", 1, 5, "'x", "unterminated string literal"),
    # multi-line positions
    ("a = 1\n  AND b IN (1,\n    2 3)", 3, 7, "3", "expected ')' to close IN list"),
    ("a = 1 OR\n\tb == 2", 2, 4, "==", "unknown operator '=='"),
]


@pytest.mark.parametrize(("text", "line", "column", "token", "reason"), BAD)
def test_parse_expression_errors(text: str, line: int, column: int, token: str, reason: str) -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_expression(text)
    err = info.value
    assert (err.reason, err.line, err.column, err.token) == (reason, line, column, token)
    caret = err.excerpt.split("\n")[1]
    assert caret.replace("\t", " ") == " " * (column - 1) + "^"


def test_invalid_literal_keeps_the_cause() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_expression("DATE '2023-02-29'")
    assert isinstance(info.value.__cause__, ValueError)


@pytest.mark.parametrize(
    ("text", "line", "column", "word"),
    [
        ("SELECT 1", 1, 1, "SELECT"),
        ("select a from t", 1, 1, "select"),
        ("(SELECT 1)", 1, 2, "SELECT"),
        ("WITH q AS (SELECT 1) SELECT * FROM q", 1, 1, "WITH"),
        ("DROP TABLE x", 1, 1, "DROP"),
        ("DROP CATALOG c", 1, 1, "DROP"),
        ("  \n -- why\n SHOW TABLES", 3, 2, "SHOW"),
        ("use db", 1, 1, "use"),
    ],
)
def test_parse_expression_refuses_statements(text: str, line: int, column: int, word: str) -> None:
    """It used to answer ``SELECT ...`` with a Query node: a statement where an expression was promised."""
    with pytest.raises(SqlSyntaxError) as info:
        parse_expression(text)
    err = info.value
    assert (err.line, err.column, err.token) == (line, column, word)
    assert err.reason == f"expected an expression, not a statement ({word.upper()} ...)"
    assert isinstance(err.__cause__, SqlSyntaxError)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("select = 1", eq(ColumnRef("select"), ONE)),
        ("show IS NULL", IsNull(ColumnRef("show"))),
        ("use", ColumnRef("use")),
        ("(drop)", ColumnRef("drop")),
    ],
)
def test_words_that_start_statements_still_name_columns(text: str, expected: Expression) -> None:
    assert parse_expression(text) == expected


def test_parentheses_and_nots_nest_up_to_a_bound_then_fail_where_it_is_passed() -> None:
    assert parse_expression("(" * 64 + "a" + ")" * 64) == a
    assert isinstance(parse_expression("NOT " * 64 + "a"), Not)
    with pytest.raises(SqlSyntaxError) as info:  # used to be a RecursionError
        parse_expression("(" * 300 + "a" + ")" * 300)
    assert (info.value.reason, info.value.column, info.value.token) == (
        "expression nested too deeply (more than 64 parentheses or NOTs)", 65, "(",
    )
    with pytest.raises(SqlSyntaxError) as info:
        parse_statement("SHOW SPLITS FROM t WHERE " + "NOT " * 1000 + "a = 1")
    assert (info.value.column, info.value.token) == (26 + 4 * 64, "NOT")


def test_trees_deeper_than_the_planner_can_walk_are_refused() -> None:
    """A chain of n ORs is n levels deep; the planner and to_sql walk trees recursively."""
    deepest = parse_expression(" OR ".join(["a = 1"] * 127))
    assert parse_expression(to_sql(deepest)) == deepest
    with pytest.raises(SqlSyntaxError) as info:
        parse_statement("SHOW SPLITS FROM t WHERE " + " OR ".join(["a = 1"] * 2000))
    assert (info.value.reason, info.value.column, info.value.token) == (
        "expression too deeply nested (2001 levels, at most 128); write long lists of alternatives as IN (...)",
        26,
        "a",
    )
    assert parse_expression("a IN (" + ", ".join(["1"] * 2000) + ")") == InList(a, (ONE,) * 2000)


def test_a_number_too_long_for_python_is_a_syntax_error() -> None:
    with pytest.raises(SqlSyntaxError) as info:  # used to be int()'s ValueError
        parse_expression("a = " + "9" * 5000)
    assert (info.value.reason, info.value.column) == ("number too long (5000 digits)", 5)
    assert isinstance(info.value.__cause__, ValueError)
    assert parse_expression("a = " + "9" * 5000 + ".5") == eq(a, Literal(Decimal("9" * 5000 + ".5")))


def test_parse_expression_with_explicit_origin() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_expression(StatementSource("a IS 1", line=4, column=7))
    assert (info.value.line, info.value.column) == (4, 12)
    assert parse_expression(StatementSource("a = 1", 2, 2)) == eq(a, ONE)


# --- nodes -----------------------------------------------------------------------------------------


def test_literal_equality_tells_types_apart() -> None:
    assert Literal(1) != Literal(True)
    assert Literal(0) != Literal(False)
    assert Literal(1) != Literal(Decimal(1))
    assert Literal(datetime.date(2024, 1, 1)) != Literal(datetime.datetime(2024, 1, 1))
    assert Literal(Decimal("1.0")) == Literal(Decimal("1.00"))
    assert len({Literal(1), Literal(True), Literal(1), Literal(Decimal(1))}) == 3
    assert parse_expression("TRUE") != parse_expression("1")


def test_nodes_are_frozen_hashable_and_picklable() -> None:
    expr = parse_expression("a IN (1, 'x', DATE '2024-01-01') AND NOT b IS NULL OR c BETWEEN 1.5 AND 2")
    with pytest.raises(AttributeError):
        expr.left = a  # type: ignore[misc]
    assert {expr: 1}[parse_expression(to_sql(expr))] == 1
    assert pickle.loads(pickle.dumps(expr)) == expr


def test_nodes_refuse_impossible_shapes() -> None:
    with pytest.raises(ValueError, match="operator"):
        Comparison("==", a, ONE)
    with pytest.raises(ValueError, match="at least one"):
        InList(a, ())


# --- helpers ---------------------------------------------------------------------------------------


def test_columns_are_lower_cased_and_found_everywhere() -> None:
    expr = parse_expression("`Dt` >= '1' AND (REGION IN (other, 'x') OR NOT c IS NULL) AND 1 = 1")
    assert columns(expr) == frozenset({"dt", "region", "other", "c"})
    assert columns(Literal(1)) == frozenset()


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("a", ["a"]),
        ("a = 1", ["a = 1"]),
        ("a AND b AND c", ["a", "b", "c"]),
        ("a AND (b AND c)", ["a", "b", "c"]),
        ("(a AND b) AND (c AND x)", ["a", "b", "c", "x"]),
        ("a AND (b OR c)", ["a", "b OR c"]),
        ("a OR b AND c", ["a OR b AND c"]),
        ("NOT (a AND b)", ["NOT (a AND b)"]),
        ("x BETWEEN 1 AND 2 AND a", ["x >= 1", "x <= 2", "a"]),
    ],
)
def test_conjuncts_flatten_top_level_ands(text: str, parts: list[str]) -> None:
    assert conjuncts(parse_expression(text)) == [parse_expression(part) for part in parts]


@pytest.mark.parametrize(
    ("expr", "sql"),
    [
        (eq(a, Literal("it's")), "a = 'it''s'"),
        (eq(a, Literal("back\\slash\n")), "a = 'back\\\\slash\n'"),
        (eq(a, Literal(None)), "a = NULL"),
        (eq(Literal(True), Literal(False)), "TRUE = FALSE"),
        (eq(a, Literal(-3)), "a = -3"),
        (eq(a, Literal(Decimal("1E+2"))), "a = 100.0"),
        (eq(a, Literal(Decimal("-0.50"))), "a = -0.50"),
        (eq(a, Literal(datetime.date(5, 3, 1))), "a = DATE '0005-03-01'"),
        (eq(a, Literal(datetime.datetime(2024, 1, 2, 3, 4, 5))), "a = TIMESTAMP '2024-01-02 03:04:05'"),
        (eq(a, Literal(datetime.datetime(2024, 1, 2, 3, 4, 5, 60))), "a = TIMESTAMP '2024-01-02 03:04:05.000060'"),
        (eq(ColumnRef("my col"), ONE), "`my col` = 1"),
        (eq(ColumnRef("a`b"), ONE), "`a``b` = 1"),
        (eq(ColumnRef("Null"), ONE), "`Null` = 1"),
        (eq(ColumnRef("date"), ONE), "`date` = 1"),
        (eq(ColumnRef("1st"), ONE), "`1st` = 1"),
        (InList(a, (ONE, Literal(-2)), True), "a NOT IN (1, -2)"),
        (IsNull(a, True), "a IS NOT NULL"),
        (Or(a, And(b, c)), "a OR b AND c"),
        (And(Or(a, b), c), "(a OR b) AND c"),
        (And(a, And(b, c)), "a AND (b AND c)"),
        (Or(a, Or(b, c)), "a OR (b OR c)"),
        (Not(And(a, b)), "NOT (a AND b)"),
        (And(Not(a), Not(b)), "NOT a AND NOT b"),
        (Not(eq(a, ONE)), "NOT a = 1"),
        (eq(Not(a), eq(b, ONE)), "(NOT a) = (b = 1)"),
        (InList(eq(a, ONE), (Or(b, c),), False), "(a = 1) IN ((b OR c))"),
        (IsNull(And(a, b), False), "(a AND b) IS NULL"),
    ],
)
def test_to_sql(expr: Expression, sql: str) -> None:
    assert to_sql(expr) == sql
    assert parse_expression(sql) == expr


@pytest.mark.parametrize(
    ("expr", "error"),
    [
        (Literal(1.5), TypeError),
        (Literal(b"x"), TypeError),
        (Literal(Decimal("NaN")), ValueError),
        (Literal(Decimal("-Infinity")), ValueError),
        (Literal(datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)), ValueError),
        (ColumnRef(""), ValueError),
    ],
)
def test_to_sql_refuses_values_without_syntax(expr: Expression, error: type[Exception]) -> None:
    with pytest.raises(error):
        to_sql(expr)


# --- round trip of random trees --------------------------------------------------------------------

_names = st.one_of(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_$]{0,6}", fullmatch=True),
    st.sampled_from(["and", "Not", "null", "TRUE", "date", "Timestamp", "between", "is", "in", "or"]),
    st.text(min_size=1, max_size=6),
)
_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.decimals(allow_nan=False, allow_infinity=False, places=3),
    st.decimals(min_value=-(10**30), max_value=10**30, allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.dates(),
    st.datetimes(),
)
_leaves = st.one_of(_names.map(ColumnRef), _values.map(Literal))


def _extend(children: st.SearchStrategy[Expression]) -> st.SearchStrategy[Expression]:
    return st.one_of(
        st.builds(Comparison, st.sampled_from(["=", "<>", "<", "<=", ">", ">="]), children, children),
        st.builds(InList, children, st.lists(children, min_size=1, max_size=3).map(tuple), st.booleans()),
        st.builds(IsNull, children, st.booleans()),
        st.builds(Not, children),
        st.builds(And, children, children),
        st.builds(Or, children, children),
    )


expressions = st.recursive(_leaves, _extend, max_leaves=12)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions)
def test_to_sql_round_trips(expr: Expression) -> None:
    text = to_sql(expr)
    assert parse_expression(text) == expr
    assert to_sql(parse_expression(text)) == text


@settings(max_examples=200, deadline=None)
@given(expressions)
def test_where_clause_round_trips_inside_a_statement(expr: Expression) -> None:
    statement = parse_statement(f"SHOW SPLITS FROM db.t WHERE {to_sql(expr)}")
    assert statement == ShowSplits(TableName(None, "db", "t"), expr)


# --- SHOW SPLITS / EXPLAIN SPLITS ------------------------------------------------------------------

T = TableName(None, None, "t")

STATEMENTS: list[tuple[str, Statement]] = [
    ("SHOW SPLITS FROM t", ShowSplits(T, None)),
    ("show splits from hive.sales.orders", ShowSplits(TableName("hive", "sales", "orders"), None)),
    ("SHOW SPLITS FROM db.`my t` WHERE a = 1", ShowSplits(TableName(None, "db", "my t"), eq(a, ONE))),
    (
        "SHOW SPLITS FROM t WHERE dt >= DATE '2024-01-01' AND region IN ('eu', 'us')",
        ShowSplits(
            T,
            And(
                Comparison(">=", ColumnRef("dt"), Literal(datetime.date(2024, 1, 1))),
                InList(ColumnRef("region"), (Literal("eu"), Literal("us")), False),
            ),
        ),
    ),
    ("EXPLAIN SPLITS FROM t", ExplainSplits(T, None)),
    (
        "explain splits from c.d.t where not (a = 1 or b is null);",
        ExplainSplits(TableName("c", "d", "t"), Not(Or(eq(a, ONE), IsNull(b)))),
    ),
    ("EXPLAIN SPLITS FROM t WHERE x BETWEEN 1 AND 2", ExplainSplits(T, between(x, ONE, TWO))),
    (
        "SHOW SPLITS FROM splits WHERE `where` = 'x'",
        ShowSplits(TableName(None, None, "splits"), eq(ColumnRef("where"), Literal("x"))),
    ),
]


@pytest.mark.parametrize(("text", "expected"), STATEMENTS)
def test_parse_split_statements(text: str, expected: Statement) -> None:
    assert parse_statement(text) == expected
    assert parse(text) == [expected]


def test_split_statement_text_covers_the_where_clause() -> None:
    first, second = parse("SHOW SPLITS FROM t WHERE a = 1 -- tail\n;\n EXPLAIN SPLITS FROM t  ;")
    assert first.text == "SHOW SPLITS FROM t WHERE a = 1"
    assert second.text == "EXPLAIN SPLITS FROM t"
    assert parse_statement("SHOW SPLITS FROM t WHERE (a = 1);").text == "SHOW SPLITS FROM t WHERE (a = 1)"


def test_split_statements_are_picklable_values() -> None:
    statement = parse_statement("SHOW SPLITS FROM t WHERE d = DATE '2024-01-01' AND n IN (1.5, -2)")
    copy = pickle.loads(pickle.dumps(statement))
    assert copy == statement and copy.text == statement.text
    assert hash(copy) == hash(statement)
    assert statement != ExplainSplits(T, statement.where)  # type: ignore[attr-defined]


STATEMENT_ERRORS: list[tuple[str, int, int, str, str]] = [
    ("SHOW SPLITS", 1, 12, "<end of input>", "expected FROM"),
    ("SHOW SPLITS t", 1, 13, "t", "expected FROM"),
    ("EXPLAIN", 1, 8, "<end of input>", "expected SPLITS after EXPLAIN"),
    ("EXPLAIN SELECT 1", 1, 9, "SELECT", "expected SPLITS after EXPLAIN"),
    ("SHOW SPLITS FROM", 1, 17, "<end of input>", "expected table name"),
    ("SHOW SPLITS FROM a.b.c.d", 1, 18, "a.b.c.d", "table name has too many parts; expected [[catalog.]database.]table"),
    ("SHOW SPLITS FROM t x", 1, 20, "x", "expected WHERE or end of statement"),
    ("SHOW SPLITS FROM t WHERE", 1, 25, "<end of input>", "expected an expression after WHERE"),
    ("EXPLAIN SPLITS FROM t WHERE ;", 1, 29, ";", "expected an expression after WHERE"),
    ("SHOW SPLITS FROM t WHERE a = 1 x", 1, 32, "x", "expected AND, OR or end of statement"),
    ("SHOW SPLITS FROM t WHERE a x", 1, 28, "x", "expected comparison operator, IN, IS, BETWEEN, AND, OR or end of statement"),
    ("SHOW SPLITS FROM t WHERE a == 1", 1, 28, "==", "unknown operator '=='"),
    ("SHOW SPLITS FROM t WHERE a IN (1", 1, 33, "<end of input>", "expected ')' to close IN list"),
    ("SHOW SPLITS FROM t WHERE a IS 1", 1, 31, "1", "expected NULL after IS"),
    ("SHOW SPLITS FROM t WHERE t.a = 1", 1, 26, "t.a", "column name must be a single identifier"),
]


@pytest.mark.parametrize(("text", "line", "column", "token", "reason"), STATEMENT_ERRORS)
def test_split_statement_errors(text: str, line: int, column: int, token: str, reason: str) -> None:
    with pytest.raises(SqlSyntaxError) as info:
        parse_statement(text)
    err = info.value
    assert (err.reason, err.line, err.column, err.token) == (reason, line, column, token)
    assert err.excerpt.split("\n")[1] == " " * (column - 1) + "^"


def test_error_in_a_where_clause_of_a_later_statement_uses_script_coordinates() -> None:
    script = "SHOW CATALOGS;\nSHOW SPLITS FROM t\n  WHERE dt = DATE '2024-13-01';"
    with pytest.raises(SqlSyntaxError) as info:
        parse(script)
    err = info.value
    assert (err.reason, err.line, err.column, err.token) == (
        "invalid DATE literal; expected 'yyyy-mm-dd'",
        3,
        19,
        "'2024-13-01'",
    )
    assert err.excerpt == "  WHERE dt = DATE '2024-13-01';\n" + " " * 18 + "^"
