"""Scenario for the scripted model: which response each role/task/turn session gets at each step."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

TOOL_PREFIX = "mcp__autobuild__"
SESSION_MARKER = re.compile(r"AutoBuild session: role=(\S+) task=(\S+) turn=(\d+)")
CWD_MARKER = re.compile(r"Primary working directory: (\S+)")


@dataclass(frozen=True)
class SessionKey:
    """Identifies one agent session as our prompts announce it."""

    role: str
    task: str
    turn: int


@dataclass
class SessionScript:
    """The steps one matching session plays, one per model request."""

    role: str
    task: str | None
    turn: int | None
    steps: list[dict[str, Any]]

    def matches(self, key: SessionKey) -> bool:
        return (
            self.role == key.role
            and (self.task is None or self.task == key.task)
            and (self.turn is None or self.turn == key.turn)
        )

    def specificity(self) -> int:
        return (self.task is not None) + (self.turn is not None)


@dataclass
class Scenario:
    """All session scripts plus what to answer when nothing matches."""

    sessions: list[SessionScript] = field(default_factory=list)
    default_text: str = "Nothing scripted for this session."
    limit_window: dict[str, Any] | None = None
    """A usage limit: every request in the first `seconds` after the first one gets `status` (429); with `held`,
    also every request until the test calls `ScriptedModel.end_limit()` (a window no slow host outlasts)."""
    rate_limit_headers: list[dict[str, Any]] | None = None
    """Subscription quota headers on every answer (`anthropic-ratelimit-unified-*`), in phases: the last one
    whose `from_s` (seconds since the first request) has passed sends its `headers` (see scripted_model)."""

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Scenario:
        sessions = [
            SessionScript(
                role=str(item["role"]),
                task=item.get("task"),
                turn=item.get("turn"),
                steps=list(item.get("steps", [])),
            )
            for item in data.get("sessions", [])
        ]
        return cls(sessions=sessions, default_text=str(data.get("default_text", cls.default_text)),
                   limit_window=data.get("limit_window"), rate_limit_headers=data.get("rate_limit_headers"))

    @classmethod
    def load(cls, path: Path) -> Scenario:
        return cls.from_data(yaml.safe_load(path.read_text(encoding="utf-8")))

    def script_for(self, key: SessionKey) -> SessionScript | None:
        found = [script for script in self.sessions if script.matches(key)]
        return max(found, key=SessionScript.specificity) if found else None


def new_id(prefix: str) -> str:
    # The CLI merges assistant messages sharing an id, so every response gets a fresh one.
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def _resolve(path: str, cwd: str | None) -> str:
    if path.startswith("/") or cwd is None:
        return path
    return str(Path(cwd) / path)


def step_to_blocks(step: dict[str, Any], key: SessionKey, cwd: str | None) -> list[dict[str, Any]]:
    """Turn one scenario step into Anthropic content blocks (text and/or tool_use)."""
    blocks: list[dict[str, Any]] = []
    if "text" in step:
        blocks.append({"type": "text", "text": str(step["text"])})

    def tool_use(name: str, tool_input: dict[str, Any]) -> None:
        blocks.append({"type": "tool_use", "id": new_id("toolu"), "name": name, "input": tool_input})

    if "write" in step:
        spec = step["write"]
        tool_use("Write", {"file_path": _resolve(spec["path"], cwd), "content": spec["content"]})
    if "read" in step:
        tool_use("Read", {"file_path": _resolve(step["read"], cwd)})
    if "edit" in step:
        spec = step["edit"]
        tool_use(
            "Edit",
            {"file_path": _resolve(spec["path"], cwd), "old_string": spec["old"], "new_string": spec["new"]},
        )
    for builtin in ("grep", "glob"):  # {"grep": {"pattern": …, "path": …}}: Claude Code's own search tools
        if builtin in step:
            tool_use(builtin.capitalize(), dict(step[builtin]))
    if "bash" in step:
        tool_use("Bash", {"command": str(step["bash"]), "description": "scripted command"})
    if "tool" in step:
        spec = step["tool"]
        name = spec["name"] if "__" in spec["name"] else TOOL_PREFIX + spec["name"]
        tool_input = dict(spec.get("input", {}))
        if name.startswith(TOOL_PREFIX) and "task_id" not in tool_input and key.task != "-":
            tool_input["task_id"] = key.task
        tool_use(name, tool_input)
    if "ask" in step:
        spec = step["ask"]
        options = [{"label": str(label), "description": str(label)} for label in spec.get("options", ["yes", "no"])]
        question = {"question": spec["question"], "header": "Question", "options": options, "multiSelect": False}
        tool_use("AskUserQuestion", {"questions": [question]})
    if not blocks:
        blocks.append({"type": "text", "text": json.dumps(step)})
    return blocks
