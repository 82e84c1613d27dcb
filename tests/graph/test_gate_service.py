"""The gate service (gate/service.py) in-process on real git and a real pytest: one cache per repository, a run
that says whether it ran, and the same entry for the task graph, the merge queue and `land`."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from orchestrator.gate import GateRequest, Gates
from orchestrator.gate.cache import CACHE_NAME
from orchestrator.repo.git import GitRepo
from tests.graph.harness import Workflow, plan, task

pytestmark = pytest.mark.base_check  # about the base check: it runs for real (tests/graph/shared_bases.py)

FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "calc/__init__.py": "",
    "calc/mul.py": "def mul(a, b):\n    return a * b\n",
    "tests/__init__.py": "",
    "tests/test_mul.py": "from calc.mul import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
}
VERIFY = "python -m pytest -q"


def base_summary(events: list[dict[str, object]]) -> str:
    return str(next(event for event in events if event["event"] == "feature_start")["gate_base"])


async def test_a_second_feature_on_the_same_base_reuses_the_bases_run(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=FILES, plan=plan(task("TASK-001"), verify=VERIFY))
    second = plan(task("TASK-001"), verify=VERIFY) | {"id": "FEAT-002"}
    (repo / ".autobuild" / "features" / "FEAT-002.yaml").write_text(yaml.safe_dump(second))
    agents = ScriptedAgents({"player": writes({"calc/add.py": "def add(a, b):\n    return a + b\n"}),
                             "coach": approve()})
    first = await Workflow(repo, agents).run("FEAT-001")
    assert first.status("TASK-001") == "approved"
    assert "reused" not in base_summary(first.events)
    again = await Workflow(repo, agents, thread="FEAT-002").run("FEAT-002")
    assert again.status("TASK-001") == "approved"
    assert "reused: this base tree was gated by an earlier run" in base_summary(again.events)
    assert (repo / ".autobuild" / "runs" / CACHE_NAME).is_file(), "one cache for the repository"
    assert not (repo / ".autobuild" / "runs" / "FEAT-001" / CACHE_NAME).exists()
    assert CACHE_NAME not in git(repo, "status", "--porcelain", "--untracked-files=all"), "out of git status"


async def test_a_run_says_whether_a_command_ran(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=FILES)
    gates = Gates(GitRepo(repo), GateRequest(plan_verify=VERIFY, timeout_s=120))
    setup = await gates.check_base("FEAT-001", git(repo, "rev-parse", "HEAD").strip())
    assert setup["base"] is not None and setup["base"]["passed"]
    # A worktree of the gate's own (`_`): in a task's, an uncommitted edit is put back before the gate runs
    # (gate/prepare/checkout.py, tests/graph/test_checkout.py).
    worktree = repo / ".autobuild" / "worktrees" / "FEAT-001" / "_probe"
    await GitRepo(repo).add_detached_worktree(worktree, "HEAD")
    (worktree / "calc" / "add.py").write_text("def add(a, b):\n    return a + b\n")
    git(worktree, "add", "-A")
    git(worktree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "add")
    first = await gates.run(worktree)
    assert first.ran and first.result["passed"]
    remembered = await gates.run(worktree)
    assert not remembered.ran and remembered.result["passed"], "the same tree is not gated twice"
    (worktree / "calc" / "mul.py").write_text("def mul(a, b):\n    return a + b\n")
    dirty = await gates.run(worktree)
    assert dirty.ran and not dirty.result["passed"], "a tree with uncommitted changes is always run"
    assert dirty.result["failing"] == ["tests.test_mul::test_mul"]


RED = {"tests/test_red.py": "def test_red():\n    assert False\n"}
# Fails when no flag lies beside it, leaving one: the base check's second run (same worktree) passes.
ONCE = {"tests/test_once.py": "import pathlib\n\nFLAG = pathlib.Path(__file__).with_name('flag')\n\n\n"
                              "def test_once():\n    seen = FLAG.exists()\n    FLAG.touch()\n    assert seen\n",
        ".gitignore": "__pycache__/\n.pytest_cache/\ntests/flag\n"}


@pytest.mark.parametrize(("files", "reused"), [(RED, True), (ONCE, False)], ids=["same failure", "second run passes"])
async def test_a_red_base_is_reused_only_when_both_its_runs_failed_alike(tmp_path: Path, files: dict[str, str],
                                                                       reused: bool) -> None:
    """The base check runs the gate twice: a failure both runs show has been seen twice, so the gate cache reuses
    it (a second feature, a resume, `land`) as it would a pass; a failure the second run lost is run again."""
    repo = make_sample_repo(tmp_path / "repo", files={**FILES, **files})
    base = git(repo, "rev-parse", "HEAD").strip()
    first = await Gates(GitRepo(repo), GateRequest(plan_verify=VERIFY, timeout_s=120)).check_base("FEAT-001", base)
    assert first["base"] is not None and not first["base"]["passed"]
    later = Gates(GitRepo(repo), GateRequest(plan_verify=VERIFY, timeout_s=120))
    second = await later.check_base("FEAT-002", base)
    assert second["base"] is not None and not second["base"]["passed"]
    assert ("reused: this base tree was gated by an earlier run" in second["base"]["summary"]) is reused
    assert later.cache is not None and (later.cache.reused, later.cache.runs) == ((1, 0) if reused else (0, 1))
