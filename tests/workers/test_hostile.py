"""The workers from outside, as an attacker or a clumsy caller would use them: a repository that commits a symlink
out of the clone, inputs of the wrong type or size, requests without the token. Real Postgres, Redis and
`autobuild serve` processes; each hostile run ends readable (its thread's state says why, never an HTTP 500) and
nothing is written outside the worker's clone."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from tests.conftest import CliRun, git
from tests.workers.conftest import Worker
from tests.workers.test_workers import PLAN, finished

pytestmark = [pytest.mark.workers, pytest.mark.cli]

TOKEN = "a-worker-token-of-32-characters!"


def linked_remote(tmp_path: Path, outside: Path) -> str:
    """The project, its plan and a committed symlink `docs -> outside`, pushed to a bare repository."""
    work = make_sample_repo(tmp_path / "work", plan=PLAN, venv=False)
    (work / "docs").symlink_to(outside, target_is_directory=True)
    git(work, "add", ".autobuild", "docs")
    git(work, "-c", "user.name=Me", "-c", "user.email=me@localhost", "commit", "-qm", "plan and a link")
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(origin)], check=True)
    return f"file://{origin}"


async def _state(server: str, thread_id: str) -> tuple[int, Any]:
    def get() -> tuple[int, Any]:
        try:
            with urllib.request.urlopen(f"{server}/threads/{thread_id}/state", timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(errors="replace")
    return await asyncio.to_thread(get)


async def test_hostile_runs_end_readable_and_write_nothing_outside_the_clone(
    tmp_path: Path, model_factory: Callable[..., ScriptedModel], workers: Callable[..., Worker],
    run_cli: Callable[..., CliRun],
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    url = linked_remote(tmp_path, outside)
    # As a worker beyond loopback is (tests listen on 127.0.0.1 only): a `repo` in place only below its serve dir.
    worker = workers(model_factory({"sessions": []}), ORCHESTRATOR_SERVED_REPOS_UNDER=str(tmp_path / "serve-0"))
    client = get_client(url=worker.url)
    before = len(await client.threads.search(limit=1000))
    for args in (["--base", "*"], ["--base", "autobuild/FEAT-001"], ["--repo-url", ""], ["--base=-x"]):
        refused = await asyncio.to_thread(run_cli, "submit", "FEAT-001", "--repo-url", url, "--server", worker.url,
                                          *args)
        assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    refused = await asyncio.to_thread(run_cli, "submit", "../../etc", "--repo-url", url, "--server", worker.url)
    assert refused.returncode == 2, refused.stderr
    assert len(await client.threads.search(limit=1000)) == before, "a refused submit left a thread"
    hostile: list[tuple[dict[str, Any], str, dict[str, Any] | None]] = [
        ({"repo_url": url, "target": "FEAT-001", "plan_files": {"docs/pwned.md": "pwned"}}, "resolves outside", None),
        ({"repo_url": url, "target": "FEAT-001"}, "--parallel must be between 1 and 64", {"parallel": 100000}),
        ({"repo_url": url, "target": "FEAT-001", "plan_files": {".git/hooks/post-checkout": "#!/bin/sh\n"}},
         "inside the repository's .git", None),
        ({"repo_url": 5, "target": "FEAT-001"}, "repo_url must be a string", None),
        ({"repo_url": url, "repo": "/", "target": "FEAT-001"}, "both repo and repo_url", None),
        ({"repo": "/", "target": "FEAT-001"}, "the only folder this server works on in place", None),
        ({"repo": str(tmp_path / "work"), "target": "FEAT-001"}, "the only folder this server works on in place",
         None),
        ({"repo_url": url, "target": "../x"}, "invalid target id", None),
        ({"repo_url": url, "plan_yaml": "x" * 5_000_000}, "byte limit", None),
        ({"repo_url": url, "target": "FEAT-001", "plan_files": {"big.md": "x" * 6_000_000}}, "byte limit", None),
    ]
    for graph_input, reason, context in hostile:
        thread = await client.threads.create(metadata={"feature": "FEAT-001", "repo_url": str(url)})
        await client.runs.create(thread["thread_id"], "autobuild", input=graph_input, context=context)
        await finished(worker.url, thread["thread_id"])
        code, state = await _state(worker.url, thread["thread_id"])
        assert code == 200, (graph_input.keys(), state)
        assert reason in state["values"]["refused"], state["values"]
    assert list(outside.iterdir()) == []
    for clone in (tmp_path / "ws" / "clones").glob("*"):
        assert all(name.endswith(".sample") for name in os.listdir(clone / ".git" / "hooks"))
    shown = await asyncio.to_thread(run_cli, "status", "FEAT-001", "--server", worker.url, "--json")
    assert "refused: " in json.loads(shown.stdout)["error"], shown.stdout


async def test_wrong_types_in_the_api_are_4xx_with_the_reason(
    model_factory: Callable[..., ScriptedModel], workers: Callable[..., Worker],
) -> None:
    worker = workers(model_factory({"sessions": []}))

    def post(path: str, body: object) -> tuple[int, str]:
        request = urllib.request.Request(f"{worker.url}{path}", data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read().decode(errors="replace")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(errors="replace")

    thread = json.loads(post("/threads", {})[1])["thread_id"]
    for path, body in [("/threads/search", {"limit": "many"}), (f"/threads/{thread}/runs", {"input": {}}),
                       (f"/threads/{thread}/runs", {"assistant_id": 5, "input": {}}), ("/threads", [1, 2])]:
        code, text = await asyncio.to_thread(post, path, body)
        assert 400 <= code < 500, (path, code, text)


def test_with_a_token_every_route_refuses_a_request_without_it(
    model_factory: Callable[..., ScriptedModel], workers: Callable[..., Worker],
) -> None:
    worker = workers(model_factory({"sessions": []}), ORCHESTRATOR_AUTH_TOKEN=TOKEN)
    routes = [("POST", "/threads", {}), ("POST", "/threads/search", {}), ("GET", "/threads/x/state", None),
              ("POST", "/runs/wait", {"assistant_id": "autobuild", "input": {}}), ("POST", "/runs", {}),
              ("POST", "/assistants/search", {}), ("GET", "/assistants/autobuild", None),
              ("PUT", "/store/items", {"namespace": ["x"], "key": "k", "value": {}}),
              ("GET", "/store/items?namespace=x&key=k", None), ("POST", "/runs/crons/search", {}),
              ("GET", "/docs", None), ("GET", "/openapi.json", None),
              ("GET", "/autobuild/threads/x/questions", None)]
    answered = {}
    for method, path, body in routes:
        request = urllib.request.Request(f"{worker.url}{path}", method=method,
                                         data=None if body is None else json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                answered[f"{method} {path}"] = response.status
        except urllib.error.HTTPError as exc:
            answered[f"{method} {path}"] = exc.code
    # The API's description is not served at all with a token (404), the rest is refused.
    served = {route: code for route, code in answered.items()
              if code not in (401, 403) and not (code == 404 and route.endswith(("/docs", "/openapi.json")))}
    assert served == {}
