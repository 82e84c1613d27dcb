"""The command line's output: a command's document on stdout (the JSON document under `--json`, else its text),
and an error as `--json` readers get it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

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
