"""Issue 39's makespan against the critical path with the real CLI: A → {B slow, C}, C → D through `autobuild run
--parallel 2 --verify none` against the scripted model, and the bare CLI under the same Bash sandbox replaying the
critical chain's sessions (the same prompts and steps) one after another; where the time goes in both
(benchmarks/overhead_phases.py), from the run's own timeline."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from benchmarks import overhead_bench, overhead_phases, startup_cpu

SLOW_S = 4.0
"""Each of B's player responses (the other sessions' take overhead_bench.LATENCY_S)."""
SLOW = "TASK-B"


def plan_data() -> dict[str, Any]:
    def task(name: str, *deps: str) -> dict[str, Any]:
        return {"id": f"TASK-{name}", "name": f"task {name}", "complexity": 1,
                "dependencies": [f"TASK-{d}" for d in deps]}

    return {"id": "FEAT-001", "name": "Slow branch", "tasks": [task("A"), task("B", "A"), task("C", "A"),
                                                                task("D", "C")]}


def scenario_data() -> dict[str, Any]:
    """overhead_bench's sessions (a Write, report_progress, a final text; the coach approves), B's player slow."""
    latency = overhead_bench.LATENCY_S
    sessions: list[dict[str, Any]] = []
    for task in plan_data()["tasks"]:
        name, delay = task["id"], SLOW_S if task["id"] == SLOW else latency
        out = f"out/{name}.txt"
        sessions.append({"role": "player", "task": name, "steps": [
            {"write": {"path": out, "content": f"{name}\n"}, "delay": delay},
            {"tool": {"name": "report_progress", "input": {"files_modified": [out], "implementation_notes": "x"}},
             "delay": delay},
            {"text": "done", "delay": delay}]})
    sessions.append({"role": "coach", "steps": [
        {"tool": {"name": "record_decision", "input": {"decision": "approve", "rationale": "ok"}}, "delay": latency},
        {"text": "ok", "delay": latency}]})
    return {"sessions": sessions}


def measure(workdir: Path) -> dict[str, Any]:
    """The run, the bare CLI's critical chain, and both broken down by phase."""
    load = os.getloadavg()[0]
    planned, scripted = plan_data(), scenario_data()
    run = overhead_bench.run_autobuild(workdir / "autobuild", 2, plan_data=planned, scenario_data=scripted)
    timelines = overhead_phases.read_timelines(run.repo / ".autobuild" / "runs" / planned["id"], planned,
                                               run.sessions)
    chain = [t.task for t in overhead_phases.critical_chain(timelines)]
    spans: list[tuple[overhead_bench.Session, float, float]] = []
    bare, _ = overhead_bench.run_bare(workdir / "bare", 1, [s for s in run.sessions if s.task in chain],
                                      sandboxed=True, scenario_data=scripted, spans=spans)
    return {"load": load, "makespan": run.wall, "bare": bare, "ratio": run.wall / bare, "chain": chain,
            "imports": startup_cpu.measure(),
            "phases": overhead_phases.chain_phases(timelines, run.started, run.ended),
            "bare_phases": overhead_phases.bare_phases([(a, b) for _, a, b in spans], [s for s, _, _ in spans])}


def report_lines(found: dict[str, Any]) -> list[str]:
    chain = " → ".join(found["chain"])
    return [
        "## Makespan against the critical path with the real CLI (issue 39: A → {B slow, C}, C → D, `--parallel 2`;"
        " goal ≤ 1.10x)",
        "",
        f"Every response {overhead_bench.LATENCY_S:.1f} s, B's player's {SLOW_S:.1f} s; no gate. The critical path"
        f" is the bare CLI under the same Bash sandbox running the critical chain's sessions ({chain}: each"
        " player, then its coach; the prompts AutoBuild's sessions sent) one after another, with nothing between"
        f" them. Load {found['load']:.1f} (2 shared cores).",
        "",
        f"- Makespan {found['makespan']:.1f} s (process start to exit) against {found['bare']:.1f} s: ratio"
        f" {found['ratio']:.2f}",
        startup_cpu.report_line(found["imports"]),
        "",
        *overhead_phases.lines(f"Where the time goes along {chain} (the run's own timeline; phases add up to the"
                               " makespan):", found["phases"], found["bare_phases"]),
    ]
