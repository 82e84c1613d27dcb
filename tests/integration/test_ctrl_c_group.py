"""Ctrl+C as a terminal sends it: SIGINT to the whole foreground process group, the agent's CLI included. The
session it cuts short is the person's doing: no contract violation, no turn spent; resume runs the turn again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agents.reaper import tagged_pids
from agents.testing.repos import make_sample_repo
from agents.testing.scenario import Scenario
from agents.testing.scripted_model import ScriptedModel
from tests.conftest import CliRun, approve_scenario, cli_env, one_task_plan
from tests.integration.test_durability import _cmdline, trace_events, wait_for

pytestmark = [pytest.mark.cli, pytest.mark.heavy]


def test_ctrl_c_at_the_terminal_is_not_the_agent_s_fault_nor_costs_a_turn(
        tmp_path: Path, model_factory: Callable[..., ScriptedModel], run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=one_task_plan())
    db = tmp_path / "db.sqlite"
    model = model_factory({"sessions": [{"role": "player", "steps": [
        {"bash": "python3 -c 'import time; time.sleep(600)'"}]}]})
    proc = subprocess.Popen(  # its own process group, as a shell's foreground job
        [sys.executable, "-m", "orchestrator", "run", "FEAT-001", "--repo", str(repo), "--db", str(db),
         "--drain-grace", "20"], env=cli_env(model, tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, stdin=subprocess.DEVNULL, start_new_session=True)
    wait_for(lambda: any(b"time.sleep(600)" in _cmdline(p) for p, t in tagged_pids().items()
                         if t.startswith(f"{proc.pid}.")))
    os.killpg(proc.pid, signal.SIGINT)  # the terminal's Ctrl+C
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 130, out + err
    assert "Fatal error in message reader" not in err, "the SDK's raw line never reaches the person"
    events = trace_events(repo)
    assert [e for e in events if e["event"] == "retry"] == [], "no retry starts after the person's interrupt"
    assert [e for e in events if e["event"] == "contract_violation"] == [], "the person's stop is no violation"
    assert not [e for e in events if e["event"] == "player_report"], "the cut session is not judged"
    model.scenario = Scenario.from_data(approve_scenario())
    resumed = run_cli("resume", "FEAT-001", "--repo", str(repo), "--db", str(db), model=model)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    events = trace_events(repo)
    assert [e for e in events if e["event"] == "contract_violation"] == []
    assert [e["turn"] for e in events if e["event"] == "player_report"] == [1], "the interrupted turn ran again"
