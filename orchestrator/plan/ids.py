"""Feature and task ids: one pattern, matched whole, and one length cap, wherever an id enters."""

from __future__ import annotations

import re

from orchestrator.errors import PlanError

MAX_ID_LENGTH = 64
"""The plan model's cap: an id names a file, a branch and a thread, and 255 bytes end a file name."""

ID_PATTERN = r"^[A-Za-z0-9_-]+$"
"""For pydantic and the JSON Schemas (pydantic-core's `$` is the end of the text); Python code calls `is_id`, whose
full match refuses what Python's `$` lets through: a final newline (`FEAT-001\\n`)."""

_ID = re.compile(r"[A-Za-z0-9_-]+")


def is_id(value: str) -> bool:
    """Letters, digits, '-' and '_' only, the whole text, 1 to 64 characters."""
    return 0 < len(value) <= MAX_ID_LENGTH and _ID.fullmatch(value) is not None


def check_id(kind: str, value: str) -> str:
    """Reject ids that could escape a path or a branch name (`/`, `..`, spaces, a newline) or overrun a file name."""
    if len(value) > MAX_ID_LENGTH:
        raise PlanError(f"invalid {kind} id {value[:20]!r}… ({len(value)} characters): an id has at most"
                        f" {MAX_ID_LENGTH}: shorten it")
    if not is_id(value):
        raise PlanError(f"invalid {kind} id {value!r}: use only letters, digits, '-' and '_'")
    return value
