"""Cut input into statements at the semicolons that really end one.

Splitting is separate from tokenizing because it must never fail: a script with a bad statement still has
statements before it worth running, and an interactive prompt has to know whether a line finished a
statement before any of it can be parsed.  It is a character-at-a-time state machine, so the same code
serves a whole script and a stream fed in arbitrary chunks (a ``;`` inside a string split across two
chunks is still inside the string).
"""

from __future__ import annotations

from enum import Enum, auto

from hms_catalog.sql._source import StatementSource

__all__ = ["StatementBuffer", "split_statements"]


class _State(Enum):
    CODE = auto()
    DASH = auto()  # one '-' seen in code: a comment if another follows
    SLASH = auto()  # one '/' seen in code: a comment if '*' follows
    LINE_COMMENT = auto()
    BLOCK_COMMENT = auto()
    BLOCK_STAR = auto()  # '*' seen inside a block comment: it ends if '/' follows
    SINGLE_QUOTED = auto()
    SINGLE_ESCAPE = auto()
    DOUBLE_QUOTED = auto()
    DOUBLE_ESCAPE = auto()
    BACKQUOTED = auto()


# A doubled quote inside a literal reads here as "close, then open again": the same split either way.
_OPENERS: dict[str, _State] = {"'": _State.SINGLE_QUOTED, '"': _State.DOUBLE_QUOTED, "`": _State.BACKQUOTED}
_QUOTED: dict[_State, tuple[str, _State | None]] = {
    _State.SINGLE_QUOTED: ("'", _State.SINGLE_ESCAPE),
    _State.DOUBLE_QUOTED: ('"', _State.DOUBLE_ESCAPE),
    _State.BACKQUOTED: ("`", None),
}
_ESCAPED: dict[_State, _State] = {_State.SINGLE_ESCAPE: _State.SINGLE_QUOTED, _State.DOUBLE_ESCAPE: _State.DOUBLE_QUOTED}

# (index in the pending text, line, column)
_Mark = tuple[int, int, int]


class StatementBuffer:
    """Accumulates streamed input and hands out each statement once its ``;`` has arrived.

    Positions in the returned sources are in the coordinates of everything fed so far.  Pieces that hold
    only whitespace and comments are dropped; an unterminated block comment is kept (from its ``/*``) so
    that parsing reports it instead of silently eating the rest of the input.
    """

    def __init__(self) -> None:
        self._state = _State.CODE
        self._parts: list[str] = []  # text since the last ';', in the chunks it arrived in
        self._size = 0  # total length of _parts
        self._line = 1  # position of the next character to arrive
        self._column = 1
        self._start: _Mark | None = None  # first significant character of the pending statement
        self._mark: _Mark | None = None  # a '-' or '/' awaiting its next character, or a comment's '/*'

    def feed(self, chunk: str) -> list[StatementSource]:
        """Add ``chunk``; return the statements it completed, in input order."""
        done: list[StatementSource] = []
        begin = 0  # where the pending text starts inside this chunk
        for i, ch in enumerate(chunk):
            here = (self._size + i - begin, self._line, self._column)
            if self._step(ch, here):
                self._parts.append(chunk[begin:i])
                self._finish(done)
                begin = i + 1
            if ch == "\n":
                self._line += 1
                self._column = 1
            else:
                self._column += 1
        self._parts.append(chunk[begin:])
        self._size += len(chunk) - begin
        return done

    def pending(self) -> str:
        """The text received since the last statement ended, as fed (leading blanks included)."""
        return "".join(self._parts)

    def flush(self) -> list[StatementSource]:
        """End of input: return the unfinished rest as a last statement, if it holds anything."""
        if self._state in (_State.DASH, _State.SLASH, _State.BLOCK_COMMENT, _State.BLOCK_STAR):
            self._significant(self._mark)  # a lone '-' or '/', or the '/*' of an unterminated comment
        done: list[StatementSource] = []
        self._finish(done)
        return done

    def _step(self, ch: str, here: _Mark) -> bool:
        """Advance the state machine by one character; True when it is a statement-ending ``;``."""
        state = self._state
        if state is _State.CODE:
            return self._code(ch, here)
        if state in (_State.DASH, _State.SLASH):
            if ch == ("-" if state is _State.DASH else "*"):
                self._state = _State.LINE_COMMENT if state is _State.DASH else _State.BLOCK_COMMENT
                return False
            self._significant(self._mark)
            self._state = _State.CODE
            return self._code(ch, here)
        if state is _State.LINE_COMMENT:
            if ch == "\n":
                self._state = _State.CODE
        elif state is _State.BLOCK_COMMENT:
            if ch == "*":
                self._state = _State.BLOCK_STAR
        elif state is _State.BLOCK_STAR:
            if ch == "/":
                self._state = _State.CODE
            elif ch != "*":
                self._state = _State.BLOCK_COMMENT
        elif state in _ESCAPED:
            self._state = _ESCAPED[state]
        else:
            quote, escape = _QUOTED[state]
            if ch == quote:
                self._state = _State.CODE
            elif ch == "\\" and escape is not None:
                self._state = escape
        return False

    def _code(self, ch: str, here: _Mark) -> bool:
        if ch == ";":
            return True
        if ch == "-":
            self._state, self._mark = _State.DASH, here
        elif ch == "/":
            self._state, self._mark = _State.SLASH, here
        elif not ch.isspace():
            self._significant(here)
            self._state = _OPENERS.get(ch, _State.CODE)
        return False

    def _significant(self, mark: _Mark | None) -> None:
        if self._start is None:
            self._start = mark

    def _finish(self, done: list[StatementSource]) -> None:
        """Close the pending piece (its text is in ``_parts``) and start a new one."""
        if self._start is not None:
            index, line, column = self._start
            text = "".join(self._parts)[index:].rstrip()
            done.append(StatementSource(text, line, column))
        self._parts = []
        self._size = 0
        self._start = None
        self._mark = None
        self._state = _State.CODE


def split_statements(text: str) -> list[StatementSource]:
    """Cut ``text`` at every ``;`` outside strings, quoted identifiers and comments.

    Each piece starts at its first character that is not whitespace or part of a comment, and
    ``line``/``column`` say where that is in ``text``; trailing whitespace is dropped, and so is the ``;``.
    """
    buffer = StatementBuffer()
    return buffer.feed(text) + buffer.flush()
