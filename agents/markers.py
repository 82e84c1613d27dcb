"""Completion and blocker markers in an agent's final text, ignoring code, quotes and echoed templates."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

PROMISE_COMPLETE = "<promise>COMPLETE</promise>"
_FENCE = re.compile(r"(^|\n)(```|~~~).*?(\n\2[^\n]*(?=\n|$)|$)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_BLOCKER = re.compile(r"^<blocker>\s*\n(.*?)\n\s*</blocker>\s*$", re.DOTALL | re.MULTILINE)
_TEMPLATE_VALUES = {"what blocks the work", "what a person must do", "how the work continues afterwards"}


SPEC_TEST_CONFLICT = "spec-test-conflict"
"""A blocker's `kind` when a requirement contradicts an existing test: the task stops at its first report."""
_OPTIONAL = ("kind", "test", "requirement")


@dataclass(frozen=True)
class Blocker:
    """A blocker an agent declared: what, what a person must do, how work resumes; optionally its kind, and for
    a spec-test conflict the test and the requirement that contradict each other."""

    description: str
    action: str
    resume: str
    kind: str = ""
    test: str = ""
    requirement: str = ""

    @property
    def hash(self) -> str:
        """First 8 hex digits of the md5 of the normalised fields (dedupes repeats)."""
        text = "\n".join(" ".join(part.lower().split()) for part in (self.description, self.action, self.resume))
        return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()[:8]


def visible_text(text: str) -> str:
    """The prose of a message: fenced blocks, inline code and quoted lines removed."""
    text = _FENCE.sub("\n", text)
    text = _INLINE_CODE.sub("", text)
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(">"))


def has_promise(text: str) -> bool:
    """True when the completion promise stands on its own in the prose (not in code or a quote)."""
    return any(line.strip() == PROMISE_COMPLETE or line.strip().endswith(PROMISE_COMPLETE)
               for line in visible_text(text).splitlines())


def parse_blocker(text: str) -> Blocker | None:
    """The last well-formed blocker in the prose, or None (the prompt's own template never counts)."""
    found: Blocker | None = None
    for match in _BLOCKER.finditer(visible_text(text)):
        fields: dict[str, str] = {}
        for line in match.group(1).splitlines():
            key, sep, value = line.partition(":")
            if sep and key.strip().lower() in {"description", "action", "resume", *_OPTIONAL}:
                fields[key.strip().lower()] = value.strip()
        required = [fields.get(name, "") for name in ("description", "action", "resume")]
        if not all(required):
            continue
        if set(required) <= _TEMPLATE_VALUES:
            continue  # the prompt's template echoed back, not a real blocker
        found = Blocker(*required, **{name: fields.get(name, "") for name in _OPTIONAL})
    return found
