"""A gate run judges what is committed (gate/prepare/fresh_tree.py), on real git and a real pytest: a build folder the
coach left in the task's worktree (git-ignored, its copy of the code stale and right) is removed before the gate runs,
so a break in the committed code fails; what setup made stays, and is made again when an agent changed it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.testing.repos import git, make_sample_repo
from orchestrator.gate import GateRequest, Gates
from orchestrator.repo.git import GitRepo

FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\nbuild/\ncache/\n",
    "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = [\"build\"]\n",
    "src/calc.py": "def mul(a, b):\n    return a * b\n",
    "tests/test_mul.py": "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
}
VERIFY = "mkdir -p build && cp -n src/calc.py build/calc.py; python -m pytest -q"
"""An incremental build: what is in build/ already is not made again (as make trusts a newer timestamp)."""


@pytest.mark.heavy
async def test_a_build_folder_the_coach_left_does_not_decide_the_gate(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", FILES)
    base = git(repo, "rev-parse", "HEAD").strip()
    gates = Gates(GitRepo(repo), GateRequest(plan_verify=VERIFY, plan_setup="mkdir -p cache && echo ok > cache/x"),
                  no_cache=True)
    await gates.check_base("FEAT-001", base)
    worktree = repo / ".autobuild" / "worktrees" / "FEAT-001" / "TASK-001"
    git(repo, "worktree", "add", "-q", "--detach", str(worktree), base)
    await gates.set_up(worktree)
    (worktree / "src" / "calc.py").write_text("def mul(a, b):\n    return a + b\n")  # the player's break
    git(worktree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "work")
    (worktree / "build").mkdir()
    (worktree / "build" / "calc.py").write_text("def mul(a, b):\n    return a * b\n")  # the coach's own build
    run = (await gates.run(worktree)).result
    assert not run["passed"], run["summary"]
    assert (worktree / "cache" / "x").read_text() == "ok\n"  # setup's product stays
    (worktree / "cache" / "x").write_text("planted\n")  # an agent changes what setup made
    (worktree / "cache" / "more").write_text("planted\n")
    await gates.run(worktree)
    assert sorted(p.name for p in (worktree / "cache").iterdir()) == ["x"]  # made again by setup
    assert (worktree / "cache" / "x").read_text() == "ok\n"
