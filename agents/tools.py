"""The in-process `autobuild` MCP server: the structured channel through which agents report and decide."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from claude_agent_sdk import McpSdkServerConfig, SdkMcpTool, create_sdk_mcp_server, tool

from agents.types import ToolCall

SERVER_NAME = "autobuild"
PREFIX = f"mcp__{SERVER_NAME}__"

# Which role may call which tool; a call by another role is refused and recorded as a contract violation.
TOOL_OWNERS = {
    "start_implementation": "player",
    "report_progress": "player",
    "record_decision": "coach",
    "record_selection": "selector",
    "submit_plan": "planner",
}

_STRING_LIST = {"type": "array", "items": {"type": "string"}}
SCHEMAS: dict[str, dict[str, Any]] = {
    "start_implementation": {
        "type": "object",
        "properties": {"task_id": {"type": "string"}, "approach": {"type": "string"}},
        "required": ["task_id", "approach"],
    },
    "report_progress": {
        "type": "object",
        "properties": {
            "task_id": {"type": "string"},
            "files_modified": _STRING_LIST,
            "tests_written": _STRING_LIST,
            "implementation_notes": {"type": "string"},
        },
        "required": ["task_id", "files_modified", "implementation_notes"],
    },
    "record_decision": {
        "type": "object",
        "properties": {
            "task_id": {"type": "string"},
            "decision": {"type": "string", "enum": ["approve", "feedback"]},
            "rationale": {"type": "string"},
            "feedback_items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "file": {"type": "string"},
                        "line": {"type": ["integer", "null"]},
                        "issue": {"type": "string"},
                    },
                    "required": ["issue"],
                },
            },
            "requirements_checked": _STRING_LIST,
            "tests_verified": {
                "type": "object",
                "properties": {"passed": {"type": "integer"}, "failed": {"type": "integer"}},
            },
            "test_changes_accepted": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"test": {"type": "string"}, "reason": {"type": "string"}},
                    "required": ["test", "reason"],
                },
            },
        },
        "required": ["task_id", "decision", "rationale"],
    },
    "record_selection": {
        "type": "object",
        "properties": {
            "task_id": {"type": "string"},
            "chosen": {"type": "string"},
            "reasons": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"attempt": {"type": "string"}, "why_not": {"type": "string"}},
                    "required": ["attempt", "why_not"],
                },
            },
        },
        "required": ["task_id", "chosen", "reasons"],
    },
    "submit_plan": {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "tasks": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"kind": {"enum": ["feature", "fix", "refactor", "docs", "test", "chore"]}},
                    "additionalProperties": True,
                },
            },
        },
        "additionalProperties": True,
    },
}
DESCRIPTIONS = {
    "start_implementation": "Announce that you start implementing the task and the approach you take.",
    "report_progress": "Report what you implemented: files modified, tests written, honest notes.",
    "record_decision": "Record the coach's decision on the task: approve, or feedback with specific items. Every"
                       " base test the task removed, skipped or whose expectation it changed must be listed in"
                       " test_changes_accepted (a test id or its file, and the requirement that demands the"
                       " change), or the approval does not count.",
    "record_selection": "Record which of the task's attempts you pick (chosen: its number) and, for every candidate"
                        " not chosen, one concrete reason why not.",
    "submit_plan": "Submit the feature plan (id, name, tasks with dependencies, complexity and kind).",
}


@dataclass
class ToolRecorder:
    """Collects the calls one session makes to our tools, checking who may call what."""

    role: str
    task_id: str
    calls: list[ToolCall] = field(default_factory=list)

    def accepted(self, name: str) -> list[ToolCall]:
        return [call for call in self.calls if call.name == name and call.accepted]

    def violations(self) -> list[ToolCall]:
        return [call for call in self.calls if not call.accepted]

    def handle(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        owner = TOOL_OWNERS[name]
        error = ""
        if owner != self.role:
            error = f"only the {owner} may call {name}; you are the {self.role}"
        elif self.role != "planner" and self.task_id != "-" and args.get("task_id") not in (None, self.task_id):
            error = f"task_id must be {self.task_id}, got {args.get('task_id')!r}"
        elif name == "record_decision" and self.accepted("record_decision"):
            error = "a decision was already recorded in this session"
        elif name == "record_decision" and args.get("decision") not in ("approve", "feedback"):
            error = "decision must be 'approve' or 'feedback'"
        elif name == "record_selection" and self.accepted("record_selection"):
            error = "a selection was already recorded in this session"
        elif name == "record_selection" and not str(args.get("chosen") or "").strip():
            error = "chosen must name one of the candidates' attempt numbers"
        self.calls.append(ToolCall(name=name, input=dict(args), accepted=not error, error=error))
        if error:
            return {"content": [{"type": "text", "text": f"Refused: {error}"}], "is_error": True}
        return {"content": [{"type": "text", "text": f"{name} recorded."}]}


def build_server(recorder: ToolRecorder) -> McpSdkServerConfig:
    """The autobuild MCP server for one session, offering only the tools of the session's role (least
    privilege); always loaded so the model sees them."""

    def make(name: str) -> SdkMcpTool[Any]:
        async def handler(args: dict[str, Any]) -> dict[str, Any]:
            return recorder.handle(name, args)

        return tool(name, DESCRIPTIONS[name], SCHEMAS[name])(handler)

    server = create_sdk_mcp_server(SERVER_NAME, tools=[make(name) for name in role_tools(recorder.role)])
    # Without alwaysLoad the CLI hides these behind ToolSearch (DESIGN §4); the key passes through to it.
    server["alwaysLoad"] = True  # type: ignore[typeddict-unknown-key]
    return server


def role_tools(role: str) -> list[str]:
    """The autobuild tools a role is offered: its own only."""
    return [name for name, owner in TOOL_OWNERS.items() if owner == role]


def tool_names(role: str) -> list[str]:
    """Fully qualified names of the role's autobuild tools (for allowed_tools)."""
    return [PREFIX + name for name in role_tools(role)]
