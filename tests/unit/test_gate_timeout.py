"""A run stopped by its timeout keeps what it showed: the output printed so far, and (through the gate's pytest
plugin, which turns the timeout's SIGTERM into an interrupt) pytest's JUnit report of the tests that finished, so
the gate names the passing ones and the feedback shows where it hung."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.cli.demo import git as git_in
from orchestrator.cli.demo import make_sample_repo
from orchestrator.gate import GateRequest, Gates
from orchestrator.processes import run_async
from orchestrator.repo.git import GitRepo
from tests.graph.harness import plan, task


async def test_a_timed_out_command_keeps_what_it_printed(tmp_path: Path) -> None:
    done = await run_async(["bash", "-c", "echo started; sleep 30"], tmp_path, timeout=1.0)
    assert done.timed_out and not done.ok
    assert done.stdout == "started\n"
    assert "timed out after 1s" in done.stderr


@pytest.mark.heavy  # waits out a gate timeout
async def test_a_pytest_gate_stopped_by_its_timeout_reports_the_tests_that_finished(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files={"tests/test_a.py": "def test_a():\n    assert True\n"},
                            plan=plan(task("TASK-001"), verify="python -m pytest -v"))
    git = GitRepo(repo)
    gates = Gates(git, GateRequest(plan_verify="python -m pytest -v", timeout_s=6), no_cache=True)
    base = git.rev("HEAD")
    base_run = (await gates.check_base("FEAT-001", base))["base"]
    assert base_run is not None
    worktree = repo / ".autobuild" / "worktrees" / "FEAT-001" / "_land"
    await git.add_detached_worktree(worktree, base)
    (worktree / "tests/test_b.py").write_text("import time\n\n\ndef test_b():\n    time.sleep(60)\n")
    git_in(worktree, "add", "-A")
    git_in(worktree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a test that hangs")
    result = (await gates.run(worktree, changed_since=base, against=base)).result
    assert not result["passed"] and result["exit_code"] is None
    assert "timed out after 6s" in result["summary"], result["summary"]
    # The base's tests all finished before test_b hung, and pytest's report says so (the interrupted test_b is a
    # blank <testcase/> there: not a pass).
    assert result["tests_passed"] == base_run["tests_passed"] == 1 and result["runner"] == "pytest", result["summary"]
    assert "tests/test_b.py::test_b" in result["output"], result["output"]
