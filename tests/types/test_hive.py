from __future__ import annotations

import pytest
from hypothesis import given

from hms_catalog.errors import SchemaError, UnsupportedTypeError
from hms_catalog.types import (
    ArrayType,
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntervalDayTimeType,
    IntervalYearMonthType,
    IntType,
    MapType,
    SmallIntType,
    StringType,
    StructField,
    StructType,
    TimestampNtzType,
    TimestampType,
    TimeType,
    TinyIntType,
    UnionType,
    UuidType,
    VarcharType,
    VoidType,
    parse_hive_type,
    to_hive_string,
    type_name,
)
from tests.types.strategies import SETTINGS, hive_types

INT, STR, BIGINT, DBL = IntType(), StringType(), BigIntType(), DoubleType()


def f(name: str, data_type: DataType, comment: str | None = None) -> StructField:
    return StructField(name, data_type, comment=comment)


def struct(*fields: StructField) -> StructType:
    return StructType(fields)


def union(*alternatives: DataType) -> UnionType:
    return UnionType(alternatives)


A, M = ArrayType, MapType

PARSE_CASES: list[tuple[str, DataType]] = [
    # every primitive, in several spellings
    ("boolean", BooleanType()),
    ("BOOLEAN", BooleanType()),
    ("Boolean", BooleanType()),
    ("tinyint", TinyIntType()),
    ("TINYINT", TinyIntType()),
    ("smallint", SmallIntType()),
    ("SmallInt", SmallIntType()),
    ("int", INT),
    ("INT", INT),
    ("integer", INT),
    ("INTEGER", INT),
    ("bigint", BIGINT),
    ("BIGINT", BIGINT),
    ("float", FloatType()),
    ("FLOAT", FloatType()),
    ("double", DBL),
    ("DOUBLE", DBL),
    ("double precision", DBL),
    ("DOUBLE PRECISION", DBL),
    ("double \t precision", DBL),
    ("string", STR),
    ("STRING", STR),
    ("binary", BinaryType()),
    ("BINARY", BinaryType()),
    ("date", DateType()),
    ("DATE", DateType()),
    ("timestamp", TimestampType()),
    ("TIMESTAMP", TimestampType()),
    ("void", VoidType()),
    ("VOID", VoidType()),
    ("interval_year_month", IntervalYearMonthType()),
    ("INTERVAL_YEAR_MONTH", IntervalYearMonthType()),
    ("interval_day_time", IntervalDayTimeType()),
    ("interval year to month", IntervalYearMonthType()),
    ("INTERVAL YEAR TO MONTH", IntervalYearMonthType()),
    ("interval day to second", IntervalDayTimeType()),
    ("Interval  Day  To  Second", IntervalDayTimeType()),
    # decimals: Hive's defaults and aliases
    ("decimal", DecimalType(10, 0)),
    ("DECIMAL", DecimalType(10, 0)),
    ("decimal(5)", DecimalType(5, 0)),
    ("decimal(10,2)", DecimalType(10, 2)),
    ("decimal(38,38)", DecimalType(38, 38)),
    ("decimal(38,0)", DecimalType(38, 0)),
    ("decimal(1,0)", DecimalType(1, 0)),
    ("decimal(1,1)", DecimalType(1, 1)),
    ("Decimal( 10 , 2 )", DecimalType(10, 2)),
    ("decimal (7,3)", DecimalType(7, 3)),
    ("decimal(\t9,\n3)", DecimalType(9, 3)),
    ("decimal(007,02)", DecimalType(7, 2)),
    ("dec", DecimalType(10, 0)),
    ("dec(12,4)", DecimalType(12, 4)),
    ("numeric", DecimalType(10, 0)),
    ("NUMERIC(20, 5)", DecimalType(20, 5)),
    # char and varchar at their limits
    ("char(1)", CharType(1)),
    ("char(10)", CharType(10)),
    ("CHAR(255)", CharType(255)),
    ("char ( 3 )", CharType(3)),
    ("varchar(1)", VarcharType(1)),
    ("varchar(65535)", VarcharType(65535)),
    ("VARCHAR(100)", VarcharType(100)),
    # surrounding whitespace
    ("  int  ", INT),
    ("\tstring\n", STR),
    # arrays
    ("array<int>", A(INT)),
    ("ARRAY < INT >", A(INT)),
    ("Array<String>", A(STR)),
    ("array<array<string>>", A(A(STR))),
    ("array<map<string,int>>", A(M(STR, INT))),
    ("array<struct<a:int>>", A(struct(f("a", INT)))),
    ("array<decimal(10,2)>", A(DecimalType(10, 2))),
    ("array<decimal>", A(DecimalType(10, 0))),
    ("array<char(5)>", A(CharType(5))),
    ("array<double precision>", A(DBL)),
    ("array < array < array < array < int > > > >", A(A(A(A(INT))))),
    # maps
    ("map<string,int>", M(STR, INT)),
    ("MAP<STRING, BIGINT>", M(STR, BIGINT)),
    ("map<int,array<string>>", M(INT, A(STR))),
    ("map<string,map<string,double>>", M(STR, M(STR, DBL))),
    ("map<bigint,struct<x:float,y:float>>", M(BIGINT, struct(f("x", FloatType()), f("y", FloatType())))),
    ("map<decimal(5,2),string>", M(DecimalType(5, 2), STR)),
    ("map<timestamp,date>", M(TimestampType(), DateType())),
    ("map< string , array < map < int , boolean > > >", M(STR, A(M(INT, BooleanType())))),
    # structs: names as written, keywords as names
    ("struct<a:int>", struct(f("a", INT))),
    ("struct<a:int,b:string>", struct(f("a", INT), f("b", STR))),
    ("STRUCT<A:INT,B:STRING>", struct(f("A", INT), f("B", STR))),
    ("struct< a : int , b : string >", struct(f("a", INT), f("b", STR))),
    ("struct<>", struct()),
    ("struct< >", struct()),
    ("struct<type:int,map:string,end:int>", struct(f("type", INT), f("map", STR), f("end", INT))),
    ("struct<struct:int,array:string,comment:int>", struct(f("struct", INT), f("array", STR), f("comment", INT))),
    ("struct<int:string,string:int>", struct(f("int", STR), f("string", INT))),
    ("struct<_a:int,a_1:int,1a:int,42:int>", struct(f("_a", INT), f("a_1", INT), f("1a", INT), f("42", INT))),
    ("struct<日本:int,Ünïcode:string>", struct(f("日本", INT), f("Ünïcode", STR))),
    # backquoted names
    ("struct<`a b`:int>", struct(f("a b", INT))),
    ("struct<`a:b`:int>", struct(f("a:b", INT))),
    ("struct<`a,b`:int>", struct(f("a,b", INT))),
    ("struct<`a.b`:int>", struct(f("a.b", INT))),
    ("struct<`<x>`:int>", struct(f("<x>", INT))),
    ("struct<`a``b`:int>", struct(f("a`b", INT))),
    ("struct<````:int>", struct(f("`", INT))),
    ("struct<``:int>", struct(f("", INT))),
    ("struct<` padded `:int>", struct(f(" padded ", INT))),
    ("struct<`it's`:int>", struct(f("it's", INT))),
    ("struct<`a b` : int, `c:d` : string>", struct(f("a b", INT), f("c:d", STR))),
    # unquoted names the way Hive itself writes them into the metastore
    ("struct<a b:int>", struct(f("a b", INT))),
    ("struct<a.b:int>", struct(f("a.b", INT))),
    ("struct<x$y:int>", struct(f("x$y", INT))),
    ("struct<my-col:int>", struct(f("my-col", INT))),
    # field comments
    ("struct<a:int COMMENT 'the a',b:string>", struct(f("a", INT, "the a"), f("b", STR))),
    ("struct<a:int comment 'x'>", struct(f("a", INT, "x"))),
    ("struct<a:int Comment 'x' , b:int COMMENT 'y'>", struct(f("a", INT, "x"), f("b", INT, "y"))),
    ("struct<a:int COMMENT 'has: colon'>", struct(f("a", INT, "has: colon"))),
    ("struct<a:int COMMENT 'has, comma'>", struct(f("a", INT, "has, comma"))),
    ("struct<a:int COMMENT 'has <angle> brackets>'>", struct(f("a", INT, "has <angle> brackets>"))),
    ("struct<a:int COMMENT 'struct<b:int>'>", struct(f("a", INT, "struct<b:int>"))),
    ("struct<a:int COMMENT 'it\\'s'>", struct(f("a", INT, "it's"))),
    ('struct<a:int COMMENT "double \\" quoted">', struct(f("a", INT, 'double " quoted'))),
    ('struct<a:int COMMENT "it\'s">', struct(f("a", INT, "it's"))),
    ("struct<a:int COMMENT ''>", struct(f("a", INT, ""))),
    ("struct<a:int COMMENT 'back\\\\slash'>", struct(f("a", INT, "back\\slash"))),
    ("struct<a:int COMMENT 'tab\\there'>", struct(f("a", INT, "tab\there"))),
    ("struct<a:int COMMENT 'line\\nbreak'>", struct(f("a", INT, "line\nbreak"))),
    ("struct<a:int COMMENT '100\\%'>", struct(f("a", INT, "100\\%"))),
    ("struct<a:int COMMENT 'unicode: é ✓'>", struct(f("a", INT, "unicode: é ✓"))),
    ("struct<a:int COMMENT '`not a name`'>", struct(f("a", INT, "`not a name`"))),
    (
        "struct<a:array<int> COMMENT 'x',b:map<string,int> COMMENT 'y'>",
        struct(f("a", A(INT), "x"), f("b", M(STR, INT), "y")),
    ),
    (
        "struct<a:struct<b:int COMMENT 'inner'> COMMENT 'outer'>",
        struct(f("a", struct(f("b", INT, "inner")), "outer")),
    ),
    ("struct<`a:b`:int COMMENT 'c:d'>", struct(f("a:b", INT, "c:d"))),
    # unions
    ("uniontype<int>", union(INT)),
    ("uniontype<int,string>", union(INT, STR)),
    ("UNIONTYPE<INT, STRING, ARRAY<INT>>", union(INT, STR, A(INT))),
    ("uniontype<struct<a:int>,map<string,int>>", union(struct(f("a", INT)), M(STR, INT))),
    ("array<uniontype<int,double>>", A(union(INT, DBL))),
    ("struct<u:uniontype<int,uniontype<string,date>>>", struct(f("u", union(INT, union(STR, DateType()))))),
    # four levels and more
    ("struct<a:array<map<string,struct<b:array<int>>>>>", struct(f("a", A(M(STR, struct(f("b", A(INT)))))))),
    ("array<struct<a:map<string,array<struct<b:int>>>>>", A(struct(f("a", M(STR, A(struct(f("b", INT)))))))),
    (
        "map<string,array<struct<x:map<int,array<decimal(10,2)>>>>>",
        M(STR, A(struct(f("x", M(INT, A(DecimalType(10, 2))))))),
    ),
    (
        "struct<l1:struct<l2:struct<l3:struct<l4:int>>>>",
        struct(f("l1", struct(f("l2", struct(f("l3", struct(f("l4", INT)))))))),
    ),
    ("map<map<map<map<int,int>,int>,int>,int>", M(M(M(M(INT, INT), INT), INT), INT)),
    # the kind of strings real metastores hold
    (
        "struct<id:bigint,name:string,tags:array<string>,attrs:map<string,string>>",
        struct(f("id", BIGINT), f("name", STR), f("tags", A(STR)), f("attrs", M(STR, STR))),
    ),
    ("array<struct<ts:timestamp,value:double>>", A(struct(f("ts", TimestampType()), f("value", DBL)))),
    (
        "struct<`first name`:varchar(64),`last.name`:char(32),amount:decimal(12,2)>",
        struct(f("first name", VarcharType(64)), f("last.name", CharType(32)), f("amount", DecimalType(12, 2))),
    ),
]


def test_table_is_large() -> None:
    assert len(PARSE_CASES) >= 100


@pytest.mark.parametrize("text, expected", PARSE_CASES, ids=[c[0] for c in PARSE_CASES])
def test_parse(text: str, expected: DataType) -> None:
    assert parse_hive_type(text) == expected


@pytest.mark.parametrize("text, expected", PARSE_CASES, ids=[c[0] for c in PARSE_CASES])
def test_canonical_string_reparses_to_the_same_tree(text: str, expected: DataType) -> None:
    canonical = to_hive_string(expected)
    assert parse_hive_type(canonical) == expected
    assert to_hive_string(parse_hive_type(canonical)) == canonical


RENDER_CASES: list[tuple[DataType, str]] = [
    (INT, "int"),
    (DecimalType(10, 0), "decimal(10,0)"),
    (CharType(3), "char(3)"),
    (VarcharType(9), "varchar(9)"),
    (IntervalYearMonthType(), "interval_year_month"),
    (IntervalDayTimeType(), "interval_day_time"),
    (VoidType(), "void"),
    (A(M(STR, INT)), "array<map<string,int>>"),
    (struct(f("a", INT), f("B", STR)), "struct<a:int,B:string>"),
    (struct(f("a b", INT)), "struct<`a b`:int>"),
    (struct(f("a`b", INT)), "struct<`a``b`:int>"),
    (struct(f("", INT)), "struct<``:int>"),
    (struct(f("日本", INT)), "struct<日本:int>"),
    (struct(f("a", INT, "it's \\ here\n")), "struct<a:int COMMENT 'it\\'s \\\\ here\\n'>"),
    (union(INT, A(STR)), "uniontype<int,array<string>>"),
    (struct(), "struct<>"),
    # Hive strings carry neither nullability nor field ids
    (StructType((StructField("a", ArrayType(INT, False), nullable=False, field_id=7),)), "struct<a:array<int>>"),
]


@pytest.mark.parametrize("data_type, text", RENDER_CASES, ids=[c[1] for c in RENDER_CASES])
def test_render(data_type: DataType, text: str) -> None:
    assert to_hive_string(data_type) == text


@pytest.mark.parametrize(
    "data_type, name",
    [
        (TimestampNtzType(), "timestamp_ntz"),
        (TimeType(), "time"),
        (UuidType(), "uuid"),
        (FixedType(16), "fixed(16)"),
        (A(struct(f("id", UuidType()))), "uuid"),
    ],
)
def test_types_hive_cannot_store_are_refused(data_type: DataType, name: str) -> None:
    with pytest.raises(UnsupportedTypeError) as info:
        to_hive_string(data_type)
    assert f"type {name} has no Hive type string" in str(info.value)


def test_type_name_never_fails() -> None:
    assert type_name(A(struct(f("id", UuidType()), f("b", FixedType(4))))) == "array<struct<id:uuid,b:fixed(4)>>"


@SETTINGS
@given(hive_types)
def test_round_trip(data_type: DataType) -> None:
    assert parse_hive_type(to_hive_string(data_type)) == data_type


MALFORMED: list[tuple[str, int, str]] = [
    ("", 0, "unexpected end of type string: expected a type"),
    ("   ", 3, "unexpected end of type string"),
    ("strng", 0, "unknown type 'strng'"),
    ("array<strng>", 6, "unknown type 'strng'"),
    ("timestamp with local time zone", 10, "unexpected trailing input 'with local time zone'"),
    ("array<int,", 9, "expected '>' to close array<...> but found ','"),
    ("array<int", 9, "unexpected end of type string: expected '>' to close array<...>"),
    ("array", 5, "expected '<' after array"),
    ("array(int)", 5, "expected '<' after array but found '('"),
    ("array<>", 6, "expected a type but found '>'"),
    ("array<array<array<", 18, "unexpected end of type string: expected a type"),
    ("map", 3, "expected '<' after map"),
    ("map<int>", 7, "expected ',' between the key and value types of map<...> but found '>'"),
    ("map<int,string", 14, "expected '>' to close map<...>"),
    ("map<string,int,int>", 14, "expected '>' to close map<...> but found ','"),
    ("struct<a int>", 12, "expected ':' after field name 'a int' but found '>'"),
    ("struct<a:int b:int>", 13, "expected ',' or '>' to close struct<...> but found 'b'"),
    ("struct<:int>", 7, "expected a field name but found ':'"),
    ("struct<a:int,>", 13, "expected a field name but found '>'"),
    ("struct<a:>", 9, "expected a type but found '>'"),
    ("struct<a:int", 12, "unexpected end of type string: expected ',' or '>' to close struct<...>"),
    ("struct<`a`int>", 10, "expected ':' after field name `a` but found 'int'"),
    ("struct<`a:int>", 7, "unterminated backquoted name"),
    ("struct<a:int COMMENT 'oops>", 21, "unterminated string literal"),
    ("struct<a:int COMMENT>", 20, "expected a quoted comment after COMMENT but found '>'"),
    ("struct<a:int COMMENT the_a>", 21, "expected a quoted comment after COMMENT but found 'the_a'"),
    ("struct<'a':int>", 7, "expected a field name but found ''a''"),
    ("decimal(39,1)", 8, "decimal precision must be between 1 and 38 but was 39"),
    ("decimal(0)", 8, "decimal precision must be between 1 and 38 but was 0"),
    ("decimal(5,6)", 10, "decimal scale must be between 0 and the precision (5) but was 6"),
    ("decimal(10,-1)", 11, "expected the decimal scale (an integer) but found '-'"),
    ("decimal(a,b)", 8, "expected the decimal precision (an integer) but found 'a'"),
    ("decimal(10.5)", 10, "expected ')' to close decimal(...) but found '.'"),
    ("decimal(10,2", 12, "unexpected end of type string: expected ')' to close decimal(...)"),
    ("decimal()", 8, "expected the decimal precision (an integer) but found ')'"),
    ("char", 4, "unexpected end of type string: expected '(' after char"),
    ("char(0)", 5, "char length must be between 1 and 255 but was 0"),
    ("char(256)", 5, "char length must be between 1 and 255 but was 256"),
    ("varchar(65536)", 8, "varchar length must be between 1 and 65535 but was 65536"),
    ("varchar()", 8, "expected the varchar length (an integer) but found ')'"),
    ("varchar(10", 10, "expected ')' to close varchar(...)"),
    ("int int", 4, "unexpected trailing input 'int' after the end of the type"),
    ("array<int>>", 10, "unexpected trailing input '>'"),
    ("struct<a:int>>", 13, "unexpected trailing input '>'"),
    ("double precisions", 7, "unexpected trailing input 'precisions'"),
    ("interval", 8, "expected 'year to month' or 'day to second' after interval"),
    ("interval hour", 9, "expected 'year to month' or 'day to second' after interval but found 'hour'"),
    ("interval year to day", 17, "expected 'month' in 'interval year to month' but found 'day'"),
    ("uniontype<>", 10, "expected a type but found '>'"),
    ("uniontype<int string>", 14, "expected ',' or '>' to close uniontype<...> but found 'string'"),
    ("-int", 0, "expected a type but found '-'"),
    ("<int>", 0, "expected a type but found '<'"),
    ("array<" * 101 + "int" + ">" * 101, 600, "nested more than 100 levels deep"),
]


@pytest.mark.parametrize("text, position, fragment", MALFORMED, ids=[m[0][:40] for m in MALFORMED])
def test_malformed(text: str, position: int, fragment: str) -> None:
    with pytest.raises(SchemaError) as info:
        parse_hive_type(text, column="col_x")
    error = info.value
    assert fragment in error.reason
    assert error.position == position
    assert error.column == "col_x"
    assert str(error).startswith(f"column 'col_x', position {position}: ")


def test_malformed_table_is_large() -> None:
    assert len(MALFORMED) >= 25


def test_error_without_a_column() -> None:
    with pytest.raises(SchemaError) as info:
        parse_hive_type("array<")
    assert info.value.column is None
    assert str(info.value) == "position 6: unexpected end of type string: expected a type"


def test_errors_are_not_unsupported_type_errors() -> None:
    with pytest.raises(SchemaError) as info:
        parse_hive_type("strng")
    assert not isinstance(info.value, UnsupportedTypeError)
