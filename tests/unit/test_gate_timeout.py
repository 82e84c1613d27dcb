"""A run stopped by its timeout keeps what it showed: the output printed so far, and (through the gate's pytest
plugin, which interrupts pytest just before the timeout would kill it) pytest's JUnit report of the tests that
finished, so the gate names the passing ones and the feedback shows where it hung."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.cli.demo import make_sample_repo
from orchestrator.processes import run_async
from tests.graph.harness import judged, plan, task


async def test_a_timed_out_command_keeps_what_it_printed(tmp_path: Path) -> None:
    done = await run_async(["bash", "-c", "echo started; sleep 30"], tmp_path, timeout=1.0)
    assert done.timed_out and not done.ok
    assert done.stdout == "started\n"
    assert "timed out after 1s" in done.stderr


@pytest.mark.heavy  # waits out a gate timeout
async def test_a_pytest_gate_stopped_by_its_timeout_reports_the_tests_that_finished(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files={"tests/test_a.py": "def test_a():\n    assert True\n"},
                            plan=plan(task("TASK-001"), verify="python -m pytest -v"))
    result = await judged(repo, {"tests/test_b.py": "import time\n\n\ndef test_b():\n    time.sleep(60)\n"},
                          "python -m pytest -v", timeout_s=6)
    assert not result["passed"] and result["exit_code"] is None
    assert "timed out after 6s" in result["summary"], result["summary"]
    # The base's one test finished before test_b hung, and pytest's report says so (the interrupted test_b is a
    # blank <testcase/> there: not a pass).
    assert result["tests_passed"] == 1 and result["runner"] == "pytest", result["summary"]
    assert "tests/test_b.py::test_b" in result["output"], result["output"]
