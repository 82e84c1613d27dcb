"""A monorepo task's new tests are judged in their package (issue 38 item 5): a fix in `backend/` whose added test
passes on the code it started from is refused, naming the test with its package; a real fix passes. Real git and
pytest, each package run in its folder, through the gate service as the coach's turn calls it."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.cli.demo import make_sample_repo
from tests.graph.harness import judged, plan, task

PACKAGE = "[project]\nname = '{name}'\nversion = '0.1'\n[tool.pytest.ini_options]\npythonpath = ['.']\n"
DIV_TEST = "from calc.div import div\n\n\ndef test_div():\n    assert div(6, 3) == 2\n"
FILES = {"backend/pyproject.toml": PACKAGE.format(name="backend"), "backend/calc/__init__.py": "",
         "backend/calc/div.py": "def div(a, b):\n    return a // b\n", "backend/tests/test_div.py": DIV_TEST,
         "frontend/pyproject.toml": PACKAGE.format(name="frontend"), "frontend/web/__init__.py": "",
         "frontend/web/page.py": "TITLE = 'shop'\n",
         "frontend/tests/test_page.py": "from web.page import TITLE\n\n\ndef test_title():\n    assert TITLE\n"}
FIXED = "def div(a, b):\n    if b == 0:\n        return None\n    return a // b\n"
ZERO_TEST = DIV_TEST + "\n\ndef test_div_by_zero():\n    assert div(1, 0) is None\n"
WEAK_TEST = DIV_TEST + "\n\ndef test_div_again():\n    assert div(8, 2) == 4\n"


@pytest.mark.heavy
async def test_a_packages_fix_whose_new_test_passes_on_the_old_code_is_refused(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=FILES, plan=plan(task("TASK-001")))
    weak = await judged(repo, {"backend/calc/div.py": FIXED, "backend/tests/test_div.py": WEAK_TEST}, kind="fix")
    assert "backend" in weak["summary"] and "frontend" in weak["summary"], "judged per package"
    assert not weak["passed"], weak["summary"]
    assert "none of the 1 test(s) the fix added or changed fails on the code it started from" in weak["summary"]
    assert "backend::tests.test_div::test_div_again" in weak["summary"]
    real = await judged(repo, {"backend/calc/div.py": FIXED, "backend/tests/test_div.py": ZERO_TEST}, kind="fix")
    assert real["passed"], real["summary"]
