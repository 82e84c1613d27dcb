"""Approved-unverified tasks don't reach the user's branch without the person's word: `land` refuses them unless
`--accept-unverified` (listing them first), `pr` opens a draft listing them first, `run` says so on its last line.
A run with no gate at all (every approval unverified) is `land --verify`'s business instead."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from orchestrator.errors import InputError
from orchestrator.text import plain_line

FLAG = "--accept-unverified"
STATUS = "approved-unverified"


def unverified(results: Mapping[str, Mapping[str, Any]], tasks: Sequence[str], *, gated: bool = True
               ) -> dict[str, str]:
    """Each of `tasks` whose approval the gate could not verify -> why (its result's reason); none in a run with no
    gate (`gated` False), where every approval is unverified and `land --verify` decides."""
    if not gated:
        return {}
    return {task: plain_line(str(results[task].get("reason") or "approved by the coach, unverified"), 300)
            for task in tasks if task in results and results[task].get("status") == STATUS}


def listing(tasks: Mapping[str, str]) -> list[str]:
    """One line per approved-unverified task, with why."""
    return [f"approved-unverified: {task}: {why}" for task, why in tasks.items()]


def refuse(tasks: Mapping[str, str], accepted: bool) -> None:
    """InputError (exit 2) naming the flag, when there are such tasks and the person did not accept them."""
    if tasks and not accepted:
        raise InputError(f"{len(tasks)} approved task(s) the gate could not verify ({', '.join(tasks)}): read why"
                         f" above, then pass {FLAG} to land them anyway, or resume them. Nothing was moved.")


NO_GATE_REASON = "no verify command could check it"
"""How a run with no gate words its approvals (graph/nodes/task.py): `land --verify` decides those instead."""


def last_line(results: Mapping[str, Mapping[str, Any]], feature: str) -> list[str]:
    """`run`'s last line when some approvals are unverified though a gate ran (none otherwise)."""
    found = [task for task, result in results.items() if result.get("status") == STATUS
             and NO_GATE_REASON not in str(result.get("reason") or "")]
    if not found:
        return []
    return [f"{len(found)} task(s) approved-unverified ({', '.join(found)}): they won't land without"
            f" `autobuild land {feature} {FLAG}`"]
