"""The live view in a real terminal: the demo's run in tmux at 80 and 120 columns, read back with capture-pane.
Nothing wraps (wrapped lines joined back are never wider than the pane), the columns that matter are there, running
work spins, states have colour unless NO_COLOR, the final table fits and the next step follows it; a question and
its answer stay on screen when the table comes back."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml

from agents.testing.repos import DEMO_PLAN, make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from orchestrator.views.live_layout import SPINNER
from tests.conftest import cli_env, coach_from_pytest
from tests.integration.test_question_prompt import slow_player
from tests.integration.test_questions import asking_player, plan

pytestmark = [pytest.mark.cli, pytest.mark.heavy,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is installed by `make install`")]

COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7]|38;[0-9;]+)(?:;[0-9;]*)?m")
SGR = re.compile(r"\x1b\[[0-9;]*m")
WORKING = re.compile(rf"^TASK-\d+ +[{SPINNER}] (player|coach) .* (writing|running|reading|editing|reporting) \S",
                     re.MULTILINE)
"""A row of the live table: a spinner, who is at work, and what it does in words."""


def slow_demo_scenario() -> dict[str, Any]:
    """The demo's script, with TASK-003's player pausing before it reports: the live table is caught mid-run."""
    path = Path(str(resources.files("agents.testing") / "demo_scenario.yaml"))
    scenario = yaml.safe_load(path.read_text())
    player = next(s for s in scenario["sessions"] if s.get("role") == "player" and s.get("task") == "TASK-003")
    report = next(step for step in player["steps"] if step.get("tool", {}).get("name") == "report_progress")
    report["delay"] = 6
    return dict(scenario)


def record_exit(path: Path) -> str:
    """Shell that writes the exit code to `path` whole: the file appears only once it holds the code."""
    temp = shlex.quote(f"{path}.tmp")
    return f"echo $? > {temp} && mv {temp} {shlex.quote(str(path))}"


class Tmux:
    """A tmux server of the test's own (its socket under tmp_path, no user config)."""

    def __init__(self, socket: Path, env: dict[str, str]) -> None:
        self.base = ["tmux", "-S", str(socket), "-f", "/dev/null"]
        self.env = env

    def __call__(self, *args: str) -> str:
        return subprocess.run([*self.base, *args], env=self.env, capture_output=True, text=True, check=True,
                              timeout=30).stdout

    def capture(self) -> str:
        """The whole pane with its scrollback, wrapped lines joined (-J), colours kept (-e)."""
        return self("capture-pane", "-p", "-J", "-e", "-S", "-", "-t", "view")


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Callable[[dict[str, str]], Tmux]]:
    servers: list[Tmux] = []

    def start(env: dict[str, str]) -> Tmux:
        server = Tmux(tmp_path / f"tmux-{len(servers)}.sock", env)
        servers.append(server)
        return server

    yield start
    for server in servers:
        subprocess.run([*server.base, "kill-server"], env=server.env, capture_output=True, check=False, timeout=30)


@pytest.mark.parametrize(("width", "no_color"), [(80, False), (120, True)])
def test_the_demo_run_fits_the_terminal(tmp_path: Path, model_factory: Callable[..., ScriptedModel],
                                        tmux: Callable[[dict[str, str]], Tmux], width: int, no_color: bool) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=DEMO_PLAN)
    model = model_factory(slow_demo_scenario())
    env = {k: v for k, v in cli_env(model, tmp_path).items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    if no_color:
        env["NO_COLOR"] = "1"
    done = tmp_path / "exit-code"
    run = shlex.join([sys.executable, "-m", "orchestrator", "run", "FEAT-001", "--repo", str(repo), "--db",
                      str(tmp_path / "db.sqlite"), "--autonomous"])
    server = tmux(env)
    server("new-session", "-d", "-s", "view", "-x", str(width), "-y", "40",
           f"{run}; {record_exit(done)}; exec sleep 3600")  # the pane stays to be read
    mid_run = ""
    deadline = time.monotonic() + 240  # not an assertion on time: a bound on waiting for the run to end
    while time.monotonic() < deadline and not done.exists():
        screen = server.capture()
        if not mid_run and WORKING.search(SGR.sub("", screen)):
            mid_run = screen
        time.sleep(0.2)
    assert done.exists(), SGR.sub("", server.capture())[-3000:]
    final = server.capture()
    plain = SGR.sub("", final)
    assert done.read_text().strip() == "0", plain[-3000:]
    for screen in (mid_run, final):
        wide = [line for line in SGR.sub("", screen).splitlines()
                if len(line) > width and str(tmp_path) not in line]  # a long path may wrap; a table may not
        assert not wide, "wrapped:\n" + "\n".join(wide)
    live = SGR.sub("", mid_run)
    assert mid_run, "the live table showed running work with its spinner, and what it does in words"
    header = next(line for line in live.splitlines() if line.startswith("Task ") and "Activity" in line)
    assert all(name in header for name in ("State", "Turn")), header
    assert "TASK-003" in live and "TAS…" not in live and "runn…" not in live
    table = plain[plain.index("AutoBuild result"):]
    result_header = table.splitlines()[1]
    assert all(name in result_header for name in ("Task", "Status", "Turns", "Cost", "Reason")), result_header
    assert all(task["id"] in table for task in DEMO_PLAN["tasks"]) and "✔ approved" in table
    assert "next steps:" in table and "autobuild review FEAT-001" in table
    assert bool(COLOUR.search(final)) is not no_color, "colour by state, none under NO_COLOR"


def test_the_question_and_its_answer_stay_on_screen_when_the_table_comes_back(
        tmp_path: Path, model_factory: Callable[..., ScriptedModel], tmux: Callable[[dict[str, str]], Tmux]) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=plan("TASK-1", "TASK-2"))
    model = model_factory({"sessions": [asking_player("TASK-1", "Which database?", "Postgres", "db.txt"),
                                        slow_player("TASK-2"), coach_from_pytest()]})
    env = {k: v for k, v in cli_env(model, tmp_path).items() if k not in ("COLUMNS", "LINES")}
    done = tmp_path / "exit-code"
    run = shlex.join([sys.executable, "-m", "orchestrator", "run", "FEAT-001", "--repo", str(repo), "--db",
                      str(tmp_path / "db.sqlite"), "--parallel", "2"])
    server = tmux(env)
    server("new-session", "-d", "-s", "view", "-x", "80", "-y", "30",
           f"{run}; {record_exit(done)}; exec sleep 3600")
    deadline = time.monotonic() + 240  # a bound on waiting, not an assertion on time
    while time.monotonic() < deadline and "your answer" not in server.capture():
        time.sleep(0.2)
    server("send-keys", "-t", "view", "1", "Enter")
    while time.monotonic() < deadline and not done.exists():
        time.sleep(0.3)
    screen = SGR.sub("", server.capture())
    assert done.exists() and done.read_text().strip() == "0", screen[-3000:]
    assert "TASK-1 asks (TASK-1-" in screen and "  1) Postgres" in screen and "  2) something else" in screen, screen
    assert "answered: Postgres; TASK-1 goes on with it" in screen, screen[-3000:]
    assert screen.index("answered: Postgres") < screen.index("AutoBuild result")
