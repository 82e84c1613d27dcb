"""The user's git filter drivers (smudge, clean, process) switched off for our own git commands, Git LFS's aside.

A filter is a command the repository's config names and `.gitattributes` applies: `git worktree add`, `reset
--hard` and `add` in our worktrees would run it. Like hooks, it is the user's code we never asked to run. Git
LFS stays on: without its smudge a worktree holds pointer files, and `run` checks up front that its objects are
here (repo/lfs.py).
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.processes import run

KEPT = frozenset({"lfs"})


def switched_off(root: Path) -> tuple[str, ...]:
    """`-c filter.<name>.smudge= …` for every filter driver the config of `root` defines (an empty command is no
    filter to git), except those in KEPT (blocking: one git call)."""
    listed = run(["git", "config", "--name-only", "--get-regexp", r"^filter\..+\.(smudge|clean|process)$"], root)
    names = sorted({line[len("filter."):line.rindex(".")] for line in listed.stdout.splitlines() if "." in line}
                   - KEPT)
    return tuple(arg for name in names for key in ("smudge", "clean", "process", "required")
                 for arg in ("-c", f"filter.{name}.{key}={'false' if key == 'required' else ''}"))
