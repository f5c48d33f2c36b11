"""The progress line: silent for quick work, drawn for slow work, cleared when done."""

from __future__ import annotations

import io

from hms_catalog.cli.progress import TerminalProgress


def test_quick_work_draws_nothing() -> None:
    stream = io.StringIO()
    progress = TerminalProgress(stream, delay=60.0)
    for done in range(1, 11):
        progress("listing", done, 10)
    assert stream.getvalue() == ""


def test_slow_work_draws_a_bar_and_clears_it() -> None:
    stream = io.StringIO()
    progress = TerminalProgress(stream, delay=0.0, width=10)
    progress("listing", 5, 10)
    assert stream.getvalue().endswith("\rlisting [#####.....] 5/10")
    progress("listing", 10, 10)
    assert "listing [##########] 10/10" in stream.getvalue()
    assert stream.getvalue().endswith("\r")  # the line is cleared for the answer that follows
