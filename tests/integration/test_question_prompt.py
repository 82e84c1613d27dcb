"""A question is asked when it is asked: at a terminal the prompt appears while the other tasks still run, the
live table keeps refreshing above it while a person types, the options are numbered and answerable by number, and the
asking task takes its answer up at once (it waits in-process), not when every other task is done."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from orchestrator.views.live_layout import SPINNER
from tests.conftest import cli_env, coach_from_pytest, git
from tests.integration.test_questions import asking_player, plan

pytestmark = [pytest.mark.cli, pytest.mark.heavy]


def slow_player(task: str) -> dict[str, object]:
    """Works through three slow model answers: still running when the other task's question comes."""
    return {"role": "player", "task": task, "steps": [
        {"write": {"path": "two.txt", "content": "2\n"}, "delay": 2},
        {"read": "two.txt", "delay": 2},
        {"tool": {"name": "report_progress", "input": {"files_modified": ["two.txt"], "implementation_notes": "x"}},
         "delay": 2},
        {"text": "done"}]}


class Terminal:
    """The CLI on a pseudo-terminal: what it wrote, read as it comes."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.leader, follower = pty.openpty()
        self.proc = subprocess.Popen(command, env=env, stdin=follower, stdout=follower, stderr=follower,
                                     close_fds=True)
        os.close(follower)
        self.seen = b""

    def read_until(self, done: Callable[[], bool], bound_s: float = 180) -> None:
        """Read until `done()` or the process ends (the bound only keeps a broken run from hanging the suite)."""
        deadline = time.monotonic() + bound_s
        while time.monotonic() < deadline and not done():
            ready, _, _ = select.select([self.leader], [], [], 0.1)
            if ready:
                try:
                    self.seen += os.read(self.leader, 65536)
                except OSError:
                    return
            elif self.proc.poll() is not None:
                return

    def text(self) -> str:
        return self.seen.decode(errors="replace")


def test_the_question_is_prompted_while_another_task_runs_and_answered_by_number(
        tmp_path: Path, model_factory: Callable[..., ScriptedModel]) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=plan("TASK-1", "TASK-2"))
    slow_coach = coach_from_pytest("TASK-2")
    slow_coach["steps"][0]["delay"] = 10  # TASK-2 is still being reviewed when TASK-1 takes up its answer
    model = model_factory({"sessions": [asking_player("TASK-1", "Which database?", "Postgres", "db.txt"),
                                        slow_player("TASK-2"), slow_coach, coach_from_pytest()]})
    terminal = Terminal([sys.executable, "-m", "orchestrator", "run", "FEAT-001", "--repo", str(repo), "--db",
                         str(tmp_path / "db"), "--parallel", "2"],
                        cli_env(model, tmp_path) | {"COLUMNS": "100", "TERM": "xterm"})
    try:
        terminal.read_until(lambda: b"your answer" in terminal.seen)
        text = terminal.text()
        assert "your answer" in text, text[-3000:]
        assert "TASK-2 ✔" not in text and "TASK-2 turn 1 coach" not in text, "asked while TASK-2 still runs"
        assert "1) Postgres" in text and "2) something else" in text, "numbered options"
        # While the person types, TASK-2 goes on (the model sees its next steps) and the live table keeps refreshing
        # above the prompt, which stays under it with what was typed.
        os.write(terminal.leader, b"1")
        prompted = len(terminal.seen)
        terminal.read_until(lambda: any(r.task == "TASK-2" and r.step >= 2 for r in model.requests))
        assert any(r.task == "TASK-2" and r.step >= 2 for r in model.requests), "TASK-2 kept running"
        terminal.read_until(lambda: sum(terminal.seen[prompted:].count(f.encode()) for f in SPINNER) >= 2)
        live = terminal.seen[prompted:].decode(errors="replace")
        assert sum(live.count(frame) for frame in SPINNER) >= 2, repr(live[-3000:])
        assert "Activity" in live and "your answer (1-2, or your own words): 1" in live, repr(live[-3000:])
        os.write(terminal.leader, b"\n")
        terminal.read_until(lambda: b"goes on with it now" in terminal.seen)
        assert "answered: Postgres; TASK-1 goes on with it now" in terminal.text(), terminal.text()[-3000:]
        terminal.read_until(lambda: terminal.proc.poll() is not None)
        assert terminal.proc.wait(timeout=60) == 0, terminal.text()[-3000:]
    finally:
        if terminal.proc.poll() is None:
            terminal.proc.kill()
            terminal.proc.wait()
        os.close(terminal.leader)
    assert git(repo, "show", "autobuild/FEAT-001:db.txt") == "Postgres\n", "answer 1 is the first option"
    # The answer is taken up at once, not once TASK-2 is done: TASK-1's answered session starts while TASK-2's
    # review is still under way.
    order = [(r.role, r.task, r.step) for r in model.requests if r.role]
    answered_session = [i for i, key in enumerate(order) if key == ("player", "TASK-1", 0)][1]
    assert answered_session < order.index(("coach", "TASK-2", 1)), order
    assert git(repo, "show", "autobuild/FEAT-001:two.txt") == "2\n"
