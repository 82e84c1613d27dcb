"""A monorepo's cross-test cell (issue 40): its packages' runs together. One package's failure fails it, named with
its package; a package that did not finish, or a new test file no package's command runs, leaves it not run (never
passed on tests that did not run)."""

from __future__ import annotations

from orchestrator.gate.spec.cross_tests import FAILED, NOT_RUN, PASSED, CrossRun, _together


def test_the_packages_cells_together() -> None:
    passed, failed = CrossRun(PASSED, tests=("tests/test_a.py",)), CrossRun(FAILED, ("t::x",), ("tests/t.py",))
    both = _together([("backend", passed), ("tools/cli", failed)], [])
    assert (both.outcome, both.failing) == (FAILED, ("tools/cli::t::x",))
    assert both.tests == ("backend::tests/test_a.py", "tools/cli::tests/t.py")
    assert _together([("backend", passed), (".", passed)], []).outcome == PASSED
    assert _together([("backend", passed), ("web", CrossRun(NOT_RUN, detail="timed out"))], []).outcome == NOT_RUN
    alone = _together([("backend", passed)], ["scripts/test_tool.py"])
    assert alone.outcome == NOT_RUN and "no package runs scripts/test_tool.py" in alone.detail
