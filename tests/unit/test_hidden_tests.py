"""Hidden acceptance tests, the parts without an agent or a gate run: the plan field and its checks, the redaction,
the tool policy's read denials and the sandbox's denyRead settings."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agents import sandbox as agent_sandbox
from agents.policy import ToolPolicy
from agents.testing.repos import git, make_sample_repo
from orchestrator import sandbox
from orchestrator.errors import InputError, PlanError
from orchestrator.facts import GateResult
from orchestrator.gate.spec import hidden
from orchestrator.plan.model import load_plan
from orchestrator.repo.git import GitRepo
from tests.cli_in_process import cli_in_process
from tests.conftest import CliRun

HIDDEN = "tests/acceptance/test_secret.py"
TEXT = "from calc import f\n\n\ndef test_f():\n    assert f(2) == 4  # zebra-7731\n    pass\n"


def repo_with(tmp_path: Path, task_fields: dict[str, object], *, write: bool = True) -> Path:
    plan = {"id": "FEAT-001", "name": "Feature", "verify": "python -m pytest -q",
            "tasks": [{"id": "TASK-001", "name": "Task", "requirements": ["f squares"], **task_fields}]}
    repo = make_sample_repo(tmp_path / "repo", files={"calc.py": "def f(x):\n    return x\n"}, plan=plan, venv=False)
    if write:
        (repo / HIDDEN).parent.mkdir(parents=True, exist_ok=True)
        (repo / HIDDEN).write_text(TEXT)
    return repo


def test_the_plan_field_is_a_boolean_and_needs_tests(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="hidden_tests: must be true or false"):
        load_plan(repo_with(tmp_path / "a", {"acceptance_tests": [HIDDEN], "hidden_tests": "yes"}), "FEAT-001")
    with pytest.raises(PlanError, match="hidden_tests is true but acceptance_tests names no file"):
        load_plan(repo_with(tmp_path / "b", {"hidden_tests": True}), "FEAT-001")
    plan = load_plan(repo_with(tmp_path / "c", {"acceptance_tests": [HIDDEN], "hidden_tests": True}), "FEAT-001")
    assert plan.task("TASK-001").hidden_tests
    frozen = load_plan(repo_with(tmp_path / "d", {"acceptance_tests": [HIDDEN]}), "FEAT-001")
    assert not frozen.task("TASK-001").hidden_tests, "frozen stays the default"


def test_an_acceptance_test_linked_out_of_the_repo_is_refused(tmp_path: Path) -> None:
    """Issue 32: acceptance-test paths go through the resolver (a committed link may not lead a read out)."""
    outside = tmp_path / "secret"
    outside.mkdir()
    repo = repo_with(tmp_path, {"acceptance_tests": ["tests/outside/key.py"]}, write=False)
    (repo / "tests").mkdir(exist_ok=True)
    (repo / "tests" / "outside").symlink_to(outside)
    with pytest.raises(PlanError, match="resolves outside the repo"):
        load_plan(repo, "FEAT-001")


def test_a_hidden_test_must_stay_out_of_git_and_have_a_sandbox(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, {"acceptance_tests": [HIDDEN], "hidden_tests": True})
    plan = load_plan(repo, "FEAT-001")
    found = hidden.check(GitRepo(repo), plan, sandboxed=True)
    assert found.by_task == {"TASK-001": (HIDDEN,)} and found.sources() == (repo / HIDDEN,)
    with pytest.raises(InputError, match="need the agents' Bash sandbox"):
        hidden.check(GitRepo(repo), plan, sandboxed=False)
    git(repo, "checkout", "-q", "-b", "other")
    git(repo, "add", HIDDEN)
    git(repo, "-c", "user.name=u", "-c", "user.email=u@u", "commit", "-qm", "oops")
    git(repo, "checkout", "-q", "main")  # gone from the checkout's branch, still in another's history
    (repo / HIDDEN).parent.mkdir(parents=True, exist_ok=True)
    (repo / HIDDEN).write_text(TEXT)
    with pytest.raises(InputError, match="is in the repository's history, where an agent could read it"):
        hidden.check(GitRepo(repo), plan, sandboxed=True)
    (repo / HIDDEN).unlink()
    with pytest.raises(InputError, match="is not a file in"):
        hidden.check(GitRepo(repo), plan, sandboxed=True)


def test_validate_lists_hidden_tests_and_refuses_a_missing_one_in_one_line(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, {"acceptance_tests": [HIDDEN], "hidden_tests": True})

    def validate(*extra: str) -> CliRun:
        return cli_in_process(tmp_path, "validate", "FEAT-001", "--repo", str(repo), *extra)

    if not sandbox.agents_available():
        pytest.skip(sandbox.why_unavailable())
    shown = validate("--json")
    assert shown.returncode == 0, shown.stderr
    assert yaml.safe_load(shown.stdout)["hidden_tests"] == {"TASK-001": [HIDDEN]}
    assert f"TASK-001: hidden acceptance tests, run only by the gate: {HIDDEN}" in validate().stdout
    (repo / HIDDEN).unlink()
    refused = validate()
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and "is not a file in" in refused.stderr


def test_every_line_of_a_hidden_file_is_redacted() -> None:
    secrets = hidden.secret_lines([TEXT.encode()])
    output = ("tests/acceptance/test_secret.py::test_f FAILED\n>       assert f(2) == 4  # zebra-7731\n"
              "E       assert 2 == 4\ncaptured stdout:\nfrom calc import f\n    pass\npassed\n")
    redacted = hidden.redact(output, secrets)
    assert "zebra-7731" not in redacted and "from calc import f" not in redacted
    assert "tests/acceptance/test_secret.py::test_f FAILED" in redacted, "the test's name comes back"
    assert "E       assert 2 == 4" in redacted, "its assertion message comes back"
    assert "passed" in redacted.splitlines(), "a short line is redacted only when a whole line is hidden"
    assert redacted.count(hidden.REDACTED) == 3
    assert hidden.redact(output, frozenset()) == output


def test_the_policy_keeps_read_grep_and_glob_off_hidden_files(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    secret = repo / HIDDEN
    secret.parent.mkdir(parents=True)
    secret.write_text(TEXT)
    gate_folder = repo / ".autobuild/worktrees/FEAT-001/_hidden"
    worktree = repo / ".autobuild/worktrees/FEAT-001/TASK-001"
    gate_folder.mkdir(parents=True)
    worktree.mkdir(parents=True)
    (worktree / "src.py").write_text("x = 1\n")
    (worktree / "link.py").symlink_to(secret)
    for role_read_only in (False, True):
        policy = ToolPolicy(worktree, read_only=role_read_only, unreadable=(secret, gate_folder))
        assert "hidden acceptance test" in str(policy.check("Read", {"file_path": str(secret)}))
        assert "hidden acceptance test" in str(policy.check("Read", {"file_path": "link.py"}))
        assert "hidden acceptance test" in str(policy.check("Read", {"file_path": str(gate_folder / "T/x.py")}))
        assert "hidden acceptance test" in str(policy.check("Grep", {"pattern": "zebra", "path": str(repo)}))
        assert "hidden acceptance test" in str(policy.check("Glob", {"pattern": "**/*.py", "path": str(repo)}))
        assert "hidden acceptance test" in str(policy.check("Glob", {"pattern": f"{repo}/tests/**/*.py"}))
        assert policy.check("Read", {"file_path": "src.py"}) is None
        assert policy.check("Grep", {"pattern": "x"}) is None, "searching the worktree is fine"
        assert policy.check("Glob", {"pattern": "**/*.py"}) is None
    assert ToolPolicy(worktree).check("Read", {"file_path": str(secret)}) is None, "nothing hidden: no denial"


def test_the_sandbox_denies_reading_them_to_every_command(tmp_path: Path) -> None:
    secret = tmp_path / "repo" / HIDDEN
    settings = agent_sandbox.settings(tmp_path, (), (secret,))
    assert settings["filesystem"] == {"allowWrite": [], "denyWrite": [], "denyRead": [str(secret.resolve())]}
    assert "denyRead" not in agent_sandbox.settings(tmp_path, ())["filesystem"]  # type: ignore[operator]


def run_of(*, failing: list[str], passing: list[str] | None, exit_code: int) -> GateResult:
    return GateResult(passed=exit_code == 0, command="pytest", summary="", output="", exit_code=exit_code,
                      tests_passed=None, tests_failed=None, failing=failing, new_failures=[], ran_classes=None,
                      passing=passing)


def test_only_hidden_tests_judge_the_hidden_run() -> None:
    paths = [HIDDEN]
    hidden_id = "tests.acceptance.test_secret::test_f"
    # A test already red on the base fails the run's exit status, not the hidden tests.
    assert hidden.failing_hidden(run_of(failing=["tests.test_old::test_red"], passing=[hidden_id], exit_code=1),
                                 paths) == []
    assert hidden.failing_hidden(run_of(failing=[hidden_id], passing=[], exit_code=1), paths) == [hidden_id]
    # Named passing tests, none of them hidden: the hidden file did not run (a collection error).
    assert hidden.failing_hidden(run_of(failing=[], passing=["tests.test_a::test_a"], exit_code=0), paths) == paths
    # A runner that names no passing test: its exit status.
    assert hidden.failing_hidden(run_of(failing=[], passing=None, exit_code=0), paths) == []
    assert hidden.failing_hidden(run_of(failing=[], passing=None, exit_code=1), paths) == paths


def test_dry_run_lists_each_tasks_hidden_tests(tmp_path: Path) -> None:
    if not sandbox.agents_available():
        pytest.skip(sandbox.why_unavailable())
    repo = repo_with(tmp_path, {"acceptance_tests": [HIDDEN], "hidden_tests": True})
    shown = cli_in_process(tmp_path, "run", "FEAT-001", "--dry-run", "--json", "--repo", str(repo), "--db",
                           str(tmp_path / "db.sqlite"))
    assert shown.returncode == 0, shown.stderr
    assert yaml.safe_load(shown.stdout)["tasks"][0]["hidden_tests"] == [HIDDEN]
