"""In-process tier: the compiled feature workflow on an in-memory checkpointer, scripted agent results,
real git repos under tmp_path. No CLI, no model server: each run takes a fraction of a second."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from agents.testing.repos import git as git_in
from agents.testing.scripted_agents import ScriptedAgents
from orchestrator.facts import Acceptance, GateResult
from orchestrator.gate import GateRequest, Gates
from orchestrator.gate.service import Watch
from orchestrator.graph.workflow import build_feature_workflow
from orchestrator.repo.git import GitRepo
from orchestrator.settings import RunOptions
from tests.graph import shared_bases

CALC_CHECK = """import pathlib
import unittest

HERE = pathlib.Path(__file__).resolve().parent


class Sub(unittest.TestCase):
    if (HERE / "calc" / "sub.py").is_file():
        def test_sub(self):
            import calc.sub  # noqa: F401


if __name__ == "__main__":
    unittest.main()
"""
"""The plan's default gate, `python check.py`: a unittest run, so its tests are named on the gate's channel and
its approvals are verified. Its one test exists once calc/sub.py does: on the base it runs no test ("no tests yet":
a task's run must run one and pass it), as does a task that didn't write calc/sub.py. A base test failing by
assertion would not do: a test already failing on the base never blocks a task. Not a name detection finds
(`verify=None` repos have no test command)."""

CALC_FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "calc/__init__.py": "",
    "calc/add.py": "def add(a, b):\n    return a + b\n",
    "check.py": CALC_CHECK,
}


def task(task_id: str, *deps: str, **fields: Any) -> dict[str, Any]:
    return {"id": task_id, "name": f"Task {task_id}", "complexity": 2, "dependencies": list(deps),
            "requirements": [f"do {task_id}"], **fields}


def plan(*tasks: dict[str, Any], verify: str | None = "python check.py", **fields: Any) -> dict[str, Any]:
    data = {"id": "FEAT-001", "name": "Feature", "tasks": list(tasks), **fields}
    if verify:
        data["verify"] = verify
    return data


@dataclass
class Run:
    """One (possibly resumed) workflow run and what it produced."""

    output: dict[str, Any] | None
    events: list[dict[str, Any]]
    interrupts: list[Any]
    state: Any

    @property
    def results(self) -> dict[str, Any]:
        results: dict[str, Any] = (self.output or {}).get("results", {})
        return results

    def status(self, task_id: str) -> str:
        if task_id not in self.results:  # say what the run did instead (a run that ended unfinished, under load)
            said = [(e["event"], e.get("task"), e.get("reason") or e.get("status")) for e in self.events]
            raise AssertionError(f"{task_id} has no result (output: {self.output is not None}); events: {said}")
        return str(self.results[task_id]["status"])

    def kinds(self, task_id: str | None = None) -> list[str]:
        return [e["event"] for e in self.events if task_id is None or e.get("task") == task_id]


@dataclass
class Workflow:
    """The feature workflow bound to a repo, an agents script and one checkpointer (resumable)."""

    repo: Path
    agents: ScriptedAgents
    checkpointer: BaseCheckpointSaver[Any] = field(default_factory=InMemorySaver)
    thread: str = "FEAT-001"
    options: dict[str, Any] = field(default_factory=dict)

    async def run(self, target: str = "FEAT-001", resume: Any = None, control: Any = None, fresh_input: bool = True,
                  **options: Any) -> Run:
        graph = build_feature_workflow(self.checkpointer)
        config: Any = {"configurable": {"thread_id": self.thread}}
        context = RunOptions(agents=self.agents, **{"interactive": False, **self.options, **options})
        if resume is not None:
            graph_input: Any = Command(resume=resume)
        else:
            graph_input = {"repo": str(self.repo), "target": target} if fresh_input else None
        keys = await shared_bases.before_run(self.repo, target, {**self.options, **options}) if graph_input else None
        run = await stream_run(graph, graph_input, config, context, control)
        await shared_bases.remember(keys)
        return run


async def stream_run(graph: Any, graph_input: Any, config: Any, context: Any, control: Any = None) -> Run:
    """One invocation of the feature graph, streamed: its events, output, interrupts and final state."""
    events: list[dict[str, Any]] = []
    output = None
    async for namespace, mode, chunk in graph.astream(
        graph_input, config, context=context, durability="sync", stream_mode=["custom", "values"],
        subgraphs=True, control=control,
    ):
        if mode == "custom":
            events.append(chunk)
        elif mode == "values" and not namespace and isinstance(chunk, dict) and "results" in chunk:
            output = chunk
    state = await graph.aget_state(config, subgraphs=True)
    return Run(output, events, list(state.interrupts), state)


def unsandboxed(tmp_path: Path, monkeypatch: Any) -> None:
    """As on a machine where bubblewrap can't start a sandbox (a fake `bwrap` first on PATH that fails its probe):
    the gate and setup run unsandboxed, for gate scripts that deliberately write outside the run (a log or a flag
    file under tmp_path, another process's ref move simulated mid-gate)."""
    folder = tmp_path / "no-bwrap"
    folder.mkdir(exist_ok=True)
    fake = folder / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


async def judged(repo: Path, changed: dict[str, str | None], verify: str | None = None, *,
                 timeout_s: float = 300, kind: str | None = None, accepted: Sequence[Acceptance] = (),
                 watch: Watch | None = None, shared_base: bool = False) -> GateResult:
    """The gate's verdict (the plan's `verify`, else the detected command), as the task's turns judge, on a commit
    on the base that writes `changed`: through the gate service, the judged run always run; a task of `kind` whose
    coach `accepted` these; `watch` sees every command the gate runs. The base's run is one an earlier test of the
    session checked (tests/graph/shared_bases.py), else checked now; `shared_base`: it is the one in the repo's gate
    cache when it holds it (a copy of tests/graph/gated_base.py's), as a workflow's would be."""
    git = GitRepo(repo)
    shared = shared_base or shared_bases.folder is not None  # a base an earlier test checked (shared_bases.py)
    gates = Gates(git, GateRequest(plan_verify=verify, timeout_s=timeout_s), no_cache=not shared, watch=watch)
    base = git.rev("HEAD")
    keys = None if shared_base else await shared_bases.seed(gates, "FEAT-001", base)
    await gates.check_base("FEAT-001", base)
    await shared_bases.remember(keys)
    gates.cache = None  # what is judged runs, always
    worktree = repo / ".autobuild" / "worktrees" / "FEAT-001" / "_land"
    await git.add_detached_worktree(worktree, base)
    await gates.set_up(worktree)  # as a task's worktree is before its player writes (generated files, node_modules)
    for path, text in changed.items():
        if text is None:
            (worktree / path).unlink()
        else:
            (worktree / path).parent.mkdir(parents=True, exist_ok=True)
            (worktree / path).write_text(text)
    git_in(worktree, "add", "-A")
    git_in(worktree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a cheat")
    return (await gates.run(worktree, changed_since=base, against=base, kind=kind, accepted=accepted)).result


def built_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Any]) -> Path:
    """The folder `build` fills (a finished run's repo and checkpoints, which tests copy), built once per test
    session: under pytest-xdist each worker that runs one of a module's tests sets up its module fixture, so a
    template would be built once per worker; here the first builds it in the session's folder all workers share
    while the others wait on a lock, then they all read the same one."""
    base = factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder, done = shared / f"template-{name}", shared / f"template-{name}.built"
    with (shared / f"template-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a build that failed half-way (its test failed too)
            folder.mkdir()
            build(folder)
            done.touch()
    return folder
