"""Several attempts per task, time and money (issue 40), in-process: the demo plan's tasks (a gate command that
passes, real git and SQLite: what is timed is the attempts, not pytest) with scripted sessions of a fixed latency,
policy `first` with 3 attempts against 1; and a task whose first attempt keeps being sent back while a sibling's is
approved at once, against the same task run as one attempt.

Money is what the sessions would be billed: every session started, finished or cancelled, at its scripted price.
A sibling attempt's sessions read the prompt prefix the first attempt's wrote (system prompt, tools, the task's
brief: the same words) from the prompt cache, as the API bills a cache read: `PREFIX_SHARE` of a session's input at
a tenth of the price. The figures are the policy's and the accounting's, not a model's: see docs/benchmarks.md.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents.testing.repos import DEMO_PLAN, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, feedback
from orchestrator.graph.workflow import build_feature_workflow
from orchestrator.settings import RunOptions

PLAN = {**DEMO_PLAN, "verify": "python -m pytest -q"}
"""The demo plan, gated by its tests (a verified approval, as the first policy needs: a gate that runs no test, such
as `python -c pass`, approves unverified, and `first` then waits for every sibling)."""
LATENCY_S = 2.0
"""Each scripted session's length."""
SESSION_USD = 0.10
"""A session at full price (no cache read)."""
PREFIX_TOKENS = 6000
SESSION_TOKENS = 10000
PREFIX_SHARE = PREFIX_TOKENS / SESSION_TOKENS
"""The share of a session's input that is the prompt prefix sibling attempts have in common."""
CACHE_READ_PRICE = 0.1
"""A cache read's price against a fresh input token's (the API's)."""

WORK = {
    "TASK-001": {"calc/subtract.py": "def subtract(a, b):\n    return a - b\n",
                 "tests/test_subtract.py": "from calc.subtract import subtract\n\n\ndef test_subtract():\n"
                                           "    assert subtract(5, 3) == 2\n"},
    "TASK-003": {"calc/multiply.py": "def multiply(a, b):\n    return a * b\n",
                 "tests/test_multiply.py": "from calc.multiply import multiply\n\n\ndef test_multiply():\n"
                                           "    assert multiply(4, 3) == 12\n"},
    "TASK-002": {"calc/divide.py": "def divide(a, b):\n    if b == 0:\n        raise ZeroDivisionError('b is 0')\n"
                                   "    return a / b\n",
                 "tests/test_divide.py": "from calc.divide import divide\n\n\ndef test_divide():\n"
                                         "    assert divide(7, 2) == 3.5\n"},
    "TASK-004": {"docs/OPERATIONS.md": "# Operations\n\nadd, subtract, multiply, divide\n"},
}


def _turn(files: dict[str, str], attempt: int, role_report: dict[str, Any] | None = None) -> Turn:
    """A session of LATENCY_S at its billed price: a sibling attempt's reads the shared prefix from the cache."""
    cached = PREFIX_TOKENS if attempt > 1 else 0
    price = SESSION_USD * (1 - (PREFIX_SHARE * (1 - CACHE_READ_PRICE) if cached else 0.0))
    report = role_report if role_report is not None else {
        "files_modified": list(files), "tests_written": [p for p in files if p.startswith("tests/")],
        "implementation_notes": "done"}
    return Turn(files=dict(files), report=report, cost_usd=round(price, 6), cache_read_tokens=cached,
                delay_s=LATENCY_S)


def _script(attempts: int, sent_back: Collection[tuple[str, int]] = ()) -> dict[Any, Any]:
    """Every attempt of every demo task writes the task's work; the coach approves, except for (task, attempt)
    in `sent_back`, which it sends back every turn."""
    script: dict[Any, Any] = {}
    for task_id, files in WORK.items():
        for attempt in range(1, attempts + 1):
            key = f"{task_id}.a{attempt}" if attempts > 1 else task_id
            script[("player", key)] = _turn(files, attempt)
            verdict = (feedback(("calc", None, "not yet")) if (task_id, attempt) in sent_back else approve()).report
            script[("coach", key)] = _turn({}, attempt, verdict)
    return script


async def _run(workdir: Path, plan: dict[str, Any], agents: ScriptedAgents, **options: Any) -> dict[str, Any]:
    repo = make_sample_repo(workdir / "repo", plan=plan)
    async with AsyncSqliteSaver.from_conn_string(str(workdir / "db.sqlite")) as saver:
        graph = build_feature_workflow(saver)
        started = time.monotonic()
        out = await graph.ainvoke({"repo": str(repo), "target": plan["id"]}, {"configurable": {"thread_id": "B"}},
                                  context=RunOptions(agents=agents, interactive=False, replan=0, **options),
                                  durability="sync")
        wall = time.monotonic() - started
    results: dict[str, Any] = out["results"]
    billed = sum(_price(call) for call in agents.calls)
    read = sum(PREFIX_TOKENS for call in agents.calls if call.attempt > 1)
    return {"wall_s": wall, "billed_usd": billed, "recorded_usd": sum(r.get("cost_usd", 0.0) for r in results.values()),
            "sessions": len(agents.calls), "cache_read_share": read / (SESSION_TOKENS * len(agents.calls)),
            "statuses": {t: r["status"] for t, r in results.items()},
            "picked": {t: r.get("picked") for t, r in results.items()}}


def _price(call: Any) -> float:
    """What the session is billed, finished or cancelled (a cancelled session's tokens were sent already)."""
    return SESSION_USD * (1 - (PREFIX_SHARE * (1 - CACHE_READ_PRICE) if call.attempt > 1 else 0.0))


def measure() -> dict[str, Any]:
    """The demo plan at `--parallel 6` with 1 attempt, then with 3 (`first`); one task whose attempt 1 is sent
    back every turn, as 1 attempt (it fails at max turns) and as 3 (a sibling is approved at once)."""
    one_task = {**PLAN, "tasks": [dict(DEMO_PLAN["tasks"][0])]}  # type: ignore[index]
    with tempfile.TemporaryDirectory(prefix="attempts-bench-") as tmp:
        base = Path(tmp)
        single = asyncio.run(_run(base / "one", PLAN, ScriptedAgents(_script(1)), parallel=6, max_turns=3))
        three = asyncio.run(_run(base / "three", PLAN, ScriptedAgents(_script(3)), parallel=6, max_turns=3,
                                 attempts=3, attempts_policy="first"))
        failing_alone = asyncio.run(_run(base / "fail-one", one_task, ScriptedAgents(
            _script(1, {("TASK-001", 1)})), parallel=3, max_turns=3))
        rescued = asyncio.run(_run(base / "fail-three", one_task, ScriptedAgents(
            _script(3, {("TASK-001", 1)})), parallel=3, max_turns=3, attempts=3, attempts_policy="first"))
    return {"one": single, "three": three, "failing_alone": failing_alone, "rescued": rescued,
            "load": os.getloadavg()[0]}


def report_lines(found: dict[str, Any]) -> list[str]:
    one, three, alone, rescued = found["one"], found["three"], found["failing_alone"], found["rescued"]
    wall, cost = three["wall_s"] / one["wall_s"], three["billed_usd"] / one["billed_usd"]
    return [
        "## Several attempts per task: time and money (issue 40; in-process, the demo plan's tasks, gated by pytest)",
        "",
        f"Scripted sessions of {LATENCY_S:.0f} s at ${SESSION_USD:.2f}; a sibling attempt's session reads the shared"
        f" prompt prefix ({PREFIX_SHARE:.0%} of its input) from the cache at {CACHE_READ_PRICE:.0%} of the price."
        " Billed: every session started, cancelled ones included; recorded: what the run's results say.",
        "",
        f"- Demo plan, `--parallel 6`, every attempt right: 1 attempt {one['wall_s']:.1f} s, {one['sessions']}"
        f" sessions, ${one['billed_usd']:.2f}; 3 attempts (`first`) {three['wall_s']:.1f} s, {three['sessions']}"
        f" sessions, ${three['billed_usd']:.2f} billed (${three['recorded_usd']:.2f} recorded), cache-read share"
        f" {three['cache_read_share']:.0%}",
        f"- Wall ratio {wall:.2f} (goal ≤ 1.15; load {found['load']:.0f} on this machine's cores: the attempts'"
        f" own git, gate and checkpoint work competes for them), cost ratio {cost:.2f} (goal ≤ 2.5); statuses with 3"
        f" attempts: {_counted(three['statuses'])}. Every attempt here takes as long as its siblings, so they reach"
        " their verdicts together and `first` cancels nothing: the cost is the cache's saving alone",
        f"- One task whose attempt 1 is sent back every turn (max turns 3): as 1 attempt {alone['wall_s']:.1f} s,"
        f" {_counted(alone['statuses'])}; as 3 attempts {rescued['wall_s']:.1f} s, {_counted(rescued['statuses'])},"
        f" picked attempt {rescued['picked'].get('TASK-001')} (one attempt's time: {LATENCY_S * 2:.0f} s of"
        f" sessions and a gate run), ${rescued['billed_usd']:.2f} billed against ${rescued['recorded_usd']:.2f}"
        " recorded (the gap: sessions the script prices apart, e.g. a selector's)",
        "",
    ]


def _counted(statuses: dict[str, str]) -> str:
    counts: dict[str, int] = {}
    for status in statuses.values():
        counts[status] = counts.get(status, 0) + 1
    return ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))


if __name__ == "__main__":
    print("\n".join(report_lines(measure())))
