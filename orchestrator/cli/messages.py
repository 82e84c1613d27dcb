"""One-line notes and plan warnings for the user, on stderr (stdout stays for results and JSON)."""

from __future__ import annotations

import sys

from orchestrator.plan.model import FeaturePlan, scope_overlaps, unknown_fields


def notice(message: str) -> None:
    print(f"note: {message}", file=sys.stderr, flush=True)


def warn(plan: FeaturePlan) -> None:
    """The plan's warnings (values ignored, GuardKit fields, missing task files, unknown fields, overlapping file
    scopes) on stderr."""
    for note in plan.notes:
        print(f"warning: {note}", file=sys.stderr)
    for field_name in unknown_fields(plan):
        print(f"warning: unknown field {field_name} (kept, but check for a typo)", file=sys.stderr)
    for overlap in scope_overlaps(plan):
        print(f"warning: {overlap}: expect merge conflicts, or move one to a later group", file=sys.stderr)
