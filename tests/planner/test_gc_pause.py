"""The collector pause nests and restores the collector's previous state."""

from __future__ import annotations

import gc

from planner._gc import paused_gc


def test_nested_pauses_restore_the_collector_once_and_only_if_it_was_on() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_text_escapes_nulls_and_nesting_follow_lazy_simple_serde() -> None:
    from hms_catalog.formats.detect import TextFormat
    from hms_catalog.types import ArrayType, MapType, StringType
    from planner.readers.text import parse_value

    fmt = TextFormat(escape_char="\\")
    separators = ["|", ",", ":"]
    assert parse_value("\\N", StringType(), separators, 1, fmt) is None
    assert parse_value("a\\,b,c", ArrayType(StringType()), separators, 1, fmt) == ["a,b", "c"]
    assert parse_value("k\\:1:v,k2:v2", MapType(StringType(), StringType()), separators, 1, fmt) == [("k:1", "v"), ("k2", "v2")]
    assert parse_value("line\\nbreak", StringType(), separators, 1, fmt) == "line\nbreak"
