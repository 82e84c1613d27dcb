"""Model routing by a task's complexity (`models:` in `.autobuild/config.yaml`): which model a task's player and
coach sessions run, and what `--dry-run` prices a session of it at. Off unless configured; `--model` and
`--coach-model` win over it."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from orchestrator.errors import InputError

COMPLEXITIES = range(1, 11)
"""A plan's task complexities (plan/model.py)."""
ROUTED_ROLES = frozenset({"player", "coach"})
"""The sessions of a task's turns; the planner, the pre-check (its own `--precheck-model`) are never routed."""
_RANGE = re.compile(r"(\d{1,2})(?:\s*-\s*(\d{1,2}))?")
_MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@\[\]-]{0,99}")


def _problem(text: str) -> InputError:
    return InputError(f"models: {text}")


def _complexities(key: object) -> range:
    """`"1-3"` (or `"4"`, or YAML's 4) as the complexities it covers."""
    found = _RANGE.fullmatch(str(key).strip()) if not isinstance(key, bool) else None
    low, high = (int(found[1]), int(found[2] or found[1])) if found else (0, 0)
    if not found or not 1 <= low <= high <= 10:
        raise _problem(f"by_complexity key {str(key)[:40]!r} is not a range of complexities: write e.g. \"1-3\" or"
                       " \"8-10\" (from 1 to 10)")
    return range(low, high + 1)


def _model_name(value: object, where: str) -> str:
    if not isinstance(value, str) or not _MODEL_NAME.fullmatch(value.strip()):
        raise _problem(f"{where} must be a model name (e.g. claude-sonnet-4-5), not {str(value)[:40]!r}")
    return value.strip()


class ModelRouting(BaseModel):
    """`models:` of the config file: a model per range of complexities, covering 1-10 once, e.g.
    `by_complexity: {"1-3": claude-haiku-4-5, "4-7": claude-sonnet-4-5, "8-10": claude-opus-4-1}`, and, for
    `--dry-run`, what one session of a model costs (`session_usd: {claude-opus-4-1: 1.25}`; a model not listed
    is priced at `est_session_usd`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    by_complexity: dict[str, str]
    session_usd: dict[str, float] = {}

    @model_validator(mode="before")
    @classmethod
    def _shape(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise _problem("must be a mapping with `by_complexity` (e.g. by_complexity: {\"1-3\": claude-haiku-4-5,"
                           " \"4-10\": claude-sonnet-4-5})")
        unknown = sorted(str(key) for key in data if key not in cls.model_fields)
        if unknown:
            raise _problem(f"unknown key {unknown[0][:40]!r}: use by_complexity (and session_usd)")
        if not isinstance(data.get("by_complexity"), dict) or not data["by_complexity"]:
            raise _problem("by_complexity must map ranges of complexities to models (e.g. \"1-3\": claude-haiku-4-5)")
        if not isinstance(data.get("session_usd", {}), dict):
            raise _problem("session_usd must map model names to what one session costs (e.g. claude-opus-4-1: 1.25)")
        return data

    @field_validator("by_complexity", mode="before")
    @classmethod
    def _covering(cls, routes: dict[Any, Any]) -> dict[str, str]:
        """Every complexity 1-10 in exactly one range, each range a model name."""
        owner: dict[int, str] = {}
        checked: dict[str, str] = {}
        for key, value in routes.items():
            model = _model_name(value, f"by_complexity {str(key)[:20]!r}")
            for complexity in _complexities(key):
                if complexity in owner:
                    raise _problem(f"complexity {complexity} is in two ranges ({owner[complexity]!r} and"
                                   f" {str(key)!r}): give each complexity one model")
                owner[complexity] = str(key)
            checked[str(key).replace(" ", "")] = model
        missing = [complexity for complexity in COMPLEXITIES if complexity not in owner]
        if missing:
            raise _problem(f"by_complexity gives no model for complexity {', '.join(map(str, missing))}: cover 1-10"
                           " (a range may be wide, e.g. \"1-7\")")
        return checked

    @field_validator("session_usd", mode="before")
    @classmethod
    def _prices(cls, prices: dict[Any, Any]) -> dict[str, float]:
        checked: dict[str, float] = {}
        for name, usd in prices.items():
            model = _model_name(name, "a session_usd key")
            if isinstance(usd, bool) or not isinstance(usd, int | float) or not 0 <= usd < 1000:
                raise _problem(f"session_usd of {model} must be dollars per session (e.g. 0.25), not {usd!r}")
            checked[model] = float(usd)
        return checked

    def model_for(self, complexity: int) -> str:
        for key, model in self.by_complexity.items():
            if complexity in _complexities(key):
                return model
        raise AssertionError(f"complexity {complexity} outside 1-10")  # the plan's model keeps it in 1-10


def session_model(role: str, complexity: int, *, model: str | None, coach_model: str | None,
                  precheck_model: str | None, routing: ModelRouting | None) -> str | None:
    """The model of one session: the role's own flag, then `--model`, then the routing by the task's complexity;
    None: the CLI's default."""
    own = {"coach": coach_model, "precheck": precheck_model}.get(role)
    if own or model:
        return own or model
    if routing is not None and role in ROUTED_ROLES:
        return routing.model_for(complexity)
    return None
