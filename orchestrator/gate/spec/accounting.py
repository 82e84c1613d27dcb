"""Every test that passed on the base must pass on the judged tree: what became of each one that doesn't.

A base test is *gone* (deleted with its file or alone, or deselected by an edit to the runner's config, named by
file and line), *moved* (its file renamed, the same test passing in the new place), *skipped*, *xfailed*,
*failing*, or of *changed expectation* (its base version fails on the task's code: gate/spec/overlay.py). Each change
fails the gate unless the coach accepted it (`test_changes_accepted`, by test id or by file); a move at 100%
similarity needs no acceptance, and a failing test is never waved through (its fix is a changed test, which can
be accepted). A runner that names no passing test is accounted by count: fewer passes than the base fails the
gate, naming the runner.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from orchestrator.facts import Acceptance, Observation, TestChange, TestFate
from orchestrator.gate.spec.test_files import is_test_data, is_test_file
from orchestrator.text import first_few

UNACCEPTABLE = frozenset({"failing"})
"""Fates no acceptance waves through: a test that fails in the tree is red whatever the coach says."""


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


_GENERIC_STEMS = frozenset({"test", "tests", "data", "fixture", "fixtures", "input", "output", "expected", "cases"})


def fed_by(test_id: str, data_file: str) -> bool:
    """Whether the test is named after the data file, as a data-driven suite names the test it makes of one
    (Python-Markdown's legacy tests: `TestMisc.test_nested_patterns` of tests/misc/nested-patterns.txt): the
    test's name, without `test_`, is the file's or starts or ends with it, word for word. A generic name (a
    `tests/test.json`) feeds no test by name: accepting it must not accept every test."""
    stem = _slug(PurePosixPath(data_file).stem)
    name = re.sub(r"^tests?_?", "", _slug(_leaf(test_id)))
    if len(stem) < 4 or stem in _GENERIC_STEMS:
        return False
    return name == stem or name.startswith(stem + "_") or name.endswith("_" + stem)


@dataclass(frozen=True)
class TreeDiff:
    """How the judged tree differs from the base's, as git sees it (renames found by similarity)."""

    renamed: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    """Base path -> (its path in the tree, similarity in percent)."""
    deleted: frozenset[str] = frozenset()
    modified: frozenset[str] = frozenset()
    added: frozenset[str] = frozenset()
    config_lines: Mapping[str, int] = field(default_factory=dict)
    """Runner config files the tree changed -> the first changed line (in the tree's version)."""
    names: Mapping[str, str] = field(default_factory=dict)
    """Base test files the tree changed -> the tree's text of them (to tell a deleted test from a deselected one)."""
    hosts: frozenset[str] = frozenset()
    """Files the base's passing test ids name (`test_hosts`): tests, whatever their name."""
    inherited: Mapping[str, str] = field(default_factory=dict)
    """`file::name` of a test its file doesn't define -> the file whose base version does: a Python test its file
    collects from a changed support module (a mixin in tests/__init__.py: `inherited_tests`), a Go test in another
    test file of its package than the first (`go_test_homes`)."""
    reads: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Base files the base's tests read (their runs recorded it: gate/observe/reads.py) -> those tests: test data,
    wherever it lives."""

    @property
    def test_files_changed(self) -> list[str]:
        """Base test files the tree deleted, modified or renamed with changes."""
        renamed = [old for old, (_new, similarity) in self.renamed.items() if similarity < 100]
        return sorted(path for path in {*self.deleted, *self.modified, *renamed}
                      if is_test_file(path) or path in self.hosts or path in self.reads)


_JS_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")


def test_hosts(base: Observation, base_files: Sequence[str]) -> frozenset[str]:
    """The JavaScript files the base's passing ids name (`file > describe > name`): a runner given a file by its
    command (`node check.js`, mocha's `spec`) collects tests from it whatever it is called. A Python or Rust id can
    name a code file (doctests, `#[cfg(test)]`), whose tests gate/spec/inline_tests.py accounts instead."""
    found = {file_of(test, base_files) for test in base.get("passing") or [] if " > " in test}
    return frozenset(path for path in found if path is not None and path.endswith(_JS_SUFFIXES))


def parse_name_status(text: str) -> tuple[dict[str, tuple[str, int]], set[str], set[str], set[str]]:
    """`git diff --name-status -M` lines: renamed, deleted, modified and added paths."""
    renamed: dict[str, tuple[str, int]] = {}
    deleted: set[str] = set()
    modified: set[str] = set()
    added: set[str] = set()
    for line in text.splitlines():
        parts = line.split("\t")
        status = parts[0]
        if status.startswith("R") and len(parts) == 3:
            renamed[parts[1]] = (parts[2], int(status[1:] or 0))
        elif status == "D" and len(parts) == 2:
            deleted.add(parts[1])
        elif status in ("M", "T") and len(parts) == 2:
            modified.add(parts[1])
        elif status == "A" and len(parts) == 2:
            added.add(parts[1])
    return renamed, deleted, modified, added


def file_of(test_id: str, base_files: Sequence[str]) -> str | None:
    """The base file a test id lives in: node's `file > …`, cargo's `target::…` and doctests' `doc-tests crate::
    file - item`, a Python module's longest prefix (pytest `a.b::C::t`, unittest `a.b.C.t`), a monorepo package's
    `pkg::…` prefix; None when unknown."""
    # A doctest first: its item may be `<T as Trait>`, which isn't node's ` > `.
    doctest = _DOCTEST_ID.match(test_id)
    head = doctest.group(1) if doctest else test_id.split(" > ", 1)[0] if " > " in test_id else None
    if head is not None:
        return head if head in base_files else None
    if (go := _GO_ID.match(test_id)) is not None:
        return _go_file(go.group(1), base_files)
    package, _, rest = test_id.partition("::")
    if rest and any(path.startswith(package.rstrip("/") + "/") for path in base_files) and "." not in package:
        inner = file_of(rest, [p.removeprefix(package + "/") for p in base_files if p.startswith(package + "/")])
        return f"{package}/{inner}" if inner else None
    if rest and package in base_files:
        return package
    module = package if rest else test_id
    parts = module.split(".")
    modules = {path.removesuffix(".py").replace("/", "."): path for path in base_files if path.endswith(".py")}
    for end in range(len(parts), 0, -1):
        if (found := modules.get(".".join(parts[:end]))) is not None:
            return found
    return None


_DOCTEST_ID = re.compile(r"^doc-tests [\w-]+::(\S+\.rs) -(?: |$)")
_GO_ID = re.compile(r"^([\w.~\-/]+)\.(?:Test|Example|Fuzz)\w*(?:/.*)?$")


def _go_file(import_path: str, base_files: Sequence[str]) -> str | None:
    """The first `_test.go` file of the package `import_path` names: in the deepest folder its path ends with (the
    module's root when none does). Which file defines the test, when another does, `TreeDiff.inherited` says for
    folders whose test files the task changed (test_files.go_test_homes)."""
    tests = sorted(path for path in base_files if path.endswith("_test.go"))
    folders = sorted({str(PurePosixPath(path).parent) for path in tests}, key=len, reverse=True)
    for folder in folders:
        if folder != "." and (import_path == folder or import_path.endswith("/" + folder)):
            return next(path for path in tests if str(PurePosixPath(path).parent) == folder)
    return next((path for path in tests if "/" not in path), None)


def _leaf(test_id: str) -> str:
    """The test's own name: its last part, parameters and subtests dropped."""
    name = re.split(r" > |::|\.", test_id)[-1]
    return re.split(r"[\[/( ]", name, maxsplit=1)[0]


def _moved(test_id: str, file: str | None, diff: TreeDiff) -> tuple[str, int] | None:
    """The test's id in its renamed file, with the rename's similarity."""
    if file is None or file not in diff.renamed:
        return None
    new, similarity = diff.renamed[file]
    if file.endswith(".py"):
        old_module, new_module = file.removesuffix(".py").replace("/", "."), new.removesuffix(".py").replace("/", ".")
        return (new_module + test_id[len(old_module):], similarity) if test_id.startswith(old_module) else None
    return (new + test_id[len(file):], similarity) if test_id.startswith(file) else None


def _skipped_detail(file: str | None, diff: TreeDiff) -> str:
    """Why the runner skipped a base test: its own file changed (a marker, a condition), else the runner's config the
    task changed (a filter in a package.json script, an `addopts`), named where it changed."""
    if diff.config_lines and (file is None or file not in diff.modified):
        return f"the runner skipped it here; the task changed what runs: {_config_where(diff)}"
    return "the runner skipped it here (a marker, a condition or a filter)"


def _config_where(diff: TreeDiff) -> str:
    return ", ".join(f"{path}:{line}" for path, line in sorted(diff.config_lines.items()))


def _gone_detail(test_id: str, file: str | None, diff: TreeDiff) -> str:
    if (removed := _removed_detail(test_id, file, diff)) is not None:
        return removed
    if fed := sorted(path for path in diff.deleted if (is_test_data(path) and fed_by(test_id, path))
                     or test_id in diff.reads.get(path, ())):
        return f"its data file deleted ({', '.join(fed[:3])})"
    if diff.config_lines:
        return f"deselected by {_config_where(diff)}"
    if file is not None and file in diff.modified:
        return f"no longer collected from {file} (the file changed)"
    # A hook that decides what runs, outside the test's file and the runner's config (unittest's `load_tests` in a
    # package's __init__.py, a new Go TestMain): the test-side files the task touched are where to look.
    touched = sorted(path for path in {*diff.added, *diff.modified, *diff.deleted,
                                       *(new for new, _ in diff.renamed.values())} if is_test_file(path))
    if touched:
        return f"no longer run; the task added or changed on the test side: {first_few(touched)}"
    return "no longer run (its file and the runner's config are unchanged)"


def _removed_detail(test_id: str, file: str | None, diff: TreeDiff) -> str | None:
    """How the test left its file: with the file, from it, or as a case of its table; None when it is still there."""
    if file is not None and file in diff.deleted:
        return f"deleted (with its file {file})"
    if file is None or file not in diff.names:
        return None
    if not re.search(rf"(?<![\w-]){re.escape(_leaf(test_id))}(?![\w-])", diff.names[file]):
        return f"deleted from {file}"
    spellings = {case, case.replace("_", " ")} if (case := _go_case(test_id)) is not None else set()
    if spellings and not any(f'"{name}"' in diff.names[file] or f"`{name}`" in diff.names[file]
                             for name in spellings):
        return f"a table case dropped from {file}"
    return None


def _go_case(test_id: str) -> str | None:
    """A Go subtest's own name (`pkg.TestX/two_by_three#01` -> `two_by_three`), as its table may spell it; None for
    another runner's id."""
    found = re.match(r"^[\w.~\-/]+\.(?:Test|Example|Fuzz)\w*/(?:.*/)?([^/]+?)(?:#\d+)?$", test_id)
    return found.group(1) if found else None


def account(base: Observation, run: Observation, diff: TreeDiff, base_files: Sequence[str], *,
            expectations: Mapping[str, str] | None = None, unstable: Iterable[str] = ()) -> list[TestChange]:
    """What became of each test that passed on the base and does not pass, as such, in `run`; `expectations`
    maps base tests whose base version fails on the tree's code to the failure (gate/spec/overlay.py); `unstable`
    tests (present in only one of the base's two runs) are not accounted."""
    base_passing, passing = base.get("passing"), run.get("passing")
    if base.get("command") != run.get("command") or run["exit_code"] is None:
        return []
    if base_passing is not None and run.get("runner") is None and base.get("runner") is not None:
        passing = []  # the runner reports nothing any more (an early exit, a report switched off): none passed
    if base_passing is None or passing is None:
        return _by_count(base, run)
    now_passing, failing = set(passing), set(run["failing"] or [])
    unloaded = [error.split(" [", 1)[0] for error in run.get("load_errors") or []]  # Go's `pkg [build failed]`
    skipped, xfailed = set(run.get("skipped_ids") or []), set(run.get("xfailed") or [])
    expectations = expectations or {}
    changes: list[TestChange] = []
    for test in sorted(set(base_passing) - set(unstable)):
        file = file_of(test, base_files)
        file = diff.inherited.get(f"{file}::{_leaf(test)}", file)  # a mixin's test: where it is defined
        base_version = _base_version(test, expectations, diff)
        if test in now_passing:
            if base_version:
                changes.append(_change(test, "changed expectation", base_version.removeprefix("; "), file))
        elif (why := _failing(test, failing, unloaded)) is not None:
            changes.append(_change(test, "failing", why, file))
        elif test in xfailed:
            changes.append(_change(test, "xfailed", "marked as an expected failure" + base_version, file))
        elif test in skipped:
            changes.append(_change(test, "skipped", _skipped_detail(file, diff) + base_version, file))
        elif (moved := _moved(test, file, diff)) is not None and moved[0] in now_passing:
            new_id, similarity = moved
            change = _change(test, "moved", f"to {new_id} ({similarity}% similar), passing there", file)
            if similarity == 100:
                change["accepted"] = "moved unchanged"
            changes.append(change)
        else:
            changes.append(_change(test, "gone", _gone_detail(test, file, diff) + base_version, file))
    return changes


def _failing(test: str, failing: set[str], unloaded: Sequence[str]) -> str | None:
    """How a base test fails in the run: itself or its subtests, or its file did not load (its tests then have no
    result of their own: python-humanize's modules without their generated _version.py); None when it doesn't."""
    if test in failing or any(f.startswith((test + " (", test + "/")) for f in failing):
        return "fails"
    loader = next((error for error in unloaded if test.startswith((error + "::", error + ".", error + " > ",
                                                                   error + "/"))), None)
    return f"its file did not load here ({loader})" if loader else None


def _base_version(test: str, expectations: Mapping[str, str], diff: TreeDiff) -> str:
    """How the test's base version fails on the tree's code ("" when it doesn't), naming the data it read."""
    if test not in expectations:
        return ""
    data = [path for path in diff.test_files_changed if test in diff.reads.get(path, ())]
    read = f" (with the base's {', '.join(data[:3])}, which it reads)" if data else ""
    return f"; the base's version fails on this code: {expectations[test]}{read}"


NEW_CANT_FAIL: TestFate = "new test can't fail"
"""A test the task added that can't fail (only skipped or xfailed, or a tamper-screen hit): it verifies nothing,
so the approval is refused unless the coach accepts it with its reason (then unverified)."""


def new_only_skipped(base: Observation, run: Observation) -> list[TestChange]:
    """Tests the base didn't have that the run only skipped or xfailed: work the gate did not verify."""
    known = {*(base.get("passing") or []), *(base["failing"] or []), *(base.get("skipped_ids") or [])}
    return [_change(test, NEW_CANT_FAIL, "a test the task added was only skipped or marked to fail", None)
            for test in sorted({*(run.get("skipped_ids") or []), *(run.get("xfailed") or [])} - known)]


def _change(test: str, fate: TestFate, detail: str, file: str | None) -> TestChange:
    return TestChange(test=test, fate=fate, detail=detail, file=file, accepted=None)


def _by_count(base: Observation, run: Observation) -> list[TestChange]:
    before, now = base.get("tests_passed"), run.get("tests_passed")
    if before is None or now is None or now >= before:
        return []
    runner = run.get("runner") or base.get("runner") or "the runner"
    return [_change(f"{runner}: {before - now} fewer passing", "fewer passing",
                    f"{now} tests passed, {before} on the base ({runner} names no passing test: accounted by count)",
                    None)]


def _normal(test: str) -> str:
    """A test id or file as the coach may write it, in the gate's form (`tests/test_x.py::t` -> `tests.test_x::t`)."""
    head, sep, rest = test.strip().partition("::")
    if head.endswith(".py"):
        head = head.removesuffix(".py").replace("/", ".")
    return head + sep + rest


def accept(changes: Iterable[TestChange], accepted: Sequence[Acceptance], changed_files: Sequence[str] = (),
           reads: Mapping[str, frozenset[str]] | None = None) -> list[TestChange]:
    """`changes` with the coach's reasons where an acceptance names the test, its file or a prefix of its id, or
    a data file the tree changed whose name is in the test's (`fed_by`) or that the test read on the base
    (`reads`: file -> tests, gate/observe/reads.py); a changed expectation of a test in a file
    the tree didn't change, when every test file it changed is accepted; a count drop by naming a test file the
    tree changed."""
    entries = [(_normal(str(entry.get("test") or "")), str(entry.get("reason") or "")) for entry in accepted]
    entries = [(name, reason) for name, reason in entries if name]
    # A test whose own file the task didn't change, whose base expectation fails only with the base's versions of
    # the changed helpers and data put back: its expectation changed with them, so accepting all of them accepts it.
    named = {name for name, _ in entries}
    every_file = bool(changed_files) and all(_normal(path) in named for path in changed_files)
    result = []
    for found in changes:
        change = TestChange(**found)
        if change["accepted"] is None and change["fate"] not in UNACCEPTABLE:
            targets = [_normal(change["test"]), *([_normal(change["file"]), change["file"]] if change["file"] else [])]
            for name, reason in entries:
                covers = any(target == name or target.startswith((name + "::", name + ".", name + " > "))
                             for target in targets)
                covers = covers or (name in changed_files and is_test_data(name) and fed_by(change["test"], name))
                covers = covers or (name in changed_files and change["test"] in (reads or {}).get(name, ()))
                covers = covers or (every_file and change["fate"] == "changed expectation"
                                    and change["file"] not in changed_files)
                if change["fate"] == "fewer passing":
                    covers = covers or any(_normal(path) == name or path == name for path in changed_files)
                if covers:
                    change["accepted"] = reason or "accepted by the coach"
                    break
        result.append(change)
    return result


def unaccepted(changes: Iterable[TestChange]) -> list[TestChange]:
    return [change for change in changes if change["accepted"] is None]


def describe(change: TestChange) -> str:
    """One line: `tests.test_mul::test_mul: gone: deleted from tests/test_mul.py`."""
    line = f"{change['test']}: {change['fate']}: {change['detail']}"
    return f"{line} (accepted: {change['accepted']})" if change["accepted"] else line
