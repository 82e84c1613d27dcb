"""A task's attempts in their gates under policy `first`: a sibling whose gate started behind another's runs its
commands at the lowest CPU priority, so on a busy machine the first verdict comes about as soon as one attempt's
would (the siblings are cancelled when it is verified) and on an idle one, or behind a gate that hangs, nothing
waits (issue 40)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

from orchestrator.processes import YIELDS_CPU


@dataclass
class GateLine:
    """One task's attempts now in their gates, in the order they entered them."""

    entered: list[int] = field(default_factory=list)

    def behind(self, attempt: int) -> bool:
        """Whether a sibling entered its gate before `attempt` and is still in it."""
        return bool(self.entered) and self.entered[0] != attempt


LINE: ContextVar[tuple[GateLine, int] | None] = ContextVar("autobuild_gate_line", default=None)
"""The task's line and the attempt whose loop runs in this context (graph/attempts.py sets it under `first`)."""


@contextlib.contextmanager
def in_line() -> Iterator[None]:
    """Around an attempt's gate run: each command it starts while a sibling's gate is ahead yields the CPU (one
    started after the siblings ahead left, refused, runs as any other). Outside attempts: nothing changes."""
    here = LINE.get()
    if here is None:
        yield
        return
    line, attempt = here
    line.entered.append(attempt)
    token = YIELDS_CPU.set(lambda: line.behind(attempt))
    try:
        yield
    finally:
        YIELDS_CPU.reset(token)
        line.entered.remove(attempt)
