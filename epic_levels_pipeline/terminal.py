"""Text from files made safe to print: the one helper every message that echoes a file's value goes through.
:func:`printable` writes control and format characters (``\\x1b``, ``\\r``, ``\\u202e``) as Python escapes, so the
text shows what the file holds and drives nothing, and cuts it to ``limit``; :func:`escaped_output` escapes
everything a command prints and cuts lines at ``LINE_LIMIT``."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager

#: Longest text shown of one value from a file (a cell, a column name, a path); whole lines get ``LINE_LIMIT``.
VALUE_LIMIT = 200
LINE_LIMIT = 2000


def _escaped(char: str) -> str:
    """A character Python does not count as printable (controls, format characters such as bidirectional
    overrides, line and paragraph separators, unassigned code points, spaces other than ' ') as its escape."""
    if char.isprintable():
        return char
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(value: object, limit: int | None = VALUE_LIMIT) -> str:
    """``value`` as text with every control or format character escaped (``\\x1b``, ``\\n``, ``\\u202e``),
    cut to ``limit`` characters (None: not cut). Plain text is returned unchanged."""
    text = value if isinstance(value, str) else str(value)
    if not text.isprintable():
        text = "".join(map(_escaped, text))
    if limit is not None and len(text) > limit:
        text = f"{text[:limit]}… ({len(text) - limit} more characters)"
    return text


def printable_lines(text: object, limit: int | None = LINE_LIMIT) -> str:
    """A message of several lines made safe line by line: its own newlines kept, everything else as in
    :func:`printable` (each line cut to ``limit``)."""
    return "\n".join(printable(line, limit) for line in str(text).split("\n"))


class EscapingWriter(io.TextIOBase):
    """A text stream that writes to ``stream`` with every control or format character but the newline escaped,
    and each line cut at ``limit`` characters. It is not a terminal (``isatty`` is False), so nothing that writes
    to it sends colour codes of its own."""

    def __init__(self, stream, limit: int = LINE_LIMIT) -> None:
        super().__init__()
        self.stream, self.limit = stream, limit
        self._column = 0  # characters written on the current line
        self._cut = False  # the current line has been cut

    def write(self, text: str) -> int:
        pieces = str(text).split("\n")
        out = []
        for n, piece in enumerate(pieces):
            if n:
                out.append("\n")
                self._column, self._cut = 0, False
            piece = printable(piece, None)
            room = self.limit - self._column
            if len(piece) > room:
                if not self._cut:
                    out.append(piece[:max(room, 0)] + " …(line cut)")
                self._cut = True
                self._column = self.limit
            else:
                out.append(piece)
                self._column += len(piece)
        self.stream.write("".join(out))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:
        return getattr(self.stream, "encoding", "utf-8")


@contextmanager
def escaped_output(limit: int = LINE_LIMIT) -> Iterator[None]:
    """For the duration of one command: ``sys.stdout`` and ``sys.stderr`` through :class:`EscapingWriter`."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = EscapingWriter(saved[0], limit), EscapingWriter(saved[1], limit)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        sys.stdout, sys.stderr = saved


__all__ = ["LINE_LIMIT", "VALUE_LIMIT", "EscapingWriter", "escaped_output", "printable", "printable_lines"]
