"""The screen on code that knows it is judged (gate/spec/code_screen.py), run over every real-history gold: the
release's diff committed on the old release in a repository of its own, the hits it names. Each gold with a hit would
need the coach's word and end approved-unverified (issue 38's goal: at most 1% of the golds). No test runs: seconds.

`python -m benchmarks.real_history.screen_golds` prints the figure and each hit."""

from __future__ import annotations

import asyncio
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.real_history.bench import case_id, selected
from benchmarks.real_history.releases import Release, tree
from orchestrator.gate import code_screen_hits
from orchestrator.repo.git import GitRepo


def _commit(root: Path, files: dict[str, str], message: str) -> str:
    for path in subprocess.run(["git", "ls-files", "-z"], cwd=root, check=True, capture_output=True,
                               text=True).stdout.split("\0"):
        if path and path not in files:
            (root / path).unlink()
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8", newline="")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", message, "--allow-empty"],
                   cwd=root, check=True)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True,
                          text=True).stdout.strip()


def _hits(folder: Path, case: dict[str, Any]) -> list[str]:
    """The screen's hits on the case's gold: the old release committed, then the new one over it."""
    registry = case["registry"]
    old, new = tree(Release(registry, case["package"], case["old"])), tree(Release(registry, case["package"],
                                                                                   case["new"]))
    folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=folder, check=True)
    base = _commit(folder, old, "old")
    _commit(folder, new, "new")
    return [hit.describe() for hit in asyncio.run(code_screen_hits(GitRepo(folder), folder, base))]


def measure(names: list[str] | None = None) -> dict[str, Any]:
    """Every selected case's gold: the code screen's hits on it."""
    cases = selected(names or [])
    with tempfile.TemporaryDirectory() as tmp:
        found = {case_id(case): _hits(Path(tmp) / str(index), case) for index, case in enumerate(cases)}
    return {"golds": len(cases), "hits": {case: hits for case, hits in found.items() if hits}}


def report_lines(found: dict[str, Any]) -> list[str]:
    golds, hit = found["golds"], found["hits"]
    share = 100 * len(hit) / golds if golds else 0.0
    lines = [f"- The screen on code that knows it is judged, over the {golds} golds: **{len(hit)} with a hit"
             f" ({share:.1f}%)**, each approved-unverified once the coach accepts it (goal: at most 1%)"]
    lines += [f"  - {case}: {'; '.join(hits[:3])}" for case, hits in sorted(hit.items())]
    return lines


if __name__ == "__main__":
    print("\n".join(report_lines(measure())))
