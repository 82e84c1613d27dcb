"""Check real `--json` outputs against the schemas the package ships (and that costs are rounded)."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema

from orchestrator import schemas

_COST_DIGITS = re.compile(r'"[a-z_]*usd": -?\d+\.\d{5,}')


def valid(name: str, text_or_document: str | Any) -> Any:
    """The document (parsed when given as text), after asserting it matches schema `name`."""
    text = text_or_document if isinstance(text_or_document, str) else json.dumps(text_or_document)
    document = json.loads(text)
    jsonschema.Draft202012Validator(schemas.load(name)).validate(document)
    assert not _COST_DIGITS.search(text), f"a cost with more than 4 decimals in {name}: {text[:300]}"
    return document


def valid_lines(text: str) -> list[dict[str, Any]]:
    """A `run --json` stream: every line an event, the last one the run's summary."""
    lines = [line for line in text.splitlines() if line.strip()]
    events = [valid("event", line) for line in lines[:-1]]
    return [*events, valid("run-summary", lines[-1])]
