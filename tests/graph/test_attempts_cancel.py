"""Policy `first` cancels cleanly (issue 40, items 1, 2 and 6), in-process: a sibling's running gate process is
reaped and its running session ended when another attempt is verified; the cancelled attempts' worktrees stay for
`show` until `discard` takes them and their branches; `run TASK-002 --attempts 3` runs that task as three."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, writes
from orchestrator.cli.main import _settings, main
from orchestrator.cli.parser import build_parser
from orchestrator.graph import runner
from tests.graph.harness import CALC_CHECK, CALC_FILES, plan, task, unsandboxed

SUB = {"calc/sub.py": "def sub(a, b):\n    return a - b\n"}


class Watched(ScriptedAgents):
    """Attempt 2's player starts once attempt 1's gate is running (its pid written: bounded wait, so a broken
    run fails, not hangs); a session that is cancelled is noted."""

    def __init__(self, script: dict[Any, Any], pid_file: Path) -> None:
        super().__init__(script)
        self.pid_file = pid_file
        self.cancelled: list[tuple[str, int]] = []

    async def player(self, data: Any, settings: Any) -> Any:
        if data.attempt == 2:
            for _ in range(600):
                if self.pid_file.exists():
                    break
                await asyncio.sleep(0.1)
        try:
            return await super().player(data, settings)
        except asyncio.CancelledError:
            self.cancelled.append(("player", data.attempt))
            raise


@pytest.mark.heavy  # three attempts, a gate process killed mid-run, then `discard`: seconds
async def test_first_reaps_a_sibling_s_gate_and_ends_its_session_discard_takes_what_stays(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unsandboxed(tmp_path, monkeypatch)  # the gate script writes its pid outside the tree
    pid_file = tmp_path / "gate.pid"
    check = ("import os, pathlib, time\n"  # the harness's unittest gate (verified), slow where slow.txt is
             "if pathlib.Path('slow.txt').exists():\n"
             f"    pathlib.Path({str(pid_file)!r}).write_text(str(os.getpid()))\n"
             "    time.sleep(300)\n" + CALC_CHECK)
    repo = make_sample_repo(tmp_path / "repo", files={**CALC_FILES, "check.py": check},
                            plan=plan(task("TASK-001", attempts=3)))
    agents = Watched({("player", "TASK-001.a1"): writes({**SUB, "slow.txt": "x\n"}),
                      ("player", "TASK-001.a2"): writes(SUB),
                      ("player", "TASK-001.a3"): Turn(files=SUB, delay_s=300, report={"files_modified": list(SUB)}),
                      "coach": approve()}, pid_file)
    db = tmp_path / "db.sqlite"
    settings = _settings(build_parser().parse_args(["run", "FEAT-001", "--repo", str(repo), "--db", str(db),
                                                    "--parallel", "3", "--autonomous"]))
    summary = await runner.execute(runner.prepare(settings.model_copy(update={"agents": agents})), lambda e: None)
    result = summary.results["TASK-001"]
    assert (result["status"], result["picked"]) == ("approved", 2)
    assert [r["status"] for r in result["attempts"]] == ["cancelled", "approved", "cancelled"]
    pid = int(pid_file.read_text())
    assert not Path(f"/proc/{pid}").exists(), "attempt 1's gate process was reaped with its attempt"
    assert agents.cancelled == [("player", 3)], "attempt 3's session was ended, not left running"
    folder = repo / ".autobuild/worktrees/FEAT-001"
    assert (folder / "TASK-001").is_dir() and (folder / "TASK-001.a3").is_dir(), "kept for `show`"
    attempt_branches = ["autobuild/FEAT-001.TASK-001", "autobuild/FEAT-001.TASK-001.a3"]
    assert all(git(repo, "branch", "--list", name).strip() for name in attempt_branches)
    assert await asyncio.to_thread(main, ["discard", "FEAT-001", "--repo", str(repo)]) == 0
    assert not folder.exists()
    assert not git(repo, "branch", "--list", "autobuild/FEAT-001*").strip()


async def test_run_a_task_alone_with_three_attempts(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=dict(CALC_FILES), plan=plan(task("TASK-001"), task("TASK-002")))
    agents = ScriptedAgents({("player", "TASK-002.a1"): writes({"calc/other.py": "X = 1\n"}),
                             ("player", "TASK-002.a2"): writes(SUB), ("player", "TASK-002.a3"): writes(SUB),
                             "coach": approve()})
    settings = _settings(build_parser().parse_args(["run", "TASK-002", "--attempts", "3", "--repo", str(repo),
                                                    "--db", str(tmp_path / "db.sqlite"), "--autonomous",
                                                    "--attempts-policy", "best", "--parallel", "3"]))
    summary = await runner.execute(runner.prepare(settings.model_copy(update={"agents": agents})), lambda e: None)
    assert "TASK-001" not in summary.results and {c.task for c in agents.calls} == {"TASK-002"}
    result = summary.results["TASK-002"]
    assert [r["attempt"] for r in result["attempts"]] == [1, 2, 3] and result["merged"]
    assert result["picked"] in (2, 3) and result["attempts"][0]["status"] == "failed"


class AfterSiblingsCoach(ScriptedAgents):
    """Attempt 2's player starts once attempt 3's coach session has started (bounded wait): attempt 1 is then in
    its player's session, attempt 3 in its coach's, when attempt 2 is verified."""

    async def player(self, data: Any, settings: Any) -> Any:
        for _ in range(300 if data.attempt == 2 else 0):
            if any(call.role == "coach" and call.attempt == 3 for call in self.calls):
                break
            await asyncio.sleep(0.1)
        return await super().player(data, settings)


async def test_first_counts_what_the_cancelled_sessions_spent_so_far(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=dict(CALC_FILES), plan=plan(task("TASK-001", attempts=3)))
    agents = AfterSiblingsCoach({
        ("player", "TASK-001.a1"): Turn(delay_s=60, cost_usd=0.05, spent_when_cancelled=0.03),
        ("player", "TASK-001.a2"): writes(SUB), ("player", "TASK-001.a3"): writes(SUB),
        ("coach", "TASK-001.a3"): Turn(delay_s=60, cost_usd=0.05, spent_when_cancelled=0.004), "coach": approve()})
    settings = _settings(build_parser().parse_args(["run", "FEAT-001", "--repo", str(repo), "--autonomous",
                                                    "--db", str(tmp_path / "db.sqlite"), "--parallel", "3"]))
    summary = await asyncio.wait_for(runner.execute(runner.prepare(settings.model_copy(update={"agents": agents})),
                                                    lambda e: None), 50)
    result = summary.results["TASK-001"]
    records = {record["attempt"]: record for record in result["attempts"]}
    assert [records[k]["status"] for k in (1, 2, 3)] == ["cancelled", "approved", "cancelled"]
    # Attempt 1 was cancelled in its first player session, attempt 3 in its coach's after a player's ($0.01).
    assert (records[1]["cost_usd"], records[2]["cost_usd"], records[3]["cost_usd"]) == (0.03, 0.02, 0.014)
    assert records[3]["receipt"]["approved_cost_usd"] + records[3]["receipt"]["other_cost_usd"] == 0.014
    assert result["cost_usd"] == pytest.approx(0.064), "the task's cost: every attempt's, cancelled ones too"
    assert result["receipt"]["other"]["sibling_attempts_usd"] == pytest.approx(0.044)
    # What `status`, `show` and the reports count (from the checkpoints: the cancelled loops' last ones lack it).
    assert summary.spent == {"TASK-001": pytest.approx(0.064)}
    assert "**Total cost:** $0.0640" in (repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").read_text()
