"""The collector pause nests, restores the collector's previous state, and does not outlast its bound."""

from __future__ import annotations

import gc
import os
import threading
import time

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


def test_a_pause_longer_than_the_bound_has_the_watchdog_collect_while_the_collector_stays_off() -> None:
    """One slow step (a metastore answer of minutes, a long listing) or pauses that keep overlapping in a busy
    service would keep the collector off for ever: the watchdog collects once each bound's while, and the
    collector stays off for the pause; a stretch shorter than the bound is left alone."""
    pauses = _CollectorPauses(max_pause=0.1)
    collections: list[int] = []

    def noted(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and threading.current_thread().name == "gc-pause-watchdog":  # not the automatic ones
            collections.append(info["generation"])

    gc.callbacks.append(noted)
    try:
        with pauses.paused():
            with pauses.paused():
                pass
            time.sleep(0.6)  # six bounds
            assert collections and set(collections) == {2} and not gc.isenabled()
        assert gc.isenabled()
        seen = len(collections)
        with pauses.paused():
            time.sleep(0.02)
        time.sleep(0.3)  # the watchdog, had the short stretch woken it wrongly, would have collected by now
        assert len(collections) == seen
    finally:
        gc.callbacks.remove(noted)


def test_a_child_forked_during_a_pause_has_its_collector_on_and_can_pause_again() -> None:
    """The parent's pause never ends in the child (its thread is not there): the child starts with the collector
    as it was before the pause, and its own pauses work."""
    with paused_gc():
        child = os.fork()
        if child == 0:  # the child: report through the exit code only
            ok = gc.isenabled()
            with paused_gc():
                ok = ok and not gc.isenabled()
            os._exit(0 if ok and gc.isenabled() else 1)
        _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert gc.isenabled()


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
