"""Which files are what to the gate: test code, test data, support modules, runner config; what a Python test file
defines and inherits, and which of a Go package's test files defines a test; and where an edit to runner config
can deselect tests (its first changed line)."""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Mapping
from pathlib import PurePosixPath

_TEST_FILES = ("test_*.py", "*_test.py", "tests.py", "conftest.py", "*_test.go", "*.test.[cm]js", "*.test.js",
               "*.test.ts", "*.test.jsx", "*.test.tsx", "*.test.mts", "*.test.cts", "*.spec.js", "*.spec.ts",
               "*.spec.jsx", "*.spec.tsx", "*.spec.mjs", "*.spec.cjs", "*.snap", "*.golden",
               # node --test's own defaults (many packages run a root `test.js`)
               "test.js", "test.[cm]js", "test-*.js", "test-*.[cm]js", "*-test.js", "*-test.[cm]js", "*_test.js",
               "*_test.[cm]js")
_TEST_FOLDERS = frozenset({"tests", "test", "__tests__", "__snapshots__", "testdata", "snapshots", "fixtures"})
"""Folders whose files are tests, their support and their data, at any depth (`src/pkg/tests/data/x.json`,
`packages/web/__tests__/fixtures/x.json`): a product's own modules and resources go by other names."""
_RUNNER_CONFIG = ("pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini", "noxfile.py", "conftest.py", "Makefile",
                  "package.json", "jest.config.*", "vitest.config.*", "vite.config.*", ".mocharc*", "Cargo.toml",
                  ".cargo/config.toml", ".cargo/config", "go.mod", "go.work", ".npmrc", ".yarnrc", ".yarnrc.yml",
                  "CMakeLists.txt", "*.cmake", "CTestTestfile.cmake")
_PACKAGE_JSON_RUNNER_KEYS = ("scripts", "jest", "mocha", "ava", "vitest", "c8", "nyc", "tap")
"""package.json's keys that decide which tests run; an edit elsewhere (a dependency) is no test change."""
_BUILD_CONSTRAINT = re.compile(r"^\+(//go:build |// \+build )", re.MULTILINE)
_CODE_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".go", ".rs")


def is_test_file(path: str) -> bool:
    """A file the runners collect as tests, a module that supports them, or their expectation data (snapshots,
    golden files, fixtures): any file in a test folder at any depth (cargo's and the JS runners' tests/ and test/,
    a package's own `src/pkg/tests/`, the data a test module reads from beside it)."""
    posix = PurePosixPath(path)
    if any(fnmatch.fnmatch(posix.name, pattern) for pattern in _TEST_FILES):
        return True
    return any(part in _TEST_FOLDERS for part in posix.parts[:-1])


def is_test_data(path: str) -> bool:
    """A test file that is no code: a snapshot, a golden file, a data-driven test's input or expected output."""
    return is_test_file(path) and not path.endswith(_CODE_SUFFIXES)


_COLLECTED_PYTHON = re.compile(r"^(?:test_.*|.*_test|tests)\.py$")
_DEFINED_TEST = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(test\w*)[ \t]*\(", re.MULTILINE)


def is_collected_python(path: str) -> bool:
    """A Python file pytest and unittest collect tests from; any other .py among the test files is support (a helper
    module, a mixin in tests/__init__.py, a conftest.py fixture) whose expectations reach any test."""
    return path.endswith(".py") and bool(_COLLECTED_PYTHON.match(PurePosixPath(path).name))


def test_methods(text: str) -> set[str]:
    """The names of the test functions and methods Python source defines (`def test...`), at any depth."""
    return set(_DEFINED_TEST.findall(text))


def inherited_tests(support: Mapping[str, str], collected: Mapping[str, str]) -> dict[str, str]:
    """`file::name` -> support module, for each test method a changed support module's base version (`support`:
    path -> text) defined that a collected file (`collected`: path -> its base text) doesn't define itself: a
    test it inherits. A coach accepting the module accepts them, and a test removed there is "deleted from" it."""
    defined: dict[str, str] = {}
    for path, text in sorted(support.items(), reverse=True):  # the first module by name wins
        defined.update(dict.fromkeys(test_methods(text), path))
    if not defined:
        return {}
    return {f"{path}::{name}": module for path, text in collected.items()
            for name in defined.keys() - test_methods(text) for module in [defined[name]]}


_GO_DEFINED = re.compile(r"^func[ \t]+((?:Test|Example|Fuzz)\w*)[ \t]*\(", re.MULTILINE)


def go_test_homes(texts: Mapping[str, str]) -> dict[str, str]:
    """`first::name` -> the `_test.go` file defining `name`, for each Go test defined outside the first test file of
    its folder (`first`: the file a Go test id is named by, accounting.file_of); `texts`: the base's text of every
    `_test.go` file of the folders wanted."""
    folders: dict[PurePosixPath, list[str]] = {}
    for path in sorted(texts):
        folders.setdefault(PurePosixPath(path).parent, []).append(path)
    return {f"{paths[0]}::{name}": path for paths in folders.values() for path in paths[1:]
            for name in _GO_DEFINED.findall(texts[path])}


def is_runner_config(path: str) -> bool:
    name = PurePosixPath(path).name
    return any(fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(name, pattern) for pattern in _RUNNER_CONFIG)


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)", re.MULTILINE)


def first_changed_line(patch: str) -> int:
    found = _HUNK.search(patch)
    return int(found.group(1)) if found else 1


def config_line(path: str, patch: str, base_text: str | None = None, tree_text: str | None = None) -> int | None:
    """Where an edit to `path` (its `-U0` patch) can deselect base tests: a runner config's first changed line,
    package.json's first changed runner key (None when only other keys changed), a Go test file's added build
    constraint; None when the edit can't."""
    name = PurePosixPath(path).name
    if name == "package.json":
        return _package_json_line(base_text, tree_text)
    if name.endswith("_test.go"):
        constraint = _BUILD_CONSTRAINT.search(patch)
        return _line_of(patch, constraint.start()) if constraint else None
    return first_changed_line(patch) if is_runner_config(path) else None


def _line_of(patch: str, offset: int) -> int:
    """The tree's line number of the added line at `offset` in a `-U0` patch."""
    hunks = list(_HUNK.finditer(patch, 0, offset))
    if not hunks:
        return 1
    return int(hunks[-1].group(1)) + patch[hunks[-1].end():offset].count("\n+")


def _package_json_line(base_text: str | None, tree_text: str | None) -> int | None:
    try:
        base, tree = json.loads(base_text or "{}"), json.loads(tree_text or "{}")
    except ValueError:
        return 1  # the task broke it: every script may be gone
    if not isinstance(base, dict) or not isinstance(tree, dict):
        return 1
    for key in _PACKAGE_JSON_RUNNER_KEYS:
        if base.get(key) != tree.get(key):
            found = re.search(rf'"{key}"\s*:', tree_text or "")
            return (tree_text or "").count("\n", 0, found.start()) + 1 if found else 1
    return None
