"""Cross-testing among a task's attempts (issue 40): one attempt's new tests run on another attempt's code.

The gate's new-tests-on-base run (gate/spec/new_tests.py) with another candidate's code for the base's: a throwaway
worktree at the other attempt's commit, the test side this attempt added or changed (its test code and test data,
as its commit has them) put in its place, and its touched test files run, restricted where the runner allows it
(gate/spec/overlay.py). A candidate whose code passes its siblings' tests behaves as they expect (CodeT's dual
agreement); one whose code fails them disagrees with what the others' tests say the task asks for. A monorepo
gated per package runs each package's share of those tests with that package's command in its folder, judged against
that package's base run; the cell is the packages' together (a failing id names its package: `backend::t::x`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from orchestrator.facts import GateResult, PackageGate
from orchestrator.gate.choose.monorepo import owner
from orchestrator.gate.observe.result import failing_on
from orchestrator.gate.spec.accounting import parse_name_status
from orchestrator.gate.spec.overlay import _restriction
from orchestrator.gate.spec.package_accounting import inside
from orchestrator.gate.spec.test_files import is_test_data, is_test_file
from orchestrator.repo.git import GitRepo

RunIn = Callable[[Path, dict[str, str]], Awaitable[GateResult]]
"""The gate's command in a worktree with extra environment (sandboxed)."""
RunPackageIn = Callable[[PackageGate, Path, dict[str, str]], Awaitable[GateResult]]
"""A monorepo package's command in its folder of a worktree, with extra environment (sandboxed)."""

PASSED, FAILED, NO_TESTS, NOT_RUN = "passed", "failed", "no tests", "not run"


@dataclass(frozen=True)
class CrossRun:
    """One cell of the cross-test matrix: the tests of one commit on the code of another."""

    outcome: str
    """passed | failed | no tests (the tests' commit added or changed none) | not run (why in `detail`)."""
    failing: tuple[str, ...] = ()
    """The tests that failed there and not on the base (ids as the runner names them)."""
    tests: tuple[str, ...] = ()
    """The test files that ran."""
    detail: str = ""


async def test_side(repo: GitRepo, base: str, commit: str) -> tuple[list[str], list[str]]:
    """The test code files `commit` added or changed since `base` (what runs), and its whole test side (those and
    its test data: what is carried onto the other code)."""
    renamed, _deleted, modified, added = parse_name_status(
        (await repo.git("diff", "--name-status", "-M", f"{base}..{commit}")).stdout)
    touched = {*added, *modified, *(new for new, similarity in renamed.values() if similarity < 100)}
    code = sorted(path for path in touched if is_test_file(path) and not is_test_data(path))
    return code, sorted(path for path in touched if is_test_file(path) or is_test_data(path))


async def cross_run(repo: GitRepo, near: Path, *, base: str, tests_from: str, code_from: str, run_in: RunIn,
                    set_up: Callable[[Path], Awaitable[object]], known: Collection[str] = ()) -> CrossRun:
    """`tests_from`'s new tests on `code_from`'s code, in a throwaway worktree beside `near` (removed after);
    `known`: the tests failing on the base already."""
    files, side = await test_side(repo, base, tests_from)
    if not files:
        return CrossRun(NO_TESTS)
    place = near.parent / f"_cross-{tests_from[:10]}-on-{code_from[:10]}"
    await repo.add_detached_worktree(place, code_from)
    try:
        await set_up(place)
        await repo.restore_paths(place, tests_from, side, detached_ok=True)
        run = await run_in(place, _restriction(files, []))
    finally:
        await repo.remove_worktree(place)
    return judged(run, files, known)


async def cross_run_packages(repo: GitRepo, near: Path, *, base: str, tests_from: str, code_from: str,
                             packages: Sequence[PackageGate], run_in: RunPackageIn,
                             set_up: Callable[[Path], Awaitable[object]]) -> CrossRun:
    """`cross_run` for a monorepo gated per package: each of `tests_from`'s new test files runs in the package that
    owns it (the deepest holding it; the top's own package for a file of the top), with that package's command,
    judged against that package's base run."""
    files, side = await test_side(repo, base, tests_from)
    if not files:
        return CrossRun(NO_TESTS)
    top = next((package for package in packages if package["path"] == "."), None)
    shares = [(package, local) for package in packages if (local := [
        inner for path in files if (owner(list(packages), path) or ".") == package["path"] and
        (inner := inside(package["path"], path)) is not None])]
    unowned = sorted(path for path in files if owner(list(packages), path) is None and top is None)
    place = near.parent / f"_cross-{tests_from[:10]}-on-{code_from[:10]}"
    await repo.add_detached_worktree(place, code_from)
    try:
        await set_up(place)
        await repo.restore_paths(place, tests_from, side, detached_ok=True)
        cells = [(package["path"], judged(await run_in(package, place, _restriction(local, [])), local,
                                          failing_on(package["base"]))) for package, local in shares]
    finally:
        await repo.remove_worktree(place)
    return _together(cells, unowned)


def _together(cells: Sequence[tuple[str, CrossRun]], unowned: Sequence[str]) -> CrossRun:
    """The packages' cells as one: failed if one failed, else not run if one did not run (or a test file no
    package runs), else passed."""
    def named(path: str, ids: Sequence[str]) -> tuple[str, ...]:
        return tuple(ids) if path == "." else tuple(f"{path}::{test}" for test in ids)

    tests = tuple(test for path, cell in cells for test in named(path, cell.tests))
    detail = "; ".join([*(f"{path}: {cell.detail}" for path, cell in cells),
                        *([f"no package runs {', '.join(unowned)}"] if unowned else [])])
    failing = tuple(test for path, cell in cells for test in named(path, cell.failing))
    if any(cell.outcome == FAILED for _, cell in cells):
        return CrossRun(FAILED, failing, tests, detail)
    if unowned or any(cell.outcome == NOT_RUN for _, cell in cells):
        return CrossRun(NOT_RUN, (), tests, detail)
    return CrossRun(PASSED, (), tests, detail)


def judged(run: GateResult, files: list[str], known: Collection[str] = ()) -> CrossRun:
    """A cross run's cell: failed when a test failed there that did not on the base, or the command failed naming
    no test (a test file that can't load on that code); not run when it never finished."""
    if run["exit_code"] is None:
        return CrossRun(NOT_RUN, tests=tuple(files), detail=run["summary"])
    failing = tuple(test for test in run["failing"] or [] if test not in known)
    if failing or (run["exit_code"] != 0 and not run["failing"]):
        return CrossRun(FAILED, failing, tuple(files), run["summary"])
    return CrossRun(PASSED, (), tuple(files), run["summary"])
