"""The command line's output: a command's document on stdout (the JSON document under `--json`, else its text),
and an error as `--json` readers get it."""

from __future__ import annotations

import shutil
import sys
import textwrap
from collections.abc import Callable
from typing import Any, TextIO

from orchestrator.jsonout import dumps


def print_json(data: Any) -> None:
    """Print one document on stdout."""
    print(dumps(data), flush=True)


def print_document(data: Any, as_json: bool, text: Callable[[Any], str]) -> int:
    """A command's result: the JSON document under `--json`, else `text(data)`; 0, the command's exit code."""
    if as_json:
        print_json(data)
    else:
        print(text(data))
    return 0


def print_error(message: str, exit_code: int) -> None:
    """An error under `--json`: a document on stdout (where the reader parses), the one line on stderr too."""
    print_json({"error": message, "exit_code": exit_code})
    print(f"error: {message}", file=sys.stderr)


def wrapped(text: str, width: int) -> str:
    """`text` wrapped between words at `width` columns (a terminal wraps mid-word): a continued shell comment stays a
    comment, other lines continue indented; a command line is never wrapped, so it pastes as it is."""
    lines = []
    for line in text.splitlines():
        body = line.lstrip()
        if len(line) <= width or body.startswith("autobuild "):
            lines.append(line)
            continue
        indent = line[:len(line) - len(body)]
        more = indent + ("# " if body.startswith("# ") else "  ")
        lines += textwrap.wrap(body, width, initial_indent=indent, subsequent_indent=more, break_long_words=False,
                               break_on_hyphens=False) or [line]
    return "\n".join(lines)


def say(text: str, stream: TextIO | None = None) -> None:
    """Print lines for a person: wrapped between words at a terminal's width, as they are into a pipe or a file."""
    out = stream or sys.stdout
    width = shutil.get_terminal_size().columns if out.isatty() else 0
    print(wrapped(text, width) if width >= 20 else text, file=out)
