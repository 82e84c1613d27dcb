"""A question's resume value as a served run receives it: the answer, and where a person gave it (`autobuild answer
--server` says `cli`, the worker's page `page`) for the task's trace; a bare value (a terminal, an older client)
is the answer alone."""

from __future__ import annotations

from typing import Any

SOURCES = frozenset({"cli", "page"})
"""Where an answer may say it was given; anything else is read as the answer itself."""


def with_source(text: str, source: str) -> dict[str, str]:
    """The resume value that carries where the answer was given."""
    return {"answer": text, "source": source}


def given_answer(value: Any) -> tuple[Any, dict[str, str]]:
    """(the answer, {"source": …} when the value says where it was given, else {})."""
    if isinstance(value, dict) and set(value) == {"answer", "source"} and value["source"] in SOURCES:
        return value["answer"], {"source": str(value["source"])}
    return value, {}
