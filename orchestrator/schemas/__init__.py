"""JSON Schemas (draft 2020-12) of every `--json` document and event, shipped for the tools that read them.

`load("status")` returns the schema of `autobuild status FEAT --json`; `names()` lists them all.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def names() -> list[str]:
    """Every shipped schema, by name (`status`, `event`, `error`, …)."""
    return sorted(entry.name.removesuffix(".schema.json") for entry in resources.files(__name__).iterdir()
                  if entry.name.endswith(".schema.json"))


def load(name: str) -> dict[str, Any]:
    """The schema called `name`."""
    data: dict[str, Any] = json.loads((resources.files(__name__) / f"{name}.schema.json").read_text("utf-8"))
    return data
