"""The page on a run in a real browser (issue 41, item 4): Debian's Chromium driven through the DevTools protocol
(tests/devtools.py) against `autobuild ui` started as a person starts it. A live run's page changes a task's state
without a reload; a finished run's pages load, draw their pictures and break no rule of the CSP; screenshots at 390
and 1280 px are kept for review (under $AUTOBUILD_SCREENSHOTS when set, else the test's tmp folder)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, feedback, writes
from tests.devtools import Browser
from tests.graph.harness import CALC_FILES, plan, task
from tests.graph.test_one_truth import MUL, SUB, run

pytestmark = pytest.mark.heavy  # a real Chromium and a real server: `make test-heavy`


class HeldPlayer(ScriptedAgents):
    """TASK-2's player waits until the test lets it go (bounded: a broken test fails, never hangs)."""

    def __init__(self) -> None:
        super().__init__({("player", "TASK-1"): writes(SUB, notes="Subtraction, with <b>escaped</b> notes"),
                          ("player", "TASK-2"): writes(MUL), ("coach", "TASK-1", 1): feedback(
                              ("calc/sub.py", 2, "name the <arguments>")), "coach": approve()})
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def player(self, data: Any, settings: Any) -> Any:
        if data.brief.task_id == "TASK-2":
            self.started.set()
            await asyncio.wait_for(self.release.wait(), timeout=120)
        return await super().player(data, settings)


@contextlib.contextmanager
def ui_on(repo: Path, db: Path) -> Iterator[str]:
    """`autobuild ui` on the repo, started as a person starts it: the address it printed, until the block ends."""
    server = subprocess.Popen([sys.executable, "-m", "orchestrator", "ui", "--repo", str(repo), "--db", str(db)],
                              stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    first = server.stdout.readline()
    assert "http://127.0.0.1:" in first, first
    try:
        yield first.split(": ", 1)[1].strip()
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture
def page_server(tmp_path: Path) -> Iterator[tuple[Path, Path, str]]:
    """A repo with a two-task plan and `autobuild ui` on it: (repo, db, the printed address)."""
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(
        task("TASK-1", name='Subtract <script>alert("x")</script>'), task("TASK-2", "TASK-1")))
    db = tmp_path / "db.sqlite"
    with ui_on(repo, db) as address:
        yield repo, db, address


def shots() -> Path | None:
    folder = os.environ.get("AUTOBUILD_SCREENSHOTS")
    return Path(folder) if folder else None


async def test_a_live_run_changes_on_the_page_and_a_finished_one_loads(
        page_server: tuple[Path, Path, str], tmp_path: Path) -> None:
    repo, db, url = page_server
    agents = HeldPlayer()
    running = asyncio.create_task(run(repo, db, "FEAT-001", agents, max_turns=3))
    await asyncio.wait_for(agents.started.wait(), timeout=120)
    browser = await asyncio.to_thread(Browser)
    try:
        base = url.split("/?", 1)[0]
        await asyncio.to_thread(browser.open, url)  # the token becomes a cookie; the address loses it
        assert await asyncio.to_thread(browser.value, "location.search") == ""
        await asyncio.to_thread(browser.open, f"{base}/f/FEAT-001")
        await asyncio.to_thread(browser.wait, "document.body.dataset.rendered === 'yes'")
        cell = "document.querySelector('[data-task=\"TASK-2\"] [data-field=status]').textContent"
        assert (await asyncio.to_thread(browser.wait, cell)).startswith("running"), "a live run's task"
        await asyncio.to_thread(browser.value, "window.__stayed = 'this document'")
        agents.release.set()
        assert (await running).exit_code == 0
        await asyncio.to_thread(browser.wait, f"{cell} === 'approved'")
        assert await asyncio.to_thread(browser.value, "window.__stayed") == "this document", "no reload"
        assert await asyncio.to_thread(browser.value, "window.__violations") == []
        await asyncio.to_thread(_finished_pages, browser, base, shots() or tmp_path / "screenshots")
    finally:
        await asyncio.to_thread(browser.close)


def _finished_pages(browser: Browser, base: str, folder: Path) -> None:
    """Every page of the finished run loads, draws what it draws, breaks no CSP rule; screenshots at both widths."""
    pages = {"runs": "/", "feature": "/f/FEAT-001", "task": "/f/FEAT-001/t/TASK-1",
             "diff": "/f/FEAT-001/t/TASK-1/diff?turn=1&attempt="}
    for width in (390, 1280):
        browser.width(width)
        for name, path in pages.items():
            browser.open(base + path)
            if name == "feature":
                browser.wait("document.body.dataset.rendered === 'yes'")
                assert browser.value("document.querySelectorAll('pre.mermaid svg').length") == 2, "plan and Gantt"
            if name == "task":
                browser.wait("document.querySelectorAll('#log li').length > 3")  # the event log, streamed
                assert "name the <arguments>" in browser.value("document.body.innerText")
            assert browser.value("window.__violations") == [], f"{name}: the CSP refused something"
            assert not browser.value("!!window.alertFired"), name
            overflow = browser.value("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, f"{name} at {width} px scrolls sideways by {overflow} px"
            browser.screenshot(folder / f"{name}-{width}.png")
    browser.call("Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": "dark"}])
    browser.open(base + pages["task"])
    assert browser.value("getComputedStyle(document.body).backgroundColor") == "rgb(22, 24, 28)", "dark"
    browser.screenshot(folder / "task-dark-1280.png")
