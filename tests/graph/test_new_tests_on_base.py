"""A task's new tests must be able to fail (issue 38 item 5): a fix whose added test passes on the code it started
from is refused, naming the rule; a real fix passes; a refactor whose new test fails on that code is refused; the
coach's acceptance (`new-tests-on-base`) makes the refusal an unverified approval. Real git and pytest, through the
gate service as the coach's turn calls it."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.cli.demo import make_sample_repo
from orchestrator.facts import Acceptance
from tests.graph.gated_base import GatedBase, gated_base
from tests.graph.harness import judged, plan, task

VERIFY = "python -m pytest -q"
FILES = {"calc/__init__.py": "", "calc/div.py": "def div(a, b):\n    return a // b\n",
         "tests/test_div.py": "from calc.div import div\n\n\ndef test_div():\n    assert div(6, 3) == 2\n"}
FIXED = "def div(a, b):\n    if b == 0:\n        return None\n    return a // b\n"
ZERO_TEST = FILES["tests/test_div.py"] + "\n\ndef test_div_by_zero():\n    assert div(1, 0) is None\n"
WEAK_TEST = FILES["tests/test_div.py"] + "\n\ndef test_div_again():\n    assert div(8, 2) == 4\n"


def repo_at(tmp_path: Path) -> Path:
    return make_sample_repo(tmp_path / "repo", files=FILES, plan=plan(task("TASK-001"), verify=VERIFY))


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> GatedBase:
    """FILES with its base checked once: `make test`'s cases judge copies of it (tests/graph/gated_base.py)."""
    return gated_base(tmp_path_factory.mktemp("div-base"), FILES, VERIFY)


async def test_a_fix_whose_new_test_passes_on_the_old_code_is_refused(shared: GatedBase) -> None:
    repo = shared.fresh(plan(task("TASK-001"), verify=VERIFY))
    weak = await judged(repo, {"calc/div.py": FIXED, "tests/test_div.py": WEAK_TEST}, VERIFY, kind="fix",
                        shared_base=True)
    assert not weak["passed"], weak["summary"]
    assert "none of the 1 test(s) the fix added or changed fails on the code it started from" in weak["summary"]
    assert "tests.test_div::test_div_again" in weak["summary"]
    assert "new-tests-on-base" in weak["output"]
    assert weak.get("new_tests_failing_on_base") == 0  # the count the selection among attempts ranks by


# Heavy: `make test` keeps the refusal above; these are its other sides.
@pytest.mark.heavy
async def test_a_real_fix_passes_and_a_chore_is_judged_as_before(tmp_path: Path) -> None:
    repo = repo_at(tmp_path)
    real = await judged(repo, {"calc/div.py": FIXED, "tests/test_div.py": ZERO_TEST}, VERIFY, kind="fix")
    assert real["passed"], real["summary"]
    assert not real.get("unverified"), real.get("unverified")
    assert real.get("new_tests_failing_on_base") == 1
    docs = await judged(repo, {"calc/div.py": FIXED, "tests/test_div.py": WEAK_TEST}, VERIFY, kind="chore")
    assert docs["passed"], "a chore is judged as before"
    tests_only = await judged(repo, {"tests/test_div.py": WEAK_TEST}, VERIFY, kind="test")
    assert tests_only["passed"], "a test task's tests pass on the code it started from"


async def test_a_feature_that_only_adds_tests_is_refused_without_another_run(shared: GatedBase) -> None:
    """No code changed: the task's own run is its tests' run on the base's code, and they pass there."""
    repo = shared.fresh(plan(task("TASK-001"), verify=VERIFY))
    weak = await judged(repo, {"tests/test_div.py": WEAK_TEST}, VERIFY, kind="feature", shared_base=True)
    assert not weak["passed"], weak["summary"]
    assert "none of the 1 test(s) the feature added or changed fails on the code it started from" in weak["summary"]
    nothing = await judged(repo, {"tests/data.txt": "6 3 2\n"}, VERIFY, kind="fix", shared_base=True)
    assert not nothing["passed"], nothing["summary"]
    assert "the fix changed none of the product's code and added no test that passes" in nothing["summary"]


@pytest.mark.heavy
async def test_the_coachs_acceptance_leaves_the_approval_unverified(tmp_path: Path) -> None:
    repo = repo_at(tmp_path)
    accepted = [Acceptance(test="new-tests-on-base", reason="div's speed-up has no observable behaviour")]
    result = await judged(repo, {"calc/div.py": FIXED, "tests/test_div.py": WEAK_TEST}, VERIFY, kind="feature",
                          accepted=accepted)
    assert result["passed"], result["summary"]
    assert [entry for entry in result.get("unverified") or [] if "fails on the code it started from" in entry
            and "div's speed-up" in entry], result.get("unverified")


@pytest.mark.heavy
async def test_a_refactor_whose_new_test_fails_on_the_old_code_is_refused(tmp_path: Path) -> None:
    repo = repo_at(tmp_path)
    result = await judged(repo, {"calc/div.py": FIXED, "tests/test_div.py": ZERO_TEST}, VERIFY, kind="refactor")
    assert not result["passed"], result["summary"]
    assert "1 test(s) the refactor added or changed fail on the code it started from" in result["summary"]
    assert "tests.test_div::test_div_by_zero" in result["summary"]
    same = await judged(repo, {"calc/div.py": FILES["calc/div.py"].replace("a // b", "int(a / b)"),
                               "tests/test_div.py": WEAK_TEST}, VERIFY, kind="refactor")
    assert same["passed"], same["summary"]
