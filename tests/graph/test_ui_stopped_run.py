"""A run whose process is gone (a `kill -9`) is said as `status` says it, on the runs and feature pages alike:
stopped, and how to resume it; while a process holds the run's lock, it is in progress (issue 41)."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import subprocess
from pathlib import Path

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from orchestrator.cli.main import main
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.web.live import feature_state
from orchestrator.web.reading import Where
from tests.graph.harness import CALC_FILES, plan, task
from tests.graph.test_one_truth import SUB, run
from tests.graph.test_ui_page import client

STOPPED = "stopped (its process is gone) — resume with `autobuild resume FEAT-001`"


async def cut_short(tmp_path: Path) -> tuple[Path, Path]:
    """A run stopped in its player's session, its lock file left naming its (now dead) process, as a kill -9
    leaves it."""
    repo, db = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-1"))), tmp_path / "db"
    playing = asyncio.Event()
    agents = ScriptedAgents({"player": writes(SUB, effect=lambda _: playing.set(), delay_s=5.0), "coach": approve()})
    running = asyncio.create_task(run(repo, db, "FEAT-001", agents))
    await playing.wait()
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running
    return repo, db


def dead_pid() -> int:
    gone = subprocess.Popen(["true"])
    gone.wait()
    return gone.pid


def test_a_run_whose_process_is_gone_is_said_stopped_with_how_to_resume_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, db = asyncio.run(cut_short(tmp_path))
    CheckpointStore(str(db)).lock_file("FEAT-001").write_text(str(dead_pid()))
    where = ["--repo", str(repo), "--db", str(db)]
    capsys.readouterr()
    assert main(["status", "FEAT-001", *where]) == 0
    assert f"FEAT-001 ({STOPPED}; updated" in capsys.readouterr().out
    assert main(["status", *where]) == 0
    assert STOPPED in capsys.readouterr().out

    browser = client(repo, db)
    assert f'<span class="badge blocked" data-field="state">{STOPPED}</span>' in browser.get("/").text
    assert f'<span class="badge blocked" id="run-state">{STOPPED}</span>' in browser.get("/f/FEAT-001").text
    assert feature_state(Where(repo, str(db)), "FEAT-001")["stopped"] == STOPPED  # a page left open learns it too

    with CheckpointStore(str(db)).lock_file("FEAT-001").open("a+") as held:  # a live run holds its lock
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert 'data-field="state">in progress</span>' in browser.get("/").text
        assert 'id="run-state">in progress</span>' in browser.get("/f/FEAT-001").text
        assert feature_state(Where(repo, str(db)), "FEAT-001")["stopped"] is None
        assert main(["status", "FEAT-001", *where]) == 0
        assert "FEAT-001 (not finished; updated" in capsys.readouterr().out
