"""Shared fixtures: throwaway target repos, the scripted model, and running the real CLI entry point."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import time as _time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from agents.reaper import tagged_pids
from agents.testing.repos import DEMO_PLAN, make_sample_repo, scripted_env
from agents.testing.scripted_model import ScriptedModel

SECRET_KEY = "sk-ant-test-NEVER-WRITE-ME-7f3a9c"

# PYTHONDONTWRITEBYTECODE (set on CI and on our machines) also stops pytest caching the test modules it rewrites for
# its assertion messages, so each of `make test`'s workers rewrote all ~200 of them on every run (~8 CPU-s a worker,
# half its collection). In this process only: they go to __pycache__ (ignored), as `make install` compiles our own
# modules; the processes the tests start keep the variable and write nothing.
sys.dont_write_bytecode = False


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection loaded (langgraph, the SDK, every test module and the trees the code-reading tests parse) lives
    as long as the worker: frozen, the collector's full passes stop walking it again between tests, as the CLI's
    entry freezes its modules (~3% of a graph test's own CPU)."""
    gc.freeze()


def pytest_unconfigure(config: pytest.Config) -> None:
    """Thawed for the interpreter's exit: novasvg's nanobind reports its types as leaked when they are still frozen
    then (a page of warnings at the end of `make test`)."""
    gc.unfreeze()


@dataclass
class CliRun:
    """A finished `python -m orchestrator …` process."""

    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def sample_repo(tmp_path: Path) -> Path:
    return make_sample_repo(tmp_path / "repo", plan=DEMO_PLAN)


@pytest.fixture
def model_factory(tmp_path: Path) -> Iterator[Callable[[dict[str, Any]], ScriptedModel]]:
    started: list[ScriptedModel] = []

    def start(scenario: dict[str, Any]) -> ScriptedModel:
        model = ScriptedModel(scenario, tmp_path / f"model-{len(started)}.jsonl")
        model.start()
        started.append(model)
        return model

    yield start
    for model in started:
        model.stop()


def cli_env(model: ScriptedModel | None, workspace: Path) -> dict[str, str]:
    env = scripted_env(model.base_url if model else "http://127.0.0.1:9", workspace)
    env["ANTHROPIC_API_KEY"] = SECRET_KEY
    env.pop("ORCHESTRATOR_DB", None)
    # A developer's LangSmith settings would trace test runs to the internet: tests that trace set their own.
    for name in [name for name in env if name.startswith(("LANGSMITH_", "LANGCHAIN_"))]:
        del env[name]
    return env


@pytest.fixture
def run_cli(tmp_path: Path) -> Callable[..., CliRun]:
    def run(*args: str, model: ScriptedModel | None = None, timeout: float = 240, cwd: Path | None = None,
            **extra_env: str) -> CliRun:
        env = cli_env(model, tmp_path)
        env.update(extra_env)
        proc = subprocess.run(
            [sys.executable, "-m", "orchestrator", *args],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        return CliRun(proc.returncode, proc.stdout, proc.stderr)

    return run


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def approve_scenario(task: str = "TASK-001", files: dict[str, str] | None = None) -> dict[str, Any]:
    """Player writes the files and reports; the coach runs pytest and decides from its real output."""
    files = files or {"calc/subtract.py": "def subtract(a, b):\n    return a - b\n"}
    steps: list[dict[str, Any]] = [{"write": {"path": p, "content": c}} for p, c in files.items()]
    steps.append({"tool": {"name": "report_progress", "input": {
        "files_modified": list(files), "tests_written": [], "implementation_notes": "done"}}})
    steps.append({"text": "done"})
    return {"sessions": [{"role": "player", "task": task, "steps": steps}, coach_from_pytest()]}


def coach_from_pytest(task: str | None = None) -> dict[str, Any]:
    return {
        "role": "coach",
        **({"task": task} if task else {}),
        "steps": [
            {"bash": "python -m pytest -q"},
            {
                "when": {"result_matches": r"\d+ (failed|errors?)\b"},
                "then": {"tool": {"name": "record_decision", "input": {
                    "decision": "feedback", "rationale": "tests fail",
                    "feedback_items": [{"file": "calc/x.py", "line": 1, "issue": "tests fail"}]}}},
                "else": {"tool": {"name": "record_decision", "input": {
                    "decision": "approve", "rationale": "tests pass"}}},
            },
            {"text": "decided"},
        ],
    }


def one_task_plan(task_id: str = "TASK-001", **task_fields: Any) -> dict[str, Any]:
    task = {"id": task_id, "name": "Add subtract", "complexity": 2, "dependencies": [],
            "requirements": ["calc/subtract.py defines subtract"], **task_fields}
    return {"id": "FEAT-001", "name": "One task", "verify": "python -m pytest -q", "tasks": [task]}


@pytest.fixture(autouse=True)
def _no_user_db(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests never touch the developer's checkpoints/ folder, nor trace to their LangSmith, unless they ask: the
    default checkpoint DBs and quota records of every run they make, in-process or not, go to the session's own."""
    monkeypatch.delenv("ORCHESTRATOR_DB", raising=False)
    monkeypatch.setenv("ORCHESTRATOR_CHECKPOINT_DIR", str(tmp_path_factory.getbasetemp() / "default-checkpoints"))
    for name in [name for name in os.environ if name.startswith(("LANGSMITH_", "LANGCHAIN_"))]:
        monkeypatch.delenv(name)  # in-process graphs would trace to the developer's LangSmith
    os.environ.setdefault("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    # Sample repos' gates run pytest from this venv (their .venv links to it): without this each run would
    # load every plugin our dev dependencies register (seconds instead of a fraction of one).
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture(scope="session", autouse=True)
def _no_orphans_after_suite() -> Iterator[None]:
    """After the whole suite: no process of any session we started, and no zombie child, is left."""
    yield
    deadline = _time.monotonic() + 10
    leftovers: dict[int, str] = {}
    while _time.monotonic() < deadline:
        leftovers = {pid: tag for pid, tag in tagged_pids().items()
                     if tag.split(".", 1)[0] == str(os.getpid()) or not psutil.pid_exists(int(tag.split(".", 1)[0]))}
        if not leftovers:
            break
        _time.sleep(0.2)
    zombies = [child.pid for child in psutil.Process().children(recursive=True)
               if child.status() == psutil.STATUS_ZOMBIE]
    assert not leftovers, f"session processes left behind: {leftovers}"
    assert not zombies, f"zombie children: {zombies}"


@pytest.fixture
def answering_endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[ScriptedModel]:
    """A key and an endpoint that answers (`run` and `plan` check both first), for tests that start no session:
    set in this process's environment, which the CLI processes it starts inherit."""
    with ScriptedModel({"sessions": []}) as model:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", model.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET_KEY)
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
        yield model
