"""Ids that shift: pytest's positional parameter ids (`[case0]`, `[case1]`) and go's `#01` duplicate-subtest
suffixes move up when a case is dropped, so the id named "gone" is not the case that went. The feedback to the
player and the coach's prompt show the parametrize / table diff, naming the case itself.

In-process on the compiled graphs with real git, pytest and go: turn 1 breaks `mul` and drops the case that
catches it, the blind coach approves, the gate refuses; turn 2 puts the code and the case back."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agents import CoachInput, PlayerInput
from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from benchmarks.cheat_corpus import BROKEN, GO_BROKEN, GO_FILES, MUL, PY_FILES
from orchestrator.gate.spec import shifted
from tests.graph.harness import Workflow, plan, task
from tests.graph.test_tests_are_spec import first_gate, put_back
from tests.graph.warm_go import seed_gate_cache

CASES = ("from calc.mul import mul\nimport pytest\n\n\n@pytest.mark.parametrize('case', [\n    (2, 3, 6),\n"
         "    (0, 5, 0),\n    (1, 1, 1),\n])\ndef test_cases(case):\n    a, b, want = case\n"
         "    assert mul(a, b) == want\n")
TABLE = ("package calc\n\nimport \"testing\"\n\nfunc TestTable(t *testing.T) {\n"
         "\tfor _, c := range []struct{ a, b, want int }{\n\t\t{2, 3, 6},\n\t\t{0, 5, 0},\n\t\t{1, 1, 1},\n\t} {\n"
         "\t\tt.Run(\"case\", func(t *testing.T) {\n"
         "\t\t\tif Mul(c.a, c.b) != c.want {\n\t\t\t\tt.Fatal(c)\n\t\t\t}\n\t\t})\n\t}\n}\n")


def player_feedback(agents: ScriptedAgents) -> str:
    """What the player's second turn was told: the refused approval's feedback."""
    second = agents.prompts_of("player", "TASK-001")[1]
    assert isinstance(second, PlayerInput)
    return "\n".join(str(item["issue"]) for item in second.feedback)


async def run_dropping(repo: Path, code: dict[str, str | None], test_file: str, text: str, *, dropped: str,
                       honest: dict[str, str | None]) -> tuple[dict[str, object], ScriptedAgents]:
    agents = ScriptedAgents({("player", "TASK-001", 1): writes({**code, test_file: text.replace(dropped, "")}),
                             ("player", "TASK-001", 2): put_back({**honest, test_file: text}), "coach": approve()})
    run = await Workflow(repo, agents).run(max_turns=2)
    assert run.status("TASK-001") == "approved", "turn 2 put the case back"
    return first_gate(run), agents


async def test_a_dropped_pytest_case_is_shown_by_its_parametrize_diff(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files={**PY_FILES, "tests/test_cases.py": CASES},
                            plan=plan(task("TASK-001"), verify="python -m pytest -q"))
    gate, agents = await run_dropping(repo, {"calc/mul.py": BROKEN}, "tests/test_cases.py", CASES,
                                      dropped="    (2, 3, 6),\n", honest={"calc/mul.py": MUL, "calc/div.py": "X = 1\n"})
    assert not gate["passed"]
    assert "tests.test_cases::test_cases[case2]: gone" in str(gate["summary"])  # the id that shifted, not the case
    feedback = player_feedback(agents)
    assert shifted.NOTE in feedback
    assert "-    (2, 3, 6),\n" in feedback, feedback
    coach = agents.prompts_of("coach", "TASK-001")[0]
    assert isinstance(coach, CoachInput)
    assert "Parametrized cases and test tables the turn changed" in coach.test_changes
    assert "-    (2, 3, 6),\n" in coach.test_changes


@pytest.mark.skipif(shutil.which("go") is None, reason="go is installed by make install")
@pytest.mark.heavy  # a second case of a family `make test` already runs: kept under 5 minutes
async def test_a_dropped_go_table_case_is_shown_by_its_table_diff(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files={**GO_FILES, "table_test.go": TABLE},
                            plan=plan(task("TASK-001"), verify="go test ./..."), venv=False)
    seed_gate_cache(repo)
    gate, agents = await run_dropping(repo, {"mul.go": GO_BROKEN}, "table_test.go", TABLE, dropped="\t\t{2, 3, 6},\n",
                                      honest={**GO_FILES, "div.go": "package calc\n\nconst X = 1\n"})
    assert "example.com/calc.TestTable/case#02: gone" in str(gate["summary"]), gate["summary"]
    feedback = player_feedback(agents)
    assert "-\t\t{2, 3, 6},\n" in feedback, feedback
