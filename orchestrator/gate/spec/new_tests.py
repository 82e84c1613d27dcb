"""A task's new tests must be able to fail: the tests a feature or fix added or changed are run on the base's code
(a throwaway worktree at the task's commit with its code files put back as the base has them, its tests kept) and
at least one must fail there; a refactor's must all pass there. The mirror image of gate/spec/overlay.py, whose
restriction and messages it reuses. Tests inside code files go back with the code, except Rust's `#[cfg(test)]`
modules: spliced into the base's version of their file (gate/spec/inline_splice.py); doctests are left out. With no
code changed, the task's own run is the run on the base's code."""

from __future__ import annotations

import ast
import asyncio
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from orchestrator.facts import GateResult, Observation
from orchestrator.gate.spec import inline_splice, package_accounting
from orchestrator.gate.spec.accounting import TreeDiff, file_of
from orchestrator.gate.spec.overlay import RunIn, _first_message, _restriction
from orchestrator.gate.spec.test_files import is_test_data, is_test_file
from orchestrator.repo import confined
from orchestrator.repo.git import GitRepo
from orchestrator.text import first_few

ACCEPTANCE = "new-tests-on-base"
"""What the coach names in `test_changes_accepted` to accept a task whose new tests break the rule (with why):
the task is then approved-unverified."""
JUDGED_KINDS = frozenset({"feature", "fix", "refactor"})


@dataclass(frozen=True)
class Finding:
    """What the run on the base's code showed, when it breaks the rule: one line, and what the player is told."""

    line: str
    explanation: str


@dataclass(frozen=True)
class Shown:
    """What the new tests' run on the base's code showed: how many ran, how many failed there (None: the runner
    named no test), and the finding when that breaks the rule. The count is a key of the selection among a task's
    attempts: more new tests shown to fail on the base's code show more of the change works."""

    tests: int
    failing: int | None
    finding: Finding | None


_GO_TEST_ID = re.compile(r"\.((?:Test|Example|Fuzz|Benchmark)\w*)(?:/.*)?$")


def _leaf(test_id: str) -> str:
    """The test function's name in an id (`a/b.py::TestX::test_y[1]` -> test_y, `pkg.TestX/case` -> TestX)."""
    if "::" not in test_id and " > " not in test_id and (go := _GO_TEST_ID.search(test_id)) is not None:
        return go.group(1)
    head = re.split(r"[\[(]", test_id, maxsplit=1)[0]
    return re.split(r" > |::|\.", head)[-1].strip()


def _python_functions(text: str) -> dict[str, str] | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    return {node.name: ast.dump(node) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


_GO_FUNC = re.compile(r"^func\s+(?:\([^)]*\)\s*)?(\w+)\s*\(", re.MULTILINE)


def _go_functions(text: str) -> dict[str, str]:
    starts = list(_GO_FUNC.finditer(text))
    return {match.group(1): text[match.start():starts[i + 1].start() if i + 1 < len(starts) else len(text)].strip()
            for i, match in enumerate(starts)}


_RUST_FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+(\w+)\s*[<(]", re.MULTILINE)


def _rust_functions(text: str) -> dict[str, str]:
    """A Rust file's functions by name -> their text to the brace that closes their body (a neighbour's attributes,
    `#[test]`, are no part of it: removing the next test changes nothing of this one)."""
    found = {}
    for match in _RUST_FN.finditer(text):
        opening = text.find("{", match.end())
        depth, end = 0, len(text)
        for index in range(opening, len(text)) if opening >= 0 else ():
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            if depth == 0:
                end = index + 1
                break
        found[match.group(1)] = text[match.start():end].strip()
    return found


_JS_TEST_CALL = re.compile(r"""\b(?:test|it)(?:\.\w+)*\s*\(\s*(['"`])((?:\\.|(?!\1).)*)\1""")


def _js_tests(text: str) -> dict[str, str]:
    """A JS test file's tests by name -> their text up to the next test (the next test's name ends it)."""
    starts = list(_JS_TEST_CALL.finditer(text))
    return {match.group(2): text[match.end():starts[i + 1].start() if i + 1 < len(starts) else len(text)].strip()
            for i, match in enumerate(starts)}


def changed_functions(path: str, base_text: str | None, text: str) -> set[str] | None:
    """The functions a test file's task version defines differently from its base version (new ones included);
    None when unknown (any test in the file counts as changed)."""
    if base_text is None:
        # A new Go test file's tests are its own functions: a Go id names the package, which has other tests too.
        return set(_go_functions(text)) if path.endswith("_test.go") else None
    if path.endswith(".py"):
        before, after = _python_functions(base_text), _python_functions(text)
    elif path.endswith(".go"):
        before, after = _go_functions(base_text), _go_functions(text)
    elif path.endswith(".rs"):
        before, after = _rust_functions(base_text), _rust_functions(text)
    elif path.endswith((".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")):
        before, after = _js_tests(base_text), _js_tests(text)
        if not after:  # tests named some other way (a table, a helper): every test of the file counts
            return None
    else:
        return None
    if before is None or after is None:
        return None
    return {name for name, body in after.items() if before.get(name) != body}


def touched_tests(diff: TreeDiff) -> list[str]:
    """The test code files (no data) the task added, changed or renamed with changes, by their path in the tree."""
    renamed = [new for new, similarity in diff.renamed.values() if similarity < 100]
    return sorted(path for path in {*diff.added, *diff.modified, *renamed}
                  if (is_test_file(path) or path in diff.hosts) and not is_test_data(path))


def code_files(diff: TreeDiff) -> list[str]:
    """Every file the task added, changed, deleted or renamed that is no test file: what goes back to the base."""
    moved = [path for old, (new, _) in diff.renamed.items() for path in (old, new)]
    return sorted(path for path in {*diff.added, *diff.modified, *diff.deleted, *moved}
                  if not is_test_file(path) and path not in diff.hosts)


def candidates(passing: Sequence[str], tree_files: Sequence[str], changed: Mapping[str, set[str] | None]
               ) -> list[str]:
    """The passing tests of the tree the task added or changed: in a test file it touched (`changed`: path -> the
    functions it added or changed there, None for all: a new file), in one of those functions. A test moved
    unchanged (a renamed file, a new id) is none of them."""
    packages: dict[str, set[str] | None] = {}  # a Go package's folder -> the functions its touched files changed
    for path, functions in changed.items():
        if path.endswith("_test.go"):
            folder, known = str(PurePosixPath(path).parent), packages.get(str(PurePosixPath(path).parent), set())
            packages[folder] = None if functions is None or known is None else {*known, *functions}
    found = []
    for test in passing:
        file = file_of(test, tree_files)
        if file is not None and file.endswith("_test.go"):  # a Go id names its package, not its file
            folder = str(PurePosixPath(file).parent)
            if folder in packages and ((functions := packages[folder]) is None or _leaf(test) in functions):
                found.append(test)
            continue
        if file is None or file not in changed:
            continue
        functions = changed[file]
        if functions is None or _leaf(test) in functions:
            found.append(test)
    return found


def failed_there(tests: Sequence[str], run: Observation) -> int | None:
    """How many of `tests` did not pass in `run` (None: the runner named no test)."""
    passing = set(run.get("passing") or [])
    if run.get("passing") is None and not run["failing"]:
        return None
    return sum(test not in passing for test in tests)


def verdict(kind: str, tests: Sequence[str], run: Observation, folder: str = ".") -> Finding | None:
    """What the run of `tests` on the base's code says about a task of `kind`: a feature's or fix's with none
    failing there, a refactor's with some failing there; None when the rule holds or the run can't tell. A
    monorepo package's (`folder`) tests are named with its path."""
    passing, failing = set(run.get("passing") or []), set(run["failing"] or [])
    if run.get("passing") is None and not failing:
        return None  # the runner named no test: nothing to judge by
    failed = [test for test in tests if test not in passing]
    prefix = "" if folder == "." else f"{folder}::"
    named = first_few([prefix + test for test in tests], "; ")
    if kind in ("feature", "fix") and not failed:
        line = (f"none of the {len(tests)} test(s) the {kind} added or changed fails on the code it started from"
                f" ({named}): they don't show the {kind} works")
        return Finding(line, f"The {kind}'s new tests pass without its change to the code: {named}. Add or change a"
                             " test that fails on the code the task started from and passes with the change. If no"
                             " such test can exist, the coach accepts it in test_changes_accepted as"
                             f" {{test: \"{ACCEPTANCE}\", reason: why}} (the task is then approved-unverified).")
    if kind == "refactor" and failed:
        why = "; ".join(f"{prefix}{test}: {_first_message(run['output'], test)}" for test in failed[:5])
        line = f"{len(failed)} test(s) the refactor added or changed fail on the code it started from: {why}"
        return Finding(line, f"A refactor keeps behaviour: its new tests must pass on the code it started from, and"
                             f" these fail there: {why}. If the behaviour had to change, the coach accepts it in"
                             f" test_changes_accepted as {{test: \"{ACCEPTANCE}\", reason: why}}.")
    return None


async def run_on_base(repo: GitRepo, worktree: Path, against: str, *, code: Sequence[str], tests: Sequence[str],
                      files: Sequence[str], run_in: RunIn, set_up: Callable[[Path], Awaitable[object]],
                      spliced: Sequence[inline_splice.Spliced] = ()) -> GateResult:
    """`tests` (in test `files`, or inside the `spliced` code files) run in a throwaway worktree at the task's
    commit, its `code` files put back as `against` has them (the spliced ones with the task's test modules),
    restricted to those files or tests where the runner allows it."""
    place = worktree.parent / f"_newtests-{worktree.name}"
    await repo.add_detached_worktree(place, await repo.head(worktree))
    try:
        await set_up(place)
        await repo.restore_paths(place, against, list(code), detached_ok=True)
        await asyncio.to_thread(_write, place, spliced)
        inline = inline_splice.test_ids(tests, spliced)
        restriction = _restriction([*files], [test for test in tests if test not in inline])
        return await run_in(place, inline_splice.restriction(files, inline, restriction))
    finally:
        await repo.remove_worktree(place)


async def check(repo: GitRepo, worktree: Path, against: str, kind: str, *, result: Observation, diff: TreeDiff,
                texts: Mapping[str, str], run_in: RunIn,
                set_up: Callable[[Path], Awaitable[object]], folder: str = ".") -> Shown | None:
    """The rule on a judged tree (its run `result`, its diff against `against` and its test files' `texts`), for a
    feature, fix or refactor whose tree named its tests. A task that changed no code (or only Rust test modules)
    ran its tests on the base's code already: `result` is judged, no run; a feature or fix with no test to judge
    either changed nothing of the product (refused). Else its added or changed tests that pass in the tree run on
    the base's code. For a monorepo package, `folder`: `result` is its run (ids relative to it), its tests are
    those under it, and the task's code goes back everywhere (a package runs on the packages it uses)."""
    if kind not in JUDGED_KINDS or result.get("passing") is None:
        return None
    local = package_accounting.local_diff(diff, folder)
    files = [path for path in touched_tests(local) if package_accounting.joined(folder, path) in texts]
    code = code_files(diff)
    head = await repo.head(worktree)
    spliced = [found for path in sorted(diff.modified) if path in code and path.endswith(".rs")
               if (found := inline_splice.spliced(path, await repo.show_file(against, path),
                                                  await repo.show_file(head, path))) is not None]
    old_of = {new: old for old, (new, _) in local.renamed.items()}
    changed = {path: changed_functions(path, await repo.show_file(
        against, package_accounting.joined(folder, old_of.get(path, path))), texts[package_accounting.joined(
            folder, path)]) for path in files}
    passing = result.get("passing") or []
    tree_files = package_accounting.local_files(folder, await repo.files_at(head)) if changed else []
    tests = candidates(passing, tree_files, changed) + inline_splice.test_ids(passing, [
        found for found in spliced if package_accounting.inside(folder, found.path) is not None])
    if len(code) == sum(found.only_tests for found in spliced):  # the base's code is the task's: no run needed
        if not tests:
            return Shown(0, None, unchanged(kind, files))
        return Shown(len(tests), failed_there(tests, result), verdict(kind, tests, result, folder))
    if not tests:
        return None
    run = await run_on_base(repo, worktree, against, code=code, tests=tests, files=files, run_in=run_in,
                            set_up=set_up, spliced=spliced)
    return Shown(len(tests), failed_there(tests, run), verdict(kind, tests, run, folder))


def unchanged(kind: str, files: Sequence[str]) -> Finding | None:
    """A feature or fix that changed no code and has no new or changed test passing in its tree (`files`: the test
    files it touched): it did nothing the product shows."""
    if kind not in ("feature", "fix"):
        return None
    touched = f" (it touched only {', '.join(files[:5])})" if files else ""
    line = f"the {kind} changed none of the product's code and added no test that passes{touched}"
    return Finding(line, f"A {kind} changes the product's code: this one changed none of it{touched}. Make the"
                         f" change the task asks for, with a test that fails without it. If the work was already"
                         f" done (by an earlier task), the coach accepts it in test_changes_accepted as"
                         f" {{test: \"{ACCEPTANCE}\", reason: why}} (the task is then approved-unverified).")


def _write(place: Path, spliced: Sequence[inline_splice.Spliced]) -> None:
    """The spliced code files, written into our throwaway worktree (no link followed: a committed link)."""
    for found in spliced:
        confined.write_under(place, found.path, found.text, "the base's code with the task's test modules")
