"""Serving the console's files: a fixed table of what the package ships, read once, so no request path
ever reaches the file system (nothing to traverse) and a path not in the table is a 404."""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping
from importlib import resources
from importlib.resources.abc import Traversable
from types import MappingProxyType
from typing import NamedTuple

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from service.errors import error_response

__all__ = ["CONSOLE_PREFIX", "Console", "console_files"]

CONSOLE_PREFIX = "/ui"
_INDEX = "index.html"
_TYPES = {".js": "text/javascript", ".css": "text/css", ".html": "text/html", ".svg": "image/svg+xml", ".txt": "text/plain"}
# The page may reach its own origin only: scripts, styles and API calls from the service, nothing inline
# but data: images (the empty favicon), no framing, no form posts anywhere.
_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
}


class ConsoleFile(NamedTuple):
    body: bytes
    media_type: str


def console_files() -> Mapping[str, ConsoleFile]:
    """The shipped files by path under ``/ui`` (``/ui`` and ``/ui/`` are the page itself), read-only."""
    found: dict[str, ConsoleFile] = {}
    _collect(resources.files(__package__ or "service.console") / "static", "", found)
    page = found[f"{CONSOLE_PREFIX}/{_INDEX}"]
    found[CONSOLE_PREFIX] = found[f"{CONSOLE_PREFIX}/"] = page
    return MappingProxyType(found)


def _collect(directory: Traversable, relative: str, found: dict[str, ConsoleFile]) -> None:
    for entry in directory.iterdir():
        path = f"{relative}/{entry.name}"
        if entry.is_dir():
            _collect(entry, path, found)
            continue
        suffix = "." + entry.name.rpartition(".")[2]
        media_type = _TYPES.get(suffix) or mimetypes.guess_type(entry.name)[0] or "application/octet-stream"
        if media_type.startswith("text/") or media_type == "image/svg+xml":
            media_type += "; charset=utf-8"
        found[CONSOLE_PREFIX + path] = ConsoleFile(entry.read_bytes(), media_type)


class Console:
    """Answers ``/ui`` and the paths under it from :func:`console_files`, before the token gate; every other
    request goes on to ``app``."""

    def __init__(self, app: ASGIApp, files: Mapping[str, ConsoleFile] | None = None) -> None:
        self.app = app
        self.files = console_files() if files is None else files

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path != CONSOLE_PREFIX and not path.startswith(CONSOLE_PREFIX + "/"):
            await self.app(scope, receive, send)
            return
        found = self.files.get(path)
        answer: Response
        if scope["method"] not in ("GET", "HEAD"):
            answer = error_response(405, "MethodNotAllowed", f"{scope['method']} {path}: the console's files are read-only")
        elif found is None:
            answer = error_response(404, "NotFound", f"the console has no file {path}")
        else:
            body = b"" if scope["method"] == "HEAD" else found.body
            answer = Response(body, media_type=found.media_type, headers={**_HEADERS, "Content-Length": str(len(found.body))})
        await answer(scope, receive, send)
