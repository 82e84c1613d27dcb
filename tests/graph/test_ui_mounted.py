"""The page mounted under a path (as on a worker, `/ui/THREAD`): every link, form, script, stylesheet and live
stream of every page leads under the mount, never to the host's own routes (the engine's API on a worker)."""

from __future__ import annotations

import re
from pathlib import Path

from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.testclient import TestClient

from orchestrator.store.locations import remember_db
from orchestrator.web.app import page_app
from orchestrator.web.guard import Door, Guard
from orchestrator.web.reading import Where
from tests.graph.test_one_truth import failing_second, run, three_tasks
from tests.graph.test_ui_page import asked

BASE = "http://127.0.0.1:8766"
TOKEN = "mounted-token-for-the-test"
MOUNT = "/ui/0b5a1c2e-0000-4000-8000-000000000001"


async def test_every_address_on_a_mounted_page_stays_under_its_mount(tmp_path: Path) -> None:
    repo, db = three_tasks(tmp_path), tmp_path / "db.sqlite"
    remember_db(repo, "FEAT-001", str(db))
    await run(repo, db, "FEAT-001", failing_second())
    host = Starlette(routes=[Mount(MOUNT, page_app(Where(repo, str(db))))])
    browser = TestClient(Guard(host, Door(TOKEN, "127.0.0.1", 8766)), base_url=BASE)
    assert browser.get(f"{MOUNT}/f/FEAT-001?token={TOKEN}").status_code == 200
    pages = [f"{MOUNT}/f/FEAT-001", f"{MOUNT}/f/FEAT-001/t/TASK-002", f"{MOUNT}/f/NOPE-001"]
    for page in pages:
        body = browser.get(page).text
        addresses = re.findall(r'(?:href|src|action|data-live|data-log)="([^"]*)"', body)
        assert addresses and all(a.startswith(f"{MOUNT}/") or a.startswith("?") for a in addresses), (page, addresses)
    assert browser.get(f"{MOUNT}/static/ui.css").status_code == 200
    refused = browser.post(f"{MOUNT}/f/FEAT-001/t/TASK-002/note", data={"text": "x"}, headers={"origin": BASE})
    assert refused.status_code == 409 and f'href="{MOUNT}/' in refused.text, "its way back stays under the mount"


async def test_a_running_task_s_note_and_control_forms_stay_under_the_mount(tmp_path: Path) -> None:
    repo, db = await asked(tmp_path)  # TASK-1 waits for an answer: it takes notes, pauses and cancels
    remember_db(repo, "FEAT-001", str(db))
    host = Starlette(routes=[Mount(MOUNT, page_app(Where(repo, str(db))))])
    browser = TestClient(Guard(host, Door(TOKEN, "127.0.0.1", 8766)), base_url=BASE)
    assert browser.get(f"{MOUNT}/f/FEAT-001?token={TOKEN}").status_code == 200
    body = browser.get(f"{MOUNT}/f/FEAT-001/t/TASK-1").text
    forms = re.findall(r'<form[^>]*action="([^"]*)"', body)
    assert len(forms) == 3 and all(action.startswith(f"{MOUNT}/") for action in forms), forms
    paused = browser.post(f"{MOUNT}/f/FEAT-001/t/TASK-1/control", data={"control": "pause"}, headers={"origin": BASE})
    assert paused.status_code == 202 and f'href="{MOUNT}/f/FEAT-001/t/TASK-1"' in paused.text, paused.text
