"""Interactive and streamed sessions.

Piped input is read line by line and each statement runs as soon as its ``;`` arrives, so another
program can drive a live session and read each answer before sending the next statement. At a terminal
the same loop gets a prompt, line editing and a history file.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TextIO

from hms_catalog.cli.runner import StatementRunner
from hms_catalog.sql.parser import StatementBuffer

__all__ = ["stream_session", "interactive_session", "PROMPT", "CONTINUATION"]

PROMPT = "hms-catalog> "
CONTINUATION = "          -> "
_EXIT_WORDS = {"exit", "quit", "\\q", "exit;", "quit;"}


def stream_session(runner: StatementRunner, stream: TextIO) -> bool:
    """Run every statement read from ``stream``; an error is reported and the session goes on."""
    buffer = StatementBuffer()
    ok = True
    while True:
        line = stream.readline()
        if not line:
            break
        for source in buffer.feed(line):
            ok = runner.run(source) and ok
    for source in buffer.flush():
        ok = runner.run(source) and ok
    return ok


def interactive_session(runner: StatementRunner, history: Path) -> bool:
    """A prompt with history; statements may span lines until ``;``. Ends on EOF (Ctrl-D) or ``exit``."""
    readline = _readline(history)
    buffer = StatementBuffer()
    runner.out.write("hms-catalog: end statements with ';', 'exit' or Ctrl-D to leave.\n")
    while True:
        prompt = CONTINUATION if buffer.pending().strip() else PROMPT
        try:
            line = input(prompt)
        except EOFError:
            runner.out.write("\n")
            break
        except KeyboardInterrupt:
            runner.out.write("^C\n")
            buffer = StatementBuffer()
            continue
        if not buffer.pending().strip() and line.strip().lower() in _EXIT_WORDS:
            break
        try:
            for source in buffer.feed(line + "\n"):
                runner.run(source)
        except KeyboardInterrupt:
            runner.out.write("^C (statement cancelled)\n")
    for source in buffer.flush():
        runner.run(source)
    if readline is not None:
        with contextlib.suppress(OSError):
            readline.write_history_file(str(history))
    return True


def _readline(history: Path):  # type: ignore[no-untyped-def]
    try:
        import readline
    except ImportError:  # pragma: no cover - platforms without readline
        return None
    history.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        readline.read_history_file(str(history))
    readline.set_history_length(1000)
    return readline
