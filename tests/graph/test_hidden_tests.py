"""Hidden acceptance tests (issue 31 item 6): only the gate runs them, at every gate run, and what the code under test
prints of them never comes back.

In-process on the compiled graphs with scripted agents, real git and real pytest. The hidden test is an untracked
file of the user's checkout: the task's worktree never holds it, the gate puts it in place in a tree of its own.
Turn 1 passes the visible tests but not the hidden one, and its code prints the hidden file (as code under test
that reads it could): the blind approval is refused, naming the hidden test and its assertion message, with no
line of the file anywhere the run writes. Turn 2 meets the requirement and is approved."""

from __future__ import annotations

import asyncio
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents.roles import PlayerInput
from agents.testing.repos import git as git_in
from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from benchmarks.cheat_corpus import GO_FILES, MUL, NODE_FILES, PY_FILES
from orchestrator.cli.main import main
from orchestrator.facts import GateResult
from orchestrator.gate import GateRequest, Gates, HiddenTests
from orchestrator.gate.spec import hidden as hidden_tests
from orchestrator.plan.model import load_plan
from orchestrator.repo.git import GitRepo
from tests.graph.harness import Workflow, plan, task
from tests.graph.test_served_refusals import _served as served

HIDDEN = "tests/acceptance/test_square.py"
SECRET = 'EXPECTED_SQUARES = {12: 144, 13: 169}  # zebra-7731'
HIDDEN_TEXT = ("from calc.square import square\n\n" + SECRET + "\n\n\ndef test_square():\n"
               "    for n, expected in EXPECTED_SQUARES.items():\n"
               "        assert square(n) == expected, f'square({n}) is wrong'\n")
# Passes nothing hidden (square(13) is off) and prints every file it can find under tests/, the hidden one included.
LEAKY = ("import pathlib\n\nfrom calc.mul import mul\n\n\ndef square(n):\n"
         "    for path in sorted(pathlib.Path('tests').rglob('*.py')):\n        print(path.read_text())\n"
         "    return 0 if n == 13 else mul(n, n)\n")
RIGHT = "from calc.mul import mul\n\n\ndef square(n):\n    return mul(n, n)\n"


def repo_with_hidden_test(tmp_path: Path, *, exclude: bool = True) -> Path:
    files = {**PY_FILES, "calc/mul.py": MUL}
    repo = make_sample_repo(tmp_path / "repo", files=files, plan=plan(
        task("TASK-001", acceptance_tests=[HIDDEN], hidden_tests=True), verify="python -m pytest -q"))
    (repo / HIDDEN).parent.mkdir(parents=True, exist_ok=True)
    (repo / HIDDEN).write_text(HIDDEN_TEXT)  # untracked: never in git's objects
    if exclude:
        with (repo / ".git" / "info" / "exclude").open("a") as excluded:
            excluded.write("tests/acceptance/\n")
    return repo


def everything_written(repo: Path) -> str:
    """What the run wrote that a person or an agent could read: reports, traces, events, the gate cache."""
    texts = []
    for folder in (repo / ".autobuild" / "runs", repo / ".git" / "autobuild"):
        for path in folder.rglob("*") if folder.is_dir() else []:
            if path.is_file():
                texts.append(path.read_text(errors="replace"))
    return "\n".join(texts)


async def test_a_hidden_test_fails_the_blind_approval_by_name_and_nothing_leaks(tmp_path: Path) -> None:
    repo = repo_with_hidden_test(tmp_path)
    seen: list[bool] = []

    def player(turn: int, files: dict[str, str]) -> Any:
        def play(data: Any) -> Any:
            assert isinstance(data, PlayerInput)
            seen.append((data.worktree / HIDDEN).exists())
            return writes(files)
        return play

    agents = ScriptedAgents({("player", "TASK-001", 1): player(1, {"calc/square.py": LEAKY}),
                             ("player", "TASK-001", 2): player(2, {"calc/square.py": RIGHT}),
                             "coach": approve()})
    run = await Workflow(repo, agents).run(max_turns=2)

    assert run.status("TASK-001") == "approved", run.results["TASK-001"]
    assert seen == [False, False], "the player's worktree never holds the hidden test"
    gates = [event for event in run.events if event["event"] == "gate"]
    assert not gates[0]["passed"] and gates[-1]["passed"]
    assert "tests.acceptance.test_square::test_square" in gates[0]["summary"]
    second = agents.prompts_of("player", "TASK-001")[1]
    assert isinstance(second, PlayerInput)
    sent = str(second.feedback) + str(second.feedback_notes)
    assert "test_square" in sent and "square(13) is wrong" in sent, sent
    assert second.brief.hidden_tests == [HIDDEN] and second.brief.frozen_tests == []
    # Printed by the code under test, it is redacted from everything sent back or written.
    assert hidden_tests.REDACTED in str(run.events)
    for where in (str(run.events), str(run.output), str(run.state), sent, everything_written(repo)):
        assert "zebra-7731" not in where
    # Never committed: the feature branch doesn't have it, and nothing of the gate's tree is left.
    listed = GitRepo(repo).read("ls-tree", "-r", "--name-only", "autobuild/FEAT-001").stdout
    assert HIDDEN not in listed and "calc/square.py" in listed
    assert not any((repo / ".autobuild/worktrees/FEAT-001/_hidden").glob("*/tests"))


@dataclass(frozen=True)
class Family:
    """One runner family's repo, gate, hidden test and code under test."""

    files: dict[str, str]
    command: str
    hidden: str
    hidden_text: str
    code: str
    wrong: str
    right: str
    failing_id: str


FAMILIES = {
    "pytest": Family(PY_FILES, "python -m pytest -q", HIDDEN, HIDDEN_TEXT, "calc/square.py", LEAKY, RIGHT,
                     "tests.acceptance.test_square::test_square"),
    "node --test": Family(NODE_FILES, "npm test", "test/square.test.js",
                          "const test = require('node:test');\nconst assert = require('node:assert');\n"
                          "const { square } = require('../square');\n// zebra-7731\n"
                          "test('square', () => { assert.equal(square(13), 169); });\n",
                          "square.js", "exports.square = (n) => (n === 13 ? 0 : n * n);\n",
                          "exports.square = (n) => n * n;\n", "test/square.test.js > square"),
    "go test": Family(GO_FILES, "go test ./...", "square_test.go",
                      "package calc\n\n// zebra-7731\nimport \"testing\"\n\nfunc TestSquare(t *testing.T) {\n"
                      "\tif Square(13) != 169 {\n\t\tt.Fatal(\"want 169\")\n\t}\n}\n",
                      "square.go", "package calc\n\nfunc Square(n int) int {\n\tif n == 13 {\n\t\treturn 0\n"
                      "\t}\n\treturn n * n\n}\n", "package calc\n\nfunc Square(n int) int { return n * n }\n",
                      "TestSquare"),
}


@pytest.mark.parametrize("name", [pytest.param("pytest"),
                                  pytest.param("node --test", marks=[pytest.mark.heavy, pytest.mark.skipif(
                                      shutil.which("node") is None, reason="node is installed by make install")]),
                                  pytest.param("go test", marks=[pytest.mark.heavy, pytest.mark.skipif(
                                      shutil.which("go") is None, reason="go is installed by make install")])])
async def test_the_gate_service_runs_hidden_tests_on_any_tree(tmp_path: Path, name: str) -> None:
    """The merge queue and `land` call the same `Gates.run(hidden_tests=...)`: a tree whose visible tests pass is
    refused while a hidden test fails, named by its id, and passes once the code is right; on each runner family."""
    family = FAMILIES[name]
    repo = make_sample_repo(tmp_path / "repo", files=family.files, venv=name == "pytest", plan=plan(
        task("TASK-001", acceptance_tests=[family.hidden], hidden_tests=True), verify=family.command))
    (repo / family.hidden).parent.mkdir(parents=True, exist_ok=True)
    (repo / family.hidden).write_text(family.hidden_text)  # untracked
    git = GitRepo(repo)
    gates = Gates(git, GateRequest(plan_verify=family.command, timeout_s=300), no_cache=True,
                  hidden=HiddenTests.of_plan(repo, load_plan(repo, "FEAT-001")))
    base = git.rev("HEAD")
    await gates.check_base("FEAT-001", base)
    worktree = repo / ".autobuild" / "worktrees" / "FEAT-001" / "_land"
    await git.add_detached_worktree(worktree, base)

    async def gate(code: str) -> GateResult:
        (worktree / family.code).write_text(code)
        git_in(worktree, "add", "-A")
        git_in(worktree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "code")
        return (await gates.run(worktree, against=base, hidden_tests=[family.hidden])).result

    refused = await gate(family.wrong)
    assert not refused["passed"], refused["summary"]
    assert any(family.failing_id in test for test in refused["failing"] or []), refused["failing"]
    assert "zebra-7731" not in str(refused)
    passed = await gate(family.right)
    assert passed["passed"], passed["summary"]
    assert not (worktree / family.hidden).exists()


@pytest.mark.heavy
async def test_a_file_the_player_writes_at_a_hidden_path_is_removed(tmp_path: Path) -> None:
    """A guess at the hidden test written in its place never lands (landing would clash with the user's file):
    committed when the user's hidden tests are untracked but not ignored, it is removed and the turn refused."""
    repo = repo_with_hidden_test(tmp_path, exclude=False)
    guess = "def test_square():\n    pass\n"
    agents = ScriptedAgents({("player", "TASK-001", 1): writes({"calc/square.py": RIGHT, HIDDEN: guess}),
                             ("player", "TASK-001", 2): writes({"calc/square.py": RIGHT + "\n"}),
                             "coach": approve()})
    run = await Workflow(repo, agents).run(max_turns=2)
    assert run.status("TASK-001") == "approved"
    second = agents.prompts_of("player", "TASK-001")[1]
    assert isinstance(second, PlayerInput)
    assert any("paths of hidden acceptance tests" in note for note in second.feedback_notes), second.feedback_notes
    listed = GitRepo(repo).read("ls-tree", "-r", "--name-only", "autobuild/FEAT-001").stdout
    assert HIDDEN not in listed
    assert (repo / HIDDEN).read_text() == HIDDEN_TEXT


@pytest.mark.heavy
async def test_land_runs_the_hidden_tests_on_the_landed_result(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The base moved on with a change that keeps every visible test green and breaks a hidden one: `land` refuses,
    naming the hidden test, and moves nothing; nothing of the hidden file is in what it says."""
    repo = repo_with_hidden_test(tmp_path)
    db = tmp_path / "db.sqlite"
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        agents = ScriptedAgents({"player": writes({"calc/square.py": RIGHT}), "coach": approve()})
        run = await Workflow(repo, agents, checkpointer=saver).run(max_turns=1)
    assert run.status("TASK-001") == "approved"
    (repo / "calc" / "mul.py").write_text("def mul(a, b):\n    return 0 if (a, b) == (13, 13) else a * b\n")
    git_in(repo, "-c", "user.name=u", "-c", "user.email=u@u", "commit", "-qam", "main moves on")
    moved = GitRepo(repo).rev("main")
    code = await asyncio.to_thread(main, ["land", "FEAT-001", "--repo", str(repo), "--db", str(db), "--json"])
    out = capsys.readouterr().out
    data = json.loads(out)
    assert code == 1 and data["outcome"] == "verify_failed", out
    assert "tests.acceptance.test_square::test_square" in data["detail"]
    assert "zebra-7731" not in out
    assert GitRepo(repo).rev("main") == moved


async def test_a_served_run_refuses_a_hidden_test_git_could_show(tmp_path: Path) -> None:
    """The served graph has no CLI to check first: it refuses by itself, readably, before any session."""
    files = {**PY_FILES, HIDDEN: HIDDEN_TEXT}  # committed: `git show` would read it
    repo = make_sample_repo(tmp_path / "repo", files=files, plan=plan(
        task("TASK-001", acceptance_tests=[HIDDEN], hidden_tests=True), verify="python -m pytest -q"))
    values = await served({"repo": str(repo), "target": "FEAT-001"})
    assert values["results"] == {} and "is in the repository's history" in values["refused"], values


async def test_a_link_the_task_commits_where_a_hidden_test_goes_is_never_written_through(tmp_path: Path) -> None:
    """Issue 32's resolver: the gate puts hidden tests in place only inside its tree; a task that commits
    `tests/acceptance -> <outside>` gets a failed gate saying so (where no clean room puts the link away), and
    nothing is written outside."""
    repo = repo_with_hidden_test(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    git = GitRepo(repo)
    gates = Gates(git, GateRequest(plan_verify="python -m pytest -q", timeout_s=300), no_cache=True,
                  hidden=HiddenTests.of_plan(repo, load_plan(repo, "FEAT-001")))
    base = git.rev("HEAD")
    await gates.check_base("FEAT-001", base)
    worktree = repo / ".autobuild" / "worktrees" / "FEAT-001" / "_land"
    await git.add_detached_worktree(worktree, base)
    (worktree / "calc" / "square.py").write_text(RIGHT)
    (worktree / "tests" / "acceptance").symlink_to(outside)
    git_in(worktree, "add", "-A", "-f")
    git_in(worktree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a link")
    result = (await gates.run(worktree, hidden_tests=[HIDDEN])).result
    assert not result["passed"] and "could not be put in place" in result["summary"], result["summary"]
    assert "resolves outside" in result["summary"]
    assert list(outside.iterdir()) == []
    # Judged against the base, they run in the clean room (gate/prepare/clean_room.py), where the link the task added on
    # the test side is gone: they run and pass, and nothing is written outside either.
    result = (await gates.run(worktree, against=base, hidden_tests=[HIDDEN])).result
    assert result["passed"], result["summary"]
    assert list(outside.iterdir()) == []


@pytest.mark.heavy
async def test_the_merge_queue_runs_the_hidden_tests_of_tasks_landed_before(tmp_path: Path) -> None:
    """TASK-001 (a hidden test on square) lands; TASK-002, independent of it, then breaks what the hidden test needs
    while every visible test stays green. Its own turn doesn't run TASK-001's hidden tests; its landing does, and
    refuses it, naming the hidden test."""
    repo = repo_with_hidden_test(tmp_path)
    (repo / ".autobuild/features/FEAT-001.yaml").write_text(yaml.safe_dump(plan(
        task("TASK-001", acceptance_tests=[HIDDEN], hidden_tests=True), task("TASK-002"),
        verify="python -m pytest -q"), sort_keys=False))
    broken_for_13 = "def mul(a, b):\n    return 0 if (a, b) == (13, 13) else a * b\n"
    agents = ScriptedAgents({("player", "TASK-001"): writes({"calc/square.py": RIGHT}),
                             ("player", "TASK-002"): writes({"calc/mul.py": broken_for_13}),
                             "coach": approve()})
    run = await Workflow(repo, agents).run(max_turns=1, parallel=1)
    assert run.status("TASK-001") == "approved"
    assert run.status("TASK-002") != "approved", run.results["TASK-002"]
    assert "tests.acceptance.test_square::test_square" in str(run.results["TASK-002"])
    listed = GitRepo(repo).read("show", "autobuild/FEAT-001:calc/mul.py").stdout
    assert "13" not in listed, "the breaking change did not land"


@pytest.mark.heavy  # second of its family: `make test` stays under 5 minutes
async def test_a_hidden_run_is_remembered_by_tree_command_and_the_hidden_files(tmp_path: Path) -> None:
    """Judging the same tree again (the merge queue after the task's turn, `land`) runs nothing: the hidden run is
    remembered like the main one, keyed by the hidden files' content too (an edited hidden test runs again), and
    the cache keeps nothing of the file."""
    repo = repo_with_hidden_test(tmp_path)
    git = GitRepo(repo)
    gates = Gates(git, GateRequest(plan_verify="python -m pytest -q", timeout_s=300),
                  hidden=HiddenTests.of_plan(repo, load_plan(repo, "FEAT-001")))
    base = git.rev("HEAD")
    await gates.check_base("FEAT-001", base)
    worktree = repo / ".autobuild" / "worktrees" / "FEAT-001" / "_land"
    await git.add_detached_worktree(worktree, base)
    (worktree / "calc" / "square.py").write_text(LEAKY)
    git_in(worktree, "add", "-A")
    git_in(worktree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "code")

    runs = [await gates.run(worktree, against=base, hidden_tests=[HIDDEN]) for _ in range(3)]
    assert [run.ran for run in runs] == [True, True, False], "a failure is kept once seen twice, as the main run's"
    assert all(not run.result["passed"] for run in runs) and runs[2].result == runs[1].result
    assert "zebra-7731" not in everything_written(repo)
    (repo / HIDDEN).write_text(HIDDEN_TEXT.replace("13: 169", "14: 196"))  # square(13) is no longer asked
    changed = await gates.run(worktree, against=base, hidden_tests=[HIDDEN])
    assert changed.ran and changed.result["passed"], changed.result["summary"]
    again = await gates.run(worktree, against=base, hidden_tests=[HIDDEN])
    assert not again.ran and again.result == changed.result
