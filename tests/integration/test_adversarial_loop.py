"""The adversarial loop can't be fooled: false approvals, frozen tests, read-only coach, stalls, pre-check."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from tests.conftest import CliRun, git, one_task_plan

pytestmark = pytest.mark.cli

GOOD = "def subtract(a, b):\n    return a - b\n"
BAD = "def subtract(a, b):\n    return a + b\n"
FROZEN = "tests/test_subtract.py"
FROZEN_TEST = "from calc.subtract import subtract\n\n\ndef test_subtract():\n    assert subtract(5, 3) == 2\n"


def report(*files: str) -> dict[str, Any]:
    return {"tool": {"name": "report_progress", "input": {"files_modified": list(files),
                                                         "implementation_notes": "done"}}}


def player(turn: int | None, *steps: dict[str, Any]) -> dict[str, Any]:
    return {"role": "player", "task": "TASK-001", **({"turn": turn} if turn else {}), "steps": list(steps)}


def decide(decision: str, *items: dict[str, Any]) -> dict[str, Any]:
    return {"tool": {"name": "record_decision", "input": {"decision": decision, "rationale": decision,
                                                           "feedback_items": list(items)}}}


def repo_with_frozen_test(tmp_path: Path, **task: Any) -> Path:
    files = {".gitignore": "__pycache__/\n.pytest_cache/\n", "calc/__init__.py": "",
             "calc/subtract.py": "def subtract(a, b):\n    raise NotImplementedError\n", FROZEN: FROZEN_TEST}
    return make_sample_repo(tmp_path / "repo", files=files, plan=one_task_plan(acceptance_tests=[FROZEN], **task))


def trace(repo: Path) -> list[dict[str, Any]]:
    text = (repo / ".autobuild/runs/FEAT-001/TASK-001/trace.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def run(tmp_path: Path, run_cli: Callable[..., CliRun], model: ScriptedModel, *args: str) -> CliRun:
    return run_cli("run", "FEAT-001", "--repo", str(tmp_path / "repo"), "--db", str(tmp_path / "db"), *args,
                   model=model)


@pytest.mark.heavy
def test_coach_cannot_write_and_must_decide(tmp_path: Path, model_factory: Callable[..., ScriptedModel],
                                            run_cli: Callable[..., CliRun]) -> None:
    repo = repo_with_frozen_test(tmp_path)
    model = model_factory({"sessions": [
        player(None, {"write": {"path": "calc/subtract.py", "content": GOOD}}, report("calc/subtract.py"),
               {"text": "ok"}),
        # Turn 1: the coach tries to fix the code itself, then ends without a decision (twice: retried once).
        {"role": "coach", "turn": 1, "steps": [{"write": {"path": "calc/subtract.py", "content": "# coach\n"}},
                                               {"text": "I fixed it myself."}]},
        {"role": "coach", "turn": 2, "steps": [decide("approve"), {"text": "ok"}]},
    ]})
    result = run(tmp_path, run_cli, model)
    assert result.returncode == 0, result.stdout + result.stderr
    coach1 = [r for r in model.requests if r.role == "coach" and r.turn == 1 and r.step == 1]
    assert len(coach1) == 2, "a coach session without a decision is retried once"
    assert all("read-only" in r.tool_results[0] or "No such tool" in r.tool_results[0]
               or "not available" in r.tool_results[0].lower() for r in coach1), coach1[0].tool_results
    events = trace(repo)
    assert any(e["event"] == "contract_violation" and "without record_decision" in e["detail"] for e in events)
    assert git(repo, "show", "autobuild/FEAT-001:calc/subtract.py") == GOOD
    coach_prompt = next(r for r in model.requests if r.role == "coach" and r.step == 0).prompt
    assert "calc/subtract.py" in coach_prompt and "+    return a - b" in coach_prompt, "the coach sees the diff"
    assert '"implementation_notes": "done"' in coach_prompt, "and the player's report"



MUL_TEST = "from calc.mul import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"


@pytest.mark.heavy
def test_a_player_that_deletes_the_failing_test_is_refused_then_fixes_the_code(
        tmp_path: Path, model_factory: Callable[..., ScriptedModel], run_cli: Callable[..., CliRun]) -> None:
    """The real CLI end to end: turn 1 breaks mul and deletes the test that catches it (with Bash); the gate
    names the test, the coach's blind approval is refused; turn 2 fixes the code and puts the test back."""
    files = {".gitignore": "__pycache__/\n.pytest_cache/\n", "calc/__init__.py": "",
             "calc/mul.py": "def mul(a, b):\n    return a * b\n", "tests/__init__.py": "",
             "tests/test_mul.py": MUL_TEST}
    repo = make_sample_repo(tmp_path / "repo", files=files, plan=one_task_plan())
    model = model_factory({"sessions": [
        player(1, {"write": {"path": "calc/mul.py", "content": "def mul(a, b):\n    return a + b\n"}},
               {"bash": "rm tests/test_mul.py"}, report("calc/mul.py", "tests/test_mul.py"), {"text": "done"}),
        player(2, {"write": {"path": "calc/mul.py", "content": "def mul(a, b):\n    return a * b\n"}},
               {"write": {"path": "tests/test_mul.py", "content": MUL_TEST}},
               {"write": {"path": "calc/div.py", "content": "def div(a, b):\n    return a / b\n"}},
               report("calc/mul.py", "calc/div.py"), {"text": "done"}),
        {"role": "coach", "steps": [decide("approve"), {"text": "ok"}]},
    ]})
    result = run(tmp_path, run_cli, model)
    assert result.returncode == 0, result.stdout + result.stderr
    events = trace(repo)
    gates = [e for e in events if e["event"] == "gate"]
    assert not gates[0]["passed"]
    assert "tests.test_mul::test_mul: gone: deleted (with its file tests/test_mul.py)" in gates[0]["summary"]
    assert any(e["event"] == "contract_violation" and "not accepted" in e["detail"] for e in events)
    assert gates[-1]["passed"]
    assert git(repo, "show", "autobuild/FEAT-001:tests/test_mul.py") == MUL_TEST
    assert "return a * b" in git(repo, "show", "autobuild/FEAT-001:calc/mul.py")
