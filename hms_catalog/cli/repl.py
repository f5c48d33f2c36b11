"""Interactive and streamed sessions.

Piped input is read line by line and each statement runs as soon as its ``;`` arrives, so another
program can drive a live session and read each answer before sending the next statement. At a terminal
the same loop gets a prompt, line editing and a history file.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from types import ModuleType
from typing import TextIO

from hms_catalog._private import FILE_MODE, private_directory, private_file
from hms_catalog.cli.runner import StatementRunner
from hms_catalog.masking import mask_text
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
        if readline is not None:
            _mask_last_entry(readline)
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
            os.close(private_file(history))  # exists with mode 0600 before readline writes into it
            readline.write_history_file(str(history))
            os.chmod(history, FILE_MODE)  # a readline that writes a new file and renames it keeps no mode
    return True


def _readline(history: Path) -> ModuleType | None:
    try:
        import readline
    except ImportError:  # pragma: no cover - platforms without readline
        return None
    private_directory(history.parent, tighten_existing=True)
    with contextlib.suppress(OSError):
        readline.read_history_file(str(history))
    readline.set_history_length(1000)
    return readline


def _mask_last_entry(readline: ModuleType) -> None:
    """Mask secrets in the line readline just added to the history, before it can reach the file."""
    length = readline.get_current_history_length()
    entry = readline.get_history_item(length) if length else None
    if entry and (masked := mask_text(entry)) != entry:
        readline.replace_history_item(length - 1, masked)
