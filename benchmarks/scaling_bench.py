"""Issue 23's capacity on paper, the measurable part: RSS of one Claude Code CLI session (the bundled CLI against
the scripted model, waiting on the model and in the middle of a Bash tool call), and the checkpoint writes one run
makes on the Postgres store (rows and transactions per task and per agent turn).

`python -m benchmarks.scaling_bench` prints the numbers; docs/scaling.md quotes them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agents import sandbox as agent_sandbox
from agents.cli_binary import bundled_cli
from agents.testing.repos import make_sample_repo, scripted_env
from agents.testing.scripted_model import ScriptedModel
from benchmarks.overhead_bench import FILES, TASKS, plan, scenario

WAIT_S = 3.0


def _tree(root: int) -> list[int]:
    """`root` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def _rss_mib(pid: int) -> float:
    try:
        status = (Path("/proc") / str(pid) / "status").read_text()
    except OSError:
        return 0.0
    return next((int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith("VmRSS:")), 0.0)


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def cli_rss(workdir: Path) -> dict[str, float]:
    """One session of the bundled CLI with AutoBuild's Bash sandbox settings: its process tree's RSS while it
    waits WAIT_S for a model response (idle), and while a Bash tool call runs (`python3` sleeping WAIT_S)."""
    cwd = workdir / "session"
    cwd.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(cwd)], check=True)
    sleeper = f"python3 -c 'import time; time.sleep({WAIT_S})'"
    steps = [{"text": "thinking", "bash": sleeper, "delay": WAIT_S},
             {"text": "done"}]
    settings = json.dumps({"sandbox": agent_sandbox.settings(cwd, ())})
    with ScriptedModel({"sessions": [{"role": "player", "steps": steps}]}) as model:
        env = scripted_env(model.base_url, workdir) | {"IS_SANDBOX": "1", "CLAUDE_CODE_MAX_RETRIES": "0",
                                                       "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
        proc = subprocess.Popen(
            [str(bundled_cli()), "-p", "work", "--output-format", "json", "--permission-mode", "bypassPermissions",
             "--model", "claude-sonnet-4-5", "--settings", settings,
             "--append-system-prompt", "AutoBuild session: role=player task=T turn=1"],
            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        idle = tool = cli_alone = 0.0
        processes = 0
        started = time.monotonic()
        while proc.poll() is None:
            pids = _tree(proc.pid)
            total = sum(_rss_mib(pid) for pid in pids)
            if any("time.sleep" in _cmdline(pid) for pid in pids[1:]):
                tool, processes = max(tool, total), max(processes, len(pids))
            elif not model.requests and time.monotonic() - started > WAIT_S / 2:  # the first response is pending
                idle, cli_alone = max(idle, total), max(cli_alone, _rss_mib(proc.pid))
            time.sleep(0.1)
        out, err = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"the CLI session failed (exit {proc.returncode}): {err[-1000:]!r}{out[-1000:]!r}")
    return {"idle": idle, "idle_cli": cli_alone, "tool": tool, "tool_processes": processes}


def _pg_numbers(url: str) -> dict[str, int]:
    import psycopg  # noqa: PLC0415 - the postgres extra, only for this measurement

    with psycopg.connect(url, autocommit=True) as conn:
        stats = conn.execute("SELECT xact_commit, tup_inserted, tup_updated, tup_deleted FROM pg_stat_database"
                             " WHERE datname = current_database()").fetchone()
        assert stats is not None
        found = dict(zip(("commits", "inserted", "updated", "deleted"), (int(v) for v in stats), strict=True))
        for table in ("checkpoints", "checkpoint_writes", "checkpoint_blobs"):
            exists = conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()
            row = conn.execute(f"SELECT count(*) FROM {table}").fetchone() if exists and exists[0] else (0,)
            found[table] = int(row[0]) if row else 0
        return found


def postgres_writes(workdir: Path, parallel: int = 8) -> dict[str, Any]:
    """The 8-task plan (no gate) through `autobuild run --db postgresql://…` with the real CLI: what the run
    wrote to Postgres, from the tables and from the server's own counters (before and after)."""
    from tests.postgres import postgres_server  # noqa: PLC0415 - the throwaway server the tests use

    repo = make_sample_repo(workdir / "repo", files=FILES, plan=plan(None), venv=False)
    with postgres_server() as url, ScriptedModel(scenario()) as model:
        before = _pg_numbers(url)
        proc = subprocess.run(
            [sys.executable, "-m", "orchestrator", "run", "FEAT-001", "--repo", str(repo), "--db", url, "--json",
             "--parallel", str(parallel), "--verify", "none"],
            env=scripted_env(model.base_url, workdir), capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise SystemExit(f"the Postgres run failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
        time.sleep(1.5)  # the server's cumulative statistics are flushed about once a second
        after = _pg_numbers(url)
    summary = json.loads(proc.stdout.splitlines()[-1])
    turns = sum(int(r.get("turns", 0)) for r in summary["results"].values())
    delta = {key: after[key] - before[key] for key in after}
    return {"tasks": TASKS, "turns": turns, "parallel": parallel, **delta}


def measure() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        load = os.getloadavg()[0]
        rss = cli_rss(base / "rss")
        pg = postgres_writes(base / "pg")
    return {"rss": rss, "postgres": pg, "load": load}


if __name__ == "__main__":
    print(json.dumps(measure(), indent=2))
