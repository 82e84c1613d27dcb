"""The base's tests judge the task's code: every base test file the task changed or deleted is put back as the
base has it, in a throwaway worktree at the task's commit (never the player's), and run against the task's code.
A base test that passed on the base and fails there is a *changed expectation*; one that doesn't run there at
all (an overlay that doesn't build against an API the task changed) is one too, named with the first lines of
what the run printed. Tests inside code files (Rust `#[cfg(test)]`, doctests) can't be overlaid. Generalised, the
overlay is the clean room (gate/prepare/clean_room.py): the task's whole test side put back, every base test run."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Collection, Sequence
from pathlib import Path, PurePosixPath

from orchestrator.facts import GateResult
from orchestrator.gate.observe.failure_message import failure_message
from orchestrator.gate.observe.observed import green
from orchestrator.gate.prepare import clean_room
from orchestrator.gate.spec.accounting import file_of
from orchestrator.gate.spec.test_files import is_collected_python, is_test_data
from orchestrator.repo.git import GitRepo

RunIn = Callable[[Path, dict[str, str]], Awaitable[GateResult]]
"""Runs the gate's command in a worktree with extra environment variables (not remembered: a dirty tree)."""


def _restriction(files: Sequence[str], tests: Sequence[str]) -> dict[str, str]:
    """Where the runner allows it, only the overlaid tests run: pytest's paths, jest's and vitest's test files (a
    snapshot's included), go's `-run` with the top-level names of the base tests in those files, cargo's
    `--test <target>` for files under tests/; other runners (mocha too) run the whole command. Added to the
    environment's own."""
    python = [path for path in files if is_collected_python(path)]
    if python and len(python) == len(files):  # a helper or conftest.py among them: every test may use it
        return {"PYTEST_ADDOPTS": " ".join(python)}
    if (js := _js_tests(files)) is not None:  # jest and vitest (shim/autobuild_js_preload.cjs); mocha runs all
        return {"AUTOBUILD_JS_ONLY": "\n".join(js)}
    targets = [re.fullmatch(r"tests/(\w+)(?:\.rs|/main\.rs)", path) for path in files]
    if targets and all(targets):  # cargo's integration tests: `cargo test --test <target>` (the gate's cargo)
        names = sorted({found.group(1) for found in targets if found})
        return {"AUTOBUILD_CARGO_TEST_ARGS": " ".join(f"--test {name}" for name in names)}
    if all(path.endswith("_test.go") for path in files):
        names = sorted({test.rsplit(".", 1)[-1].split("/")[0] for test in tests})
        if names and all(re.fullmatch(r"\w+", name) for name in names):
            return {"GOFLAGS": f"-run=^({'|'.join(names)})$"}
    return {}


_JS_TEST = re.compile(r"\.(?:test|spec)\.[cm]?[jt]sx?$")


def _js_tests(files: Sequence[str]) -> list[str] | None:
    """The JS test files to run when every overlaid file is one or its snapshot; None otherwise."""
    owners = sorted(_owners(files) - {path for path in files if path.endswith(".snap")})
    if not owners or not all(_JS_TEST.search(path) for path in owners):
        return None
    return owners


def _first_message(output: str, test: str) -> str:
    """Why `test` failed, from the runner's own report of it (gate/observe/failure_message.py)."""
    return failure_message(output, test)


def _owners(files: Sequence[str]) -> set[str]:
    """The test files whose tests `files` judge: themselves, and for jest's and vitest's snapshots
    (`dir/__snapshots__/x.test.js.snap`) the test file they belong to (`dir/x.test.js`): `jest -u` on broken code
    rewrites only the snapshot."""
    owners = set(files)
    for path in files:
        posix = PurePosixPath(path)
        if posix.suffix == ".snap" and posix.parent.name == "__snapshots__":
            owners.add(str(posix.parent.parent / posix.stem))
    return owners


def judged_by(base: GateResult, files: Sequence[str], base_files: Sequence[str],
              read: Collection[str] = ()) -> list[str]:
    """The base tests (passing on the base) the base's versions of `files` judge: those in them, any Python test
    when a support module among them changed, any test when test data did (a file in a test
    folder, or one a base test `read`)."""
    # Go compiles a package's test files together: a test belongs to the overlay when its package's folder does.
    folders = {str(PurePosixPath(path).parent) for path in files if path.endswith("_test.go")}
    owners = _owners(files)
    support = any(path.endswith(".py") and not is_collected_python(path) for path in files)
    # Test data (a golden file, a data-driven test's expected output) judges whichever test reads it: all of them.
    data = any((is_test_data(path) or path in read) and not path.endswith(".snap") for path in files)
    return [test for test in base.get("passing") or [] if (file := file_of(test, base_files)) in owners
            or (file is not None and file.endswith("_test.go") and str(PurePosixPath(file).parent) in folders)
            or (support and file is not None and file.endswith(".py")) or (data and file is not None)]


async def expectations(repo: GitRepo, worktree: Path, base: GateResult, against: str, files: Sequence[str], *,
                       base_files: Sequence[str], run_in: RunIn,
                       set_up: Callable[[Path], Awaitable[object]], folder: str = ".",
                       read: Collection[str] = (), room: clean_room.Room | None = None) -> dict[str, str]:
    """Base tests (passing on the base, `judged_by` the base's versions of `files`) whose base version fails on the
    worktree's code -> why. With a non-empty clean `room` (gate/prepare/clean_room.py), every test-side file is put back
    too and every base test runs: each one that fails there twice -> why. In a monorepo package, `files`,
    `base_files` and the test ids are relative to its `folder`, and `run_in` runs the package's command in it."""
    cleaning = room is not None and not room.empty
    if cleaning and base["failing"] is None:  # a runner that names no test: the base's whole run is the one test
        return await _whole_run(repo, worktree, base, against, run_in=run_in, set_up=set_up, folder=folder,
                                room=room)
    owned = judged_by(base, files, base_files, read)
    overlaid = list(base.get("passing") or []) if cleaning else owned
    if not overlaid:
        return {}
    present = [path for path in files if path in base_files]
    run = await _overlay_run(repo, worktree, against, overlaid, run_in=run_in, set_up=set_up, folder=folder,
                             present=present, room=room if cleaning else None)
    found = _failed(run, overlaid)
    if not cleaning:
        return found
    unfinished = {test for test in found if found[test].startswith(_UNFINISHED)}
    if unfinished & set(owned):  # the run stopped in a base test the task changed: the others just didn't get to run
        found = {test: why for test, why in found.items() if test not in unfinished or test in owned}
    if found and run["exit_code"] is not None:  # a refusal to come: a flaky test must fail twice, as in the task's run
        again = await _overlay_run(repo, worktree, against, list(found), run_in=run_in, set_up=set_up,
                                   folder=folder, present=present, room=room)
        found = {test: why for test, why in found.items() if test in _failed(again, list(found))}
    return found


_UNFINISHED = "it does not finish against this code"


async def _whole_run(repo: GitRepo, worktree: Path, base: GateResult, against: str, *, run_in: RunIn,
                     set_up: Callable[[Path], Awaitable[object]], folder: str,
                     room: clean_room.Room | None) -> dict[str, str]:
    """The clean room of a command whose runner names no test (a Makefile's own harness, a script): judged by its
    exit status, as its runs are. When the base's run was green, the task's code must be green with the base's
    test side too; a failure there shows twice before it is one, as a flaky test must fail twice."""
    if not green(base) or base["command"] is None:
        return {}
    for _ in range(2):
        run = await _overlay_run(repo, worktree, against, [], run_in=run_in, set_up=set_up, folder=folder,
                                 present=[], room=room)
        if green(run):
            return {}
    lines = [line.strip() for line in run["output"].splitlines() if line.strip()][-3:]
    return {clean_room.whole_run(base["command"]): " / ".join([run["summary"], *lines])[:400]}


async def _overlay_run(repo: GitRepo, worktree: Path, against: str, overlaid: Sequence[str], *, run_in: RunIn,
                       set_up: Callable[[Path], Awaitable[object]], folder: str, present: Sequence[str],
                       room: clean_room.Room | None) -> GateResult:
    """One run in a throwaway tree at the worktree's commit with the base's `present` test files put back (and,
    in a clean room, its whole test side, before the setup runs); only the `overlaid` tests where the runner allows
it, outside a clean room."""
    place = worktree.parent / f"_overlay-{worktree.name}"
    head = await repo.head(worktree)
    await repo.add_detached_worktree(place, head)
    try:
        if room is not None:
            await clean_room.furnish(repo, place, against, room)
        await set_up(place)
        await repo.restore_paths(place, against, [path if folder == "." else f"{folder}/{path}" for path in present],
                                 detached_ok=True)
        run = await run_in(place, {} if room is not None else _restriction(present, overlaid))
    finally:
        await repo.remove_worktree(place)
    return run


def _failed(run: GateResult, overlaid: Sequence[str]) -> dict[str, str]:
    """The `overlaid` tests that did not pass in `run` -> why."""
    passing, failing = set(run.get("passing") or []), set(run["failing"] or [])
    # Timed out (a base test that hangs on this code): a test with no result did not pass, even with no report.
    stopped = run["exit_code"] is None
    found = {}
    for test in overlaid:
        if test in failing or any(other.startswith((test + " ", test + "/")) for other in failing):  # or a subtest
            found[test] = _first_message(run["output"], test)
        elif test not in passing and stopped:
            found[test] = f"{_UNFINISHED}: {run['summary']} before it passed"
        elif test not in passing and run.get("passing") is not None:
            lines = [line for line in run["output"].splitlines() if line.strip()][:3]
            found[test] = "it does not run against this code: " + (" / ".join(lines)[:300] or run["summary"])
    return found
