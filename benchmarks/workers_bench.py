"""Issue 23's bench: features per hour on two workers against one (goal ≥ 1.8x). The same plans, the scripted
model at a fixed 2 s per response and one run per worker, so the work is wait-bound as real sessions are.

Structure only where the workers are concerned: the worker start command, its environment and how a finished
run is recognised are the three plug points below (WORKER_COMMAND, worker_env, finished), written against
`autobuild serve` / `submit` / `status --server` as issue 23 specifies them. Until `serve` exists, measure()
returns why it could not run and `make bench` prints that instead of a number.

`python -m benchmarks.workers_bench` prints the numbers."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agents.testing.repos import git, make_sample_repo, scripted_env
from agents.testing.scripted_model import ScriptedModel

LATENCY_S = 2.0
FEATURES = 4
"""Features submitted per configuration; each is a chain of two one-turn tasks in its own repository."""
FILES = {".gitignore": "__pycache__/\n", "README.md": "bench\n"}
WORKER_COMMAND = [sys.executable, "-m", "orchestrator", "serve"]
"""Plug point 1: how one worker starts (its port comes in PORT; see worker_env)."""
RUN_TIMEOUT_S = 1800.0


def worker_env(base: dict[str, str], *, port: int, n: int, database_url: str, redis_url: str,
               workdir: Path) -> dict[str, str]:
    """Plug point 2: one worker's environment (issue 23: DATABASE_URL, REDIS_URL, PORT, ORCHESTRATOR_WORKSPACE,
    and one setting for its concurrent runs: here one run per worker)."""
    return base | {"DATABASE_URL": database_url, "REDIS_URL": redis_url, "PORT": str(port),
                   "ORCHESTRATOR_WORKER_RUNS": "1", "ORCHESTRATOR_SERVE_DIR": str(workdir / f"serve-{n}"),
                   "ORCHESTRATOR_WORKSPACE": str(workdir / f"workspace-{n}"), "LANGSMITH_TRACING": "false"}


def finished(status: dict[str, Any]) -> bool:
    """Plug point 3: whether `status FEAT --server URL --repo-url URL --json` shows the feature's run over: its
    thread idle with every task's result, or in error (a failed run is over too; measure() refuses to count it)."""
    if status.get("status") == "error" or "exit" in status:
        return True
    return status.get("status") == "idle" and bool(status.get("results"))


def succeeded(status: dict[str, Any]) -> bool:
    """Every task approved (unverified: the bench's repositories have no tests, so no gate runs)."""
    return status.get("status") == "idle" and bool(status.get("results")) and all(
        str(result).startswith("approved") for result in status["results"].values())


def plan(feature: str) -> dict[str, Any]:
    return {"id": feature, "name": feature, "tasks": [
        {"id": "TASK-1", "name": "one", "complexity": 1, "dependencies": []},
        {"id": "TASK-2", "name": "two", "complexity": 1, "dependencies": ["TASK-1"]}]}


def scenario() -> dict[str, Any]:
    """Each task's player writes a file of its own (the same write twice would be no change, and a failed task);
    one coach script serves both."""
    players = [{"role": "player", "task": task, "steps": [
        {"write": {"path": f"out/{task}.txt", "content": "x\n"}, "delay": LATENCY_S},
        {"tool": {"name": "report_progress", "input": {"files_modified": [f"out/{task}.txt"],
                                                       "implementation_notes": "x"}}, "delay": LATENCY_S},
        {"text": "done", "delay": LATENCY_S}]} for task in ("TASK-1", "TASK-2")]
    return {"sessions": [*players,
        {"role": "coach", "steps": [
            {"tool": {"name": "record_decision", "input": {"decision": "approve", "rationale": "ok"}},
             "delay": LATENCY_S},
            {"text": "ok", "delay": LATENCY_S}]}]}


def unavailable() -> str | None:
    """Why the bench can't run here, or None."""
    if subprocess.run([*WORKER_COMMAND, "--help"], capture_output=True, check=False).returncode != 0:
        return "`autobuild serve` is not available in this build (issue 23's workers)"
    if shutil.which("redis-server") is None:
        return "redis-server is missing (issue 23's `make install` installs it)"
    return None


def _free_port() -> int:
    import socket  # noqa: PLC0415

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _redis() -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen([str(shutil.which("redis-server")), "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@contextmanager
def _workers(count: int, env: dict[str, str], workdir: Path) -> Iterator[list[str]]:
    """`count` workers started, each answering GET /ok; stopped (their process groups) at the end."""
    procs: list[subprocess.Popen[bytes]] = []
    urls: list[str] = []
    try:
        for n in range(count):
            port = _free_port()
            log = (workdir / f"worker-{n}.log").open("wb")
            procs.append(subprocess.Popen(WORKER_COMMAND, cwd=workdir, stdout=log, stderr=subprocess.STDOUT,
                                          start_new_session=True,
                                          env=worker_env(env, port=port, n=n, database_url=env["DATABASE_URL"],
                                                         redis_url=env["REDIS_URL"], workdir=workdir)))
            urls.append(f"http://127.0.0.1:{port}")
            _wait_ok(urls[-1], procs[-1], workdir / f"worker-{n}.log")  # one at a time, as the tests start them
        yield urls
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()


def _wait_ok(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"a worker exited ({proc.returncode}) before answering {url}/ok:\n"
                             + log.read_text(errors="replace")[-2000:])
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"no worker answered {url}/ok within {timeout:.0f} s")


def _cli(env: dict[str, str], *args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "orchestrator", *args, "--json"], env=env, capture_output=True,
                          text=True, check=False)
    try:
        found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        found = {"error": done.stderr[-500:], "exit": done.returncode}
    return found


def features_per_hour(workdir: Path, workers: int, database_url: str, redis_url: str) -> float:
    """FEATURES features (each in its own bare repository, by file:// URL) submitted at once to `workers` workers;
    features per hour from the first submission to the last finished run."""
    repos = []
    for i in range(FEATURES):
        feature = f"FEAT-{i + 1:03d}"
        source = make_sample_repo(workdir / f"src-{i}", files=FILES, plan=plan(feature), venv=False)
        git(source, "add", "-A")
        git(source, "-c", "user.name=Bench", "-c", "user.email=bench@localhost", "commit", "-q", "-m", "plan")
        bare = workdir / f"remote-{i}.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(source), str(bare)], check=True)
        repos.append((feature, f"file://{bare}"))
    with ScriptedModel(scenario()) as model:
        env = scripted_env(model.base_url, workdir) | {"DATABASE_URL": database_url, "REDIS_URL": redis_url}
        with _workers(workers, env, workdir) as urls:
            started = time.monotonic()
            for n, (feature, url) in enumerate(repos):
                _cli(env, "submit", feature, "--repo-url", url, "--server", urls[n % len(urls)])
            waiting = dict(repos)
            while waiting:
                if time.monotonic() - started > RUN_TIMEOUT_S:
                    raise SystemExit(f"runs not finished after {RUN_TIMEOUT_S:.0f} s: {sorted(waiting)}")
                for feature, url in list(waiting.items()):
                    status = _cli(env, "status", feature, "--server", urls[0], "--repo-url", url)
                    if finished(status):
                        if not succeeded(status):
                            raise SystemExit(f"{feature} did not finish approved: {status}")
                        del waiting[feature]
                time.sleep(1.0)
            elapsed = time.monotonic() - started
    return FEATURES / elapsed * 3600


def measure() -> dict[str, Any]:
    """Features per hour on one worker and on two (a fresh Postgres and Redis for each), or why not measured."""
    if reason := unavailable():
        return {"skipped": reason}
    from tests.postgres import postgres_server  # noqa: PLC0415 - the throwaway server the tests use

    found: dict[str, Any] = {}
    for count in (1, 2):
        with tempfile.TemporaryDirectory() as tmp, postgres_server() as database_url, _redis() as redis_url:
            found[f"workers_{count}"] = features_per_hour(Path(tmp), count, database_url, redis_url)
    found["ratio"] = found["workers_2"] / found["workers_1"]
    return found


def report_lines(found: dict[str, Any]) -> list[str]:
    head = ["## Features per hour: two workers against one (issue 23; goal ≥ 1.8x)", "",
            f"{FEATURES} features (each a chain of two one-turn tasks, its own repository by `file://` URL), submitted"
            f" at once; the scripted model answers after {LATENCY_S:.0f} s; one run per worker.", ""]
    if "skipped" in found:
        return [*head, f"- Not measured: {found['skipped']}.", ""]
    return [*head, f"- One worker: {found['workers_1']:.1f} features per hour; two: {found['workers_2']:.1f};"
            f" ratio {found['ratio']:.2f}", ""]


if __name__ == "__main__":
    print("\n".join(report_lines(measure())))
