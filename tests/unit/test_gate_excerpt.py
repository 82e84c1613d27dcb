"""The gate's output leads with each failing test's own lines (gate/observe/excerpt.py), on outputs captured from the
real tools (tests/fixtures/gate/): node's TAP prints a failure where it happens and ends with totals only, so the last
lines alone told a player nothing (found on commander.js: a test file that failed to load, its error 180 lines
above the end)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from orchestrator.errors import InfrastructureError
from orchestrator.gate.observe.excerpt import MAX_LINE, MOST_LINES, failure_excerpts
from orchestrator.gate.observe.observed import TAIL_MARK, unusable
from orchestrator.gate.observe.result import run_gate
from orchestrator.gate.spec import overlay
from orchestrator.gate.verdict import no_gate
from orchestrator.processes import Completed
from tests.unit.test_gate_runners import FIXTURES, seen


@pytest.mark.parametrize(("runner", "case"), [
    ("pytest", "red"), ("unittest", "red-subtests"), ("node", "red-nested"), ("node", "npm-test-red"),
    ("node", "esm-require-red"), ("jest", "red"), ("vitest", "red"), ("mocha", "red"), ("go", "red"),
    ("cargo", "red-no-fail-fast"),
])
def test_every_runners_red_run_yields_the_lines_of_a_failing_test(runner: str, case: str) -> None:
    _, failing, *_ = seen(runner, case)
    assert failing, f"{runner}/{case}: the runner names its failures"
    text = (FIXTURES / runner / case).with_suffix(".out").read_text()
    excerpt = failure_excerpts(text, failing)
    assert excerpt and len(excerpt.splitlines()) <= MOST_LINES
    leaf = failing[0].replace("::", " > ").replace(" › ", " > ").split(" > ")[-1].rsplit(".", 1)[-1]
    assert leaf in excerpt, (leaf, excerpt)


def test_a_failure_far_from_the_end_is_in_the_gates_output_and_new_failures_come_first() -> None:
    text = (FIXTURES / "node" / "esm-require-red.out").read_text()
    tail = Completed(("node", "--test"), 1, text, "").tail(30)
    assert "ReferenceError" not in tail, "the captured run's last lines are passing tests and the totals"
    _, failing, *_ = seen("node", "esm-require-red")
    assert "ReferenceError: require is not defined in ES module scope" in failure_excerpts(text, failing or [])


def test_with_many_failures_the_new_ones_are_shown_before_those_red_on_the_base() -> None:
    names = [f"test_old_{n}" for n in range(6)] + ["test_new"]
    filler = "\n".join(["PASSED tests/test_x.py::test_fine"] * 40)  # the failures lie far apart
    text = "\n".join(f"{filler}\nFAILED tests/test_x.py::{name} - assert {name}\n{filler}" for name in names)
    ids = [f"tests/test_x.py::{name}" for name in names]
    shown = failure_excerpts(text, ids, known=ids[:6])
    assert shown.index("test_new - assert") < shown.index("FAILED tests/test_x.py::test_old_0"), "the new one first"
    assert 1 < shown.count("FAILED") <= 5 and len(shown.splitlines()) <= MOST_LINES


def test_a_huge_line_is_cut_and_a_usage_line_among_the_failures_is_no_usage_error() -> None:
    text = "x" * 5_000_000 + " FAILED test_big\n" + "FAILED tests/test_x.py::test_big - boom"
    shown = failure_excerpts(text, ["tests/test_x.py::test_big"])
    assert "test_big - boom" in shown and len(shown) < 2 * MAX_LINE + 100
    run = no_gate("x") | {"command": "npm test", "exit_code": 1, "tests_passed": None, "tests_failed": None,
                          "output": f"Usage: prog [options]\n{TAIL_MARK}\nnpm ERR! Test failed."}
    assert unusable(run) is None, "commander.js prints its usage in its own tests: only the last lines count"


async def test_credentials_a_gate_prints_are_named_not_shown(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": "", "GH_TOKEN": "ghp_0123456789abcdef", "DEBUG": "1"}
    script = "import os\nprint('token', os.environ['GH_TOKEN'], 'debug', os.environ['DEBUG'])\nraise SystemExit(1)\n"
    (tmp_path / "leak.py").write_text(script)
    run = await run_gate(f"{sys.executable} leak.py", tmp_path, 60, env)
    assert "ghp_0123456789abcdef" not in run["output"] and "token $GH_TOKEN debug 1" in run["output"]


async def test_a_run_killed_by_a_signal_is_run_again_and_never_a_verdict(tmp_path: Path) -> None:
    """SIGKILL from outside (not our timeout): run again; killed every time, it is the machine's failure."""
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": ""}
    once = (f"{sys.executable} -c \"import os, pathlib, signal; p = pathlib.Path('killed'); done = p.exists();"
            " p.touch(); done or os.kill(os.getpid(), signal.SIGKILL); print('1 passed, 0 failed')\"")
    result = await run_gate(once, tmp_path, 60, env)
    assert result["exit_code"] == 0, "the second run counts"
    always = f"{sys.executable} -c \"import os, signal; os.kill(os.getpid(), signal.SIGKILL)\""
    with pytest.raises(InfrastructureError, match="killed by signal 9 3 times"):
        await run_gate(always, tmp_path, 60, env)


def test_a_changed_expectation_names_nodes_assertion_not_its_yaml_block_marker() -> None:
    """A base test's failure on the task's code, as the overlay names it (gate/spec/overlay.py): node's TAP puts the
    message below `error: |-` (captured on markdown-table, an export added and the expected list rewritten)."""
    text = (FIXTURES / "node" / "subtest-deep-equal-red.out").read_text()
    message = overlay._first_message(text, "test.js > markdownTable() > should expose the public api")
    assert message.startswith("Expected values to be strictly deep-equal: + actual - expected")
    assert "'version'" in message and "ERR_ASSERTION" not in message
