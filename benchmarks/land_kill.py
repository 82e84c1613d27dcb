"""`land` killed mid-way through a large fast-forward (issue 22 §7, the heavy case): a feature adding N files (40,000
by default) is landed on a checked-out `main`; `land` and its git are killed -9 while git writes the files into the
user's checkout; the next `land` must undo the half-done update (no stray files) and land it.

    python -m benchmarks.land_kill [N]

Prints one JSON line (files, stray files after the kill, seconds to recover and land, and whether the checkout
ended clean and landed); exit 1 when it did not.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from tests.graph.harness import CALC_FILES, Workflow, plan, task


def _build(root: Path, files: int) -> Path:
    repo = make_sample_repo(root / "repo", files=CALC_FILES, plan=plan(task("A"), verify=None))
    git(repo, "config", "user.name", "Dev")
    git(repo, "config", "user.email", "dev@example.com")
    many = {f"big/{i // 1000:03d}/f{i}.txt": f"{i}\n" for i in range(files)}

    async def run() -> None:
        async with AsyncSqliteSaver.from_conn_string(str(root / "db.sqlite")) as saver:
            await Workflow(repo, ScriptedAgents({"player": writes(many), "coach": approve()}),
                           checkpointer=saver).run(max_turns=1)

    asyncio.run(run())
    return repo


def _untracked(repo: Path) -> int:
    listed = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "--", "big"], cwd=repo,
                            capture_output=True, text=True, check=False)
    return len(listed.stdout.splitlines())


def main(files: int) -> int:
    with tempfile.TemporaryDirectory(prefix="land-kill-") as tmp:
        root = Path(tmp)
        repo = _build(root, files)
        old = git(repo, "rev-parse", "main").strip()
        command = [sys.executable, "-m", "orchestrator", "land", "FEAT-001", "--verify", "none", "--repo", str(repo),
                   "--db", str(root / "db.sqlite")]
        land = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        journal = repo / ".git" / "autobuild-land.json"
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and land.poll() is None:
            moving = journal.is_file() and '"moving"' in journal.read_text()
            if moving and (repo / "big").is_dir() and any((repo / "big").iterdir()):
                break
            time.sleep(0.01)
        family = [land.pid, *(child.pid for child in psutil.Process(land.pid).children(recursive=True))]
        for pid in family:  # the machine goes down: land and the git it started
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        land.wait()
        stray = _untracked(repo)
        moved_by_then = git(repo, "rev-parse", "main").strip() != old
        started = time.monotonic()
        again = subprocess.run(command, capture_output=True, text=True, check=False)
        took = time.monotonic() - started
        landed = git(repo, "rev-parse", "main").strip() != old
        clean = _untracked(repo) == 0 and git(repo, "status", "--porcelain", "--untracked-files=no") == ""
        print(json.dumps({"files": files, "stray_after_kill": stray, "moved_before_kill": moved_by_then,
                          "said": again.stdout.splitlines()[:4], "recover_and_land_s": round(took, 1),
                          "landed": landed, "clean": clean, "exit_code": again.returncode}))
        return 0 if landed and clean and again.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 40_000))
