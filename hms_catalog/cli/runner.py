"""Feeds statement text to a session and writes each answer as soon as it is ready.

One runner serves -e, -f, piped stdin and the interactive prompt: they differ only in where text comes
from and whether the first error ends the run.
"""

from __future__ import annotations

import logging
import sys
import traceback
from typing import TextIO

from hms_catalog.cli.render import Renderer
from hms_catalog.errors import HmsCatalogError, SqlSyntaxError
from hms_catalog.execution.result import Result
from hms_catalog.execution.session import Session
from hms_catalog.masking import mask_excerpt, mask_text
from hms_catalog.remote import RemoteSession
from hms_catalog.sql.parser import StatementSource, parse_statement, split_statements

__all__ = ["StatementRunner"]

log = logging.getLogger(__name__)


class StatementRunner:
    """Runs sources through a session, rendering results to ``out`` and errors to ``err``."""

    def __init__(
        self, session: Session | RemoteSession, renderer: Renderer, *, out: TextIO | None = None, err: TextIO | None = None,
        debug: bool = False,
    ) -> None:
        self.session = session
        self.renderer = renderer
        # The streams of the moment, not of import time: a caller that redirected sys.stdout is obeyed.
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.debug = debug
        self.failures = 0
        if isinstance(session, Session):
            session.stream_rows = True  # rows written as they come: see _write_result

    def run(self, source: StatementSource, *, context: StatementSource | None = None) -> bool:
        """Run one statement; False when it failed (the error has been reported).

        ``context`` is the whole input the statement came from, so a syntax error quotes its full line.
        """
        text = source.text.strip()
        try:
            statement = parse_statement(source, context=context)
            text = statement.text or text
            result = self.session.execute(statement)
        except (HmsCatalogError, OSError) as error:
            self._report(text, error)
            return False
        except Exception as error:  # noqa: BLE001 - the session goes on; --debug shows the traceback
            self._report(text, error, unexpected=True)
            return False
        try:
            self._write_result(mask_text(text), result)
        except (HmsCatalogError, OSError) as error:  # a streamed result failed part-way: its line is cut short
            self.out.write("\n")
            self._report(text, error)
            return False
        return True

    def _write_result(self, text: str, result: Result) -> None:
        """The result's text written as it is rendered: SHOW SPLITS of half a million splits is never held
        whole, in rows or in text, by the JSON renderer."""
        for piece in self.renderer.pieces(text, result):
            self.out.write(piece)
        self._write(self.out, "")

    def run_all(self, text: str, *, stop_on_error: bool) -> bool:
        """Run every statement of ``text`` in order; with ``stop_on_error`` the first failure ends the run."""
        ok = True
        context = StatementSource(text)
        for source in split_statements(text):
            if not self.run(source, context=context):
                ok = False
                if stop_on_error:
                    break
        return ok

    def _report(self, text: str, error: BaseException, *, unexpected: bool = False) -> None:
        """Write ``error`` for ``text``; secret values are masked in the statement, message and traceback."""
        self.failures += 1
        message = _shown_message(error)
        if unexpected:
            message = f"internal error ({type(error).__name__}): {message}"
        first_line = message.split("\n", 1)[0]
        rendered = self.renderer.error(mask_text(text), first_line if isinstance(error, SqlSyntaxError) else message)
        if rendered is not None:
            self._write(self.out, rendered)
        self._write(self.err, f"error: {message}")
        if self.debug:
            self._write(self.err, mask_text("".join(traceback.format_exception(error))))

    @staticmethod
    def _write(stream: TextIO, text: str) -> None:
        stream.write(text + "\n")
        stream.flush()


def _shown_message(error: BaseException) -> str:
    """The error's message with secrets masked; a syntax error's excerpt keeps its caret under the token."""
    message = str(error) or type(error).__name__
    if isinstance(error, SqlSyntaxError) and error.excerpt and message.endswith(error.excerpt):
        head = message[: len(message) - len(error.excerpt)]
        return mask_text(head) + mask_excerpt(error.excerpt)
    return mask_text(message)
