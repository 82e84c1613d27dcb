"""The selector: a fresh, read-only coach session that picks among a task's attempts the gate confirmed, when the
selection's deterministic keys and the cross-tests leave a tie (issue 40). It sees the requirements and each
candidate's diff and gate report side by side, reads the diffs as data, and records its pick through
`record_selection`: the chosen attempt and one reason per candidate not chosen."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from agents.prompts import load_prompt
from agents.request import run_session
from agents.roles import SessionSettings, TaskBrief, _common, _request
from agents.types import AgentResult

_CLOSING = re.compile(r"<\s*/\s*candidate", re.IGNORECASE)
"""What would close a candidate's block, however spelled (`</Candidate >`): escaped inside one."""
DIFF_LIMIT = 30_000
"""Each candidate's diff past this many characters is cut (the selector may read the rest in its branch)."""


@dataclass
class SelectorCandidate:
    """One candidate as the selector sees it."""

    attempt: int
    branch: str
    diff: str
    gate: str
    """The gate's report on its approved tree (summary, accepted test changes, what its new tests showed)."""
    coach: str = ""
    """Its approving coach's rationale."""
    approach: str = ""


@dataclass
class SelectorInput:
    """What the selector is told: the task, its candidates, and what the keys and the cross-tests said."""

    brief: TaskBrief
    candidates: list[SelectorCandidate]
    repo: Path
    """The main checkout (read-only for the selector; every candidate's branch is in it)."""
    keys: str = ""
    """Why the deterministic keys and the cross-tests left these candidates tied."""
    cross_tests: str = ""
    """The cross-test matrix, a line per cell."""
    transcript_path: Path | None = None
    turn: int = 1
    choices: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.choices = [candidate.attempt for candidate in self.candidates]


def as_data(text: str, limit: int = DIFF_LIMIT) -> str:
    """A candidate's text for the prompt: cut at `limit`, and no line of it can close the block it sits in."""
    cut = text if len(text) <= limit else text[:limit] + "\n… (cut: read the rest in its branch)"
    return _CLOSING.sub("<\\\\/candidate", cut)


def _candidate_block(candidate: SelectorCandidate) -> str:
    return (f'<candidate attempt="{candidate.attempt}" branch="{candidate.branch}">\n'
            f"approach: {candidate.approach or '-'}\n"
            f"gate report:\n{as_data(candidate.gate, 4_000)}\n"
            f"approving coach's rationale:\n{as_data(candidate.coach, 4_000) or '-'}\n"
            f"diff from the task's base:\n```diff\n{as_data(candidate.diff) or '(empty diff)'}\n```\n"
            "</candidate>")


def selector_prompt(data: SelectorInput) -> str:
    """The selector's turn prompt: the task, why the keys tied, the cross-tests, the candidates as data."""
    variables = _common(data.brief, data.turn) | {
        "choices": ", ".join(str(choice) for choice in data.choices),
        "keys": data.keys or "(they tie on every key)",
        "cross_tests": data.cross_tests or "(no cross-test ran: the candidates added no tests)",
        "candidates": "\n\n".join(_candidate_block(candidate) for candidate in data.candidates),
    }
    return load_prompt("selector_turn").render(**variables)


async def run_selector(data: SelectorInput, settings: SessionSettings) -> AgentResult:
    """A read-only selector session over the main checkout that records its pick through record_selection."""
    return await run_session(_request(
        "selector", task_id=data.brief.task_id, turn=data.turn, cwd=data.repo, system=load_prompt("selector"),
        prompt=selector_prompt(data), settings=settings, transcript_path=data.transcript_path,
    ))
