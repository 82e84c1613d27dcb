"""A base test that hangs on the task's code is a changed expectation (issue 31 item 2): the player makes `count`
loop forever and rewrites the test that calls it. The task's own run passes; the base's version of the test, run
on the task's code, never finishes, and its run is stopped by the gate's timeout. Before, a stopped overlay had no
report, so nothing was a changed expectation and the blind approval stood. Real git and pytest, through the gate
service; a timeout of a few seconds."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.cli.demo import make_sample_repo
from tests.graph.harness import judged, plan, task

FILES = {"calc/__init__.py": "", "calc/count.py": "def count(n):\n    return list(range(n))\n",
         "tests/test_count.py": ("from calc.count import count\n\n\ndef test_count():\n"
                                 "    assert count(3) == [0, 1, 2]\n"),
         "tests/test_other.py": "def test_other():\n    assert 1 + 1 == 2\n"}
LOOPS = "def count(n):\n    while True:\n        n += 1\n"
REWRITTEN = "from calc.count import count\n\n\ndef test_count():\n    assert callable(count)\n"


@pytest.mark.heavy  # waits out a gate timeout
async def test_a_base_test_that_hangs_on_the_tasks_code_is_a_changed_expectation(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=FILES, plan=plan(task("TASK-001"), verify="python -m pytest -q"))
    result = await judged(repo, {"calc/count.py": LOOPS, "tests/test_count.py": REWRITTEN}, "python -m pytest -q",
                          timeout_s=8)
    assert not result["passed"], result["summary"]
    changes = {change["test"]: change for change in result["test_changes"] or []}
    assert set(changes) == {"tests.test_count::test_count"}, result["summary"]
    assert changes["tests.test_count::test_count"]["fate"] == "changed expectation"
    assert "timed out after 8s" in changes["tests.test_count::test_count"]["detail"], result["summary"]
