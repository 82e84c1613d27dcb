"""A monorepo task is judged in its package as a one-package repo is: its new tests must be able to fail there
(issue 38 item 5: a fix in `backend/` whose added test passes on the code it started from is refused, naming the
test with its package; a real fix passes), and the package's base tests give their verdict in the clean room
(item 2: a conftest.py the task added that makes a broken function pass is refused, naming it). Real git and
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


MASK = ("import pytest\n\nimport calc.div\n\n\n@pytest.fixture(autouse=True)\ndef _fixed(monkeypatch):\n"
        "    monkeypatch.setattr(calc.div, 'div', lambda a, b: a // b)\n")


@pytest.mark.heavy
async def test_a_packages_base_tests_run_with_the_bases_test_side(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files={**FILES, "backend/tests/test_div.py": DIV_TEST.replace(
        "from calc.div import div", "import calc.div").replace("div(6, 3)", "calc.div.div(6, 3)")},
                            plan=plan(task("TASK-001")))
    masked = await judged(repo, {"backend/calc/div.py": "def div(a, b):\n    return a * b\n",
                                 "backend/tests/conftest.py": MASK}, kind="chore")
    assert not masked["passed"], masked["summary"]
    assert "backend::tests.test_div::test_div" in masked["summary"], masked["summary"]
    assert "backend/tests/conftest.py" in masked["output"], masked["output"][-2000:]
