"""The gate's judgement end to end on real toolchains, in-process (scripted agents, real git, real runners): a
young repo runs and merges once a task adds a passing test; a swap on a red base (one failing test fixed, one
passing test broken) is caught by id on node's runner and the coach's `failed: 0` is counted; a Go module
without tests passes nothing; new tests the gate only skipped don't verify; a subTest-red base never shows a
negative count; cargo runs every test binary, so a break behind a failing first binary is caught."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, writes
from orchestrator.errors import GateUnusableError
from tests.graph.harness import Run, Workflow, plan, task, unsandboxed

CALC = {".gitignore": "__pycache__/\n.pytest_cache/\n", "calc/__init__.py": "",
        "calc/add.py": "def add(a, b):\n    return a + b\n"}


def start_of(run: Run) -> dict[str, Any]:
    return next(e for e in run.events if e["event"] == "feature_start")


def gates(run: Run, task_id: str) -> list[dict[str, Any]]:
    return [e for e in run.events if e["event"] == "gate" and e["task"] == task_id]


def with_tests(turn: Turn, *paths: str) -> Turn:
    turn.report = {**(turn.report or {}), "tests_written": list(paths)}
    return turn


async def test_a_young_python_repo_runs_and_merges_once_a_task_adds_a_passing_test(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC, plan=plan(task("TASK-001"), verify="python -m pytest -q"))
    no_test: dict[str, str | None] = {"calc/mul.py": "def mul(a, b):\n    return a * b\n"}
    with_test: dict[str, str | None] = {
        **no_test, "tests/test_mul.py": "from calc.mul import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"}
    agents = ScriptedAgents({("player", "TASK-001", 1): writes(no_test), ("player", "TASK-001", 2): writes(with_test),
                             "coach": approve()})
    run = await Workflow(repo, agents).run()
    assert "ran no tests" in start_of(run)["gate_base"], "no test on the base is a fact, not a refusal"
    assert [(g["passed"], g["tests_passed"]) for g in gates(run, "TASK-001")] == [(False, 0), (True, 1)]
    assert run.status("TASK-001") == "approved" and run.results["TASK-001"]["merged"]
    report = (repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").read_text()
    assert "**Base:** no tests yet" in report


NODE_TESTS = """const test = require('node:test');
const assert = require('node:assert');
const { add, mul, sub } = require('../calc');
test('add', () => assert.strictEqual(add(2, 3), 5));
test('mul', () => assert.strictEqual(mul(2, 3), 6));
test('sub', () => assert.strictEqual(sub(5, 3), 2));
"""


@pytest.mark.base_check  # runs the base check for real (tests/graph/shared_bases.py)
@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
async def test_a_swap_on_a_red_base_is_not_merged_and_the_coachs_failed_0_is_counted(tmp_path: Path) -> None:
    red = "module.exports = { add: (a, b) => a + b, mul: (a, b) => a + b, sub: (a, b) => a + b };\n"
    files = {"package.json": '{"name": "calc", "version": "1.0.0", "scripts": {"test": "node --test"}}\n',
             "calc.js": red, "test/calc.test.js": NODE_TESTS}
    repo = make_sample_repo(tmp_path / "repo", files=files, plan=plan(task("SWAP"), verify=None), venv=False)
    swap = "module.exports = { add: (a, b) => a - b, mul: (a, b) => a * b, sub: (a, b) => a + b };\n"
    agents = ScriptedAgents({("player", "SWAP"): writes({"calc.js": swap}),
                             "coach": approve(tests_verified={"passed": 4, "failed": 0})})
    run = await Workflow(repo, agents).run(max_turns=1)
    assert start_of(run)["base_failing"] == ["test/calc.test.js > mul", "test/calc.test.js > sub"]
    gate = gates(run, "SWAP")[0]
    assert (gate["exit_code"], gate["tests_failed"]) == (1, 2), "same exit status and count as the base"
    assert not gate["passed"] and gate["new_failures"] == ["test/calc.test.js > add"]
    assert run.status("SWAP") == "failed" and not run.results["SWAP"].get("merged")
    assert run.results["SWAP"]["claims_contradicted"] == 2
    violations = [e["detail"] for e in run.events if e["event"] == "contract_violation"]
    assert any("reported failed: 0, the gate saw 2 failing" in v for v in violations)
    assert "a + b" in git(repo, "show", "autobuild/FEAT-001:calc.js")


@pytest.mark.base_check  # runs the base check for real (tests/graph/shared_bases.py)
@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
async def test_on_a_red_base_an_approval_claiming_failed_0_is_a_contradiction_even_when_the_gate_passes(
        tmp_path: Path) -> None:
    red = "module.exports = { add: (a, b) => a + b, mul: (a, b) => a * b, sub: (a, b) => a + b };\n"
    files = {"package.json": '{"name": "calc", "version": "1.0.0", "scripts": {"test": "node --test"}}\n',
             "calc.js": red, "test/calc.test.js": NODE_TESTS, "notes.md": "x\n"}
    repo = make_sample_repo(tmp_path / "repo", files=files, plan=plan(task("DOCS"), verify=None), venv=False)
    agents = ScriptedAgents({("player", "DOCS"): writes({"notes.md": "more\n"}),
                             "coach": approve(tests_verified={"passed": 4, "failed": 0})})
    run = await Workflow(repo, agents).run(max_turns=1)
    assert run.status("DOCS") == "approved", "only the base's own failure fails"
    assert run.results["DOCS"]["claims_contradicted"] == 1
    violations = [e["detail"] for e in run.events if e["event"] == "contract_violation"]
    assert violations == ["coach claims contradicted: reported failed: 0, the gate saw 1 failing, all of them"
                          " already failing on the base"]


GO_MOD = {"go.mod": "module example.com/calc\n\ngo 1.19\n", "calc.go": "package calc\n\nfunc Add(a, b int) int {"
          " return a + b }\n"}


@pytest.mark.skipif(shutil.which("go") is None, reason="needs go (make install installs golang-go)")
async def test_a_go_module_without_tests_does_not_pass_a_break(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOFLAGS", "-mod=mod")
    monkeypatch.setenv("GOPROXY", "off")
    monkeypatch.setenv("GOCACHE", str(tmp_path / "gocache"))
    repo = make_sample_repo(tmp_path / "repo", files=GO_MOD, plan=plan(task("BREAK"), verify=None), venv=False)
    broken: dict[str, str | None] = {"calc.go": "package calc\n\nfunc Add(a, b int) int { return a - b }\n"}
    run = await Workflow(repo, ScriptedAgents({"player": writes(broken), "coach": approve()})).run(max_turns=1)
    assert start_of(run)["gate"] == "go test ./..." and "ran no tests" in start_of(run)["gate_base"]
    assert [g["passed"] for g in gates(run, "BREAK")] == [False]
    assert "ran no tests" in gates(run, "BREAK")[0]["summary"]
    assert run.status("BREAK") == "failed"


async def test_new_tests_the_gate_only_skipped_do_not_verify(tmp_path: Path) -> None:
    files = {**CALC, "tests/__init__.py": "", "tests/test_add.py": "from calc.add import add\n\n\n"
             "def test_add():\n    assert add(1, 2) == 3\n"}
    repo = make_sample_repo(tmp_path / "repo", files=files, plan=plan(task("TASK-001"), verify="python -m pytest"))
    skipped: dict[str, str | None] = {"calc/db.py": "def save(x):\n    return x\n",
               "tests/test_db.py": "import os\n\nimport pytest\n\n\n@pytest.mark.skipif('DATABASE_URL' not in"
                                   " os.environ, reason='needs DATABASE_URL')\ndef test_save():\n"
                                   "    from calc.db import save\n    assert save(1) == 1\n"}
    # A new test that only skips verifies nothing: the coach must accept it by name (refused otherwise, as
    # tests/graph/test_tests_are_spec.py shows), and the approval is then unverified.
    accepting = approve(accepts={"tests/test_db.py": "it needs a database this machine lacks"})
    script: dict[Any, Any] = {"player": with_tests(writes(skipped), "tests/test_db.py"), "coach": accepting}
    run = await Workflow(repo, ScriptedAgents(script)).run()
    assert run.status("TASK-001") == "approved-unverified"
    assert "only skipped" in run.results["TASK-001"]["reason"]
    assert "tests.test_db::test_save (needs DATABASE_URL)" in run.results["TASK-001"]["reason"]
    gate = gates(run, "TASK-001")[0]
    assert gate["passed"] and gate["tests_skipped"] == 1 and "1 skipped" in gate["summary"]
    violations = [e["detail"] for e in run.events if e["event"] == "contract_violation"]
    assert any("only skipped: tests/test_db.py" in v for v in violations)
    report = (repo / ".autobuild/runs/FEAT-001/TASK-001/AUTO-RUN.md").read_text()
    assert "skipped: tests.test_db::test_save (needs DATABASE_URL)" in report


SUBTESTS = """import unittest

from calc.add import add


class Add(unittest.TestCase):
    def test_table(self):
        for a, b, want in [(1, 1, 2), (2, 2, 5), (3, 3, 7), (4, 4, 9)]:
            with self.subTest(a=a):
                self.assertEqual(add(a, b), want)

    def test_zero(self):
        self.assertEqual(add(0, 0), 0)
"""


@pytest.mark.base_check  # runs the base check for real (tests/graph/shared_bases.py)
async def test_a_subtest_red_base_never_reports_a_negative_count_and_a_break_is_named(tmp_path: Path) -> None:
    files = {**CALC, "tests/__init__.py": "", "tests/test_add.py": SUBTESTS}
    repo = make_sample_repo(tmp_path / "repo", files=files, venv=False,
                            plan=plan(task("BREAK"), verify="python -m unittest discover -s tests -t ."))
    broken: dict[str, str | None] = {"calc/add.py": "def add(a, b):\n    return a + b + (a == 0)\n"}
    run = await Workflow(repo, ScriptedAgents({"player": writes(broken), "coach": approve()})).run(max_turns=1)
    start = start_of(run)
    assert "-" not in start["gate_base"].split("(")[1].split(" passed")[0], start["gate_base"]
    assert start["base_failing"] == ["tests.test_add.Add.test_table (a=2)", "tests.test_add.Add.test_table (a=3)",
                                     "tests.test_add.Add.test_table (a=4)"]
    gate = gates(run, "BREAK")[0]
    assert gate["tests_passed"] >= 0 and gate["new_failures"] == ["tests.test_add.Add.test_zero"]
    assert run.status("BREAK") == "failed"


async def test_a_failed_subtest_under_pytest_fails_its_test_and_is_no_tampering(tmp_path: Path) -> None:
    """pytest 9 reports a unittest test whose subTest failed twice for its call (its own report passes, the
    subtest's fails): each outcome is its own, so the break is named, not refused as a report given twice."""
    green = SUBTESTS.replace("(2, 2, 5), (3, 3, 7), (4, 4, 9)", "(2, 2, 4), (3, 3, 6)")
    files = {**CALC, "tests/__init__.py": "", "tests/test_add.py": green}
    repo = make_sample_repo(tmp_path / "repo", files=files, plan=plan(task("BREAK"), verify="python -m pytest -q"))
    broken: dict[str, str | None] = {"calc/add.py": "def add(a, b):\n    return a + b + (a == 3)\n"}
    run = await Workflow(repo, ScriptedAgents({"player": writes(broken), "coach": approve()})).run(max_turns=1)
    gate = gates(run, "BREAK")[0]
    assert not gate.get("tampering"), gate.get("tampering")
    assert not gate["passed"] and gate["failing"] == ["tests.test_add.Add::test_table"], gate["summary"]
    assert "tampering" not in gate["summary"]
    assert run.status("BREAK") == "failed"


CRATE = {
    "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
    "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 { a + b }\npub fn mul(a: i32, b: i32) -> i32 { a * b }\n",
    "tests/a_first.rs": "#[test]\nfn known_bad() { assert_eq!(calc::add(1, 1), 3); }\n",
    "tests/b_second.rs": "#[test]\nfn mul_works() { assert_eq!(calc::mul(2, 3), 6); }\n",
    ".gitignore": "target/\n",
}


@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo")
async def test_a_crate_whose_first_test_binary_fails_still_catches_a_break_in_the_second(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CRATE, plan=plan(task("BREAK"), verify=None), venv=False)
    broken: dict[str, str | None] = {"src/lib.rs": CRATE["src/lib.rs"].replace("a * b", "a + b")}
    run = await Workflow(repo, ScriptedAgents({"player": writes(broken), "coach": approve()})).run(max_turns=1)
    assert start_of(run)["gate"] == "cargo test"
    assert start_of(run)["base_failing"] == ["tests/a_first.rs::known_bad"]
    gate = gates(run, "BREAK")[0]
    assert gate["new_failures"] == ["tests/b_second.rs::mul_works"], "the second binary ran (--no-fail-fast)"
    assert run.status("BREAK") == "failed"


async def test_a_new_failure_that_passes_when_run_again_is_flaky_and_does_not_fail_the_task(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unsandboxed(tmp_path, monkeypatch)  # its flaky test keeps a mark file under tmp_path, outside the run
    flaky = (f"import pathlib\n\n\ndef test_sometimes():\n    mark = pathlib.Path({str(tmp_path / 'ran-once')!r})\n"
             "    first = not mark.exists()\n    mark.touch()\n    assert not first\n")
    repo = make_sample_repo(tmp_path / "repo", files={**CALC, "tests/test_flaky.py": flaky},
                            plan=plan(task("TASK-001"), verify="python -m pytest -q"))
    (tmp_path / "ran-once").touch()  # the base's run passes; the task's first run is the one that flakes
    flakes_once: dict[str, str | None] = {"calc/mul.py": "def mul(a, b):\n    return a * b\n"}

    def player(_: Any) -> Turn:
        (tmp_path / "ran-once").unlink(missing_ok=True)
        return writes(flakes_once)

    run = await Workflow(repo, ScriptedAgents({"player": player, "coach": approve()})).run(max_turns=1)
    gate = gates(run, "TASK-001")[0]
    assert gate["passed"] and "flaky" in gate["summary"] and "tests.test_flaky::test_sometimes" in gate["summary"]
    assert run.status("TASK-001") == "approved"


COUNTS_ONLY = ("import pathlib, sys\n"
               "bad = 1 + (pathlib.Path('calc/add.py').read_text().count('-'))\n"
               "print(f'Ran 5 tests in 0.01s\\n\\nFAILED (failures={bad})')\nsys.exit(1)\n")


@pytest.mark.base_check  # runs the base check for real (tests/graph/shared_bases.py)
async def test_a_red_base_whose_failures_are_not_named_stops_unless_counts_are_accepted(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files={**CALC, "check.py": COUNTS_ONLY},
                            plan=plan(task("GOOD"), verify="python check.py"))
    agents = ScriptedAgents({"player": writes({"calc/mul.py": "def mul(a, b):\n    return a * b\n"}),
                             "coach": approve()})
    with pytest.raises(GateUnusableError, match="--judge-by-counts") as raised:
        await Workflow(repo, agents).run()
    assert "does not name its failing tests" in str(raised.value) and agents.calls == []
    run = await Workflow(repo, agents, thread="FEAT-001-counts").run(judge_by_counts=True)
    assert run.status("GOOD") == "approved"
    assert gates(run, "GOOD")[0]["judged_by"] == "counts"
    report = (repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").read_text()
    assert "its failures are not named" in report and "--judge-by-counts" in report


async def test_a_verify_that_is_no_test_runner_is_judged_by_exit_status_and_says_so(tmp_path: Path) -> None:
    check = "import pathlib, sys\nsys.exit(0 if pathlib.Path('calc/mul.py').exists() else 1)\n"
    repo = make_sample_repo(tmp_path / "repo", files={**CALC, "check.py": check},
                            plan=plan(task("TASK-001"), verify="python check.py"))
    run = await Workflow(repo, ScriptedAgents({"player": writes({"calc/mul.py": "X = 1\n"}),
                                               "coach": approve()})).run()
    gate = gates(run, "TASK-001")[0]
    assert gate["passed"] and gate["judged_by"] == "exit status" and gate.get("runner") is None
    assert "judged by exit status" in gate["summary"]
