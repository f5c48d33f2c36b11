"""Masking secret property values wherever text that may carry them is shown.

Statements are echoed (JSON output, error excerpts, history), quoted in error messages and tracebacks,
and logged; ``CREATE CATALOG ... 'hive.metastore.password'='...'`` must show none of its secret in any of
them. One rule serves every place: the value of any ``key=value``, ``'key'='value'`` or ``key: value``
pair whose key looks secret (:func:`hms_catalog.properties.is_secret_key`, the rule SHOW CREATE CATALOG
uses) becomes the mask. Quoted values are matched as the DSL's tokenizer reads them (``''`` and
backslash escapes inside), so an escaped quote never ends the match early and leaves a tail showing.
"""

from __future__ import annotations

import re

from hms_catalog._secrets import MASK, is_secret_key

__all__ = ["mask_text", "mask_excerpt"]

_PAIR = re.compile(
    r"""(?P<key>'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|`[^`]*`|[A-Za-z0-9_.\-]+)"""
    r"""(?P<eq>\s*[=:]\s*)"""
    r"""(?P<value>'(?:[^'\\]|\\.|'')*(?:'|$)|"(?:[^"\\]|\\.|"")*(?:"|$)|[^\s,)'"]+)""",
    re.DOTALL,
)


def _masked_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, replacement) of every secret value in ``text``, in order."""
    spans = []
    for match in _PAIR.finditer(text):
        if not is_secret_key(match.group("key").strip("'\"`")):
            continue
        value = match.group("value")
        quote = value[0] if value[:1] in ("'", '"') else ""
        closed = quote and len(value) > 1 and value.endswith(quote)
        spans.append((match.start("value"), match.end("value"), f"{quote}{MASK}{quote if closed else ''}"))
    return spans


def mask_text(text: str) -> str:
    """``text`` with the values of secret-looking ``key=value`` pairs replaced by the mask.

    An unterminated quoted value (a statement cut off mid-string) is masked to the end of the text.
    """
    pieces = []
    last = 0
    for start, end, replacement in _masked_spans(text):
        pieces.append(text[last:start])
        pieces.append(replacement)
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def mask_excerpt(excerpt: str) -> str:
    """A syntax error's excerpt (input line, then a caret line) masked, the caret moved to match.

    The caret stays under the same token: shifted by what masking removed before it, or put at the
    start of a masked value it pointed into.
    """
    lines = excerpt.split("\n")
    if len(lines) != 2 or not lines[1].strip().startswith("^"):
        return mask_text(excerpt)
    source, caret_line = lines
    caret = len(caret_line) - len(caret_line.lstrip(" "))
    shift = 0
    for start, end, replacement in _masked_spans(source):
        if caret >= end:
            shift += len(replacement) - (end - start)
        elif caret >= start:
            shift += start - caret
            break
    return f"{mask_text(source)}\n{' ' * max(caret + shift, 0)}{caret_line.lstrip(' ')}"
