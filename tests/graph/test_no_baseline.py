"""A base whose every test module fails to import is no baseline, on real git and a real pytest: refused before
any session, naming what to set; with a task that repairs it, the run goes on and nothing is waived as already
failing on the base (a plain break used to merge as "only tests already failing on the base fail")."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from orchestrator.errors import GateUnusableError
from orchestrator.gate import GateRequest, Gates
from orchestrator.repo.git import GitRepo
from tests.graph.harness import Workflow, plan, task

pytestmark = pytest.mark.base_check  # about the base check: it runs for real (tests/graph/shared_bases.py)

FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = [\"src\"]\n",
    "src/calc/__init__.py": "from calc.settings import ROUNDING\n",  # a module the repo lacks: every import fails
    "src/calc/mul.py": "def mul(a, b):\n    return a * b\n",
    "tests/test_mul.py": "from calc.mul import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
    "tests/test_more.py": "from calc.mul import mul\n\n\ndef test_one():\n    assert mul(1, 1) == 1\n",
}
VERIFY = "python -m pytest -q"


def commit(repo: Path, files: dict[str, str], base: str) -> Path:
    """A task's worktree on `base` with `files` written and committed."""
    worktree = repo / ".autobuild" / "worktrees" / "FEAT-001" / "TASK-001"
    git(repo, "worktree", "add", "-q", "--detach", str(worktree), base)
    for name, text in files.items():
        (worktree / name).write_text(text)
    git(worktree, "add", "-A")
    git(worktree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "work")
    return worktree


async def test_a_base_whose_tests_all_fail_to_import_is_refused_naming_what_to_set(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", FILES)
    gates = Gates(GitRepo(repo), GateRequest(plan_verify=VERIFY), no_cache=True)
    with pytest.raises(GateUnusableError, match="no baseline") as refused:
        await gates.check_base("FEAT-001", git(repo, "rev-parse", "HEAD").strip())
    message = str(refused.value).splitlines()[0]
    assert "tests.test_more, tests.test_mul" in message
    assert "`setup:`" in message and "`verify:`" in message and "repairs_base: true" in message


@pytest.mark.heavy
async def test_a_task_that_repairs_the_base_must_leave_every_test_passing(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", FILES)
    base = git(repo, "rev-parse", "HEAD").strip()
    gates = Gates(GitRepo(repo), GateRequest(plan_verify=VERIFY, repairs_base=True), no_cache=True)
    decided = await gates.check_base("FEAT-001", base)
    assert decided["base"] is not None and "could not load" in str(decided["base"].get("not_a_baseline"))
    still_broken = commit(repo, {"src/calc/mul.py": "def mul(a, b):\n    return a + b\n"}, base)
    run = (await gates.run(still_broken)).result
    assert not run["passed"], run["summary"]  # before: "only tests already failing on the base fail"
    (still_broken / "src" / "calc" / "settings.py").write_text("ROUNDING = 2\n")
    git(still_broken, "add", "-A")
    git(still_broken, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "repair")
    assert not (await gates.run(still_broken)).result["passed"]  # repaired, but mul is broken: test_mul fails
    (still_broken / "src" / "calc" / "mul.py").write_text("def mul(a, b):\n    return a * b\n")
    git(still_broken, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "fix")
    assert (await gates.run(still_broken)).result["passed"]


@pytest.mark.heavy
async def test_a_run_on_a_base_a_task_repairs_says_why_it_is_no_baseline(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", FILES, plan=plan(task("TASK-001", repairs_base=True), verify=VERIFY))
    repaired = {"src/calc/__init__.py": "", ".gitignore": FILES[".gitignore"]}
    run = await Workflow(repo, ScriptedAgents({"player": writes(repaired), "coach": approve()})).run("FEAT-001")
    start = next(event for event in run.events if event["event"] == "feature_start")
    assert "no baseline (no test ran on the base: every failure is a test file that could not load" in str(
        start["gate_base"]), start["gate_base"]
    assert run.status("TASK-001") == "approved"
