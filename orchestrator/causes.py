"""Why a task stopped, as a typed cause: what replanning, notifications and the scorecard decide on.

A stop's `reason` is human text, free to be reworded; its `cause` is the fact. Checkpoints and run files written
before causes were recorded hold only the reason: `cause_of` derives their cause, here and nowhere else, from the
words those versions wrote (frozen below: rewording today's reasons never touches them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal, cast, get_args

StopCause = Literal[
    "max_turns",  # the loop used its turns (--max-turns) without an approval
    "stalled",  # three stalled turns in a row: the same feedback again, or no change to the code
    "session_max_turns",  # the player's agent session hit its own turn cap: the task is too big for a session
    "review_max_turns",  # the coach's or the pre-check's session hit its turn cap
    "session_timeout",  # a session ran past --session-timeout (with no command of its own left hanging)
    "budget",  # the task's or the feature's budget ran out
    "blocker",  # the player reported the same blocker twice in a row
    "spec_test_conflict",  # a requirement contradicts an existing test: a person decides which is right
    "tampering",  # the user's repository changed around an unsandboxed session
    "question",  # the agent asked a question and no human is available (--autonomous)
    "dependency",  # a dependency did not succeed: the task never ran
    "merge_conflict",  # bringing the approved work up to the feature head conflicted, and it stayed unresolved
    "integration_gate",  # the gate failed on the approved work brought up to the feature head, no turn left
    "feature_moved",  # the feature branch kept moving: the approved work could not land
    "cancelled",  # a person cancelled the task
]
"""Why a task stopped without an approval. A `replaced` task keeps the cause of the failure that replaced it."""
STOP_CAUSES: frozenset[str] = frozenset(get_args(StopCause))

REPLANNABLE: frozenset[StopCause] = frozenset({"max_turns", "stalled", "session_max_turns"})
"""How a task ends that was too big for its turns. Not tampering, a false approval, a budget, a blocker or a
human's abort: those say nothing about the task's size."""

_EARLIER: tuple[tuple[str, StopCause], ...] = (
    (r"max turns reached", "max_turns"),
    (r"stalled:", "stalled"),
    (r"player: the agent session hit its max turns", "session_max_turns"),
    (r"\w+: the agent session hit its max turns", "review_max_turns"),
    (r"\w+: session timeout", "session_timeout"),
    (r"(\w+: )?budget exhausted", "budget"),
    (r"spec-test conflict:", "spec_test_conflict"),
    (r"blocker \S+ \(reported twice in a row\)", "blocker"),
    (r"your repository changed outside autobuild/", "tampering"),
    (r"ambiguous decision point:", "question"),
    (r"merge conflict", "merge_conflict"),
    (r"the gate failed on ", "integration_gate"),
    (r"\S+ kept moving: ", "feature_moved"),
    (r"cancelled by a person", "cancelled"),  # always written with its cause: kept so every cause reads back
)
"""How each stop's reason began before its cause was recorded (the words of those versions, kept as they were)."""
_EARLIER_WORDS = tuple((re.compile(pattern), cause) for pattern, cause in _EARLIER)
_EARLIER_REPLACED = re.compile(r"replaced by [^(]*\((.*)\)", re.DOTALL)


def cause_of(record: Mapping[str, Any] | None) -> StopCause | None:
    """The cause of a stop, a task's result or an event about one (`finalize`, `merge`): its `cause`, else (one
    written before causes were recorded) the cause its outcome and reason say. None: approved, or not known."""
    if not record:
        return None
    if (cause := record.get("cause")) in STOP_CAUSES:
        return cast(StopCause, cause)
    status = record.get("status", record.get("outcome"))
    if status in ("approved", "approved-unverified"):
        return None
    return _earlier_cause(str(status or ""), str(record.get("reason") or ""))


def _earlier_cause(status: str, reason: str) -> StopCause | None:
    if status == "skipped":
        return "dependency"
    if status == "replaced" and (inner := _EARLIER_REPLACED.fullmatch(reason)) is not None:
        return _earlier_cause("failed", inner.group(1))
    return next((cause for pattern, cause in _EARLIER_WORDS if pattern.match(reason)), None)
