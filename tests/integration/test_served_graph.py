"""The served graph: a langgraph-sdk client drives a real `langgraph dev` on 127.0.0.1 (without `--allow-blocking`:
its blocking-call detectors on), whose graph runs the real Claude Code CLI against the scripted model (the seam a
LangGraph server or Studio uses)."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from orchestrator.cli.main import main
from tests.conftest import cli_env, coach_from_pytest, git
from tests.integration.test_questions import asking_player

pytestmark = [pytest.mark.cli, pytest.mark.heavy]

PROJECT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[[ScriptedModel], str]]:
    started: list[subprocess.Popen[bytes]] = []

    def start(model: ScriptedModel) -> str:
        port = free_port()
        env = cli_env(model, tmp_path) | {"LANGSMITH_TRACING": "false", "LANGGRAPH_CLI_NO_ANALYTICS": "1"}
        cli = Path(sys.executable).parent / "langgraph"
        log = (tmp_path / "langgraph-dev.log").open("wb")
        # No --allow-blocking: the server's blocking-call detectors are on, and the graph must never trip them.
        command = [str(cli), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1",
                   "--port", str(port), "--config", str(PROJECT / "langgraph.json")]
        # cwd is the test's folder: `langgraph dev` keeps its in-memory state under `.langgraph_api/` there.
        proc = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        started.append(proc)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=1) as response:
                    if response.status == 200:
                        return url
            except OSError:
                time.sleep(0.3)
            assert proc.poll() is None, (tmp_path / "langgraph-dev.log").read_text()
        raise AssertionError("langgraph dev did not start: " + (tmp_path / "langgraph-dev.log").read_text())

    yield start
    for proc in started:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def writer(task: str, path: str) -> dict[str, Any]:
    return {"role": "player", "task": task, "steps": [
        {"write": {"path": path, "content": f"{task} = 1\n"}},
        {"tool": {"name": "report_progress", "input": {"files_modified": [path], "implementation_notes": "x"}}},
        {"text": "done"}]}


async def test_served_graph_runs_a_feature_and_answers_a_question(
    tmp_path: Path, model_factory: Callable[..., ScriptedModel], serve: Callable[[ScriptedModel], str]
) -> None:
    plan = {"id": "FEAT-001", "name": "Served", "verify": "python -m pytest -q", "tasks": [
        {"id": "TASK-1", "name": "one", "complexity": 2},
        {"id": "TASK-2", "name": "two", "complexity": 2, "dependencies": ["TASK-1"]}]}
    repo = make_sample_repo(tmp_path / "repo", plan=plan)
    model = model_factory({"sessions": [asking_player("TASK-1", "Which database?", "Postgres", "db.txt"),
                                        writer("TASK-2", "calc/two.py"), coach_from_pytest()]})
    client = get_client(url=serve(model))
    thread = await client.threads.create()
    await client.runs.wait(thread["thread_id"], "autobuild", input={"repo": str(repo), "target": "FEAT-001"},
                           context={"max_turns": 3})
    state: Any = await client.threads.get_state(thread["thread_id"], subgraphs=True)
    values = [i["value"] for t in state["tasks"] for i in t["interrupts"]]
    assert [v["question"] for v in values] == ["Which database?"] and values[0]["question_id"].startswith("TASK-1-")
    final: Any = await client.runs.wait(thread["thread_id"], "autobuild", command={"resume": "Postgres"})
    assert {task: result["status"] for task, result in final["results"].items()} == {
        "TASK-1": "approved", "TASK-2": "approved"}
    answered = [r for r in model.requests if r.role == "player" and r.task == "TASK-1" and r.step == 1]
    assert '"Which database?"="Postgres"' in answered[-1].tool_results[0], "the agent received the answer"
    assert git(repo, "show", "autobuild/FEAT-001:db.txt") == "Postgres\n"
    assert (repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").is_file(), "served runs write their reports too"
    assert (repo / ".autobuild/runs/FEAT-001/TASK-2/trace.jsonl").is_file()
    log = (tmp_path / "langgraph-dev.log").read_text(errors="replace")
    assert "BlockingError" not in log and "Blocking call" not in log, "the served graph blocked the event loop"


async def test_studio_sees_the_input_form_and_the_task_loop(
    model_factory: Callable[..., ScriptedModel], serve: Callable[[ScriptedModel], str]
) -> None:
    """What Studio asks a real `langgraph dev` for: each graph's schemas (its input form) and drawing (its graph
    view). The server logs a schema it can't compute and answers None for it."""
    client = get_client(url=serve(model_factory({"sessions": []})))
    assistants = {a["graph_id"]: a for a in await client.assistants.search(limit=20)}
    assert {"autobuild", "task"} <= set(assistants)
    schemas: Any = await client.assistants.get_schemas(assistants["autobuild"]["assistant_id"])
    form = schemas["input_schema"]
    fields = form["$defs"][form["$ref"].rsplit("/", 1)[-1]]["properties"] if "$ref" in form else form["properties"]
    assert {"repo", "target", "plan"} <= set(fields)
    assert schemas["output_schema"] is not None and "results" in str(schemas["output_schema"])
    assert {"parallel", "max_turns"} <= set(schemas["context_schema"]["properties"])
    drawing: Any = await client.assistants.get_graph(assistants["task"]["assistant_id"], xray=True)
    edges = {(edge["source"], edge["target"]) for edge in drawing["edges"]}
    assert {("loop:player", "loop:coach"), ("loop:coach", "loop:feedback"), ("loop:feedback", "loop:player")} <= edges
    task_form: Any = await client.assistants.get_schemas(assistants["task"]["assistant_id"])
    form = task_form["input_schema"]
    fields = form["$defs"][form["$ref"].rsplit("/", 1)[-1]]["properties"] if "$ref" in form else form["properties"]
    assert {"repo", "target", "plan"} <= set(fields)


async def test_studio_runs_the_task_graph_for_one_task_with_a_question(
    tmp_path: Path, model_factory: Callable[..., ScriptedModel], serve: Callable[[ScriptedModel], str]
) -> None:
    """`task` on its own, as Studio runs it: `{"repo", "target"}` in, the worktree made by the graph, the agent's
    question an interrupt, `Command(resume=…)` answering it, the approved work merged into the feature branch."""
    plan = {"id": "FEAT-001", "name": "Served", "verify": "python -m pytest -q", "tasks": [
        {"id": "TASK-1", "name": "one", "complexity": 2},
        {"id": "TASK-2", "name": "two", "complexity": 2, "dependencies": ["TASK-1"]}]}
    repo = make_sample_repo(tmp_path / "repo", plan=plan)
    model = model_factory({"sessions": [asking_player("TASK-1", "Which database?", "Postgres", "db.txt"),
                                        coach_from_pytest()]})
    client = get_client(url=serve(model))
    thread = await client.threads.create()
    await client.runs.wait(thread["thread_id"], "task", input={"repo": str(repo), "target": "TASK-1"},
                           context={"max_turns": 3})
    state: Any = await client.threads.get_state(thread["thread_id"], subgraphs=True)
    values = [i["value"] for t in state["tasks"] for i in t["interrupts"]]
    assert [v["question"] for v in values] == ["Which database?"], state
    assert (repo / ".autobuild/worktrees/FEAT-001/TASK-1").is_dir(), "the graph made the task's worktree"
    final: Any = await client.runs.wait(thread["thread_id"], "task", command={"resume": "Postgres"})
    assert final["task_id"] == "TASK-1" and final["result"]["status"] == "approved", final
    assert git(repo, "show", "autobuild/FEAT-001:db.txt") == "Postgres\n"
    assert (repo / ".autobuild/runs/FEAT-001/TASK-1/trace.jsonl").is_file()
    assert not any(r.task == "TASK-2" for r in model.requests), "one task only"
    log = (tmp_path / "langgraph-dev.log").read_text(errors="replace")
    assert "BlockingError" not in log and "Blocking call" not in log, "the task graph blocked the event loop"


def documented_example() -> str:
    """docs/serving.md's langgraph-sdk example, as written there."""
    text = (PROJECT / "docs/serving.md").read_text()
    return text.split("With langgraph-sdk", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]


async def test_the_serving_docs_example_makes_threads_status_server_finds(
    tmp_path: Path, model_factory: Callable[..., ScriptedModel], serve: Callable[[ScriptedModel], str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    plan = {"id": "FEAT-001", "name": "Served", "verify": "python -m pytest -q", "tasks": [
        {"id": "TASK-1", "name": "one", "complexity": 2}]}
    repo = str(make_sample_repo(tmp_path / "repo", plan=plan))
    model = model_factory({"sessions": [asking_player("TASK-1", "Which database?", "Use Postgres", "db.txt"),
                                        coach_from_pytest()]})
    url = serve(model)
    example = documented_example().replace('"http://127.0.0.1:2024"', repr(url))
    body = "".join(f"    {line}\n" for line in example.splitlines())
    namespace: dict[str, Any] = {"get_client": get_client}  # an example that leaves its import out runs too
    exec(f"async def example(repo):\n{body}", namespace)  # the docs' own example, run as written
    await namespace["example"](repo)
    for where in ([], ["--repo-url", repo]):
        code = await asyncio.to_thread(main, ["status", "FEAT-001", "--server", url, *where])  # its own loop
        out = capsys.readouterr().out
        assert code == 0 and "TASK-1: approved" in out, out
    assert git(Path(repo), "show", "autobuild/FEAT-001:db.txt") == "Use Postgres\n", "the example's answer arrived"
