"""A plan's base_branch is one plain branch: a pattern (`*` became the refspec `+refs/heads/*:…` on a worker), an
option, a full ref or one of ours is refused when the plan loads, in one line."""

from __future__ import annotations

import pytest

from orchestrator.errors import PlanError
from orchestrator.plan.model import parse_plan


def _plan(base: str) -> dict[str, object]:
    return {"id": "FEAT-001", "name": "n", "base_branch": base, "tasks": [{"id": "T", "name": "t", "complexity": 1}]}


@pytest.mark.parametrize("base", ["main", "feat/x", "release-1.2", "user_name"])
def test_plain_branch_names_are_kept(base: str) -> None:
    assert parse_plan(_plan(base), "plan").base_branch == base


@pytest.mark.parametrize("base", ["*", "feat/*", "-x", "--upload-pack=x", "refs/heads/main", "autobuild/FEAT-001",
                                  "autobuild", "a..b", "x y", "@{-1}", "main.lock", "x:y", ""])
def test_anything_else_is_refused_in_one_line(base: str) -> None:
    with pytest.raises(PlanError, match="base_branch") as refused:
        parse_plan(_plan(base), "plan")
    assert "\n" not in str(refused.value)
