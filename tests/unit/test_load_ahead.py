"""A run's start-up without the Agent SDK: nothing before the first session imports it, the run command loads it on
a thread beside its start-up's waits (orchestrator/cli/prefetch.py), and the first session finds it or loads it."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from orchestrator.cli.prefetch import load_ahead

ROOT = Path(__file__).resolve().parents[2]


def test_the_run_machinery_loads_without_the_sdk() -> None:
    # A fresh process: this one has loaded the SDK already. What `run` imports before its first session: the
    # command, the graph with its nodes, the agents' roles and their protocol, the CLI's path.
    code = ("import sys, agents, orchestrator.cli.main, orchestrator.cli.run, orchestrator.graph.feature_run\n"
            "agents.ClaudeAgents, agents.run_player, agents.find_cli(None)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('claude_agent_sdk', 'mcp')))")
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120,
                           cwd=ROOT)
    assert found.stdout.strip() == "[]"


def test_the_loading_ends_by_handing_over() -> None:
    done = threading.Event()
    thread = load_ahead(then=done.set, modules=("agents.session",))
    thread.join(timeout=60)
    assert done.is_set() and "agents.session" in sys.modules


def test_a_module_that_fails_to_load_still_hands_over() -> None:
    # The first session's own import raises the error again, where the run reports it; the thread says nothing.
    called: list[str] = []
    load_ahead(then=lambda: called.append(threading.current_thread().name),
               modules=("agents.no_such_module",)).join(timeout=60)
    assert called == ["autobuild-load-ahead"]
