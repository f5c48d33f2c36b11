"""MkDocs hook: the pages are written so that GitHub renders them too.

In a GitHub table a ``|`` inside a code span must be written ``\\|`` or it ends the cell, and GitHub drops
the backslash. Python-Markdown's tables already keep a code span's ``|`` in its cell, but would print the
backslash, so the build drops it from code spans on table rows before the page is parsed.
"""

from __future__ import annotations

import re
from typing import Any

_CODE_SPAN = re.compile(r"`[^`\n]*`")


def _unescape_pipes(line: str) -> str:
    if not line.lstrip().startswith("|"):
        return line
    return _CODE_SPAN.sub(lambda span: span.group(0).replace("\\|", "|"), line)


def on_page_markdown(markdown: str, **_: Any) -> str:
    lines, fenced = [], False
    for line in markdown.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        lines.append(line if fenced else _unescape_pipes(line))
    return "\n".join(lines)
