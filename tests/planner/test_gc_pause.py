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
