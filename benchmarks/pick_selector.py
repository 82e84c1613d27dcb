"""The pick bench's scripted selector: a selector session that decides by a plausible rule blind to correctness,
reading only what the real selector is given (the candidates' diffs). The rule a hurried reviewer follows: the
candidate that tests the most (more added test lines), then the smaller change to the code; the other candidates
each get a reason, as `record_selection` asks."""

from __future__ import annotations

from agents.selector import SelectorCandidate, SelectorInput
from agents.testing.scripted_agents import Turn
from orchestrator.gate import is_test_file


def _added_lines(diff: str) -> tuple[int, int]:
    """Lines a diff adds to test files and to the rest."""
    tests = code = 0
    in_test = False
    for line in diff.splitlines():
        if line.startswith("+++ "):
            in_test = is_test_file(line[4:].removeprefix("b/").strip())
        elif line.startswith("+") and not line.startswith("+++"):
            tests, code = (tests + 1, code) if in_test else (tests, code + 1)
    return tests, code


def _score(candidate: SelectorCandidate) -> tuple[int, int, int]:
    tests, code = _added_lines(candidate.diff)
    return (-tests, code, candidate.attempt)


def blind_pick(data: SelectorInput) -> Turn:
    """The selector's record_selection: the most-tested, smallest change among the offered candidates."""
    chosen = min(data.candidates, key=_score)
    reason = "it adds fewer test lines, or as many with a larger change to the code"
    why = [{"attempt": str(c.attempt), "why_not": reason} for c in data.candidates if c.attempt != chosen.attempt]
    return Turn(report={"chosen": str(chosen.attempt), "reasons": why}, cost_usd=0.02)
