"""The pick bench's trees and its oracle: a task's base (the old release, its held-back tests removed), what each
candidate writes on it, and whether a candidate's code passes the new release's changed tests and the held-back
ones (run apart from the task's repo: neither the gate nor the selection ever sees them)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.pick_cases import Candidate, Change, PickCase
from benchmarks.real_history import npm
from benchmarks.real_history.bench import case_id
from benchmarks.real_history.releases import Release, manifest, tree
from orchestrator.gate import is_test_file

Files = dict[str, str]
ORACLE_TIMEOUT_S = 600


class CaseError(ValueError):
    """A case's data does not fit its releases (an edit's text not found once)."""


@dataclass(frozen=True)
class Trees:
    """A task's two releases and its manifest entry."""

    entry: dict[str, Any]
    old: Files
    new: Files


def trees(case: PickCase) -> Trees:
    entry = next((c for c in manifest()["cases"] if case_id(c) == case.case), None)
    if entry is None:
        raise CaseError(f"{case.case}: no such case in benchmarks/real_history/manifest.json")
    registry = entry["registry"]
    return Trees(entry, tree(Release(registry, entry["package"], entry["old"])),
                 tree(Release(registry, entry["package"], entry["new"])))


def base_files(case: PickCase, releases: Trees) -> Files:
    """The task's repo: the old release without its held-back test files."""
    return {path: text for path, text in releases.old.items() if path not in case.held_back}


def _changed(path: str, change: Change, releases: Trees, where: str) -> str | None:
    if change.gone:
        return None
    if change.text is not None:
        return change.text
    text = (releases.new if change.start == "new" else releases.old).get(path)
    if text is None:
        raise CaseError(f"{where}: {path} is not in the {change.start} release")
    for old, new in change.edits:
        if text.count(old) != 1:
            raise CaseError(f"{where}: {path}: the edit's text occurs {text.count(old)} times, not once: {old[:60]!r}")
        text = text.replace(old, new)
    return text


def candidate_files(case: PickCase, candidate: Candidate, releases: Trees) -> dict[str, str | None]:
    """What the candidate's player writes: its code, the visible tests, its own tests."""
    where = f"{case.case}: {candidate.kind}"
    code = {path: _changed(path, change, releases, where) for path, change in candidate.code.items()}
    return {**code, **case.visible, **candidate.tests}


def oracle_tests(case: PickCase, releases: Trees) -> list[str]:
    named = case.oracle_tests or tuple(releases.entry.get("tests_changed") or ())
    return sorted(path for path in named if path in releases.new)


def oracle(case: PickCase, candidate: Candidate, releases: Trees) -> tuple[bool, str]:
    """Whether the candidate's code passes the oracle: the task's gate command over its tree with the new release's
    changed test files and the held-back ones put in (the last lines it printed, to say why)."""
    files: dict[str, str | None] = {**base_files(case, releases), **candidate_files(case, candidate, releases)}
    files |= {path: releases.old[path] for path in case.held_back}
    files |= {path: releases.new[path] for path in oracle_tests(case, releases)}  # a held-back file as released
    with tempfile.TemporaryDirectory(prefix="pick-oracle-") as tmp:
        root = Path(tmp)
        for path, text in files.items():
            if text is not None:
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_text(text, encoding="utf-8", newline="")
        if releases.entry["registry"] == "npm":
            for name, vendored in npm.vendored(releases.entry).items():
                for path, text in vendored.items():
                    (root / "node_modules" / name / path).parent.mkdir(parents=True, exist_ok=True)
                    (root / "node_modules" / name / path).write_text(text, encoding="utf-8", newline="")
        env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
               "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        done = subprocess.run(["bash", "-c", str(releases.entry["verify"])], cwd=root, env=env, capture_output=True,
                              text=True, timeout=ORACLE_TIMEOUT_S, check=False)
    said = (done.stdout + done.stderr).strip().splitlines()
    return done.returncode == 0, " | ".join(said[-3:])[:300]


def deletable_test(case: PickCase, releases: Trees) -> str:
    """A base test file a refused candidate deletes: the first of the old release's test modules (`test_*.py`,
    `*.test.js`, `*_test.go`) no candidate writes; with none left in the repo, its first test file of any kind."""
    written = {path for c in case.candidates for path in c.tests} | set(case.visible)
    found = [path for path in sorted(base_files(case, releases)) if is_test_file(path) and path not in written]
    modules = [path for path in found if (path.rpartition("/")[2].startswith("test_") and path.endswith(".py"))
               or path.endswith((".test.js", "_test.go"))]
    return (modules or found)[0]
