"""Pause, unpause, cancel and a note from the page in a real browser (issue 41, item 4): Debian's Chromium over the
DevTools protocol (tests/devtools.py) against `autobuild ui` started as a person starts it, on a live run. "Pause now"
cuts the task's running session, the task's state turns `paused` without a reload while another task runs on, and
"Unpause" lets it go on in the same run from the work its cut session left; a note typed on the page reaches the
player once; "Cancel" ends a task `cancelled`; each is in the task's AUTO-RUN.md as the page's."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, writes
from tests.devtools import Browser
from tests.graph.harness import CALC_FILES, plan, task
from tests.graph.test_one_truth import MUL, SUB, run
from tests.graph.test_ui_browser import shots, ui_on

pytestmark = pytest.mark.heavy  # a real Chromium and a real server: `make test-heavy`

HALF = {"calc/sub.py": "def sub(a, b):\n    # half done\n"}


class Held(ScriptedAgents):
    """TASK-1's first session works until it is cut; TASK-2's waits until the test lets it go (bounded)."""

    def __init__(self) -> None:
        super().__init__({("player", "TASK-1"): [Turn(files=HALF, hangs_s=120), writes(SUB)],
                          ("player", "TASK-2"): writes({**SUB, **MUL}), "coach": approve()})
        self.release = asyncio.Event()
        self.started = asyncio.Event()

    async def player(self, data: Any, settings: Any) -> Any:
        if data.brief.task_id == "TASK-1":
            self.started.set()
        if data.brief.task_id == "TASK-2":
            await asyncio.wait_for(self.release.wait(), timeout=120)
        return await super().player(data, settings)


@pytest.fixture
def page_server(tmp_path: Path) -> Iterator[tuple[Path, Path, str]]:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-1"), task("TASK-2")))
    db = tmp_path / "db.sqlite"
    with ui_on(repo, db) as address:
        yield repo, db, address


def _click(browser: Browser, action: str, said: str) -> None:
    browser.wait(f"!!document.querySelector('button[value={action}]')")
    browser.value(f"document.querySelector('button[value={action}]').click()")
    browser.wait(f"document.getElementById('said-control').textContent.includes({said!r})")


def _shots(browser: Browser, folder: Path) -> None:
    """The running task's page with its controls, at both widths, for review; nothing scrolls sideways."""
    for width in (390, 1280):
        browser.width(width)
        assert browser.value("document.documentElement.scrollWidth - window.innerWidth") <= 0, width
        browser.screenshot(folder / f"task-controls-{width}.png")


async def test_pause_now_and_unpause_from_the_page(page_server: tuple[Path, Path, str], tmp_path: Path) -> None:
    repo, db, url = page_server
    agents = Held()
    running = asyncio.create_task(run(repo, db, "FEAT-001", agents, parallel=2, max_turns=3))
    await asyncio.wait_for(agents.started.wait(), timeout=120)
    browser = await asyncio.to_thread(Browser)
    try:
        base = url.split("/?", 1)[0]
        await asyncio.to_thread(browser.open, url)
        await asyncio.to_thread(browser.open, f"{base}/f/FEAT-001/t/TASK-1")
        await asyncio.to_thread(browser.value, "window.__stayed = 'this document'")
        await asyncio.to_thread(_click, browser, "pause-now", "pauses now")
        await asyncio.to_thread(_shots, browser, shots() or tmp_path / "screenshots")
        state = "document.querySelector('[data-task=\"TASK-1\"] [data-field=status]').textContent"
        await asyncio.to_thread(browser.wait, f"{state} === 'paused'")
        # The state says `paused` from the request on; the session is cut at the run's next look (pause_now.WATCH_S).
        # An unpause before that look takes the pause back before it cut anything, so wait for the cut in the log.
        await asyncio.to_thread(browser.wait, "[...document.querySelectorAll('#log li')]"
                                              ".some((line) => line.textContent.includes(' session_paused '))")
        await asyncio.to_thread(_click, browser, "unpause", "goes on")
        agents.release.set()
        summary = await running
        assert summary.paused == [] and summary.results["TASK-1"]["status"] == "approved"
        assert await asyncio.to_thread(browser.value, "window.__stayed") == "this document", "no reload"
        assert await asyncio.to_thread(browser.value, "window.__violations") == []
    finally:
        await asyncio.to_thread(browser.close)
    assert [(c.task, c.turn) for c in agents.calls if c.role == "player"].count(("TASK-1", 1)) == 2
    steering = (repo / ".autobuild/runs/FEAT-001/TASK-1/AUTO-RUN.md").read_text().split("## Steering", 1)[1]
    assert " pause --now (page)" in steering and " unpause (page)" in steering



NOTE = "use the existing retry helper"


class BothHeld(ScriptedAgents):
    """Both players' sessions wait until the test lets them go (bounded), then TASK-1's makes three tool calls."""

    def __init__(self) -> None:
        super().__init__({("player", "TASK-1"): writes(SUB, tool_calls=3), "player": writes({**SUB, **MUL}),
                          "coach": approve()})
        self.release = asyncio.Event()
        self.started: set[str] = set()

    async def player(self, data: Any, settings: Any) -> Any:
        self.started.add(data.brief.task_id)
        await asyncio.wait_for(self.release.wait(), timeout=120)
        return await super().player(data, settings)


async def test_a_note_and_a_cancel_sent_from_the_page(page_server: tuple[Path, Path, str]) -> None:
    """A note typed on TASK-1's page reaches its player's session once; "Cancel" on TASK-2's page ends it
    `cancelled`, shown without a reload; both are in the tasks' AUTO-RUN.md as the page's."""
    repo, db, url = page_server
    agents = BothHeld()
    running = asyncio.create_task(run(repo, db, "FEAT-001", agents, parallel=2, max_turns=3))
    for _ in range(1200):
        if agents.started == {"TASK-1", "TASK-2"}:
            break
        await asyncio.sleep(0.1)
    browser = await asyncio.to_thread(Browser)
    try:
        base = url.split("/?", 1)[0]
        await asyncio.to_thread(browser.open, url)
        await asyncio.to_thread(browser.open, f"{base}/f/FEAT-001/t/TASK-2")
        await asyncio.to_thread(_click, browser, "cancel", "ends cancelled")
        await asyncio.to_thread(browser.open, f"{base}/f/FEAT-001/t/TASK-1")
        await asyncio.to_thread(browser.value, f"document.getElementById('note-text').value = {NOTE!r}")
        await asyncio.to_thread(browser.value, "document.querySelector('section.note button').click()")
        said = await asyncio.to_thread(browser.wait, "document.getElementById('said-note').textContent"
                                                     ".includes('accepted') && document.getElementById('said-note')"
                                                     ".textContent")
        assert said.startswith("note 1 accepted: TASK-1"), said
        await asyncio.to_thread(browser.open, f"{base}/f/FEAT-001")
        await asyncio.to_thread(browser.wait, "document.body.dataset.rendered === 'yes'")
        await asyncio.to_thread(browser.value, "window.__stayed = 'the feature'")
        agents.release.set()
        summary = await running
        cell = "document.querySelector('[data-task=\"TASK-2\"] [data-field=status]').textContent"
        await asyncio.to_thread(browser.wait, f"{cell} === 'cancelled'")
        assert await asyncio.to_thread(browser.value, "window.__stayed") == "the feature", "no reload"
        assert await asyncio.to_thread(browser.value, "window.__violations") == []
    finally:
        await asyncio.to_thread(browser.close)
    assert summary.results["TASK-2"]["status"] == "cancelled"
    seen = [note for call in agents.calls if call.role == "player" and call.task == "TASK-1"
            for note in [*call.boundary_notes, *getattr(call.input, "supervisor_notes", [])] if NOTE in note]
    assert len(seen) == 1, seen
    for task_id, said in [("TASK-1", f" note 1 (page, consumed): {NOTE}"), ("TASK-2", " cancel (page, applied)")]:
        report = (repo / f".autobuild/runs/FEAT-001/{task_id}/AUTO-RUN.md").read_text()
        assert said in report.split("## Steering", 1)[1], (task_id, report)
