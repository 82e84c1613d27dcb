"""What ran when, read back from the traces: each task's agent sessions, gate runs, question waits, merges and skips,
and the run's usage-limit pauses, as bars for the Gantt chart (views/mermaid.py draws them)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from orchestrator.views.mermaid import Bar

SESSION_LEVEL = frozenset({"session_start", "session_end", "retry", "tool", "question_answered_in_session"})
"""Events from inside an agent session; any other event of the task means the session is over."""
Role = Literal["player", "coach"]
STARTS: dict[str, tuple[Role, str]] = {"player_start": ("player", "P"), "coach_validate": ("coach", "C")}
"""Node events written just before a role's session starts, and the label prefix of its bars."""
RUN_START = frozenset({"initialize", "skipped"})
"""A task's first event in a run: traces are appended to across `run --fresh`, so earlier events are older runs'."""


def epoch(value: Any) -> float | None:
    """A trace time (ISO-8601, or epoch seconds) as epoch seconds; None when it is neither."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def timed(events: Iterable[dict[str, Any]]) -> list[tuple[float, dict[str, Any]]]:
    """Events with a readable time, as (epoch seconds, event); the rest are left out."""
    found = []
    for event in events:
        at = epoch(event.get("time"))
        if at is not None:
            found.append((at, event))
    return found


def latest_run(events: Sequence[tuple[float, dict[str, Any]]]) -> Sequence[tuple[float, dict[str, Any]]]:
    """The events of the task's latest run: from its last `initialize` or `skipped` on (all when it has none)."""
    starts = [index for index, (_, event) in enumerate(events) if event.get("event") in RUN_START]
    return events[starts[-1]:] if starts else events


@dataclass
class _Session:
    role: Role
    label: str
    start: float
    ended: float | None = None
    """When its last `session_end` came (real sessions write one; a scripted agent does not)."""


def task_bars(events: Iterable[dict[str, Any]], now: float) -> list[Bar]:
    """One task's bars: a bar per player (`P<turn>`) and coach (`C<turn>`) session, from the node event written
    just before it to its `session_end` (or the task's next event); the gate run after a coach's approval
    (`G<turn>`, when the coach's `session_end` says where it began); each wait for an answer (`Q`); a milestone
    for its merge (or failed merge) and for a skip. A session or wait still open at the end runs until `now`."""
    bars: list[Bar] = []
    session: _Session | None = None
    coach_done: dict[Any, float] = {}
    asked: dict[str, float] = {}
    for at, event in latest_run(timed(events)):
        kind = str(event.get("event"))
        if session is not None and kind == "session_end" and event.get("role") == session.role:
            session.ended = at
        elif session is not None and kind not in SESSION_LEVEL:
            end = session.ended if session.ended is not None else at
            bars.append(Bar(session.label, session.role, session.start, end))
            if session.role == "coach":
                coach_done[event.get("turn")] = end
            session = None
        if kind in STARTS:
            role, prefix = STARTS[kind]
            session = _Session(role, f"{prefix}{event.get('turn', '')}", at)
        elif kind == "gate" and (done := coach_done.get(event.get("turn"))) is not None and at > done:
            bars.append(Bar("G", "gate", done, at))
        elif kind == "question_asked":
            asked[str(event.get("question_id"))] = at
        elif kind == "question_answered" and str(event.get("question_id")) in asked:
            bars.append(Bar("Q", "wait", asked.pop(str(event.get("question_id"))), at))
        elif kind == "question_aborted":
            asked.pop(str(event.get("question_id")), None)
        elif kind == "merge":
            bars.append(Bar("merged" if event.get("merged") else "not merged",
                            "merged" if event.get("merged") else "not merged", at, at))
        elif kind == "skipped":
            bars.append(Bar("skipped", "skipped", at, at))
    if session is not None:
        bars.append(Bar(session.label, session.role, session.start,
                        session.ended if session.ended is not None else max(now, session.start)))
    bars += [Bar("Q", "wait", since, max(now, since)) for since in asked.values()]
    return sorted(bars, key=lambda bar: (bar.start, bar.end))


def pause_bars(events: Iterable[dict[str, Any]], now: float) -> list[Bar]:
    """The run's usage-limit pauses (feature events): from the first `usage_limit` to `usage_limit_over`; a pause
    still in force at the end runs until its reset time or `now`, whichever is first."""
    bars: list[Bar] = []
    since: float | None = None
    until: float | None = None
    for at, event in timed(events):
        kind = event.get("event")
        if kind == "usage_limit":
            since = at if since is None else since
            until = epoch(event.get("until"))
        elif kind == "usage_limit_over" and since is not None:
            bars.append(Bar("paused", "pause", since, at))
            since = None
    if since is not None:
        bars.append(Bar("paused", "pause", since, max(since, min(until or now, now))))
    return bars
