"""Expectation data anywhere (issue 38 item 7): a file a base test reads is its data wherever it lives. A player
breaks the code and rewrites the expected output in a data folder below the top level (`pkg/tests/data/`), or in a
folder of no test name that the base's test read (`golden/out.txt`, recorded by the gate's pytest plugin): the
base's data, put back and run on the task's code, fails, and the approval is refused. Before, only a top-level
tests/ or test/ folder held data, and both blind approvals stood. An input the test hands the code under test
is the test's data too; a file the code opens from its own package is the product's: a task that changes it with
the code is judged as before. Real git, unittest and pytest, through the
gate service."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.testing.repos import make_sample_repo
from orchestrator.facts import Acceptance
from tests.graph.harness import judged, plan, task

MUL = "def mul(a, b):\n    return a * b\n"
BROKEN = "def mul(a, b):\n    return a * b + 1\n"
NESTED = {"pkg/__init__.py": "", "pkg/mul.py": MUL, "pkg/tests/__init__.py": "",
          "pkg/tests/data/expected.txt": "2 3 6\n0 5 0\n",
          "pkg/tests/test_mul.py": ("import pathlib\nimport unittest\n\nfrom pkg.mul import mul\n\n\n"
                                    "class TestMul(unittest.TestCase):\n    def test_table(self):\n"
                                    "        text = (pathlib.Path(__file__).parent / 'data' / 'expected.txt')"
                                    ".read_text()\n        for line in text.splitlines():\n"
                                    "            a, b, want = map(int, line.split())\n"
                                    "            self.assertEqual(mul(a, b), want)\n")}
GOLDEN = {"calc/__init__.py": "", "calc/mul.py": MUL, "golden/out.txt": "6\n",
          "tests/test_golden.py": ("import pathlib\n\nfrom calc.mul import mul\n\nROOT = pathlib.Path(__file__)"
                                   ".parent.parent\n\n\ndef test_golden():\n    assert str(mul(2, 3)) == "
                                   "(ROOT / 'golden' / 'out.txt').read_text().strip()\n\n\n"
                                   "def test_other():\n    assert callable(mul)\n")}


@pytest.mark.heavy
async def test_an_expected_output_rewritten_in_a_nested_data_folder_is_refused(tmp_path: Path) -> None:
    verify = "python -m unittest discover -s pkg -t ."  # no pytest plugin: the folder rule alone
    repo = make_sample_repo(tmp_path / "repo", files=NESTED, plan=plan(task("TASK-001"), verify=verify))
    result = await judged(repo, {"pkg/mul.py": BROKEN, "pkg/tests/data/expected.txt": "2 3 7\n0 5 1\n"}, verify)
    assert not result["passed"], result["summary"]
    changes = {change["test"]: change for change in result["test_changes"] or []}
    assert changes["pkg.tests.test_mul.TestMul.test_table"]["fate"] == "changed expectation", result["summary"]


@pytest.mark.heavy
async def test_a_golden_file_the_base_test_read_is_its_data_wherever_it_lives(tmp_path: Path) -> None:
    verify = "python -m pytest -q"
    repo = make_sample_repo(tmp_path / "repo", files=GOLDEN, plan=plan(task("TASK-001"), verify=verify))
    cheat = {"calc/mul.py": BROKEN, "golden/out.txt": "7\n"}
    result = await judged(repo, cheat, verify)
    assert not result["passed"], result["summary"]
    changes = {change["test"]: change for change in result["test_changes"] or []}
    assert list(changes) == ["tests.test_golden::test_golden"], result["summary"]
    assert changes["tests.test_golden::test_golden"]["fate"] == "changed expectation"
    assert "with the base's golden/out.txt, which it reads" in changes["tests.test_golden::test_golden"]["detail"]
    # The coach accepting the file accepts exactly the tests that read it (a requirement that changed the output).
    why = [Acceptance(test="golden/out.txt", reason="REQ-2: the product is one more")]
    accepted = await judged(repo, cheat, verify, accepted=why)
    assert accepted["passed"], accepted["summary"]
    other = [Acceptance(test="golden/other.txt", reason="unrelated")]
    assert not (await judged(repo, cheat, verify, accepted=other))["passed"]


@pytest.mark.heavy
async def test_a_file_the_code_under_test_opens_is_the_products_not_test_data(tmp_path: Path) -> None:
    """The code reads its factor from a file of its own; the task changes the file's format with the code. Were the
    file test data, the base's version put back under the task's code would fail to parse, and the change be
    refused."""
    verify = "python -m pytest -q"
    files = {"calc/__init__.py": "", "calc/factor.txt": "factor=1\n",
             "calc/mul.py": ("import pathlib\n\n\ndef mul(a, b):\n    text = (pathlib.Path(__file__).parent / "
                             "'factor.txt').read_text()\n    return a * b * int(text.split('=')[1])\n"),
             "tests/test_mul.py": "from calc.mul import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"}
    repo = make_sample_repo(tmp_path / "repo", files=files, plan=plan(task("TASK-001"), verify=verify))
    result = await judged(repo, {"calc/factor.txt": "factor: 1\n", "calc/mul.py": files["calc/mul.py"].replace(
        "split('=')", "split(':')")}, verify)
    assert result["passed"], result["summary"]
    assert not result.get("test_changes"), result["test_changes"]


@pytest.mark.heavy
async def test_an_input_the_test_hands_the_code_is_its_data_too(tmp_path: Path) -> None:
    """The code under test opens the input file, but the test handed it over: a file outside the code's own
    package, read during a test, is the test's. The player breaks `mul` and rewrites the input to a case the broken
    code gets right (5 * 1 + 1 == 6)."""
    verify = "python -m pytest -q"
    files = {"calc/__init__.py": "", "calc/mul.py": MUL, "golden/in.txt": "2 3\n",
             "calc/table.py": ("from calc.mul import mul\n\n\ndef products(path):\n    with open(path) as lines:\n"
                               "        return [mul(*map(int, line.split())) for line in lines]\n"),
             "tests/test_table.py": ("import pathlib\n\nfrom calc.table import products\n\n\ndef test_products():\n"
                                     "    assert products(pathlib.Path(__file__).parent.parent / 'golden' / 'in.txt')"
                                     " == [6]\n")}
    repo = make_sample_repo(tmp_path / "repo", files=files, plan=plan(task("TASK-001"), verify=verify))
    result = await judged(repo, {"calc/mul.py": BROKEN, "golden/in.txt": "5 1\n"}, verify)
    assert not result["passed"], result["summary"]
    changes = {change["test"]: change for change in result["test_changes"] or []}
    assert changes["tests.test_table::test_products"]["fate"] == "changed expectation", result["summary"]
