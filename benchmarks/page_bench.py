"""The page under load (issue 41): a 30-task feature's page over loopback, and the live log at 50 events a second.

- Render: a 30-task feature run to its end (scripted agents; the real graph, git, gate and SQLite checkpoints; every
  fifth task takes a second turn), served by `autobuild ui` itself (its own process, uvicorn on 127.0.0.1, the
  printed token kept as a cookie); the feature page fetched `FETCHES` times in a row, each timed from the request to
  its last byte: p50 and p95 (goal < 1 s).
- Live log: events written to a task's trace by the run's own writer at 50 a second for 10 s (a thread, as a
  session's events are), read as they come by an SSE client of the task's log stream (`/f/FEAT/t/TASK/log`, what the
  page's `EventSource` reads): every event received, in order, and the lag from its write to its arrival.

    python -m benchmarks.page_bench
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, feedback, writes
from orchestrator.events import event_dict
from orchestrator.graph import runner
from orchestrator.settings import RunSettings
from orchestrator.store import traces
from tests.graph.harness import CALC_FILES, plan, task

TASKS = 30
FETCHES = 40
RATE = 50
SECONDS = 10
SUB = {"calc/sub.py": "def sub(a, b):\n    return a - b\n"}


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


async def _thirty_tasks(root: Path) -> tuple[Path, Path]:
    """A finished 30-task feature: five chains of six (each task after the one five before it)."""
    tasks = [task(f"TASK-{i:02d}", *([f"TASK-{i - 5:02d}"] if i > 5 else [])) for i in range(1, TASKS + 1)]
    repo, db = make_sample_repo(root / "repo", files=CALC_FILES, plan=plan(*tasks)), root / "db.sqlite"

    def player(data: Any) -> Turn:
        return writes({**SUB, f"calc/t{data.brief.task_id[-2:]}.py": f"T = {data.turn}\n"})

    def coach(data: Any) -> Turn:
        second = int(data.brief.task_id[-2:]) % 5 == 0 and data.turn == 1
        return feedback((f"calc/t{data.brief.task_id[-2:]}.py", 1, "again")) if second else approve()

    settings = RunSettings(repo=repo, target="FEAT-001", db=str(db), agents=ScriptedAgents(
        {"player": player, "coach": coach}), interactive=False, replan=0, parallel=4, max_turns=3)
    summary = await runner.execute(runner.prepare(settings), lambda event: None)
    assert len(summary.results) == TASKS, summary.results.keys()
    return repo, db


@contextmanager
def _page(repo: Path, db: Path) -> Iterator[tuple[httpx.Client, str]]:
    """`autobuild ui` on the repository, and a browser that opened its printed address (it holds the cookie)."""
    server = subprocess.Popen([sys.executable, "-m", "orchestrator", "ui", "--repo", str(repo), "--db", str(db)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert server.stdout is not None
        found = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=\S+", server.stdout.readline())
        assert found, "autobuild ui printed no address"
        with httpx.Client(base_url=found.group(1), follow_redirects=True, timeout=30.0) as browser:
            for _ in range(100):  # until uvicorn listens
                try:
                    browser.get(found.group(0)).raise_for_status()
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            yield browser, found.group(1)
    finally:
        server.terminate()
        server.wait(timeout=30)


def _render(browser: httpx.Client) -> list[float]:
    times = []
    for _ in range(FETCHES):
        started = time.perf_counter()
        page = browser.get("/f/FEAT-001")
        page.raise_for_status()
        times.append(time.perf_counter() - started)
        assert page.text.count('data-task="TASK-') >= TASKS
    return times


def _write_events(repo: Path, sent: dict[int, float]) -> None:
    """RATE events a second for SECONDS, each timed as written (by its sequence number), then the attempt's end."""
    start = time.perf_counter()
    for number in range(RATE * SECONDS):
        time.sleep(max(0.0, start + number / RATE - time.perf_counter()))
        sent[number] = time.perf_counter()
        traces.append(repo, "FEAT-001", "TASK-01", event_dict("tool", feature="FEAT-001", task="TASK-01",
                                                              tool="Bash", sequence=number))
    traces.append(repo, "FEAT-001", "TASK-01", event_dict("merge", feature="FEAT-001", task="TASK-01",
                                                          status="merged"))


def _follow(browser: httpx.Client, since: int, sent: dict[int, float]) -> dict[str, Any]:
    """Read the task's log stream to its end: the events' ids in order, and each one's lag after its write."""
    ids: list[int] = []
    lags: list[float] = []
    with browser.stream("GET", f"/f/FEAT-001/t/TASK-01/log?since={since}", timeout=SECONDS * 6) as stream:
        event_id = 0
        for line in stream.iter_lines():
            if line.startswith("id: "):
                event_id = int(line[4:])
            elif line.startswith("data: ") and '"sequence"' in line:
                arrived = time.perf_counter()
                ids.append(event_id)
                lags.append(arrived - sent[int(json.loads(line[6:])["sequence"])])
            elif line.startswith("event: end"):
                break
    return {"received": len(ids), "in_order": ids == sorted(set(ids)), "lags": lags}


def _live_log(browser: httpx.Client, repo: Path) -> dict[str, Any]:
    since = max((int(line.get("id") or 0) for line in traces.read(repo, "FEAT-001", "TASK-01")), default=0)
    traces.append(repo, "FEAT-001", "TASK-01", event_dict("initialize", feature="FEAT-001", task="TASK-01"))  # again
    sent: dict[int, float] = {}
    writer = threading.Thread(target=_write_events, args=(repo, sent), daemon=True)
    writer.start()  # the reader subscribes at once, as a page open on the task does
    followed = _follow(browser, since, sent)
    writer.join()
    return followed


def measure() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="page-") as tmp:
        repo, db = asyncio.run(_thirty_tasks(Path(tmp)))
        with _page(repo, db) as (browser, _):
            times = _render(browser)
            live = _live_log(browser, repo)
    lags = live["lags"] or [float("nan")]
    return {"tasks": TASKS, "fetches": FETCHES, "p50_s": round(statistics.median(times), 4),
            "p95_s": round(_percentile(times, 0.95), 4), "max_s": round(max(times), 4),
            "events": RATE * SECONDS, "rate": RATE, "received": live["received"], "in_order": live["in_order"],
            "lag_p50_s": round(statistics.median(lags), 4), "lag_p95_s": round(_percentile(lags, 0.95), 4),
            "lag_max_s": round(max(lags), 4)}


def report_lines(result: dict[str, Any]) -> list[str]:
    return [
        "## The page: a 30-task feature, the live log at 50 events/s (issue 41)",
        "",
        f"- A {result['tasks']}-task feature's page (`autobuild ui` on loopback, {result['fetches']} loads in a row,"
        f" request to last byte): p50 {result['p50_s'] * 1000:.0f} ms, p95 {result['p95_s'] * 1000:.0f} ms, max"
        f" {result['max_s'] * 1000:.0f} ms (goal < 1 s)",
        f"- The live log (`/f/FEAT/t/TASK/log`, SSE): {result['events']} events written at {result['rate']}/s,"
        f" {result['received']} received, {'in order' if result['in_order'] else 'OUT OF ORDER'}; lag from write to"
        f" arrival p50 {result['lag_p50_s'] * 1000:.0f} ms, p95 {result['lag_p95_s'] * 1000:.0f} ms, max"
        f" {result['lag_max_s'] * 1000:.0f} ms (the stream looks at the log every 0.5 s)",
        "",
    ]


if __name__ == "__main__":
    print(json.dumps(measure()))
