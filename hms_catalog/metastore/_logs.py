"""What an embedded metastore's server wrote, for the errors its start and stop report: the log (appended to
across starts) and the console output (written afresh by each start). A driver's error might quote the
database password, so what is returned has it masked."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from hms_catalog._secrets import MASK

__all__ = ["log_tail", "written_since"]


def _masked(text: str, secret: str | None) -> str:
    return text.replace(secret, MASK) if secret else text


def log_tail(paths: tuple[Path, ...], secret: str | None, lines: int = 30) -> str:
    """The last ``lines`` of each file, headed by its path."""
    chunks = []
    for path in paths:
        if path.exists():
            text = path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
            if text:
                chunks.append(f"--- {path} ---\n" + "\n".join(text))
    return _masked("\n".join(chunks) or "(the server wrote no log)", secret)


def written_since(log: Path, log_from: int, console: Path, secret: str | None) -> str:
    """What one start wrote: the log from ``log_from`` on (its size before the start; from its beginning when it
    has since rolled over and is smaller), then the console output."""
    text = ""
    with contextlib.suppress(OSError), open(log, "rb") as opened:
        opened.seek(log_from if log_from <= os.fstat(opened.fileno()).st_size else 0)
        text = opened.read().decode("utf-8", errors="replace")
    with contextlib.suppress(OSError):
        text += "\n" + console.read_text(encoding="utf-8", errors="replace")
    return _masked(text, secret)
