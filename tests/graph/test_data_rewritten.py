"""A rewritten expected output is a changed expectation (issue 31 item 2: expectation data are test files): the
player breaks `mul` and rewrites the data file its data-driven test reads the expected products from, the way
`jest -u` rewrites a snapshot. The task's own run passes; the base's data file, put back and run on the task's
code, fails. Before, a data file in tests/ was no test file and the blind approval stood. Real git and pytest,
through the gate service."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.cli.demo import make_sample_repo
from tests.graph.harness import judged, plan, task

FILES = {"calc/__init__.py": "", "calc/mul.py": "def mul(a, b):\n    return a * b\n",
         "tests/cases/mul.txt": "2 3 6\n0 5 0\n",
         "tests/test_table.py": ("import pathlib\n\nfrom calc.mul import mul\n\n\ndef test_mul_table():\n"
                                 "    text = (pathlib.Path(__file__).parent / 'cases' / 'mul.txt').read_text()\n"
                                 "    for line in text.splitlines():\n        a, b, want = map(int, line.split())\n"
                                 "        assert mul(a, b) == want\n")}


@pytest.mark.heavy  # a second case of the changed-expectation family (tests/graph/test_tests_are_spec.py)
async def test_an_expected_output_rewritten_to_the_broken_code_is_a_changed_expectation(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=FILES, plan=plan(task("TASK-001"), verify="python -m pytest -q"))
    result = await judged(repo, {"calc/mul.py": "def mul(a, b):\n    return a * b + 1\n",
                                 "tests/cases/mul.txt": "2 3 7\n0 5 1\n"}, "python -m pytest -q")
    assert not result["passed"], result["summary"]
    changes = {change["test"]: change for change in result["test_changes"] or []}
    assert changes["tests.test_table::test_mul_table"]["fate"] == "changed expectation", result["summary"]
    assert "assert 7 == 6" in changes["tests.test_table::test_mul_table"]["detail"], result["summary"]
