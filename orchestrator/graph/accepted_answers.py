"""An answer `autobuild answer` accepted (its `answer_given` in the task's trace) whose run was killed before the
graph stored it: the next `resume` takes it, so an accepted answer is never lost nor asked for again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orchestrator.store import event_log


def accepted_unstored(repo: Path, feature: str, pending: list[dict[str, Any]]) -> tuple[str, str] | None:
    """(question id, answer) of the first pending question answered since it was last asked, per its task's trace;
    None when no pending question has one."""
    for question in pending:
        question_id, task = str(question.get("question_id") or ""), str(question.get("task") or "")
        if not question_id or not task:
            continue
        given: str | None = None
        for event in event_log.task_events(repo, feature, task):
            if event.fields.get("question_id") != question_id:
                continue
            if event.kind == "question_asked":
                given = None  # an answer given before it was asked this time answers an earlier asking
            elif event.kind == "answer_given" and event.fields.get("answer") is not None:
                given = str(event.fields["answer"])
        if given is not None:
            return question_id, given
    return None
