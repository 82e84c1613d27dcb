"""Readiness scheduling, merges as tasks finish, skips, conflicts, and the graph-wide error policy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, feedback, writes
from tests.graph.harness import CALC_FILES, Workflow, plan, task


def repo_with(tmp_path: Path, data: dict[str, Any]) -> Path:
    return make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=data)


def file_of(task_id: str) -> dict[str, str | None]:
    return {f"calc/{task_id.lower().replace('-', '_')}.py": f"NAME = {task_id!r}\n"}


def players(*task_ids: str, **turn: Any) -> dict[Any, Any]:
    return {("player", task_id): writes(file_of(task_id), **turn) for task_id in task_ids}


def index(events: list[dict[str, Any]], kind: str, task_id: str) -> int:
    return next(i for i, e in enumerate(events) if e["event"] == kind and e.get("task") == task_id)


async def test_two_tasks_approved_and_merged_user_checkout_untouched(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, plan(task("TASK-001"), task("TASK-002", "TASK-001"), verify=None))
    before = (git(repo, "status", "--porcelain"), git(repo, "rev-parse", "HEAD"))
    agents = ScriptedAgents({**players("TASK-001", "TASK-002"), "coach": approve()})
    run = await Workflow(repo, agents).run()
    assert run.results["TASK-002"]["merged"] and run.status("TASK-001") == "approved-unverified"
    files = git(repo, "ls-tree", "-r", "--name-only", "autobuild/FEAT-001")
    assert "calc/task_001.py" in files and "calc/task_002.py" in files
    # TASK-002 started from the feature branch with TASK-001 already merged
    assert (tmp_path / "repo").exists() and agents.prompts_of("player", "TASK-002")
    assert (git(repo, "status", "--porcelain"), git(repo, "rev-parse", "HEAD")) == before
    assert git(repo, "worktree", "list").count("\n") == 1, "every worktree removed"


async def test_a_task_starts_when_its_dependencies_are_merged_not_when_its_group_ends(tmp_path: Path) -> None:
    # A → {B slow, C}, C → D: D starts before B ends.
    repo = repo_with(tmp_path, plan(task("A"), task("B", "A"), task("C", "A"), task("D", "C"), verify=None))
    agents = ScriptedAgents({**players("A", "C", "D"), ("player", "B"): writes(file_of("B"), delay_s=1.5),
                             "coach": approve()})
    run = await Workflow(repo, agents).run(parallel=2)
    assert all(run.status(t) == "approved-unverified" for t in "ABCD")
    assert index(run.events, "task_ready", "D") < index(run.events, "finalize", "B")
    assert index(run.events, "task_ready", "B") > index(run.events, "merge", "A")


async def test_groups_schedule_keeps_the_barrier(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, plan(task("A"), task("B", "A"), task("C", "A"), task("D", "C"), verify=None))
    agents = ScriptedAgents({**players("A", "C", "D"), ("player", "B"): writes(file_of("B"), delay_s=0.5),
                             "coach": approve()})
    run = await Workflow(repo, agents).run(parallel=2, schedule="groups")
    assert index(run.events, "task_ready", "D") > index(run.events, "merge", "B")


async def test_parallel_one_runs_one_task_at_a_time(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, plan(task("A"), task("B"), task("C"), verify=None))
    agents = ScriptedAgents({**players("A", "B", "C", delay_s=0.2), "coach": approve()})
    run = await Workflow(repo, agents).run(parallel=1)
    spans = [(index(run.events, "task_ready", t), index(run.events, "merge", t)) for t in "ABC"]
    for (_, end), (start, _) in zip(sorted(spans), sorted(spans)[1:], strict=False):
        assert end < start, spans


async def test_failed_dependency_skips_dependents_only(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, plan(task("T1"), task("T2"), task("T3", "T1"), verify=None))
    agents = ScriptedAgents({**players("T2"), ("player", "T1"): Turn(status="max_turns"), "coach": approve()})
    run = await Workflow(repo, agents).run()
    assert (run.status("T1"), run.status("T2"), run.status("T3")) == ("failed", "approved-unverified", "skipped")
    assert run.results["T3"]["reason"] == "dependency T1 failed"
    assert (run.results["T1"]["cause"], run.results["T3"]["cause"]) == ("session_max_turns", "dependency")
    assert not agents.prompts_of("player", "T3"), "a skipped task starts no session"
    assert "skipped" in (repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").read_text()


async def test_a_conflict_with_no_turn_left_ends_as_conflict_and_the_branch_is_kept(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, plan(task("A"), task("B"), verify=None))
    agents = ScriptedAgents({("player", "A"): writes({"calc/shared.py": "V = 'a'\n"}),
                             ("player", "B"): writes({"calc/shared.py": "V = 'b'\n"}, delay_s=0.3),
                             "coach": approve()})
    run = await Workflow(repo, agents).run(parallel=2, max_turns=1)
    # B is slower, so A usually lands first; whichever lands second conflicts (under heavy load it may be A).
    second = "B" if run.status("A") == "approved-unverified" else "A"
    first = "A" if second == "B" else "B"
    assert run.status(first) == "approved-unverified"
    assert run.status(second) == "conflict" and "calc/shared.py" in run.results[second]["reason"]
    assert run.results[second]["cause"] == "merge_conflict"
    landed = {"A": "V = 'a'\n", "B": "V = 'b'\n"}
    assert git(repo, "show", "autobuild/FEAT-001:calc/shared.py") == landed[first]
    assert f"autobuild/FEAT-001.{second}" in git(repo, "branch", "--list")
    assert git(repo, "show", f"autobuild/FEAT-001.{second}:calc/shared.py") == landed[second], "approved work kept"


async def test_the_feature_gate_failing_on_the_landing_tree_never_reaches_the_branch(tmp_path: Path) -> None:
    no_broken = ("python -c \"import glob, sys; sys.exit(any('BROKEN' in open(f).read()"
                 " for f in glob.glob('calc/*.py')))\"")
    repo = repo_with(tmp_path, plan(task("A", verify="true"), task("B", verify="true"), verify=no_broken))
    agents = ScriptedAgents({("player", "A"): writes({"calc/a.py": "A = 1\n"}),
                             ("player", "B"): writes({"calc/b.py": "B = 'BROKEN'\n"}, delay_s=0.3),
                             "coach": approve()})
    run = await Workflow(repo, agents).run(parallel=2, max_turns=1)
    assert run.status("A") == "approved-unverified", "`true` and a script: judged by exit status, unverified"
    assert run.status("B") == "failed" and "the gate failed on B brought up to" in run.results["B"]["reason"]
    assert run.results["B"]["cause"] == "integration_gate"
    assert "calc/b.py" not in git(repo, "ls-tree", "-r", "--name-only", "autobuild/FEAT-001")


async def test_an_exception_in_one_task_is_its_error_and_siblings_finish_then_resume_retries_it(
    tmp_path: Path,
) -> None:
    repo = repo_with(tmp_path, plan(task("A"), task("B"), task("C", "A"), verify=None))
    crash = Turn(raises=OSError("disk full"))
    agents = ScriptedAgents({**players("B", delay_s=0.3), ("player", "A"): [crash, writes(file_of("A"))],
                             ("player", "C"): writes(file_of("C")), "coach": approve()})
    workflow = Workflow(repo, agents, checkpointer=InMemorySaver())
    first = await workflow.run(parallel=2)
    assert first.output is None, "the feature did not finish"
    assert "task_error" in first.kinds("A") and "OSError: disk full" in str(first.events)
    assert index(first.events, "finalize", "B") > index(first.events, "task_error", "A"), "B was not cancelled"
    assert not agents.prompts_of("player", "C"), "C waits for A: it is held, not skipped"
    second = await workflow.run(fresh_input=False)
    assert {t: second.status(t) for t in "ABC"} == dict.fromkeys("ABC", "approved-unverified")
    assert len(agents.prompts_of("player", "B")) == 1, "B's finished work is not redone"
    assert len(agents.prompts_of("player", "A")) == 2, "A's failed node ran again"


async def test_single_task_run(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, plan(task("A"), task("B", "A"), verify=None))
    agents = ScriptedAgents({**players("A", "B"), "coach": approve()})
    run = await Workflow(repo, agents, thread="FEAT-001:B").run(target="B")
    assert list(run.results) == ["B"] and run.status("B") == "approved-unverified"
    assert not agents.prompts_of("player", "A")


async def test_an_api_outage_is_an_error_that_resume_recovers_keeping_earlier_turns(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, plan(task("A"), verify=None))
    agents = ScriptedAgents({("player", "A", 1): writes(file_of("A")),
                             ("player", "A", 2): [Turn(status="api_error"), writes({"calc/a2.py": "X = 2\n"})],
                             "coach": [feedback(("calc/a.py", 1, "more")), approve()]})
    workflow = Workflow(repo, agents, checkpointer=InMemorySaver())
    first = await workflow.run()
    assert first.output is None and "model API error" in str([e for e in first.events if e["event"] == "task_error"])
    second = await workflow.run(fresh_input=False)
    assert second.status("A") == "approved-unverified" and second.results["A"]["turns"] == 2
    assert [c.turn for c in agents.calls if c.role == "player"] == [1, 2, 2], "turn 1 kept, turn 2 ran again"
    assert [c.turn for c in agents.calls if c.role == "coach"] == [1, 2]
