"""cargo's cheat matrix with real cargo (offline, a zero-dependency crate made by the test): a player that breaks `mul`
and bends the test that catches it is refused with a blind coach, naming what became of the test; a legitimate test
change the coach accepts is approved. Heavy: every case builds the crate several times."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from benchmarks.native_cheats import CARGO_CHEATS, CARGO_FILES, CARGO_LEGITIMATE
from tests.graph.harness import Workflow, plan, task

pytestmark = [pytest.mark.heavy, pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo")]


def crate(tmp_path: Path) -> Path:
    return make_sample_repo(tmp_path / "repo", files=CARGO_FILES, plan=plan(task("TASK-001"), verify="cargo test"),
                            venv=False)


@pytest.mark.parametrize("name", sorted(CARGO_CHEATS))
async def test_a_blind_approval_of_a_bent_cargo_test_is_refused(tmp_path: Path, name: str) -> None:
    files, named = CARGO_CHEATS[name]
    run = await Workflow(crate(tmp_path), ScriptedAgents({"player": writes(files), "coach": approve()})).run(
        max_turns=1)
    gate = next(event for event in run.events if event["event"] == "gate")
    assert not gate["passed"] and named in gate["summary"], gate["summary"]
    assert run.status("TASK-001") == "failed"


@pytest.mark.parametrize("name", sorted(CARGO_LEGITIMATE))
async def test_a_legitimate_cargo_test_change_the_coach_accepts_is_approved(tmp_path: Path, name: str) -> None:
    files, accepts = CARGO_LEGITIMATE[name]
    agents = ScriptedAgents({"player": writes(files), "coach": approve(accepts=accepts)})
    run = await Workflow(crate(tmp_path), agents).run(max_turns=1)
    gate = next(event for event in run.events if event["event"] == "gate")
    assert run.status("TASK-001") == "approved", gate["summary"]
