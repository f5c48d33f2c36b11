from __future__ import annotations

import pytest

from hms_catalog.errors import HmsCatalogError, SqlSyntaxError
from hms_catalog.sql import StatementSource, Token, TokenType, tokenize

T = TokenType


def kinds_and_values(text: str) -> list[tuple[TokenType, str]]:
    return [(tok.type, tok.value) for tok in tokenize(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("show catalogs", [(T.IDENTIFIER, "show"), (T.IDENTIFIER, "catalogs"), (T.EOF, "")]),
        ("a.b.c", [(T.IDENTIFIER, "a"), (T.DOT, "."), (T.IDENTIFIER, "b"), (T.DOT, "."), (T.IDENTIFIER, "c"), (T.EOF, "")]),
        ("_x$1 Y_2", [(T.IDENTIFIER, "_x$1"), (T.IDENTIFIER, "Y_2"), (T.EOF, "")]),
        ("(,=);", [(T.LPAREN, "("), (T.COMMA, ","), (T.EQ, "="), (T.RPAREN, ")"), (T.SEMICOLON, ";"), (T.EOF, "")]),
        ("42 007", [(T.NUMBER, "42"), (T.NUMBER, "007"), (T.EOF, "")]),
        ("1.5 0.25 10.000", [(T.NUMBER, "1.5"), (T.NUMBER, "0.25"), (T.NUMBER, "10.000"), (T.EOF, "")]),
        ("1.x", [(T.NUMBER, "1"), (T.DOT, "."), (T.IDENTIFIER, "x"), (T.EOF, "")]),
        ("1.", [(T.NUMBER, "1"), (T.DOT, "."), (T.EOF, "")]),
        ("a.1", [(T.IDENTIFIER, "a"), (T.DOT, "."), (T.NUMBER, "1"), (T.EOF, "")]),
        ("-1 - 2.5", [(T.MINUS, "-"), (T.NUMBER, "1"), (T.MINUS, "-"), (T.NUMBER, "2.5"), (T.EOF, "")]),
        ("a --1\nb", [(T.IDENTIFIER, "a"), (T.IDENTIFIER, "b"), (T.EOF, "")]),
        ("a- -1", [(T.IDENTIFIER, "a"), (T.MINUS, "-"), (T.MINUS, "-"), (T.NUMBER, "1"), (T.EOF, "")]),
        (
            "< <= > >= <> != =",
            [(T.LT, "<"), (T.LE, "<="), (T.GT, ">"), (T.GE, ">="), (T.NE, "<>"), (T.NE, "!="), (T.EQ, "="), (T.EOF, "")],
        ),
        ("a<=b", [(T.IDENTIFIER, "a"), (T.LE, "<="), (T.IDENTIFIER, "b"), (T.EOF, "")]),
        ("a<-1", [(T.IDENTIFIER, "a"), (T.LT, "<"), (T.MINUS, "-"), (T.NUMBER, "1"), (T.EOF, "")]),
        ("==", [(T.EQ, "="), (T.EQ, "="), (T.EOF, "")]),
        ("<>=", [(T.NE, "<>"), (T.EQ, "="), (T.EOF, "")]),
        ("< =", [(T.LT, "<"), (T.EQ, "="), (T.EOF, "")]),
        ("`my table`", [(T.QUOTED_IDENTIFIER, "my table"), (T.EOF, "")]),
        ("`a``b`", [(T.QUOTED_IDENTIFIER, "a`b"), (T.EOF, "")]),
        ("````", [(T.QUOTED_IDENTIFIER, "`"), (T.EOF, "")]),
        ("`Mixed.Case`.`x-y`", [(T.QUOTED_IDENTIFIER, "Mixed.Case"), (T.DOT, "."), (T.QUOTED_IDENTIFIER, "x-y"), (T.EOF, "")]),
        ("`a\\nb`", [(T.QUOTED_IDENTIFIER, "a\\nb"), (T.EOF, "")]),
        ("'plain'", [(T.STRING, "plain"), (T.EOF, "")]),
        ('"double"', [(T.STRING, "double"), (T.EOF, "")]),
        ("''", [(T.STRING, ""), (T.EOF, "")]),
        ("'it''s'", [(T.STRING, "it's"), (T.EOF, "")]),
        ('"say ""hi"""', [(T.STRING, 'say "hi"'), (T.EOF, "")]),
        ("'a\\nb\\tc'", [(T.STRING, "a\nb\tc"), (T.EOF, "")]),
        ("'back\\\\slash'", [(T.STRING, "back\\slash"), (T.EOF, "")]),
        ("'\\'q\\\"'", [(T.STRING, "'q\""), (T.EOF, "")]),
        ('"\\"q\\\'"', [(T.STRING, "\"q'"), (T.EOF, "")]),
        ("'C:\\data\\x'", [(T.STRING, "C:\\data\\x"), (T.EOF, "")]),
        ("'\"'", [(T.STRING, '"'), (T.EOF, "")]),
        ("'a;b -- c /* d */'", [(T.STRING, "a;b -- c /* d */"), (T.EOF, "")]),
        ("'line1\nline2'", [(T.STRING, "line1\nline2"), (T.EOF, "")]),
        ("a -- comment ; 'x\nb", [(T.IDENTIFIER, "a"), (T.IDENTIFIER, "b"), (T.EOF, "")]),
        ("a /* multi\nline */ b", [(T.IDENTIFIER, "a"), (T.IDENTIFIER, "b"), (T.EOF, "")]),
        ("a/**/b", [(T.IDENTIFIER, "a"), (T.IDENTIFIER, "b"), (T.EOF, "")]),
        ("a /*/ still comment */ b", [(T.IDENTIFIER, "a"), (T.IDENTIFIER, "b"), (T.EOF, "")]),
        ("a --", [(T.IDENTIFIER, "a"), (T.EOF, "")]),
        ("", [(T.EOF, "")]),
        ("  \t\n -- only a comment", [(T.EOF, "")]),
    ],
)
def test_token_values(text: str, expected: list[tuple[TokenType, str]]) -> None:
    assert kinds_and_values(text) == expected


def test_raw_keeps_source_text_and_offsets_slice_it() -> None:
    text = "x `a``b` 'it''s' \"q\""
    tokens = tokenize(text)
    assert [tok.raw for tok in tokens] == ["x", "`a``b`", "'it''s'", '"q"', ""]
    for tok in tokens:
        assert text[tok.offset : tok.end] == tok.raw


def test_keywords_match_any_case_but_quoted_names_never() -> None:
    bare, quoted = tokenize("sHoW `SHOW`")[:2]
    assert bare.is_keyword("SHOW")
    assert bare.value == "sHoW"
    assert not quoted.is_keyword("SHOW")
    assert not bare.is_keyword("show")  # keywords are given in upper case


def test_positions_are_one_based_lines_and_columns() -> None:
    text = "SHOW\n  tables /* c\nc */ x\n\t'multi\nline' y"
    got = [(tok.value, tok.line, tok.column) for tok in tokenize(text)]
    assert got == [
        ("SHOW", 1, 1),
        ("tables", 2, 3),
        ("x", 3, 6),
        ("multi\nline", 4, 2),
        ("y", 5, 7),
        ("", 5, 8),
    ]


def test_origin_shifts_first_line_columns_only() -> None:
    got = [(tok.raw, tok.line, tok.column) for tok in tokenize("a b\nc", line=7, column=10)]
    assert got == [("a", 7, 10), ("b", 7, 12), ("c", 8, 1), ("", 8, 2)]


def test_eof_sits_just_after_last_token_not_after_trailing_blanks() -> None:
    eof = tokenize("SHOW  -- trailing\n\n")[-1]
    assert (eof.type, eof.line, eof.column, eof.offset) == (T.EOF, 1, 5, 4)
    assert eof.display == "<end of input>"


def test_eof_of_empty_text_is_at_origin() -> None:
    eof = tokenize("", line=3, column=4)[-1]
    assert (eof.line, eof.column) == (3, 4)


def test_tokens_are_frozen_values() -> None:
    tok = tokenize("a")[0]
    assert tok == Token(T.IDENTIFIER, "a", "a", 1, 1, 0)
    with pytest.raises(AttributeError):
        tok.value = "b"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "message", "line", "column", "token"),
    [
        ("SHOW 'abc", "unterminated string literal", 1, 6, "'abc"),
        ('x\n  "abc\ndef', "unterminated string literal", 2, 3, '"abc'),
        ("'ends with backslash\\'", "unterminated string literal", 1, 1, "'ends with backslash\\'"),
        ("'a''", "unterminated string literal", 1, 1, "'a''"),
        ("DESC `tbl", "unterminated quoted identifier", 1, 6, "`tbl"),
        ("DESC `a``", "unterminated quoted identifier", 1, 6, "`a``"),
        ("a\n /* never\n closed", "unterminated comment", 2, 2, "/*"),
        ("a /*/", "unterminated comment", 1, 3, "/*"),
        ("SHOW @x", "unexpected character", 1, 6, "@"),
        ("a ! b", "unexpected character", 1, 3, "!"),
        ("a !", "unexpected character", 1, 3, "!"),
        ("a / b", "unexpected character", 1, 3, "/"),
        ("a = 1.5e3", "malformed number", 1, 5, "1.5e3"),
        ("a = 1.5.3x", "identifier cannot start with a digit; quote it with backquotes", 1, 9, "3x"),
        ("a ! = b", "unexpected character", 1, 3, "!"),
        ("USE 1db", "identifier cannot start with a digit; quote it with backquotes", 1, 5, "1db"),
        ("DESC ``", "empty quoted identifier", 1, 6, "``"),
        ("café", "unexpected character", 1, 4, "é"),
    ],
)
def test_lexical_errors(text: str, message: str, line: int, column: int, token: str) -> None:
    with pytest.raises(SqlSyntaxError) as info:
        tokenize(text)
    err = info.value
    assert (err.reason, err.line, err.column, err.token) == (message, line, column, token)
    assert isinstance(err, HmsCatalogError)


def test_error_excerpt_is_the_line_with_a_caret_under_the_column() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        tokenize("SHOW\nTABLES 'oops")
    assert info.value.excerpt == "TABLES 'oops\n       ^"
    assert str(info.value) == "line 2:8: unterminated string literal near ''oops'\nTABLES 'oops\n       ^"


def test_error_excerpt_keeps_tabs_so_the_caret_lines_up() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        tokenize("\tx\t@")
    assert info.value.excerpt == "\tx\t@\n\t \t^"


def test_error_excerpt_quotes_the_context_line_when_given() -> None:
    context = StatementSource("SHOW CATALOGS; SHOW 'x")
    with pytest.raises(SqlSyntaxError) as info:
        tokenize("SHOW 'x", line=1, column=16, context=context)
    err = info.value
    assert (err.line, err.column) == (1, 21)
    assert err.excerpt == "SHOW CATALOGS; SHOW 'x\n                    ^"


def test_long_or_multiline_tokens_are_shortened_in_errors() -> None:
    with pytest.raises(SqlSyntaxError) as info:
        tokenize("'" + "x" * 100)
    assert info.value.token == "'" + "x" * 36 + "..."


def test_operator_raw_text_is_kept_so_not_equal_keeps_its_spelling() -> None:
    tokens = tokenize("a != b <> c")
    assert [(tok.type, tok.raw, tok.column) for tok in tokens[1:4:2]] == [(T.NE, "!=", 3), (T.NE, "<>", 8)]
