"""Tracing is on exactly when LangSmith itself traces: our reading of the switches agrees with langsmith's own."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest
from langsmith import utils as ls_utils

from agents.tracing import enabled

SWITCHES = ("LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGSMITH_TRACING", "LANGCHAIN_TRACING")
VALUES = (None, "", "true", "false", "True", "1")


@pytest.mark.parametrize("values", [
    *[dict(zip(SWITCHES, combo, strict=True)) for combo in itertools.product((None, "true", "false"), repeat=4)],
    *[{name: value} for name in SWITCHES for value in VALUES],
    {"LANGSMITH_TRACING": "   ", "LANGCHAIN_TRACING": "true"},
])
def test_switches_read_as_langsmith_reads_them(values: dict[str, str | None],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    for name in SWITCHES:
        monkeypatch.delenv(name, raising=False)
    for name, value in values.items():
        if value is not None:
            monkeypatch.setenv(name, value)
    # An API key, endpoint or project never turns tracing on by itself.
    monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2-test")
    monkeypatch.setenv("LANGSMITH_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("LANGSMITH_PROJECT", "autobuild")
    ls_utils.get_env_var.cache_clear()  # type: ignore[attr-defined]  # langsmith caches what it read
    try:
        assert enabled() is (ls_utils.tracing_is_enabled() is True), values
    finally:
        ls_utils.get_env_var.cache_clear()  # type: ignore[attr-defined]


def test_langsmith_is_not_imported_while_tracing_is_off() -> None:
    """A session or a command with tracing off never pays for langsmith (the integration patches the SDK)."""
    code = ("import sys, agents.tracing as a, orchestrator.cli.tracing as o\n"
            "with a.session_scope('player', 'TASK-001', 1, {}), o.traced():\n    a.instrument()\n"
            "assert 'langsmith' not in sys.modules, 'langsmith imported'\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path(__file__).parents[2]),
           "LANGSMITH_API_KEY": "lsv2-test", "LANGSMITH_ENDPOINT": "http://127.0.0.1:9"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
