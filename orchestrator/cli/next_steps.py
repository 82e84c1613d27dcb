"""The next step, printed after `plan` and at the end of a run: commands that work from the state it left."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestrator.facts import SUCCESS

_MUST_ACT = frozenset({"blocked", "aborted"})
"""A person acts first (a blocker, a budget): `resume` re-runs these only when they are named."""
_SHOWN = 3
"""Tasks named one by one; the rest are counted."""


def command(verb: str, *args: str, repo: Path | None = None) -> str:
    """`autobuild VERB ARGS`, with `--repo` when the repository is not the current directory."""
    words = ["autobuild", verb, *args]
    if repo is not None and repo.resolve() != Path.cwd().resolve():
        words += ["--repo", str(repo)]
    return " ".join(shlex.quote(word) for word in words)


def after_plan(feature: str, repo: Path | None = None) -> list[str]:
    return ["next steps:", "  # its groups, order and cost estimate; nothing runs",
            f"  {command('run', feature, '--dry-run', repo=repo)}", "  # then build it",
            f"  {command('run', feature, repo=repo)}"]


def after_run(feature: str, results: Mapping[str, Mapping[str, Any]], order: list[str],
              repo: Path | None = None) -> list[str]:
    """Approved: read it, then land it. Not approved: what to look at, and how to go on. Each command under a
    shell comment saying why, so the lines paste as they are."""
    statuses = {task: str(results.get(task, {}).get("status", "not run")) for task in order}
    missed = [task for task, status in statuses.items() if status not in SUCCESS]
    if not missed:
        return ["next steps:", "  # read what was built, task by task, with the coach's reasons",
                f"  {command('review', feature, repo=repo)}",
                "  # then put it on your branch", f"  {command('land', feature, repo=repo)}",
                "  # or open a pull request instead", f"  {command('pr', feature, repo=repo)}"]
    shown = missed[:_SHOWN]
    what = ", ".join(f"{task} {statuses[task]}" for task in shown)
    lines = ["next steps:", f"  # {what}: the reports, the coach's feedback and the gate's output"]
    lines += [f"  {command('show', feature, task, repo=repo)}" for task in shown]
    if len(missed) > _SHOWN:
        lines.append(f"  # and {len(missed) - _SHOWN} more not approved: {command('status', feature, repo=repo)}")
    if any(statuses[task] not in _MUST_ACT for task in missed):
        lines += ["  # run the failed and skipped tasks again (their dependents follow; approved work is kept)",
                  f"  {command('resume', feature, repo=repo)}"]
    for task in [task for task in missed if statuses[task] in _MUST_ACT][:_SHOWN]:
        lines += [f"  # once you have acted on what stopped {task}",
                  f"  {command('resume', feature, task, repo=repo)}"]
    if len(missed) < len(order):
        lines += ["  # or put only the approved tasks on your branch",
                  f"  {command('land', feature, '--partial', repo=repo)}"]
    return lines
