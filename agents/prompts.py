"""Loads markdown prompt templates by name and renders them strictly (a missing variable is an error)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

import yaml

from agents.errors import PromptError

PROMPTS_ENV = "AUTOBUILD_PROMPTS_DIR"


@dataclass(frozen=True)
class PromptTemplate:
    """A prompt body plus its front-matter (version, role, tools, max_turns)."""

    name: str
    body: str
    meta: dict[str, Any] = field(default_factory=dict)

    def render(self, **variables: object) -> str:
        try:
            return Template(self.body).substitute({k: str(v) for k, v in variables.items()})
        except KeyError as exc:
            raise PromptError(f"prompt {self.name!r} needs variable {exc.args[0]!r}") from None
        except ValueError as exc:
            raise PromptError(f"prompt {self.name!r} has a malformed placeholder: {exc}") from None


def _candidates(name: str) -> list[tuple[str, Path | resources.abc.Traversable]]:
    places: list[tuple[str, Path | resources.abc.Traversable]] = []
    override = os.environ.get(PROMPTS_ENV)
    if override:
        places.append((f"{override}/{name}.md", Path(override) / f"{name}.md"))
    packaged = resources.files("prompts") / f"{name}.md"
    places.append((f"package prompts/{name}.md", packaged))
    return places


def load_prompt(name: str) -> PromptTemplate:
    """Find a prompt by name; the error lists every place tried."""
    tried = []
    for label, place in _candidates(name):
        if place.is_file():
            return _parse(name, place.read_text(encoding="utf-8"))
        tried.append(label)
    raise PromptError(f"prompt {name!r} not found; tried: {', '.join(tried)}")


def _parse(name: str, text: str) -> PromptTemplate:
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end == -1:
            raise PromptError(f"prompt {name!r}: front-matter is not closed by '---'")
        meta = yaml.safe_load(text[4:end]) or {}
        if not isinstance(meta, dict):
            raise PromptError(f"prompt {name!r}: front-matter must be a mapping")
        return PromptTemplate(name, text[end + 5 :], meta)
    return PromptTemplate(name, text)
