"""A task run as several attempts (issue 40), in-process: each in its own worktree and branch, only the pick lands,
`first` cancels the rest at the first verified approval, `best` ranks by the selection's keys, and a resume never
runs a finished attempt again."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.runtime import RunControl

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, feedback, writes
from orchestrator.cli.main import main
from orchestrator.graph import runner
from orchestrator.settings import RunSettings
from tests import schemas
from tests.graph.harness import CALC_FILES, Workflow, plan, task

SUB = {"calc/sub.py": "def sub(a, b):\n    return a - b\n"}
WRONG = {"calc/other.py": "X = 1\n"}  # the gate (check.py) needs calc/sub.py


def repo_with(tmp_path: Path, **fields: Any) -> Path:
    return make_sample_repo(tmp_path / "repo", files=dict(CALC_FILES), plan=plan(task("TASK-001", **fields)))


def branches(repo: Path) -> list[str]:
    return git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/autobuild/").split()


def attempt_records(run: Any, task_id: str = "TASK-001") -> dict[int, dict[str, Any]]:
    return {record["attempt"]: record for record in run.results[task_id]["attempts"]}


async def test_three_attempts_the_second_right_only_it_lands(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, attempts=3)
    agents = ScriptedAgents({("player", "TASK-001.a1"): writes({"calc/other.py": "A = 1\n"}),
                             ("player", "TASK-001.a2"): writes(SUB),
                             ("player", "TASK-001.a3"): writes({"calc/third.py": "C = 3\n"}),
                             ("coach", "TASK-001.a2"): approve(), "coach": feedback(("calc", None, "wrong"))})
    run = await Workflow(repo, agents).run(max_turns=2, attempts_policy="best")
    result = run.results["TASK-001"]
    assert (result["status"], result["merged"], result["picked"]) == ("approved", True, 2)
    records = attempt_records(run)
    assert [records[k]["status"] for k in (1, 2, 3)] == ["failed", "approved", "failed"]
    assert records[2]["landed"] and not records[1]["landed"] and not records[3]["landed"]
    feature = git(repo, "ls-tree", "-r", "--name-only", "autobuild/FEAT-001").split()
    assert "calc/sub.py" in feature and "calc/other.py" not in feature and "calc/third.py" not in feature
    # Each attempt had its own worktree, branch, approach and turns; attempt 1 keeps today's names.
    worktrees = {call.input.worktree.name for call in agents.calls if call.role == "player"}
    assert worktrees == {"TASK-001", "TASK-001.a2", "TASK-001.a3"}
    assert {"refs/heads/autobuild/FEAT-001.TASK-001", "refs/heads/autobuild/FEAT-001.TASK-001.a3"} <= set(
        branches(repo))
    approaches = {call.attempt: call.input.approach for call in agents.calls if call.role == "player"}
    assert approaches == {1: "attempt_smallest", 2: "attempt_pattern", 3: "attempt_test_first"}
    assert sorted(c.turn for c in agents.calls if c.role == "player" and c.attempt == 1) == [1, 2]
    # The task's cost is every attempt's; every event of an attempt's loop says which one.
    assert result["cost_usd"] == round(sum(r["cost_usd"] for r in records.values()), 6)
    receipt = result["receipt"]
    assert receipt["approved_cost_usd"] + receipt["other_cost_usd"] == pytest.approx(result["cost_usd"])
    assert receipt["other"]["sibling_attempts_usd"] == pytest.approx(records[1]["cost_usd"] + records[3]["cost_usd"])
    assert all(e.get("attempt") for e in run.events if e["event"] in ("player_report", "coach_decision"))
    assert [e["picked"] for e in run.events if e["event"] == "selection"] == [2]
    report = (repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").read_text()
    assert "### TASK-001: 3 attempts (best), picked 2" in report and "- attempt 1 (attempt_smallest): failed" in report


async def test_first_policy_cancels_the_others_at_the_first_verified_approval(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, attempts=3)
    slow = Turn(delay_s=30, files=WRONG, report={"files_modified": list(WRONG)})  # would take far too long
    agents = ScriptedAgents({("player", "TASK-001.a1"): slow, ("player", "TASK-001.a3"): slow,
                             ("player", "TASK-001.a2"): writes(SUB), "coach": approve()})
    run = await asyncio.wait_for(Workflow(repo, agents).run(parallel=3), 25)
    result = run.results["TASK-001"]
    assert (result["status"], result["picked"], result["attempts_policy"]) == ("approved", 2, "first")
    records = attempt_records(run)
    assert [records[k]["status"] for k in (1, 2, 3)] == ["cancelled", "approved", "cancelled"]
    assert [c.attempt for c in agents.calls if c.role == "coach"] == [2]
    # The cancelled attempts' worktrees stay (for `show`, until `discard`); the winner's went with its landing.
    worktrees = repo / ".autobuild/worktrees/FEAT-001"
    assert (worktrees / "TASK-001").is_dir() and (worktrees / "TASK-001.a3").is_dir()
    assert not (worktrees / "TASK-001.a2").exists()


def _with_test(test: str, **extra: Any) -> Turn:
    files = {**SUB, "tests/test_sub.py": test}
    return Turn(files=files, report={"files_modified": list(SUB), "tests_written": ["tests/test_sub.py"],
                                     "implementation_notes": "sub"}, **extra)


SKIPPED = "import pytest\n\n\n@pytest.mark.skip(reason='later')\ndef test_sub():\n    assert False\n"
REAL = "from calc.sub import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n"


@pytest.mark.heavy  # pytest as the gate, with the new tests' run on the base: seconds per attempt
async def test_an_unverified_approval_waits_for_a_verified_sibling(tmp_path: Path) -> None:
    # Attempt 1 is approved first, but the gate only skipped its new test: its coach accepts that (approved-
    # unverified), so it waits, and attempt 2, approved later and verified, wins under policy `first`.
    repo = make_sample_repo(tmp_path / "repo", plan=plan(task("TASK-001", attempts=2), verify="python -m pytest -q"))
    agents = ScriptedAgents({("player", "TASK-001.a1"): _with_test(SKIPPED),
                             ("coach", "TASK-001.a1"): approve(accepts={"tests/test_sub.py": "sub's edge waits"}),
                             ("player", "TASK-001.a2"): _with_test(REAL, delay_s=1.0), "coach": approve()})
    run = await Workflow(repo, agents).run(parallel=2)
    result = run.results["TASK-001"]
    assert [r["status"] for r in result["attempts"]] == ["approved-unverified", "approved"]
    assert (result["status"], result["picked"], result["merged"]) == ("approved", 2, True)
    assert git(repo, "show", "autobuild/FEAT-001:tests/test_sub.py").strip() == REAL.strip()


async def test_attempts_queue_for_slots_and_take_their_models_in_turn(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, attempt_models=["model-one", "model-two"])
    agents = ScriptedAgents({("player", "TASK-001.a1"): writes(WRONG), ("player", "TASK-001.a2"): writes(SUB),
                             ("coach", "TASK-001.a2"): approve(), "coach": feedback(("x", None, "no"))})
    run = await Workflow(repo, agents).run(attempts=2, parallel=1, max_turns=1)
    assert run.results["TASK-001"]["picked"] == 2
    started = [e for e in run.events if e["event"] == "attempts_start"]
    assert (started[0]["attempts"], started[0]["queued"]) == (2, 1)
    order = [(e["event"], e.get("attempt")) for e in run.events if e["event"] in ("attempt_start", "attempt_end")]
    assert order == [("attempt_start", 1), ("attempt_end", 1), ("attempt_start", 2), ("attempt_end", 2)]
    assert [(c.role, c.attempt, c.model) for c in agents.calls] == [
        ("player", 1, "model-one"), ("coach", 1, None), ("player", 2, "model-two"), ("coach", 2, None)]


async def test_one_attempt_is_todays_loop(tmp_path: Path) -> None:
    repo = repo_with(tmp_path)
    agents = ScriptedAgents({"player": writes(SUB), "coach": approve()})
    run = await Workflow(repo, agents).run()
    result = run.results["TASK-001"]
    assert result["status"] == "approved" and "attempts" not in result and "picked" not in result
    assert not any("attempt" in e for e in run.events if e["event"] in ("player_report", "coach_decision"))
    assert [call.input.approach for call in agents.calls if call.role == "player"] == [""]
    assert branches(repo) == ["refs/heads/autobuild/FEAT-001"]


async def test_all_attempts_fail_the_task_fails_nothing_lands(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, attempts=2)
    agents = ScriptedAgents({"player": writes(WRONG), "coach": approve()})
    run = await Workflow(repo, agents).run(max_turns=1, replan=0)
    result = run.results["TASK-001"]
    assert (result["status"], result["merged"], result["picked"]) == ("failed", False, None)
    assert git(repo, "rev-parse", "autobuild/FEAT-001") == git(repo, "rev-parse", "main")


async def test_resume_after_an_interrupt_never_runs_a_finished_attempt_again(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, attempts=2)
    saver = InMemorySaver()
    control = RunControl()

    def ctrl_c(data: Any) -> Turn:  # a person presses Ctrl+C while attempt 2's player works
        control.request_drain("signal")
        return Turn(report=None, text="[Request interrupted by user]", delay_s=0.2)

    before = ScriptedAgents({("player", "TASK-001.a1"): writes(WRONG), ("player", "TASK-001.a2"): ctrl_c,
                             "coach": feedback(("x", None, "no"))})
    first = await Workflow(repo, before, checkpointer=saver).run(control=control, max_turns=1)
    assert "TASK-001" not in first.results
    assert [(c.role, c.attempt) for c in before.calls] == [("player", 1), ("coach", 1), ("player", 2)]
    after = ScriptedAgents({("player", "TASK-001.a2"): writes(SUB), ("coach", "TASK-001.a2"): approve()})
    second = await Workflow(repo, after, checkpointer=saver).run(fresh_input=False, max_turns=1)
    assert [(c.role, c.attempt) for c in after.calls] == [("player", 2), ("coach", 2)], "attempt 1 ran again"
    result = second.results["TASK-001"]
    assert (result["picked"], result["merged"]) == (2, True)
    assert [r["status"] for r in result["attempts"]] == ["failed", "approved"]


def _land_elsewhere(path: str, text: str) -> Any:
    """A session effect: another landing moves the feature branch meanwhile (a commit adding `path` on top)."""

    def effect(worktree: Path) -> None:
        repo = worktree.parents[3]
        side = repo / ".autobuild" / "side"
        git(repo, "worktree", "add", "-q", "--detach", str(side), "autobuild/FEAT-001")
        (side / path).write_text(text)
        git(side, "add", "-A")
        git(side, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "landed meanwhile")
        git(repo, "update-ref", "refs/heads/autobuild/FEAT-001", git(side, "rev-parse", "HEAD").strip())
        git(repo, "worktree", "remove", "--force", str(side))

    return effect


async def test_a_pick_refused_at_the_merge_gives_way_to_the_next_candidate(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, attempts=2)
    # While attempt 2 works, another landing adds calc/sub.py: attempt 1's landing (it was approved first, so it is
    # the first candidate) conflicts, attempt 2's doesn't.
    meanwhile = _land_elsewhere("calc/sub.py", "def sub(a, b):\n    return a - b  # X\n")
    agents = ScriptedAgents({("player", "TASK-001.a1"): writes(SUB),
                             ("player", "TASK-001.a2"): writes({"calc/mul.py": "M = 1\n"}, effect=meanwhile),
                             "coach": approve()})
    run = await Workflow(repo, agents).run(attempts_policy="best", verify="python -c pass")
    result = run.results["TASK-001"]
    records = attempt_records(run)
    assert "conflict" in records[1]["refused"] and not records[1]["landed"]
    # `python -c pass` passes both attempts, by exit status alone: approvals it can't verify (issue 38 item 3)
    assert (result["status"], result["merged"], result["picked"], records[2]["landed"]) == (
        "approved-unverified", True, 2, True)
    assert [c.role for c in agents.calls].count("player") == 2, "no new turn before the next candidate"
    assert "attempt_refused" in run.kinds("TASK-001")


async def test_status_and_show_say_every_attempts_verdict_and_the_pick(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    repo, db = repo_with(tmp_path, attempts=2), tmp_path / "db.sqlite"
    agents = ScriptedAgents({("player", "TASK-001.a1"): writes(WRONG), ("player", "TASK-001.a2"): writes(SUB),
                             ("coach", "TASK-001.a2"): approve(), "coach": feedback(("x", None, "no"))})
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(db), agents=agents, interactive=False, replan=0,
                           max_turns=1, attempts_policy="best")
    summary = await runner.execute(runner.prepare(settings), lambda event: None)
    assert summary.results["TASK-001"]["picked"] == 2
    assert main(["status", "FEAT-001", "--repo", str(repo), "--db", str(db), "--json"]) == 0
    row = schemas.valid("status", json.loads(capsys.readouterr().out))["tasks"][0]
    assert (row["status"], row["picked"], row["attempts_policy"]) == ("approved", 2, "best")
    assert [(v["attempt"], v["status"]) for v in row["attempt_verdicts"]] == [(1, "failed"), (2, "approved")]
    assert row["cost_usd"] == pytest.approx(sum(v["cost_usd"] for v in row["attempt_verdicts"]))
    assert main(["show", "FEAT-001", "TASK-001", "--repo", str(repo), "--db", str(db), "--json"]) == 0
    shown = schemas.valid("show-task", json.loads(capsys.readouterr().out))
    assert shown["picked"] == 2 and "only one approved" in shown["pick"]
    assert sorted((t["attempt"], t["turn"]) for t in shown["turns"]) == [(1, 1), (2, 1)]
    assert shown["final"]["status"] == "approved" and shown["final"]["attempt"] == 2
    assert main(["show", "FEAT-001", "TASK-001", "--repo", str(repo), "--db", str(db)]) == 0
    text = capsys.readouterr().out
    assert "picked attempt 2" in text and "attempt 1 [attempt_smallest]: failed" in text
    assert f"every attempt: ${row['cost_usd']:.4f}" in text, "the task's whole cost, not only the pick's receipt"
    assert summary.spent["TASK-001"] == pytest.approx(row["cost_usd"]), "the run's table counts what status does"


async def test_the_task_budget_covers_all_its_attempts(tmp_path: Path) -> None:
    # $0.05 for the task: attempt 1 spends $0.04 on its two turns; attempt 2 may start its first session ($0.04
    # spent) but not its second, so it stops at the budget and the task, with no candidate, is aborted.
    repo = repo_with(tmp_path, attempts=2, budget_usd=0.05)
    agents = ScriptedAgents({"player": writes(WRONG, cost_usd=0.01), "coach": feedback(("x", None, "no"))})
    run = await Workflow(repo, agents).run(max_turns=2, replan=0)
    records = attempt_records(run)
    assert records[1]["status"] == "failed" and records[2]["status"] == "aborted"
    assert "budget exhausted" in records[2]["reason"]
    assert run.results["TASK-001"]["cost_usd"] <= 0.05 + 0.01 + 1e-9


async def test_resume_with_fewer_attempts_finishes_the_started_ones_and_starts_no_other(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, attempts=3)
    saver = InMemorySaver()
    control = RunControl()

    def ctrl_c(data: Any) -> Turn:  # Ctrl+C while attempt 2 works; attempt 3 waits for the one slot
        control.request_drain("signal")
        return Turn(report=None, text="[Request interrupted by user]", delay_s=0.2)

    before = ScriptedAgents({("player", "TASK-001.a1"): writes(WRONG), ("player", "TASK-001.a2"): ctrl_c,
                             "coach": feedback(("x", None, "no"))})
    await Workflow(repo, before, checkpointer=saver).run(control=control, max_turns=1)
    after = ScriptedAgents({("player", "TASK-001.a2"): writes(SUB), "coach": approve()})
    second = await Workflow(repo, after, checkpointer=saver).run(fresh_input=False, max_turns=1, attempts=1)
    assert [(c.role, c.attempt) for c in after.calls] == [("player", 2), ("coach", 2)]
    result = second.results["TASK-001"]
    assert [(r["attempt"], r["status"]) for r in result["attempts"]] == [(1, "failed"), (2, "approved"),
                                                                         (3, "cancelled")]
    assert (result["picked"], result["merged"]) == (2, True)
