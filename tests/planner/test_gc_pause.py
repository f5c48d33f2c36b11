"""The collector pause nests, restores the collector's previous state, and does not outlast its bound."""

from __future__ import annotations

import gc

from planner._gc import _CollectorPauses, paused_gc


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


def test_overlapping_pauses_collect_once_past_the_bound_and_stay_paused() -> None:
    """Pauses that keep overlapping (a service planning without a gap) would keep the collector off for ever:
    the pause ending past the bound collects once, and the collector stays off for the others."""
    now = [0.0]
    pauses = _CollectorPauses(clock=lambda: now[0], max_pause=30.0)
    collections: list[int] = []

    def noted(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(noted)
    try:
        with pauses.paused():
            with pauses.paused():
                now[0] = 10.0
            assert collections == [] and not gc.isenabled()  # within the bound: nothing collected
            with pauses.paused():
                now[0] = 31.0
            assert collections == [2] and not gc.isenabled()  # past it: one full collection, still paused
            with pauses.paused():
                now[0] = 40.0
            assert collections == [2]  # the bound counts again from that collection
        assert gc.isenabled()
    finally:
        gc.callbacks.remove(noted)


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
