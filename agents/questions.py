"""AskUserQuestion: answered in the SDK's format when a human already answered, else recorded and stopped."""

from __future__ import annotations

from typing import Any

from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny, ToolPermissionContext

from agents.request import SessionRequest, emit


class QuestionGate:
    """AskUserQuestion: answered from `answers` when a human already did, else recorded and the session stops."""

    def __init__(self, request: SessionRequest) -> None:
        self.request = request
        self.pending: dict[str, Any] | None = None

    async def can_use_tool(
        self, tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        if tool_name != "AskUserQuestion":
            return PermissionResultAllow()
        questions = [q for q in tool_input.get("questions", []) if isinstance(q, dict)]
        texts = [str(q.get("question", "")) for q in questions]
        if texts and all(text in self.request.answers for text in texts):
            answers = {text: self.request.answers[text] for text in texts}
            emit(self.request, {"event": "question_answered_in_session", "questions": texts})
            return PermissionResultAllow(updated_input={**tool_input, "answers": answers})
        if self.request.role != "player":
            return PermissionResultDeny(message="No human is available to the reviewer: decide with what you have.")
        first = questions[0] if questions else {"question": "(empty question)"}
        options = [str(o.get("label", o)) if isinstance(o, dict) else str(o) for o in first.get("options", [])]
        self.pending = {"question": str(first.get("question", "")), "options": options}
        return PermissionResultDeny(message="Your question was handed to a human; stop now.", interrupt=True)
