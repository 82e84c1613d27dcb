"""The files each base test read: its data wherever it lives. The gate's pytest plugin records, per test, the
files of the tree a test or test-support file opened (runners/shim/autobuild_gate_reads.py); a base run keeps
them (`GateResult.reads`), and a task that changes one has the base's data put back under the base's tests
(gate/spec/overlay.py), a coach accepting it accepting the tests that read it (gate/spec/accounting.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from orchestrator.facts import GateResult
from orchestrator.gate.observe.bounded import report_text
from orchestrator.gate.observe.runners.junit import without_worktree
from orchestrator.gate.spec.test_files import is_test_data

PER_TEST = 100
TOTAL = 10_000
"""At most PER_TEST files a test and TOTAL pairs a run (as the plugin caps each process): a base run's record
stays small in the checkpoint and the cache."""
_CODE = (".py", ".pyc", ".pyi", ".pyx", ".so", ".pyd")
_NOT_DATA = frozenset({".git", ".autobuild", ".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__",
                       ".pytest_cache", ".mypy_cache", "site-packages"})


def pytest_reads(folder: Path | None) -> dict[str, list[str]]:
    """{test id: files it read} from the plugin's reports in `folder` (one per process, pytest-xdist's workers
    each their own), ids as the JUnit report names them; no code, nothing of the environment's (blocking)."""
    found: dict[str, set[str]] = {}
    for report in sorted(folder.glob("reads-*.json")) if folder is not None and folder.is_dir() else []:
        try:
            document = json.loads(report_text(report))
        except (OSError, ValueError):
            continue
        if not isinstance(document, dict):
            continue
        for test, paths in document.items():
            if isinstance(test, str) and isinstance(paths, list):
                found.setdefault(without_worktree(test), set()).update(
                    path for path in paths if isinstance(path, str) and _data(path))
    return capped(found)


def capped(found: Mapping[str, set[str]]) -> dict[str, list[str]]:
    kept: dict[str, list[str]] = {}
    total = 0
    for test in sorted(found):
        paths = sorted(found[test])[:PER_TEST]
        if not paths or total + len(paths) > TOTAL:
            continue
        kept[test], total = paths, total + len(paths)
    return kept


def _data(path: str) -> bool:
    posix = PurePosixPath(path)
    return (not posix.is_absolute() and ".." not in posix.parts and not path.endswith(_CODE)
            and not any(part in _NOT_DATA for part in posix.parts))


def data_read(base: GateResult, base_files: Sequence[str]) -> dict[str, frozenset[str]]:
    """The base's files its passing tests read -> those tests (files the base has; `base_files` and the ids
    relative to where its command ran)."""
    files, passing = set(base_files), set(base.get("passing") or [])
    readers: dict[str, set[str]] = {}
    for test, paths in (base.get("reads") or {}).items():
        if test in passing:
            for path in paths:
                if path in files:
                    readers.setdefault(path, set()).add(test)
    return {path: frozenset(tests) for path, tests in readers.items()}


def in_repo(readers: Mapping[str, frozenset[str]], folder: str) -> dict[str, frozenset[str]]:
    """A monorepo package's readers named as the repository names them (`web/golden.txt`, `web::tests.t::x`)."""
    if folder == ".":
        return dict(readers)
    return {f"{folder}/{path}": frozenset(f"{folder}::{test}" for test in tests) for path, tests in readers.items()}


def is_data(path: str, readers: Mapping[str, frozenset[str]]) -> bool:
    """Test data: in a test folder or named as data (test_files.is_test_data), or read by a base test."""
    return is_test_data(path) or path in readers
