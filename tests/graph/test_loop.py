"""The adversarial loop's judgement, in-process: nothing fools it, and it stops when it should."""

from __future__ import annotations

from pathlib import Path

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import AgentInput, ScriptedAgents, Turn, approve, blocked, feedback, writes
from tests.graph.harness import CALC_FILES, Workflow, plan, task

SUB = {"calc/sub.py": "def sub(a, b):\n    return a - b\n"}
FROZEN = "tests/test_frozen.py"


def one_task_repo(tmp_path: Path, verify: str | None = "python check.py", **fields: object) -> Path:
    files = {**CALC_FILES, FROZEN: "def test_frozen():\n    assert True\n"}
    return make_sample_repo(tmp_path / "repo", files=files, plan=plan(task("TASK-001", **fields), verify=verify))


async def test_false_approval_is_overridden_by_the_gate(tmp_path: Path) -> None:
    repo = one_task_repo(tmp_path)
    agents = ScriptedAgents({
        ("player", "TASK-001", 1): writes({"calc/other.py": "X = 1\n"}),  # verify needs calc/sub.py
        ("player", "TASK-001", 2): writes(SUB),
        "coach": approve(),  # approves without checking anything
    })
    run = await Workflow(repo, agents).run()
    assert run.status("TASK-001") == "approved" and run.results["TASK-001"]["false_approvals"] == 1
    turn2 = agents.prompts_of("player", "TASK-001")[1]
    assert "coach approved but verify failed" in turn2.feedback[0]["issue"]
    decisions = [e for e in run.events if e["event"] == "coach_decision"]
    assert [d["decision"] for d in decisions] == ["feedback", "approve"] and decisions[0]["false_approval"]


async def test_verify_none_means_approved_unverified(tmp_path: Path) -> None:
    repo = one_task_repo(tmp_path, verify=None)
    run = await Workflow(repo, ScriptedAgents({"player": writes(SUB), "coach": approve()})).run(verify="none")
    assert run.status("TASK-001") == "approved-unverified"
    assert run.results["TASK-001"]["merged"]


async def test_feedback_items_reach_the_next_turn_verbatim(tmp_path: Path) -> None:
    repo = one_task_repo(tmp_path)
    agents = ScriptedAgents({"player": writes(SUB), "coach": [feedback(("calc/sub.py", 2, "handle floats")),
                                                                approve()]})
    agents.script[("player", "TASK-001", 2)] = writes({"calc/sub.py": "def sub(a, b):\n    return float(a) - b\n"})
    run = await Workflow(repo, agents).run()
    assert run.status("TASK-001") == "approved" and run.results["TASK-001"]["turns"] == 2
    assert agents.prompts_of("player", "TASK-001")[1].feedback == [
        {"file": "calc/sub.py", "line": 2, "issue": "handle floats"}]
    assert (repo / ".autobuild/runs/FEAT-001/TASK-001/feedback-turn-1.md").is_file()


async def test_frozen_tests_are_restored_and_the_coach_is_skipped(tmp_path: Path) -> None:
    repo = one_task_repo(tmp_path, acceptance_tests=[FROZEN])
    cheat = {**SUB, FROZEN: "def test_frozen():\n    assert 1 == 1  # weakened\n"}
    agents = ScriptedAgents({("player", "TASK-001", 1): writes(cheat), ("player", "TASK-001", 2): writes(SUB),
                             "coach": approve()})
    run = await Workflow(repo, agents).run()
    assert run.status("TASK-001") == "approved"
    assert [c.turn for c in agents.calls if c.role == "coach"] == [2], "no coach session for the tampered turn"
    assert "frozen acceptance tests" in agents.prompts_of("player", "TASK-001")[1].feedback_notes[0]
    assert git(repo, "show", f"autobuild/FEAT-001:{FROZEN}") == "def test_frozen():\n    assert True\n"
    assert "frozen_test_tampering" in run.kinds("TASK-001")


async def test_incomplete_turn_goes_back_without_a_coach(tmp_path: Path) -> None:
    repo = one_task_repo(tmp_path)
    agents = ScriptedAgents({("player", "TASK-001", 1): Turn(text="I think I am done"),  # no report, no files
                             ("player", "TASK-001", 2): writes(SUB), "coach": approve()})
    run = await Workflow(repo, agents).run()
    assert run.status("TASK-001") == "approved"
    notes = agents.prompts_of("player", "TASK-001")[1].feedback_notes
    assert any("report_progress" in n for n in notes) and any("changed no files" in n for n in notes)
    assert [c.turn for c in agents.calls if c.role == "coach"] == [2]


async def test_reported_files_that_do_not_exist_are_pointed_out(tmp_path: Path) -> None:
    repo = one_task_repo(tmp_path)
    liar = writes(SUB)
    liar.report = {**(liar.report or {}), "files_modified": ["calc/sub.py", "calc/ghost.py"],
                   "tests_written": ["tests/test_sub.py"]}
    agents = ScriptedAgents({("player", "TASK-001", 1): liar, "player": writes(SUB), "coach": approve()})
    await Workflow(repo, agents).run()
    note = agents.prompts_of("player", "TASK-001")[1].feedback_notes[0]
    assert "calc/ghost.py" in note and "tests/test_sub.py" in note, "claimed tests are checked against the disk"


async def test_same_blocker_twice_stops_as_blocked(tmp_path: Path) -> None:
    repo = one_task_repo(tmp_path)
    agents = ScriptedAgents({"player": blocked("the API key for the payment sandbox is missing")})
    run = await Workflow(repo, agents).run()
    assert run.status("TASK-001") == "blocked" and "reported twice" in run.results["TASK-001"]["reason"]
    assert run.results["TASK-001"]["cause"] == "blocker"
    assert not [c for c in agents.calls if c.role == "coach"]
    assert len(agents.prompts_of("player", "TASK-001")) == 2


async def test_a_spec_test_conflict_stops_the_task_at_its_first_report(tmp_path: Path) -> None:
    repo = one_task_repo(tmp_path)
    agents = ScriptedAgents({"player": blocked("test_sub expects 1 - 2 == -1, the requirement says absolute",
                                               kind="spec-test-conflict", test="tests/test_sub.py::test_sub",
                                               requirement="sub returns the absolute difference")})
    run = await Workflow(repo, agents).run()
    reason = run.results["TASK-001"]["reason"]
    assert run.status("TASK-001") == "blocked" and run.results["TASK-001"]["cause"] == "spec_test_conflict"
    assert "tests/test_sub.py::test_sub" in reason and "sub returns the absolute difference" in reason
    assert len(agents.prompts_of("player", "TASK-001")) == 1, "stopped at the first report, not the second"
    assert not [c for c in agents.calls if c.role == "coach"]


async def test_stalled_loop_stops_after_three_stalls(tmp_path: Path) -> None:
    repo = one_task_repo(tmp_path)
    agents = ScriptedAgents({"player": writes(SUB), "coach": feedback(("calc/sub.py", 1, "rename it"))})
    run = await Workflow(repo, agents).run(max_turns=10)
    assert run.status("TASK-001") == "failed" and "stalled" in run.results["TASK-001"]["reason"]
    assert run.results["TASK-001"]["cause"] == "stalled"
    assert run.results["TASK-001"]["turns"] == 4, "turn 1, then three stalled turns"
    assert "Stall warning" in agents.prompts_of("player", "TASK-001")[2].feedback_notes[-1]


async def test_max_turns_fails_and_keeps_no_partial_work(tmp_path: Path) -> None:
    repo = one_task_repo(tmp_path)
    counter = iter(range(100))

    def varied(_: object) -> Turn:
        return writes({"calc/sub.py": f"def sub(a, b):\n    return a - b  # v{next(counter)}\n"})

    agents = ScriptedAgents({"player": varied, "coach": lambda data: feedback(("x.py", data.turn, f"try {data.turn}"))})
    run = await Workflow(repo, agents).run(max_turns=2)
    result = run.results["TASK-001"]
    assert result["status"] == "failed" and "max turns reached (2)" in result["reason"]
    assert result["cause"] == "max_turns"
    assert "calc/sub.py" not in git(repo, "ls-tree", "-r", "--name-only", "autobuild/FEAT-001")


async def test_precheck_no_returns_to_the_player_without_a_coach(tmp_path: Path) -> None:
    repo = one_task_repo(tmp_path)
    agents = ScriptedAgents({"player": writes(SUB), "coach": approve(),
                             "precheck": [Turn(plausible=False, text="sub is not implemented"), Turn()]})
    run = await Workflow(repo, agents).run(precheck_model="fast")
    assert run.status("TASK-001") == "approved"
    assert [c.turn for c in agents.calls if c.role == "coach"] == [2]
    assert "Pre-check: sub is not implemented" in agents.prompts_of("player", "TASK-001")[1].feedback_notes


async def test_feature_budget_aborts_and_starts_no_new_session(tmp_path: Path) -> None:
    repo = one_task_repo(tmp_path)
    agents = ScriptedAgents({"player": writes(SUB, cost_usd=0.6), "coach": feedback(("a", 1, "b"), )})
    agents.script["coach"].cost_usd = 0.5
    run = await Workflow(repo, agents).run(budget_usd=1.0)
    assert run.status("TASK-001") == "aborted" and "budget exhausted" in run.results["TASK-001"]["reason"]
    assert run.results["TASK-001"]["cause"] == "budget"
    assert len(agents.calls) == 2, "after $1.10 no third session starts"


async def test_player_session_failure_fails_the_task(tmp_path: Path) -> None:
    repo = one_task_repo(tmp_path)
    run = await Workflow(repo, ScriptedAgents({"player": Turn(status="max_turns")})).run()
    assert run.status("TASK-001") == "failed" and "max turns" in run.results["TASK-001"]["reason"]
    assert run.results["TASK-001"]["cause"] == "session_max_turns"
    report = (repo / ".autobuild/runs/FEAT-001/TASK-001/AUTO-RUN.md").read_text()
    assert "**Status:** failed" in report
    assert "- **Cause:** `session_max_turns`" in report, "the report names the cause beside the reason"


async def test_a_hung_command_is_not_retried_its_work_is_kept_and_the_next_turn_is_told(tmp_path: Path) -> None:
    repo = one_task_repo(tmp_path)
    hung = Turn(status="timeout", files={"calc/sub.py": "def sub(a, b):\n    return a - b\n"},
                stuck_commands=["Bash: python -m pytest -q"])
    seen: list[bool] = []

    def second_turn(data: AgentInput) -> Turn:
        seen.append((data.worktree / "calc/sub.py").is_file())
        return writes(SUB)

    agents = ScriptedAgents({("player", "TASK-001", 1): hung, ("player", "TASK-001", 2): second_turn,
                             "coach": approve()})
    run = await Workflow(repo, agents).run()
    assert run.status("TASK-001") == "approved"
    assert [c.turn for c in agents.calls if c.role == "player"] == [1, 2], "one session per turn: no retry"
    assert seen == [True], "the hung turn's work was kept for the next one"
    note = agents.prompts_of("player", "TASK-001")[1].feedback_notes[0]
    assert "`Bash: python -m pytest -q` was still running" in note
    assert [e["commands"] for e in run.events if e["event"] == "command_hung"] == [["Bash: python -m pytest -q"]]


async def test_a_coach_whose_test_run_hangs_sends_the_player_back_with_the_command(tmp_path: Path) -> None:
    repo = one_task_repo(tmp_path)
    agents = ScriptedAgents({"player": writes(SUB), ("coach", "TASK-001", 1): Turn(
        status="timeout", stuck_commands=["Bash: python -m pytest tests/test_sub.py"]), "coach": approve()})
    run = await Workflow(repo, agents).run()
    assert run.status("TASK-001") == "approved" and run.results["TASK-001"]["turns"] == 2
    assert "tests/test_sub.py` was still running" in agents.prompts_of("player", "TASK-001")[1].feedback_notes[0]
