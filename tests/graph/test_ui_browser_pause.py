"""Pause and unpause from the page in a real browser (issue 41, item 4): Debian's Chromium over the DevTools protocol
(tests/devtools.py) against `autobuild ui` started as a person starts it, on a live run. "Pause now" cuts the task's
running session, the task's state turns `paused` without a reload while another task runs on, and "Unpause" lets it
go on in the same run from the work its cut session left; the steps are in the task's AUTO-RUN.md as the page's."""

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
