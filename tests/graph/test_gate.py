"""The objective gate on real repos and real test runners, in-process: a gate always exists (detected when
the plan names none), it runs in the repo's own environment, it is checked on the base before any session,
red tests on the base neither block nor hide, and the coach's claims are checked against it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, writes
from orchestrator.errors import GateUnusableError, InputError
from orchestrator.plan.model import load_plan
from orchestrator.store import inspection
from orchestrator.store.checkpoints import CheckpointStore
from tests.graph.gated_base import GatedBase, gated_base
from tests.graph.harness import Workflow, plan, task

PY_FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "calc/__init__.py": "",
    "calc/mul.py": "def mul(a, b):\n    return a * b\n",
    "tests/__init__.py": "",
    "tests/test_mul.py": "from calc.mul import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
}
ADD_TEST = {"tests/test_add.py": "from calc.add import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"}
WRONG_ADD = {"calc/add.py": "def add(a, b):\n    return a - b\n", **ADD_TEST}
RIGHT_ADD = {"calc/add.py": "def add(a, b):\n    return a + b\n", **ADD_TEST}


def own_venv(repo: Path, modules: dict[str, str]) -> None:
    """A virtualenv of the repo's own (not AutoBuild's) with modules only it has."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    site = next((repo / ".venv" / "lib").glob("python*/site-packages"))
    for name, text in modules.items():
        (site / name).write_text(text)
    (repo / ".git" / "info" / "exclude").write_text(".venv\n")


def commit_lockfile(repo: Path) -> None:
    subprocess.run(["npm", "install", "--package-lock-only", "--offline", "--no-audit", "--no-fund"], cwd=repo,
                   check=True, capture_output=True)
    git(repo, "add", "package-lock.json")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "lock")


def python_repo(tmp_path: Path, files: dict[str, str] | None = None, verify: str | None = None) -> Path:
    """A Python repo (by default its plan names no verify: its pytest suite must be found and used)."""
    return make_sample_repo(tmp_path / "repo", files={**PY_FILES, **(files or {})},
                            plan=plan(task("TASK-001"), verify=verify))


@pytest.fixture(scope="module")
def python_base(tmp_path_factory: pytest.TempPathFactory) -> GatedBase:
    """`python_repo`'s default repo with its detected gate checked on the base once (tests/graph/gated_base.py)."""
    return gated_base(tmp_path_factory.mktemp("python-base"), PY_FILES, None)


@pytest.fixture
def shared_repo(python_base: GatedBase) -> Path:
    """`python_repo(tmp_path)`, its base's runs shared by the tests that use it."""
    return python_base.fresh(plan(task("TASK-001"), verify=None))


async def test_without_verify_the_repos_pytest_suite_gates_and_a_false_approval_is_sent_back(shared_repo: Path) -> None:
    repo = shared_repo
    agents = ScriptedAgents({("player", "TASK-001", 1): writes(WRONG_ADD), ("player", "TASK-001", 2): writes(RIGHT_ADD),
                             "coach": approve()})  # a coach that approves without running anything
    run = await Workflow(repo, agents).run()
    start = next(e for e in run.events if e["event"] == "feature_start")
    assert start["gate"] == "python -m pytest" and "tests/" in start["gate_source"]
    result = run.results["TASK-001"]
    assert result["status"] == "approved" and result["false_approvals"] == 1 and result["turns"] == 2
    gates = [e for e in run.events if e["event"] == "gate"]
    assert [g["passed"] for g in gates] == [False, True]
    assert gates[0]["failing"] == ["tests.test_add::test_add"], "JUnit ids from the repo's own pytest"
    assert "a + b" in git(repo, "show", "autobuild/FEAT-001:calc/add.py"), "only the green turn was merged"


@pytest.mark.base_check  # runs the base check for real (tests/graph/shared_bases.py)
async def test_a_red_base_neither_blocks_a_correct_task_nor_hides_a_broken_test(tmp_path: Path) -> None:
    red = {"tests/test_flaky.py": "def test_known_bad():\n    assert False, 'red before we started'\n"}
    repo = make_sample_repo(tmp_path / "repo", files={**PY_FILES, **red},
                            plan=plan(task("GOOD"), task("BREAKS"), verify=None))
    breaks_mul = {"calc/mul.py": "def mul(a, b):\n    return a + b\n", "calc/extra.py": "X = 1\n"}
    agents = ScriptedAgents({("player", "GOOD"): writes(RIGHT_ADD), ("player", "BREAKS"): writes(breaks_mul),
                             "coach": approve()})
    run = await Workflow(repo, agents).run(max_turns=2)
    start = next(e for e in run.events if e["event"] == "feature_start")
    assert start["base_failing"] == ["tests.test_flaky::test_known_bad"]
    assert run.status("GOOD") == "approved" and run.results["GOOD"]["merged"]
    assert run.status("BREAKS") == "failed"
    broken = [e for e in run.events if e["event"] == "gate" and e["task"] == "BREAKS"]
    assert broken and all(g["new_failures"] == ["tests.test_mul::test_mul"] for g in broken)
    report = (repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").read_text()
    assert "**Base:** already red" in report and "tests.test_flaky::test_known_bad" in report


@pytest.mark.parametrize(("verify", "reason"), [
    ("no-such-test-runner --all", "exit 127"),
    ("python -m pytest --no-such-option", "usage error"),
    ("python -m pytest tests/nothing_here_test.py -k nomatch", "tests"),
])
@pytest.mark.base_check  # runs the base check for real (tests/graph/shared_bases.py)
async def test_a_gate_that_cannot_run_stops_the_run_before_any_session(tmp_path: Path, verify: str,
                                                                      reason: str) -> None:
    repo = python_repo(tmp_path, verify=verify)
    agents = ScriptedAgents({"player": writes(RIGHT_ADD), "coach": approve()})
    with pytest.raises(GateUnusableError, match="can't run on the base") as raised:
        await Workflow(repo, agents).run()
    assert reason in str(raised.value)
    assert agents.calls == [], "no model was called"
    assert git(repo, "branch", "--list", "autobuild/*") == "", "nothing was started"


async def test_nothing_to_gate_with_means_unverified_approvals_said_plainly(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files={"notes.txt": "no tests here\n"},
                            plan=plan(task("TASK-001"), verify=None), venv=False)
    run = await Workflow(repo, ScriptedAgents({"player": writes({"notes.txt": "more\n"}), "coach": approve()})).run()
    start = next(e for e in run.events if e["event"] == "feature_start")
    assert start.get("gate") is None and "no test command found" in start["gate_source"]
    assert run.status("TASK-001") == "approved-unverified"
    report = (repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").read_text()
    assert "1 unverified" in report and "no gate" in report


async def test_coach_claims_contradicted_by_the_gate_are_violations_counted_in_status(tmp_path: Path,
                                                                                    shared_repo: Path) -> None:
    repo = shared_repo
    agents = ScriptedAgents({("player", "TASK-001", 1): writes(WRONG_ADD), ("player", "TASK-001", 2): writes(RIGHT_ADD),
                             ("coach", "TASK-001", 1): approve(tests_verified={"passed": 10, "failed": 0}),
                             ("coach", "TASK-001", 2): approve(tests_verified={"passed": 1, "failed": 0})})
    db = tmp_path / "db.sqlite"
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        run = await Workflow(repo, agents, checkpointer=saver).run()
    assert run.results["TASK-001"]["claims_contradicted"] == 2  # approved red work, and claimed failed: 0
    violations = [e["detail"] for e in run.events if e["event"] == "contract_violation"]
    assert any("approved while the gate failed" in v for v in violations)
    assert any("reported failed: 0, the gate saw 1 failing" in v for v in violations)
    table = inspection.feature_status(CheckpointStore(str(db)), load_plan(repo, "FEAT-001"))
    assert table["claims_contradicted"] == 2
    shown = inspection.show_task(repo, load_plan(repo, "FEAT-001"), "TASK-001")
    assert any("coach claims contradicted" in v for turn in shown["turns"] for v in turn["violations"])
    assert "Coach claims contradicted:** 2" in (repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").read_text()


async def test_the_gate_runs_in_the_repos_own_virtualenv_not_autobuilds(tmp_path: Path) -> None:
    files = {**PY_FILES, "tests/test_env.py": (
        "import sys\nimport unittest\n\nimport repo_only_helper\n\n\nclass EnvTest(unittest.TestCase):\n"
        "    def test_env(self):\n"
        f"        self.assertFalse(sys.prefix.startswith({sys.prefix!r}))\n"
        "        self.assertEqual(repo_only_helper.VALUE, 42)\n")}
    repo = make_sample_repo(tmp_path / "repo", files=files, plan=plan(task("TASK-001"), verify="python -m unittest"
                                                                      " discover -s tests -t ."), venv=False)
    own_venv(repo, {"repo_only_helper.py": "VALUE = 42\n"})
    run = await Workflow(repo, ScriptedAgents({"player": writes(RIGHT_ADD), "coach": approve()})).run()
    assert run.status("TASK-001") == "approved", run.results


@pytest.mark.skipif(shutil.which("npm") is None, reason="needs node and npm")
async def test_a_node_repo_whose_worktrees_need_npm_ci_gates_correctly(tmp_path: Path) -> None:
    files = {
        ".gitignore": "node_modules/\n",
        "vendor/helper/package.json": '{"name": "helper", "version": "1.0.0", "main": "index.js"}\n',
        "vendor/helper/index.js": "module.exports = (a, b) => a + b;\n",
        "package.json": '{"name": "app", "version": "1.0.0", "scripts": {"test": "node --test"},'
                        ' "dependencies": {"helper": "file:./vendor/helper"}}\n',
        "test/helper.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n"
                               "const add = require('helper');\ntest('add', () => assert.strictEqual(add(2, 3), 5));\n",
    }
    repo = make_sample_repo(tmp_path / "repo", files=files, plan=plan(task("TASK-001"), verify=None), venv=False)
    commit_lockfile(repo)
    wrong = {"test/mul.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n"
                                 "const mul = require('../mul');\n"
                                 "test('mul', () => assert.strictEqual(mul(2, 3), 6));\n",
             "mul.js": "module.exports = (a, b) => a + b;\n"}
    right = {**wrong, "mul.js": "module.exports = (a, b) => a * b;\n"}
    agents = ScriptedAgents({("player", "TASK-001", 1): writes(wrong), ("player", "TASK-001", 2): writes(right),
                             "coach": approve()})
    run = await Workflow(repo, agents).run()
    start = next(e for e in run.events if e["event"] == "feature_start")
    assert (start["gate"], start["setup"]) == ("npm test", "npm ci --no-audit --no-fund")
    assert run.status("TASK-001") == "approved" and run.results["TASK-001"]["false_approvals"] == 1
    gates = [e for e in run.events if e["event"] == "gate"]
    assert [(g["passed"], g["tests_failed"]) for g in gates] == [(False, 1), (True, 0)]
    assert not (repo / "node_modules").exists(), "the user's checkout is not touched"


@pytest.mark.base_check  # runs the base check for real (tests/graph/shared_bases.py)
async def test_after_a_gate_that_could_not_run_the_same_thread_runs_once_it_is_fixed(shared_repo: Path) -> None:
    repo = shared_repo
    agents = ScriptedAgents({"player": writes(RIGHT_ADD), "coach": approve()})
    workflow = Workflow(repo, agents)
    with pytest.raises(GateUnusableError):
        await workflow.run(verify="no-such-test-runner")
    run = await workflow.run()
    assert run.status("TASK-001") == "approved"


async def test_tests_the_player_reports_but_the_gate_never_ran_are_a_violation(shared_repo: Path) -> None:
    repo = shared_repo
    claims = writes(RIGHT_ADD)
    claims.report = {**(claims.report or {}), "tests_written": ["tests/test_add.py", "tests/test_ghost_suite.py"]}
    ghost = {"tests/test_ghost_suite.py": "# collected by nothing: no test functions\n"}
    claims.files = {**claims.files, **ghost}
    run = await Workflow(repo, ScriptedAgents({"player": claims, "coach": approve()})).run()
    assert run.status("TASK-001") == "approved"
    violations = [e["detail"] for e in run.events if e["event"] == "contract_violation"]
    assert violations == ["player claims contradicted: reported tests the gate did not run: tests/test_ghost_suite.py"]


async def test_a_different_verify_on_resume_is_refused_not_silently_ignored(tmp_path: Path) -> None:
    repo = python_repo(tmp_path)
    agents = ScriptedAgents({"player": Turn(raises=RuntimeError("disk full"))})  # the task errs: resumable
    workflow = Workflow(repo, agents)
    first = await workflow.run(verify="python -m pytest -q")
    assert first.output is None, "the run is unfinished"
    with pytest.raises(InputError, match="does not apply to it"):
        await workflow.run(fresh_input=False, verify="python -m pytest -x")


async def test_test_ids_are_the_same_in_every_worktree_when_pytest_roots_above_the_repo(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # an enclosing project: pytest's rootdir is above the repo
    red = {"tests/test_flaky.py": "def test_known_bad():\n    assert False\n"}
    files = {name: text for name, text in {**PY_FILES, **red}.items() if name != "tests/__init__.py"}
    repo = make_sample_repo(tmp_path / "repo", files=files, plan=plan(task("TASK-001"), verify=None))
    claims = writes(RIGHT_ADD)
    claims.report = {**(claims.report or {}), "tests_written": ["tests/test_add.py"]}
    run = await Workflow(repo, ScriptedAgents({"player": claims, "coach": approve()})).run()
    start = next(e for e in run.events if e["event"] == "feature_start")
    assert start["base_failing"] == ["tests.test_flaky::test_known_bad"]
    assert run.status("TASK-001") == "approved", run.results
    assert not [e for e in run.events if e["event"] == "contract_violation"]
