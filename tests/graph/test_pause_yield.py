"""A served run in a long quota pause gives its worker slot back: it drains (running sessions finish, every task is
held at its node boundary, none fails) and ends with a `usage_pause` interrupt; resumed after the pause it finishes
without running a finished session again. With no yield threshold (the CLI) the run waits the pause out."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from agents.limits import Pause, Window
from agents.roles import SessionSettings
from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import AgentInput, Script, ScriptedAgents, approve, writes
from orchestrator.store.pause import pause_path, quota_path, read_pause, write_pause
from tests import schemas
from tests.graph.harness import CALC_FILES, Workflow, plan, task


class GatedAgents(ScriptedAgents):
    """Scripted sessions that pass the run's usage-limit gate as real ones do (agents/session.py): each waits for the
    gate before it starts; `reports` names the sessions that report a quota window (five_hour at 95%, resetting at
    the given time) while they run, once the sessions in `after` have started."""

    def __init__(self, script: dict[Any, Script], reports: dict[tuple[str, str], float],
                 after: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(script)
        self.reports = reports
        self.after = after
        self.started: list[tuple[str, str]] = []
        self.resets: dict[tuple[str, str], float] = {}  # the reset each report named
        self._changed = asyncio.Condition()

    async def _gated(self, role: str, data: AgentInput, settings: SessionSettings,
                     play: Callable[[], Awaitable[Any]]) -> Any:
        gate, owner, key = settings.limit_gate, object(), (role, data.brief.task_id)
        assert gate is not None
        await gate.wait(owner)  # raises UsageLimitYield when a served run gives its slot back
        async with self._changed:
            self.started.append(key)
            self._changed.notify_all()
        if key in self.reports:
            resets_in = self.reports.pop(key)
            await asyncio.wait_for(self._started(self.after), 10)
            self.resets[key] = time.time() + resets_in
            gate.observe([Window("five_hour", 0.95, self.resets[key])], owner)
        result = await play()
        gate.cleared(owner)
        return result

    async def _started(self, keys: tuple[tuple[str, str], ...]) -> None:
        async with self._changed:
            await self._changed.wait_for(lambda: all(key in self.started for key in keys))

    async def player(self, data: Any, settings: SessionSettings) -> Any:
        return await self._gated("player", data, settings, lambda: super(GatedAgents, self).player(data, settings))

    async def coach(self, data: Any, settings: SessionSettings) -> Any:
        return await self._gated("coach", data, settings, lambda: super(GatedAgents, self).coach(data, settings))


@pytest.fixture(autouse=True)
def own_credential(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The shared quota record is per credential: these runs' own, so no other test's run adopts their pause."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:9/{tmp_path.name}")
    monkeypatch.delenv("ORCHESTRATOR_LOCK_DB", raising=False)
    monkeypatch.delenv("ORCHESTRATOR_YIELD_PAUSE_SECONDS", raising=False)
    yield
    quota_path().unlink(missing_ok=True)


def two_tasks(tmp_path: Path) -> Path:
    return make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("A"), task("B"), verify=None))


def players(delay_s: float) -> dict[Any, Script]:
    return {("player", "A"): writes({"calc/a.py": "A = 1\n"}, delay_s=delay_s),
            ("player", "B"): writes({"calc/b.py": "B = 1\n"}, delay_s=delay_s), "coach": approve()}


def sessions(agents: ScriptedAgents, role: str) -> dict[str, int]:
    return {task_id: sum(1 for call in agents.calls if call.role == role and call.task == task_id) for task_id in "AB"}


async def test_a_long_quota_pause_ends_the_served_run_held_then_resumes_after_it(tmp_path: Path) -> None:
    repo = two_tasks(tmp_path)
    # A's player finds the quota spent while B's player runs too: both sessions finish, no new one starts.
    agents = GatedAgents(players(0.3), {("player", "A"): 3600.0}, after=(("player", "B"),))
    workflow = Workflow(repo, agents, options={"parallel": 2, "yield_pause": 60.0, "max_utilization": 0.9})

    first = await workflow.run()

    assert [i.value["kind"] for i in first.interrupts] == ["usage_pause"]
    value = first.interrupts[0].value
    assert value["until"] == agents.resets["player", "A"] and value["until_iso"].endswith("Z")
    assert "five_hour" in value["reason"]
    assert first.results == {}, "no task ended: both are held"
    assert "task_error" not in first.kinds() and "finalize" not in first.kinds()
    yielded = schemas.valid("event", next(e for e in first.events if e["event"] == "usage_pause_yield"))
    assert yielded["until"] == value["until_iso"] and "paused until" in yielded["status"]
    end = next(e for e in first.events if e["event"] == "feature_end")
    assert set(end["held"]) == {"A", "B"}
    assert sessions(agents, "player") == {"A": 1, "B": 1}, "both running sessions finished"
    assert sessions(agents, "coach") == {"A": 0, "B": 0}, "no session started in the pause"
    assert first.state.next, "resumable"
    assert read_pause(pause_path(repo, "FEAT-001")) is not None, "the pause stays on record for the resumed run"

    # The pause is over (its records say so, as they will once the window has reset); the workers re-queue the run.
    for path in (pause_path(repo, "FEAT-001"), quota_path()):
        write_pause(path, Pause(until=time.time() - 1, reason="over", since=time.time() - 10, kind="quota"))
    second = await workflow.run(fresh_input=False)

    assert second.interrupts == []
    assert {t: second.status(t) for t in "AB"} == {"A": "approved-unverified", "B": "approved-unverified"}
    assert sessions(agents, "player") == {"A": 1, "B": 1}, "no finished session ran twice"
    assert sessions(agents, "coach") == {"A": 1, "B": 1}
    assert not pause_path(repo, "FEAT-001").exists() and not quota_path().exists(), \
        "a pause over before the run resumed is cleared from its records, the credential's shared one too"


async def test_a_pause_shorter_than_the_threshold_is_waited_out_in_the_run(tmp_path: Path) -> None:
    repo = two_tasks(tmp_path)
    agents = GatedAgents(players(0.0), {("player", "A"): 1.0})
    workflow = Workflow(repo, agents, options={"parallel": 1, "yield_pause": 60.0, "max_utilization": 0.9})

    run = await workflow.run()

    assert run.interrupts == [] and "usage_pause_yield" not in run.kinds()
    assert "usage_limit" in run.kinds(), "the run did pause"
    assert {t: run.status(t) for t in "AB"} == {"A": "approved-unverified", "B": "approved-unverified"}


async def test_without_a_yield_threshold_the_cli_waits_the_pause_out(tmp_path: Path) -> None:
    repo = two_tasks(tmp_path)
    agents = GatedAgents(players(0.0), {("player", "A"): 1.0})
    workflow = Workflow(repo, agents, options={"parallel": 1, "max_utilization": 0.9})  # yield_pause unset, no worker

    run = await workflow.run()

    assert run.interrupts == [] and "usage_pause_yield" not in run.kinds()
    assert "usage_limit" in run.kinds()
    assert {t: run.status(t) for t in "AB"} == {"A": "approved-unverified", "B": "approved-unverified"}
    assert sessions(agents, "player") == {"A": 1, "B": 1}
