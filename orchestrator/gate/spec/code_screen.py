"""The screen on code that knows it is judged: in the code files a task added or changed (not its tests), what its
version has and the base's hasn't of reading the runner's presence, touching the runner or its output, and answers
that ignore their operand. Each hit must be accepted by the coach (by its file), and an accepted one leaves the
approval unverified."""

from __future__ import annotations

import asyncio
import json
import re
import tomllib
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from orchestrator.facts import TestChange, TestFate
from orchestrator.gate.spec import code_js, code_native, code_python, oversized
from orchestrator.gate.spec.accounting import TreeDiff, parse_name_status
from orchestrator.gate.spec.code_tokens import OPAQUE, TOUCHES, Finding, place_ids
from orchestrator.gate.spec.screen import Hit
from orchestrator.gate.spec.test_files import is_runner_config, is_test_file
from orchestrator.repo.git import GitRepo

FATE: TestFate = "knows it is tested"
_JS = (".js", ".mjs", ".cjs", ".jsx")
_TS = (".ts", ".mts", ".cts")
_MANIFESTS = ("Cargo.toml", "package.json")
_TEST_SUPPORT = frozenset({"testing", "testutils", "test_utils", "testing_utils", "testutil", "pytest_plugin",
                           "pytest_plugins"})


def screened_file(path: str) -> bool:
    """A file the screen reads: code that is not a test (nor a runner's config), and the manifests a package can
    depend on itself in."""
    name = PurePosixPath(path).name
    if name in _MANIFESTS:
        return True
    code = path.endswith((".py", ".go", ".rs", ".tsx", *_JS, *_TS, *code_native.C_SUFFIXES))
    return code and not is_test_file(path) and not is_runner_config(path) and not path.endswith(".d.ts")


def read_by_gate(path: str) -> bool:
    """A file the gate reads to judge a tree (a test, code, a manifest; a Rust file for its inline tests), whose size
    gate/spec/oversized.py bounds; data files are not read."""
    return is_test_file(path) or screened_file(path) or path.endswith(".rs")


def _findings(path: str, text: str, ids: frozenset[str]) -> list[Finding]:
    name = PurePosixPath(path).name
    if name in _MANIFESTS:
        return _self_dependency(name, text)
    try:
        found = _in_code(path, text, ids)
    except RecursionError:  # nested deeper than a reader recurses: what the screen can't read is a finding, not a crash
        found = [Finding(1, f"{OPAQUE} (nested too deeply for the screen to read)", "nested too deeply")]
    if _TEST_SUPPORT.intersection(PurePosixPath(path).with_suffix("").parts):
        # A package's testing helpers (click.testing's CliRunner) capture streams by design: the runner's presence
        # and lying answers still count there.
        return [finding for finding in found if not finding.what.startswith(TOUCHES)]
    return found


def _in_code(path: str, text: str, ids: frozenset[str]) -> list[Finding]:
    if path.endswith(".py"):
        return code_python.findings(path, text, ids)
    if path.endswith(".go"):
        return code_native.go(text, ids)
    if path.endswith(".rs"):
        return code_native.rust(text, ids)
    if path.endswith(code_native.C_SUFFIXES):
        return code_native.c(text)
    language = "tsx" if path.endswith(".tsx") else "typescript" if path.endswith(_TS) else "javascript"
    return code_js.findings(language, text, ids)


def screen(path: str, base_text: str | None, text: str, ids: frozenset[str] = frozenset()) -> list[Hit]:
    """The findings the task's version of a code file has and its base version hasn't (by what and by the
    construct's normalized text, so an idiom already on the base, or one that merely moved, is no hit); `ids`: the
    run's own names in its worktree's path (code_tokens.place_ids), places the code may ask about."""
    before = Counter((found.what, found.key) for found in _findings(path, base_text or "", ids))
    hits = []
    for found in sorted(set(_findings(path, text, ids)), key=lambda found: (found.line, found.what)):
        if before[(found.what, found.key)] > 0:
            before[(found.what, found.key)] -= 1
        else:
            hits.append(Hit(path, found.line, None, found.what))
    return hits


def _self_dependency(name: str, text: str) -> list[Finding]:
    """A Cargo.toml or package.json that depends on its own package: its tests then build against another copy
    of it (a feature only the tests turn on, a version the tests see)."""
    try:
        data: Any = tomllib.loads(text) if name == "Cargo.toml" else json.loads(text or "{}")
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    if name == "Cargo.toml":
        own = (data.get("package") or {}).get("name")
        targets = [table for target in (data.get("target") or {}).values() if isinstance(target, dict)
                   for table in target.values()]
        tables = [data.get(key) for key in ("dependencies", "dev-dependencies", "build-dependencies")] + targets
    else:
        own = data.get("name")
        tables = [data.get(key) for key in ("dependencies", "devDependencies", "optionalDependencies",
                                            "peerDependencies")]
    found = []
    for table in tables:
        for dependency, spec in (table.items() if isinstance(table, dict) else []):
            target = spec.get("package", dependency) if isinstance(spec, dict) else dependency
            path = spec.get("path") if isinstance(spec, dict) else spec
            if own and (target == own or path in (".", "./", "file:.", "file:./", "link:.")):
                found.append(Finding(_line(text, dependency), f"{TOUCHES}: the package depends on itself"
                                     f" (`{dependency}`)", f"self:{dependency}"))
    return found


def _line(text: str, key: str) -> int:
    found = re.search(rf"^\s*\"?{re.escape(key)}\"?\s*[=:]", text, re.MULTILINE)
    return text.count("\n", 0, found.start()) + 1 if found else 1


async def hits(repo: GitRepo, worktree: Path, against: str, diff: TreeDiff | None = None) -> list[Hit]:
    """The screen over every code file the worktree's HEAD added or changed since `against` (renames read
    against their base path), the tree's text read and parsed off the event loop."""
    if diff is None:
        renamed, _, modified, added = parse_name_status(await repo.name_status(worktree, against))
        diff = TreeDiff(renamed=renamed, modified=frozenset(modified), added=frozenset(added))
    old_of = {new: old for old, (new, _) in diff.renamed.items()}
    paths = sorted(path for path in {*diff.added, *diff.modified, *old_of}
                   if screened_file(path) and path not in diff.hosts)
    texts = await asyncio.to_thread(_read, worktree, paths)
    pairs = [(path, await repo.show_file(against, old_of.get(path, path)), texts[path]) for path in paths
             if path in texts]
    ids = place_ids(worktree)
    return await asyncio.to_thread(lambda: [hit for pair in pairs for hit in screen(*pair, ids)])  # CPU-bound


def _read(worktree: Path, paths: Sequence[str]) -> dict[str, str]:
    """The files' texts; one too large to read is gate/spec/oversized.py's finding."""
    return {path: text for path in paths if (text := oversized.bounded_text(worktree / path)) is not None}


def changes(found: Iterable[Hit]) -> list[TestChange]:
    """Each hit as a change the coach must accept, by its file (`test_changes_accepted: [{test: <file>}]`)."""
    return [TestChange(test=f"{hit.file}:{hit.line}", fate=FATE, detail=hit.what, file=hit.file, accepted=None)
            for hit in found]
