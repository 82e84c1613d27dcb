"""A base whose tests never ran is no baseline: the failures of a run that are a test file failing to load
(pytest's collection errors, unittest's failed imports, a Go package that didn't build, a Rust crate that didn't
compile, a JS test file that failed to run, a ctest test whose executable was never built), and a base run that
passed no test and only shows such failures, or ran nothing while the project declares tests (a CMake build that
never ran). Such a base is refused before any session, unless a task repairs it (`repairs_base`); then no failure
is "already failing on the base": every test the gate runs must pass."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from orchestrator.facts import GateResult, Observation
from orchestrator.text import uncoloured

B = TypeVar("B", bound=Observation)

_GO_UNBUILT = re.compile(r" \[(?:build|setup) failed\]$")
_UNITTEST_IMPORT = re.compile(r"\(unittest\.loader\.(?:_FailedTest|ModuleImportFailure)\.([\w.]+)\)")
_PYTEST_COLLECTING = re.compile(r"^(?:_+ )?ERROR (?:collecting )?(\S+?\.py)(?: _+| - .*)?\s*$", re.MULTILINE)
_PYTEST_COLLECTION = re.compile(r"errors? during collection|^ImportError while importing test module", re.MULTILINE)
_CARGO_UNBUILT = re.compile(r"^error: could not compile `([^`]+)`(?: \(([^)]+)\))?", re.MULTILINE)
_CTEST_UNBUILT = re.compile(r"^\s*\d+/\d+ Test\s+#\d+: (.+?) \.+\s*\*\*\*Not Run(?! \(Disabled\))", re.MULTILINE)
_JS_FILE = re.compile(r"\.(?:[cm]?[jt]sx?)$")
_CMAKE_TESTS = re.compile(r"^\s*(?:add_test|gtest_discover_tests|gtest_add_tests|catch_discover_tests|"
                          r"doctest_discover_tests)\s*\(", re.MULTILINE | re.IGNORECASE)
WHAT_TO_SET = ("make the base's tests run: set `setup:` in the plan (or --setup CMD) to prepare each worktree"
               " (install, build, generate files), or `verify:` (or --verify CMD) to a command that builds what its"
               " tests need; or, when a task of the plan fixes this, mark it `repairs_base: true` (or pass"
               " --repair-base): then every test the gate runs must pass")


def load_errors(output: str, failing: Sequence[str] | None) -> list[str]:
    """The failures of a run (`failing`, its failing ids; its whole output) that are a test file failing to load,
    compile or build, not a test failing; a crate that didn't compile is named even when no runner named any."""
    output = uncoloured(output)
    unittest_modules = set(_UNITTEST_IMPORT.findall(output))
    collected = {path for path in _PYTEST_COLLECTING.findall(output)} if _PYTEST_COLLECTION.search(output) else set()
    modules = {path.removesuffix(".py").replace("/", ".") for path in collected}
    unbuilt = set(_CTEST_UNBUILT.findall(output)) if "nable to find executable" in output else set()
    found = [test_id for test_id in failing or []
             if _GO_UNBUILT.search(test_id) or test_id in unittest_modules or test_id in unbuilt
             or _js_file_failed(test_id)
             or ("::" not in test_id and (test_id in collected or any(
                 test_id == m or test_id.endswith("." + m) or m.endswith("." + test_id) for m in modules)))]
    found += [f"could not compile `{crate}`" + (f" ({target})" if target else "")
              for crate, target in dict.fromkeys(_CARGO_UNBUILT.findall(output))]
    return found


def _js_file_failed(test_id: str) -> bool:
    """A JS test file that failed as a whole: named by its file alone (jest's and vitest's reports), by the file
    twice (node --test's file-level test), or as jest's "Test suite failed to run"."""
    parts = test_id.split(" > ")
    if not _JS_FILE.search(parts[0]) or (len(parts) == 1 and " " in test_id):
        return False
    return len(parts) == 1 or (len(parts) == 2 and (
        parts[1] in (parts[0], "Test suite failed to run") or parts[1].endswith("/" + parts[0])))


def _declared_cmake_tests(worktree: Path) -> str | None:
    """The first CMake file of the tree that declares a test (add_test and the like), relative to it."""
    for path in sorted(worktree.rglob("CMakeLists.txt")):
        if any(part.startswith(".") or part in ("build", "_deps") for part in path.relative_to(worktree).parts[:-1]):
            continue
        try:
            if _CMAKE_TESTS.search(path.read_text(encoding="utf-8", errors="replace")):
                return str(path.relative_to(worktree))
        except OSError:
            continue
    return None


def no_baseline(base: GateResult, worktree: Path | None = None) -> str | None:
    """Why the base's run is no baseline (it passed no test, and its failures are only test files that didn't
    load, compile or build, or it ran nothing while `worktree` declares CMake tests), or None."""
    if base["passed"] or base["tests_passed"] or base["exit_code"] is None:
        return None
    errors = base.get("load_errors") or []
    failing = base["failing"]
    if errors and (failing is None or not failing or set(failing) <= set(errors)):
        shown = ", ".join(errors[:5]) + (f" and {len(errors) - 5} more" if len(errors) > 5 else "")
        return (f"no test ran on the base: every failure is a test file that could not load, compile or build"
                f" ({shown})")
    ran_none = not base["tests_failed"] and base.get("runner") is not None
    if ran_none and "ctest" in str(base.get("runner")) and worktree is not None:
        declared = _declared_cmake_tests(worktree)
        if declared is not None:
            return (f"ctest found no test on the base, but {declared} declares tests: the project was not built"
                    " (a build step the gate's command lacks)")
    return None


def refusal(cause: str) -> str:
    """The cause with what to set, as one sentence."""
    return f"{cause}; {WHAT_TO_SET}"


def baseline(base: B | None) -> B | None:
    """The base to judge a run against: None (every test must pass) when the base's run is no baseline and a task
    repairs it."""
    return None if base is not None and base.get("not_a_baseline") else base
