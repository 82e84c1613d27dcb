"""What the scripted model reads from a Messages API request: which session and step it is (our prompts' marker
line), the user's own prompt, the last tool results, the conversation's growing tail."""

from __future__ import annotations

from typing import Any

from agents.testing.scenario import CWD_MARKER, SESSION_MARKER, SessionKey


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or []:
        if block.get("type") == "text":
            parts.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            parts.append(text_of(block.get("content")))
    return "\n".join(parts)


def session_of(body: dict[str, Any]) -> tuple[SessionKey | None, str | None, str]:
    system = body.get("system") or ""
    system_text = system if isinstance(system, str) else "\n".join(b.get("text", "") for b in system)
    messages = body.get("messages", [])
    first_user = text_of(messages[0]["content"]) if messages else ""
    found = SESSION_MARKER.search(system_text) or SESSION_MARKER.search(first_user)
    key = SessionKey(found.group(1), found.group(2), int(found.group(3))) if found else None
    cwd_match = CWD_MARKER.search(first_user) or CWD_MARKER.search(system_text)
    return key, (cwd_match.group(1) if cwd_match else None), system_text


def last_tool_result(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message["role"] == "user" and isinstance(message["content"], list):
            results = [b for b in message["content"] if b.get("type") == "tool_result"]
            if results:
                return "\n".join(text_of(b.get("content")) for b in results)
    return ""


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """The user's own prompt: the first user message's last non-reminder text block."""
    if not messages or isinstance(messages[0]["content"], str):
        return str(messages[0]["content"]) if messages else ""
    texts = [b.get("text", "") for b in messages[0]["content"] if b.get("type") == "text"]
    own = [t for t in texts if not t.lstrip().startswith("<system-reminder>")]
    return own[-1] if own else ""


def messages_tail(body: dict[str, Any]) -> list[Any]:
    """The part of the conversation that grows per step (for plausible input token counts)."""
    return list(body.get("messages", []))[-4:]
