"""Which of a task's attempts lands: a pure ranking over plain records (no graph, no git, no clock).

Only attempts the gate confirmed (`approved`, `approved-unverified`) are candidates. The deterministic keys, in
order: verified over unverified; fewer base-test and test-side changes accepted by the coach (each is a place a
false approval could hide); some of the task's new tests shown to fail on the base's code (tests that show the
change works; how many is the candidate's to choose, so it counts only as some or none: a fix that special-cases
the visible inputs and copies its tests must not outrank the others' tests); more of its siblings' new tests
passed by its code (cross-testing, graph/attempt_choice.py: the others' tests confirm its behaviour); fewer lines
of code changed that no tied sibling changed (set only when a leader changed nothing of its own: a change outside
what the attempts agree on is where an unasked break hides); then the first approved (its finish time, then its
number). A selector session for a tie the keys leave comes in through `tiebreak`: given the candidates tied on the
keys, it names the one to put first, or None (the first approved stays first, and the reason says the tie was
broken by time).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

VERIFIED = "approved"
CANDIDATE_STATUSES = frozenset({"approved", "approved-unverified"})


@dataclass(frozen=True)
class Candidate:
    """What the selection knows of one attempt."""

    attempt: int
    status: str
    accepted_changes: int = 0
    """Base-test and test-side changes its approving coach accepted."""
    failing_on_base: int | None = None
    """The task's new tests shown to fail on the base's code (None: the gate did not say; counts as 0)."""
    finished_at: float = 0.0
    """When its verdict was reached (as recorded, so a resume ranks alike)."""
    confirmed_by: int | None = None
    """How many of its siblings' new-test suites its code passes (cross-testing; None: not cross-tested)."""
    unshared: int | None = None
    """Lines of its code change no tied sibling's change has (graph/attempt_consensus.py; None: not compared, or
    every cross-test leader has lines of its own, which the selector weighs)."""

    @property
    def verified(self) -> bool:
        return self.status == VERIFIED


Tiebreak = Callable[[Sequence[Candidate]], int | None]
"""The seam for cross-testing and the selector session: the attempt to put first among candidates the keys tie."""


@dataclass(frozen=True)
class Selection:
    """The candidates best first (attempt numbers), and why the first one leads."""

    order: tuple[int, ...]
    reason: str

    @property
    def picked(self) -> int | None:
        return self.order[0] if self.order else None


def _keys(candidate: Candidate) -> tuple[int, int, int, int, int]:
    return (0 if candidate.verified else 1, candidate.accepted_changes, 0 if candidate.failing_on_base else 1,
            -(candidate.confirmed_by or 0), candidate.unshared or 0)


def _time(candidate: Candidate) -> tuple[float, int]:
    return (candidate.finished_at, candidate.attempt)


def _why(first: Candidate, second: Candidate) -> str:
    """The first key on which `first` beats `second`, said."""
    a, b = f"attempt {first.attempt}", f"attempt {second.attempt}"
    if first.verified != second.verified:
        return f"{a} is verified by the gate, {b} only approved-unverified"
    if first.accepted_changes != second.accepted_changes:
        return (f"{a} changes fewer base tests ({first.accepted_changes} accepted) than {b}"
                f" ({second.accepted_changes})")
    if bool(first.failing_on_base) != bool(second.failing_on_base):
        return f"{a} has new tests shown to fail on the base's code ({first.failing_on_base}), {b} none"
    if (first.confirmed_by or 0) != (second.confirmed_by or 0):
        return (f"{a}'s code passes more of its siblings' new tests ({first.confirmed_by or 0} suites) than {b}'s"
                f" ({second.confirmed_by or 0})")
    if (first.unshared or 0) != (second.unshared or 0):
        return (f"{a} changes fewer lines of code no sibling changed ({first.unshared or 0}) than {b}"
                f" ({second.unshared or 0})")
    return f"{a} and {b} tie on the keys: {a} was approved first"


def why_not(picked: Candidate, other: Candidate) -> str:
    """Why `other` is not picked: the first key `picked` beats it on (or that it was approved later); an attempt
    that was never a candidate (cancelled, failed) by its own outcome, not by a key it never had."""
    if other.status == "cancelled":
        return f"cancelled: attempt {picked.attempt} was approved first"
    if other.status not in CANDIDATE_STATUSES:
        return f"not approved: it ended {other.status}"
    return _why(picked, other)


def rank(attempts: Sequence[Candidate], tiebreak: Tiebreak | None = None) -> Selection:
    """The candidates among `attempts`, best first, and the reason the first leads."""
    candidates = sorted((c for c in attempts if c.status in CANDIDATE_STATUSES), key=lambda c: (_keys(c), _time(c)))
    if not candidates:
        return Selection((), "no attempt was approved")
    if len(candidates) == 1:
        only = candidates[0]
        return Selection((only.attempt,), f"attempt {only.attempt} is the only one approved"
                                          f"{'' if only.verified else ' (unverified)'}")
    tied = [c for c in candidates if _keys(c) == _keys(candidates[0])]
    chosen = tiebreak(tied) if tiebreak is not None and len(tied) > 1 else None
    if chosen is not None and chosen in {c.attempt for c in tied}:
        first = next(c for c in tied if c.attempt == chosen)
        candidates = [first, *(c for c in candidates if c is not first)]
        return Selection(tuple(c.attempt for c in candidates), f"attempt {chosen} chosen among the tied"
                                                                f" {', '.join(str(c.attempt) for c in tied)}")
    return Selection(tuple(c.attempt for c in candidates), _why(candidates[0], candidates[1]))


def tied(attempts: Sequence[Candidate]) -> list[Candidate]:
    """The candidates tied with the best on the keys (its own alone when it leads), first approved first: the
    ones cross-testing, then the selector, decide among."""
    candidates = sorted((c for c in attempts if c.status in CANDIDATE_STATUSES), key=lambda c: (_keys(c), _time(c)))
    return [c for c in candidates if _keys(c) == _keys(candidates[0])] if candidates else []


def first_verified(attempts: Sequence[Candidate]) -> int | None:
    """Policy `first`: the attempt whose verified approval came first, if any."""
    verified = sorted((c for c in attempts if c.verified), key=_time)
    return verified[0].attempt if verified else None
