"""In-process graph benchmarks (scripted agent results, real git and SQLite): checkpoint bytes per step on a
200-task plan, `status` on a 1,000-task run, and makespan against the critical path with one slow branch."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, writes
from orchestrator.graph.workflow import build_feature_workflow
from orchestrator.settings import RunOptions

FILES = {".gitignore": "__pycache__/\n", "README.md": "bench\n"}


def _plan(tasks: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": "FEAT-001", "name": "Bench", "tasks": tasks}


def _task(task_id: str, *deps: str) -> dict[str, Any]:
    return {"id": task_id, "name": task_id, "complexity": 1, "dependencies": list(deps)}


async def _run(repo: Path, db: Path, agents: ScriptedAgents, parallel: int) -> float:
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        graph = build_feature_workflow(saver)
        started = time.monotonic()
        await graph.ainvoke({"repo": str(repo), "target": "FEAT-001"}, {"configurable": {"thread_id": "FEAT-001"}},
                            context=RunOptions(agents=agents, parallel=parallel, interactive=False),
                            durability="sync")
        return time.monotonic() - started


def checkpoint_growth(workdir: Path, count: int = 200) -> dict[str, float]:
    """Bytes of each task-subgraph checkpoint, early tasks against late ones, and of the root checkpoints."""
    ids = [f"T{i:04d}" for i in range(count)]
    repo = make_sample_repo(workdir / "repo", files=FILES, plan=_plan([_task(t) for t in ids]))
    agents = ScriptedAgents({("player", t): writes({f"out/{t}.txt": t}) for t in ids} | {"coach": approve()})
    elapsed = asyncio.run(_run(repo, workdir / "db.sqlite", agents, parallel=4))
    with sqlite3.connect(workdir / "db.sqlite") as conn:
        rows = conn.execute("SELECT checkpoint_ns, length(checkpoint) FROM checkpoints ORDER BY rowid").fetchall()
    namespaces: list[str] = []
    sizes: dict[str, list[int]] = {}
    for namespace, size in rows:
        if namespace and namespace not in sizes:
            namespaces.append(namespace)
        sizes.setdefault(namespace, []).append(size)
    tasks = [ns for ns in namespaces if ns]
    first, last = tasks[:10], tasks[-10:]

    def mean(group: list[str]) -> float:
        values = [size for ns in group for size in sizes[ns]]
        return sum(values) / len(values)

    return {"tasks": count, "seconds": elapsed, "first": mean(first), "last": mean(last),
            "root_checkpoints": len(sizes.get("", [])), "root_bytes": max(sizes.get("", [0]))}


def status_time(workdir: Path, count: int = 1000) -> dict[str, float]:
    """`status` (a fresh process, start-up included) on a finished run with `count` tasks."""
    ids = [f"T{i:04d}" for i in range(count)]
    # Every task after the first depends on it; the first fails at once, so the rest finish as `skipped`.
    tasks = [_task(ids[0]), *[_task(t, ids[0]) for t in ids[1:]]]
    repo = make_sample_repo(workdir / "repo", files=FILES, plan=_plan(tasks))
    agents = ScriptedAgents({"player": Turn(status="max_turns")})
    db = workdir / "db.sqlite"
    asyncio.run(_run(repo, db, agents, parallel=8))
    where = ["--repo", str(repo), "--db", str(db)]
    timed = {name: _timed([sys.executable, "-m", "orchestrator", *args]) for name, args in {
        "status": ["status", "FEAT-001", *where, "--json"],
        "help": ["--help"],
        "usage_error": ["stauts"],
        "validate": ["validate", "FEAT-001", "--repo", str(repo)],
    }.items()}
    return {"tasks": count, **{f"{name}_{which}": value for name, (best, worst) in timed.items()
                               for which, value in (("best", best), ("worst", worst))}}


def _timed(command: list[str], repeat: int = 3) -> tuple[float, float]:
    """Best and worst wall time of `repeat` fresh processes (start-up included)."""
    timings = []
    for _ in range(repeat):
        started = time.monotonic()
        subprocess.run(command, check=False, capture_output=True)
        timings.append(time.monotonic() - started)
    return min(timings), max(timings)


def makespan(workdir: Path) -> dict[str, float]:
    """A → {B slow, C}, C → D with scripted session latencies: makespan against the critical path A-B, both as
    pure session time and as the chain A → B run alone (the same per-task git, merge and checkpoint work), so
    the second ratio isolates what scheduling costs."""
    delays = {"A": 1.0, "B": 4.0, "C": 1.0, "D": 1.0}

    def run(name: str, tasks: list[dict[str, Any]]) -> float:
        repo = make_sample_repo(workdir / name / "repo", files=FILES, plan=_plan(tasks))
        agents = ScriptedAgents({("player", t["id"]): writes({f"{t['id']}.txt": t["id"]}, delay_s=delays[t["id"]])
                                 for t in tasks} | {"coach": approve()})
        return asyncio.run(_run(repo, workdir / name / "db.sqlite", agents, parallel=2))

    elapsed = run("plan", [_task("A"), _task("B", "A"), _task("C", "A"), _task("D", "C")])
    chain = run("chain", [_task("A"), _task("B", "A")])
    bound = delays["A"] + delays["B"]
    return {"makespan": elapsed, "bound": bound, "ratio": elapsed / bound, "chain": chain,
            "chain_ratio": elapsed / chain}
