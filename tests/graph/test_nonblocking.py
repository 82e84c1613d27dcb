"""The graph never blocks the event loop: a feature runs under the blocking-call detectors a LangGraph server
(`langgraph dev` without `--allow-blocking`) arms, so one run's merge or gate can't stall every other run."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph_runtime_inmem.queue import _enable_blockbuster

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from orchestrator.store import traces as trace
from tests.graph.harness import CALC_FILES, Run, Workflow, plan, task
from tests.graph.test_by_url import bare_remote, files_on, run_by_url, workspace

QUESTION = "Which database should sessions use?"


@contextmanager
def served_detectors() -> Iterator[None]:
    """The server's own detector set (langgraph-runtime-inmem's `_enable_blockbuster`, what `langgraph dev` arms
    unless told `--allow-blocking`), on for the duration. The scripted agents are the only exemption: they stand in
    for an agent's CLI process, whose file writes happen in another process, never on our loop."""
    detectors = _enable_blockbuster()
    for function in detectors.functions.values():
        function.can_block_in("agents/testing/scripted_agents.py", "_play")
    try:
        yield
    finally:
        detectors.deactivate()


async def run_detected(workflow: Workflow, **kwargs: Any) -> Run:
    with served_detectors():
        return await workflow.run(**kwargs)


async def test_a_feature_with_a_question_a_gate_and_merges_runs_under_the_servers_blocking_detectors(
    tmp_path: Path,
) -> None:
    """Two tasks (B after A), A asks a question (an interrupt, then a resume), each approval is gated by the
    plan's verify, both merge, the reports are written: a blocking call anywhere on that path raises
    `BlockingError` in the node, which the run records as a failed task (the assertions below name it)."""
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("A"), task("B", "A")))
    agents = ScriptedAgents({
        ("player", "A"): writes({"calc/sub.py": "def sub(a, b):\n    return a - b\n"}, question=QUESTION),
        ("player", "B"): writes({"calc/mul.py": "def mul(a, b):\n    return a * b\n"}),
        "coach": approve()})
    workflow = Workflow(repo, agents, options={"interactive": True})

    first = await run_detected(workflow)
    assert [i.value["question"] for i in first.interrupts] == [QUESTION], first.events[-3:]
    final = await run_detected(workflow, resume="Postgres")

    assert final.results, final.events[-5:]
    failures = {t: r.get("reason") for t, r in final.results.items() if r["status"] != "approved"}
    assert not failures, f"a blocking call (or another failure) stopped a task: {failures}"
    assert agents.prompts_of("player", "A")[-1].answers == {QUESTION: "Postgres"}
    assert "gate" in " ".join(final.kinds("A")), "the orchestrator's own gate ran"
    feature = repo / ".autobuild/runs/FEAT-001"
    assert (feature / "AUTO-RUN.md").is_file() and (feature / "B/AUTO-RUN.md").is_file()
    # Trace lines are written by a thread: once the run returns, each trace holds its task's events, in the order
    # the graph streamed them.
    for task_id in "AB":
        written = [e["event"] for e in trace.read(repo, "FEAT-001", task_id)]
        streamed = [k for k in first.kinds(task_id) + final.kinds(task_id) if k in set(written)]
        assert written == streamed and written[-1] == "merge", written


async def test_a_run_by_url_clones_pushes_and_lands_under_the_servers_blocking_detectors(
    tmp_path: Path, monkeypatch: Any,
) -> None:
    """By URL a run also clones (or fetches) the worker's copy and pushes after every node: none of it on the loop."""
    url = bare_remote(tmp_path, task("A"), task("B", "A"))
    workspace(monkeypatch, tmp_path / "worker")
    agents = ScriptedAgents({("player", "A"): writes({"calc/a.py": "A = 1\n"}),
                             ("player", "B"): writes({"calc/b.py": "B = 2\n"}), "coach": approve()})
    with served_detectors():
        run = await run_by_url(InMemorySaver(), agents, {"repo_url": url, "target": "FEAT-001"})
    failures = {t: r.get("reason") for t, r in run.results.items() if not r.get("merged")}
    assert run.results and not failures, f"a blocking call (or another failure) stopped a task: {failures}"
    assert {"calc/a.py", "calc/b.py"} <= set(files_on(url, "autobuild/FEAT-001"))
