from __future__ import annotations

import random

import pytest

from hms_catalog.sql import StatementBuffer, StatementSource, split_statements

S = StatementSource

SPLITS: list[tuple[str, list[StatementSource]]] = [
    ("", []),
    ("   \n\t ", []),
    (";;;", []),
    ("-- only a comment\n/* and another */ ;", []),
    ("SHOW CATALOGS", [S("SHOW CATALOGS", 1, 1)]),
    ("SHOW CATALOGS;", [S("SHOW CATALOGS", 1, 1)]),
    ("  SHOW CATALOGS  ;  ", [S("SHOW CATALOGS", 1, 3)]),
    ("a;b;c", [S("a", 1, 1), S("b", 1, 3), S("c", 1, 5)]),
    ("a;\n\n  b;\n", [S("a", 1, 1), S("b", 3, 3)]),
    ("SHOW\n  TABLES\n  FROM db;", [S("SHOW\n  TABLES\n  FROM db", 1, 1)]),
    ("-- lead\n /* x */ SHOW CATALOGS ; ;  x 'a;b' ;\n -- end", [S("SHOW CATALOGS", 2, 10), S("x 'a;b'", 2, 29)]),
    ("x 'a;b'; y", [S("x 'a;b'", 1, 1), S("y", 1, 10)]),
    ('x "a;b"; y', [S('x "a;b"', 1, 1), S("y", 1, 10)]),
    ("x `a;b`; y", [S("x `a;b`", 1, 1), S("y", 1, 10)]),
    ("x 'it''s; ok'; y", [S("x 'it''s; ok'", 1, 1), S("y", 1, 16)]),
    ("x 'esc\\'; still'; y", [S("x 'esc\\'; still'", 1, 1), S("y", 1, 19)]),
    ('x "esc\\"; still"; y', [S('x "esc\\"; still"', 1, 1), S("y", 1, 19)]),
    ("x `a``;b`; y", [S("x `a``;b`", 1, 1), S("y", 1, 12)]),
    ("x `a\\`; y", [S("x `a\\`", 1, 1), S("y", 1, 9)]),
    ("x -- no; split\n y; z", [S("x -- no; split\n y", 1, 1), S("z", 2, 5)]),
    ("x /* no; split */ y; z", [S("x /* no; split */ y", 1, 1), S("z", 1, 22)]),
    ("x /*/ ; */ y", [S("x /*/ ; */ y", 1, 1)]),
    ("x /* a **/ ; y", [S("x /* a **/", 1, 1), S("y", 1, 14)]),
    ("x; -- trailing comment", [S("x", 1, 1)]),
    ("x -- trailing comment\n", [S("x -- trailing comment", 1, 1)]),
    ("- x", [S("- x", 1, 1)]),
    ("  -;", [S("-", 1, 3)]),
    ("  /", [S("/", 1, 3)]),
    ("  /x", [S("/x", 1, 3)]),
    ("x; 'unterminated; string", [S("x", 1, 1), S("'unterminated; string", 1, 4)]),
    ("x; /* unterminated ; comment", [S("x", 1, 1), S("/* unterminated ; comment", 1, 4)]),
    ("x; /* unterminated *", [S("x", 1, 1), S("/* unterminated *", 1, 4)]),
    ("x; -- c\n/* c */\n\n\tSHOW  ;", [S("x", 1, 1), S("SHOW", 4, 2)]),
]


@pytest.mark.parametrize(("text", "expected"), SPLITS)
def test_split_statements(text: str, expected: list[StatementSource]) -> None:
    assert split_statements(text) == expected


@pytest.mark.parametrize(("text", "expected"), SPLITS)
def test_buffer_fed_char_by_char_matches_split(text: str, expected: list[StatementSource]) -> None:
    buffer = StatementBuffer()
    got: list[StatementSource] = []
    for ch in text:
        got.extend(buffer.feed(ch))
    got.extend(buffer.flush())
    assert got == expected


def test_piece_text_starts_at_the_recorded_position() -> None:
    text = "a;\n  -- c\n  /* d */ b\n c;  'x;y'  ; \n\td"
    lines = text.split("\n")
    for piece in split_statements(text):
        assert lines[piece.line - 1][piece.column - 1 :].startswith(piece.text.split("\n")[0])


def test_feed_returns_only_completed_statements() -> None:
    buffer = StatementBuffer()
    assert buffer.feed("SHOW CATA") == []
    assert buffer.pending() == "SHOW CATA"
    assert buffer.feed("LOGS; SHOW ") == [S("SHOW CATALOGS", 1, 1)]
    assert buffer.pending() == " SHOW "
    assert buffer.feed("TABLES;\nUSE db") == [S("SHOW TABLES", 1, 16)]
    assert buffer.pending() == "\nUSE db"
    assert buffer.flush() == [S("USE db", 2, 1)]
    assert buffer.pending() == ""
    assert buffer.flush() == []


def test_semicolon_in_string_split_across_chunks_does_not_end_statement() -> None:
    buffer = StatementBuffer()
    assert buffer.feed("CREATE CATALOG c PROPERTIES ('k'='a") == []
    assert buffer.feed(";b") == []
    assert buffer.feed("\\'") == []  # escaped quote: still inside the string
    assert buffer.feed(";')") == []
    assert buffer.feed(";") == [S("CREATE CATALOG c PROPERTIES ('k'='a;b\\';')", 1, 1)]


def test_comment_markers_split_across_chunks() -> None:
    buffer = StatementBuffer()
    assert buffer.feed("x -") == []
    assert buffer.feed("- ;\n;") == [S("x -- ;", 1, 1)]
    assert buffer.feed("y /") == []
    assert buffer.feed("* ; *") == []
    assert buffer.feed("/ ;") == [S("y /* ; */", 2, 2)]


def test_blank_only_pieces_are_dropped_but_positions_keep_counting() -> None:
    buffer = StatementBuffer()
    assert buffer.feed("  ;\n -- c ;\n") == []
    assert buffer.feed(";  z;") == [S("z", 3, 4)]


def test_pending_keeps_leading_blanks_and_comments_as_fed() -> None:
    buffer = StatementBuffer()
    buffer.feed("a; -- note\n  SHO")
    assert buffer.pending() == " -- note\n  SHO"


_ALPHABET = ["a", "b", " ", "\n", ";", "'", '"', "`", "\\", "-", "/", "*", "SHOW", "x.y"]


@pytest.mark.parametrize("seed", range(40))
def test_random_chunking_matches_split(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(25):
        text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 40)))
        buffer = StatementBuffer()
        got: list[StatementSource] = []
        i = 0
        while i < len(text):
            step = rng.randint(1, 5)
            got.extend(buffer.feed(text[i : i + step]))
            i += step
        got.extend(buffer.flush())
        assert got == split_statements(text), repr(text)
        for piece in got:
            assert piece.text == piece.text.strip()
            assert piece.text
