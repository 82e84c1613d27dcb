"""A question's answer typed inside the live view: the table keeps refreshing above the prompt while the person types.

The terminal goes to cbreak mode for the answer (keys arrive one by one, the terminal echoes nothing, Ctrl+C still
interrupts) and the view draws what was typed; the mode is put back when the line ends, and at exit if the run ends
while a person is typing.
"""

from __future__ import annotations

import atexit
import codecs
import contextlib
import os
import termios
import tty
from collections.abc import Callable, Iterator

_ENTER, _EOF, _ERASE, _KILL, _ESCAPE = "\r\n", "\x04", "\x7f\x08", "\x15", "\x1b"


@contextlib.contextmanager
def _cbreak(fd: int) -> Iterator[None]:
    saved = termios.tcgetattr(fd)

    def restore() -> None:
        with contextlib.suppress(termios.error, OSError):
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)

    atexit.register(restore)  # the run may end (Ctrl+C, an error) while the desk's thread still waits for a key
    tty.setcbreak(fd)
    try:
        yield
    finally:
        restore()
        atexit.unregister(restore)


def read_line(fd: int, typed: Callable[[str], None]) -> str:
    """One line from the terminal `fd`, `typed` told the text after each key (Backspace erases, Ctrl+U clears the
    line, arrow keys and other escape sequences are ignored) and once, empty, when the terminal is ready for it (a
    prompt shown before would leave a key typed meanwhile to the terminal's own echo). EOFError on Ctrl+D at an
    empty line or at the input's end."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    text, escape = "", False
    with _cbreak(fd):
        typed(text)
        while True:
            data = os.read(fd, 1024)
            if not data:
                raise EOFError
            for key in decoder.decode(data):
                if escape:  # ESC [ A …: an escape sequence ends at its first letter (or `~`)
                    escape = not (key.isalpha() or key == "~")
                    continue
                if key in _ENTER:
                    return text
                if key == _EOF and not text:
                    raise EOFError
                if key == _ESCAPE:
                    escape = True
                elif key in _ERASE:
                    text = text[:-1]
                elif key == _KILL:
                    text = ""
                elif key.isprintable():
                    text += key
                typed(text)
