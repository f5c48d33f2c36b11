"""Files only their owner may read: the home directory and what hms-catalog writes in it.

Catalog properties may hold passwords, the prompt's history holds the statements that set them, and a
server's token file its credential. ``mkdir``'s and ``open``'s modes pass through the umask, which may
only remove bits, so each is made with the private mode and then set to it explicitly: the result is the
same under any umask.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DIRECTORY_MODE", "FILE_MODE", "private_directory", "private_file"]

DIRECTORY_MODE = 0o700
FILE_MODE = 0o600


def private_directory(path: Path, *, tighten_existing: bool = False) -> Path:
    """Make ``path`` (and missing parents) a directory only its owner may enter.

    A directory that existed before is tightened only when ``tighten_existing`` says it is ours (it
    holds our own files): a user may point the home at a folder shared with other programs.
    """
    try:
        path.mkdir(mode=DIRECTORY_MODE, parents=True)
    except FileExistsError:
        if not tighten_existing:
            return path
    if (path.stat().st_mode & 0o777) != DIRECTORY_MODE:
        os.chmod(path, DIRECTORY_MODE)
    return path


def private_file(path: Path, flags: int = os.O_WRONLY | os.O_APPEND) -> int:
    """Open (creating if needed) ``path`` with mode 0600 whatever the umask; returns the descriptor."""
    descriptor = os.open(path, flags | os.O_CREAT, FILE_MODE)
    try:
        os.fchmod(descriptor, FILE_MODE)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor
