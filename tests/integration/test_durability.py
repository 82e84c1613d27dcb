"""Durability: SIGKILL at distinct points then resume, Ctrl+C, the per-feature lock, and live inspection."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from agents.reaper import tagged_pids
from agents.testing.repos import DEMO_PLAN, make_sample_repo
from agents.testing.scenario import Scenario
from agents.testing.scripted_model import ScriptedModel
from orchestrator.store.checkpoints import CheckpointStore
from tests import schemas
from tests.conftest import CliRun, approve_scenario, cli_env, git, one_task_plan
from tests.postgres import postgres_server

pytestmark = [pytest.mark.cli, pytest.mark.heavy]

DEMO_SCENARIO = Scenario.load(Path(str(resources.files("agents.testing") / "demo_scenario.yaml")))
# The demo's TASK-001 → TASK-002 chain (TASK-002 takes two turns): every kill point, half the suite time.
PLAN = {**DEMO_PLAN, "tasks": [t for t in DEMO_PLAN["tasks"] if t["id"] in ("TASK-001", "TASK-002")]}  # type: ignore[attr-defined]


def scenario_for_plan() -> Scenario:
    scenario = Scenario.from_data({"sessions": []})
    scenario.sessions = [s for s in DEMO_SCENARIO.sessions if s.task in (None, "TASK-001", "TASK-002")]
    return scenario


def start_run(repo: Path, db: Path | str, model: ScriptedModel, tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "run", "FEAT-001", "--repo", str(repo), "--db", str(db), *args],
        env=cli_env(model, tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL,
    )


def trace_events(repo: Path) -> list[dict[str, Any]]:
    events = []
    for path in (repo / ".autobuild/runs/FEAT-001").glob("*/trace.jsonl"):
        events += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return events


def wait_for(condition: Callable[[], bool], timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached")


def checkpointed_sessions(db: Path | str) -> dict[tuple[str, str, int], float]:
    """(role, task, turn) -> cost of every agent node whose completion is in the checkpoint."""
    done: dict[tuple[str, str, int], float] = {}
    with CheckpointStore(str(db)).reader() as reader:
        for namespace in ["", *reader.namespaces("FEAT-001", "run_task:")]:
            latest = reader.latest("FEAT-001", namespace)
            values = latest.checkpoint["channel_values"] if latest else {}
            for entry in values.get("history", []):
                done[(entry["role"], values["task_id"], entry["turn"])] = float(entry["cost_usd"])
    return done


def session_starts(model: ScriptedModel) -> Counter[tuple[str, str, int]]:
    return Counter((r.role, r.task, r.turn) for r in model.requests if r.role and r.step == 0)  # type: ignore[misc]


def tree(repo: Path, ref: str) -> list[str]:
    lines = git(repo, "ls-tree", "-r", ref).splitlines()
    return sorted(line for line in lines if not line.endswith("AUTO-RUN.md"))


@pytest.fixture(scope="module")
def reference_tree(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    tmp = tmp_path_factory.mktemp("reference")
    repo = make_sample_repo(tmp / "repo", plan=PLAN)
    with ScriptedModel(scenario_for_plan()) as model:
        proc = start_run(repo, tmp / "db.sqlite", model, tmp)
        out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, out + err
    return tree(repo, "autobuild/FEAT-001")


KILL_POINTS: dict[str, Callable[[Path, ScriptedModel], bool]] = {
    # A group-2 player session is running (its step 0 answered, the rest delayed).
    "during-player-session": lambda repo, model: any(
        r.role == "player" and r.task == "TASK-002" and r.step == 0 for r in model.requests),
    # TASK-001 was approved and is landing: a fast-forward of the feature branch (a compare-and-swap of one ref,
    # so no git merge runs for it and the user's hooks never run in our git), its worktree's removal, the
    # checkpoint that records it; the kill lands somewhere in that window or just after.
    "during-landing": lambda repo, model: any(
        e["event"] == "finalize" and e["task"] == "TASK-001" for e in trace_events(repo)),
}


def test_sigkill_during_a_player_session_then_resume_gives_same_result(tmp_path: Path,
                                                                        reference_tree: list[str]) -> None:
    kill_and_resume("during-player-session", tmp_path, reference_tree, str(tmp_path / "db.sqlite"))


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


def test_sigkill_while_a_task_lands_then_resume_on_postgres(tmp_path: Path, reference_tree: list[str],
                                                        postgres_url: str) -> None:
    # The other kill point, on the other store: each point and each store is covered once (suite time).
    kill_and_resume("during-landing", tmp_path, reference_tree, postgres_url, check_lock=True)
    listing = subprocess.run([sys.executable, "-m", "orchestrator", "status", "--db", postgres_url, "--json"],
                             capture_output=True, text=True, check=True)
    assert [row["thread"] for row in json.loads(listing.stdout)] == ["FEAT-001"]
    assert "postgresql://" not in listing.stderr


def kill_and_resume(point: str, tmp_path: Path, reference_tree: list[str], db: str, check_lock: bool = False) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=PLAN)
    scenario = scenario_for_plan()
    if point == "during-player-session":
        delayed = next(s for s in scenario.sessions if s.task == "TASK-002" and s.turn == 1)
        delayed.steps = [delayed.steps[0], {**delayed.steps[1], "delay": 5}, *delayed.steps[2:]]
    with ScriptedModel(scenario) as model:
        proc = start_run(repo, db, model, tmp_path)
        try:
            wait_for(lambda: KILL_POINTS[point](repo, model))
            if check_lock:
                second = subprocess.run(
                    [sys.executable, "-m", "orchestrator", "run", "FEAT-001", "--repo", str(repo), "--db", db],
                    env=cli_env(model, tmp_path), capture_output=True, text=True, timeout=60, check=False)
                assert second.returncode == 2 and "already being run" in second.stderr, second.stderr
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
        before = session_starts(model)
        finished = checkpointed_sessions(db)
        wait_for(lambda: not [t for t in tagged_pids().values() if t.startswith(f"{proc.pid}.")], timeout=15)
        resumed = subprocess.run(
            [sys.executable, "-m", "orchestrator", "resume", "FEAT-001", "--repo", str(repo), "--db", db],
            env=cli_env(model, tmp_path), capture_output=True, text=True, timeout=240, check=False,
        )
        after = session_starts(model)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "resuming FEAT-001" in resumed.stdout
    # The feature budget on resume counts every checkpointed session, also those of tasks still in flight.
    spent = float(re.search(r"\(\$([0-9.]+) spent so far\b", resumed.stdout).group(1))  # type: ignore[union-attr]
    assert abs(spent - sum(finished.values())) < 1e-4, (spent, finished)
    assert tree(repo, "autobuild/FEAT-001") == reference_tree
    for session in finished:
        assert after[session] == before[session], f"{session} finished before the kill but ran again"
    status = subprocess.run(
        [sys.executable, "-m", "orchestrator", "status", "FEAT-001", "--repo", str(repo), "--db", db, "--json"],
        capture_output=True, text=True, check=True,
    )
    table = json.loads(status.stdout)
    assert table["finished"] and {row["status"] for row in table["tasks"]} == {"approved"}
    assert git(repo, "worktree", "list").count("\n") == 1
    assert "autobuild/FEAT-001." not in git(repo, "branch", "--list")


def test_ctrl_c_exits_130_without_orphans_then_resumes(tmp_path: Path,
                                                       model_factory: Callable[..., ScriptedModel],
                                                       run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=one_task_plan())
    db = tmp_path / "db.sqlite"
    model = model_factory({"sessions": [{"role": "player", "steps": [
        {"bash": "python3 -c 'import time; time.sleep(600)'"}]}]})
    proc = start_run(repo, db, model, tmp_path, "--drain-grace", "1")
    wait_for(lambda: any(b"time.sleep(600)" in _cmdline(p) for p, t in tagged_pids().items()
                         if t.startswith(f"{proc.pid}.")))
    # Live inspection while the run holds the DB.
    live = run_cli("status", "FEAT-001", "--repo", str(repo), "--db", str(db), "--json")
    assert live.returncode == 0, live.stderr
    row = json.loads(live.stdout)["tasks"][0]
    assert row["task"] == "TASK-001" and row["status"].startswith("running")
    locked = run_cli("run", "FEAT-001", "--repo", str(repo), "--db", str(db), model=model)
    assert locked.returncode == 2 and f"already being run by pid {proc.pid}" in locked.stderr
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "resume FEAT-001" in err
    assert not [t for t in tagged_pids().values() if t.startswith(f"{proc.pid}.")]
    model.scenario = Scenario.from_data(approve_scenario())
    resumed = run_cli("resume", "FEAT-001", "--repo", str(repo), "--db", str(db), model=model)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    # The run used a custom --db: every later command finds it from anywhere inside the repo, with no flags.
    inside = repo / "calc"
    history = schemas.valid("history", run_cli("history", "FEAT-001", "--json", cwd=inside).stdout)
    assert {"step", "node", "time", "next", "turn", "decision"} <= set(history[0])
    players = [row for row in history if row["node"] == "player"]
    assert players and players[0]["task"] == "TASK-001" and players[0]["turn"] == 1, "steps name their task"
    shown = schemas.valid("show-task", run_cli("show", "FEAT-001", "TASK-001", "--json", cwd=inside).stdout)
    assert shown["final"]["status"] == "approved" and shown["turns"][-1]["coach"]["decision"] == "approve"
    schemas.valid("show", run_cli("show", "FEAT-001", "--json", cwd=inside).stdout)
    schemas.valid("status", run_cli("status", "FEAT-001", "--json", cwd=inside).stdout)
    listing = schemas.valid("status-list", run_cli("status", "--json", cwd=inside).stdout)
    assert listing == [{"schema_version": 1, "thread": "FEAT-001", "finished": True, "updated": listing[0]["updated"],
                        "tasks": {"approved": 1}, "cost_usd": listing[0]["cost_usd"]}]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""




def test_second_ctrl_c_forces_the_stop_without_orphans(tmp_path: Path,
                                                       model_factory: Callable[..., ScriptedModel]) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=one_task_plan())
    model = model_factory({"sessions": [{"role": "player", "steps": [
        {"bash": "python3 -c 'import time; time.sleep(600)'"}]}]})
    proc = start_run(repo, tmp_path / "db.sqlite", model, tmp_path, "--drain-grace", "300")
    wait_for(lambda: any(b"time.sleep(600)" in _cmdline(p) for p, t in tagged_pids().items()
                         if t.startswith(f"{proc.pid}.")))
    proc.send_signal(signal.SIGINT)
    time.sleep(1.0)
    assert proc.poll() is None, "the first Ctrl+C drains: the running step may finish within the grace period"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)  # far below the 300 s grace: the second signal forced it
    assert proc.returncode == 130, out + err
    assert "second interrupt" in out
    assert not [t for t in tagged_pids().values() if t.startswith(f"{proc.pid}.")]
