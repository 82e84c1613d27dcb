"""The user's hooks in `land`'s throwaway worktree, run as they would run for the user's own commit of the whole
landed change (DESIGN §5: `land` is the one commit made as the user, and refuses what their hooks refuse)."""

from __future__ import annotations

import shutil
from pathlib import Path

from orchestrator.repo.git import GitRepo


async def bring_generated_hooks(repo: GitRepo, worktree: Path) -> None:
    """A relative `core.hooksPath` that a tool generates into the checkout and git ignores (husky's `.husky/_`,
    made by `prepare`) is missing from a fresh worktree, where git would then run no hook at all: bring the
    checkout's generated folder over, so the hooks run as they do for the user's own commits."""
    # user_hooks: our own commands see core.hooksPath=/dev/null, the user's hooks are what this is about.
    configured = (await repo.git("config", "--get", "core.hooksPath", cwd=worktree, check=False,
                                 user_hooks=True)).stdout.strip()
    if not configured or Path(configured).is_absolute() or configured.startswith("~"):
        return
    yours, ours = repo.root / configured, worktree / configured
    if yours.is_dir() and not ours.exists() and ours.resolve().is_relative_to(worktree.resolve()):
        shutil.copytree(yours, ours, symlinks=True)


async def pre_commit_on_everything(repo: GitRepo, worktree: Path, tip: str, leave_out: str) -> str | None:
    """The user's pre-commit hook over the whole landed change, staged as one ordinary commit of it would be (on
    a merge commit the pre-commit framework checks only the conflicted files, and a landing lands them all).
    Why it refused, or None; a conflict is left to the merge itself to report. The worktree is put back."""
    staged = await repo.git("merge", "--squash", tip, cwd=worktree, check=False)
    try:
        if not staged.ok:
            return None
        await repo.git("reset", "-q", "HEAD", "--", leave_out, cwd=worktree, check=False)
        hook = await repo.git("hook", "run", "--ignore-missing", "pre-commit", cwd=worktree, check=False,
                              user_hooks=True)
        if hook.ok:
            return None
        return ("your pre-commit hook refused the landed change (run over every file it changes, as your own commit"
                f" of it would be): {hook.tail(15)}")
    finally:
        await repo.git("reset", "-q", "--hard", "HEAD", cwd=worktree, check=False)
        await repo.git("clean", "-q", "-fd", cwd=worktree, check=False)
