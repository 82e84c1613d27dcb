"""What Claude Code's Bash sandbox leaves behind: empty mount points in the user's git dir and in a worktree.

The sandbox makes its deny-write rules on absent paths real by planting empty files and folders there; the CLI
removes them when it ends normally and leaves them when it is killed. Only provably ours are removed: absent before,
empty now, never anything tracked or with content.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from orchestrator.repo.footing import common_git_dir

# Mount points Claude Code's Bash sandbox leaves in the shared git dir of a worktree session (measured with the
# bundled CLI 2.1.33x): empty files and folders, deepest first. Ours to remove when they were absent before.
CLI_STUBS = ("info/.claude-sandbox-noreplace", "objects/info/commit-graphs/.claude-sandbox-noreplace",
             "objects/info/commit-graphs", "objects/info/.claude-sandbox-noreplace", "objects/info/alternates",
             "NOTES_MERGE_WORKTREE", "config.worktree", "config.lock", "glab-cli", "remotes", "branches")
# A leftover `config.lock` makes every `git config` of the user fail ("could not lock config file"). The sandbox's
# is empty and read-only; git's own lock is written to at once and is writable: only the sandbox's is removed.


def absent_stubs(root: Path) -> list[Path]:
    """The stub paths that don't exist yet (taken before the first sandboxed session of a repo starts)."""
    common = common_git_dir(root)
    return [common / name for name in CLI_STUBS if not (common / name).exists()] if common is not None else []


def remove_stubs(absent_before: list[Path]) -> list[str]:
    """Remove what the sandbox left where nothing was: only empty files and empty folders (provably the
    sandbox's mount points, not anything of the user's). Returns what was removed."""
    removed = []
    for path in absent_before:
        try:
            stat = path.lstat()
            is_stub = path.is_file() and not path.is_symlink() and stat.st_size == 0
            if is_stub and not (path.suffix == ".lock" and stat.st_mode & 0o200):
                path.unlink()
            elif path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
                path.rmdir()
            else:
                continue
        except OSError:
            continue
        removed.append(str(path))
    return removed


# Mount points the same sandbox plants in a session's worktree (its deny-write rules on files that are absent):
# empty files the CLI removes when it ends, and leaves when it is killed (kill -9 mid-session, CI of stop 37).
WORKTREE_STUBS = (".bash_profile", ".bashrc", ".profile", ".zprofile", ".zshrc", ".gitconfig", ".gitmodules",
                  ".ripgreprc", ".mcp.json", ".idea", ".vscode", ".claude/agents", ".claude/commands", ".claude/hooks",
                  ".claude/launch.json", ".claude/loop.md", ".claude/output-styles", ".claude/routines",
                  ".claude/scheduled_tasks.json", ".claude/settings.json", ".claude/settings.local.json",
                  ".claude/skills", ".claude/workflows")


def _is_stub(worktree: Path, name: str) -> bool:
    """Whether `name` is an empty file of the worktree's own, not a link, and not behind a folder made a link (an
    agent can make `.claude` one, to a folder of the user's: what is there is not the worktree's)."""
    path = worktree / name
    try:
        return not path.is_symlink() and path.is_file() and not path.lstat().st_size \
            and not any((worktree / folder).is_symlink() for folder in PurePosixPath(name).parents if folder.parts)
    except OSError:
        return False


def worktree_stub_candidates(worktree: Path) -> list[str]:
    """The WORKTREE_STUBS that are empty files in the worktree now (blocking): only these may be stubs to remove,
    and only these need asking git whether they are tracked (none: no git call)."""
    return [name for name in WORKTREE_STUBS if _is_stub(worktree, name)]


def remove_worktree_stubs(worktree: Path, tracked: set[str]) -> list[str]:
    """Remove the sandbox's leftover mount points from a worktree: only untracked empty files (and `.claude` left
    empty by them), never anything with content. Returns what was removed (blocking: callers run it in a thread)."""
    removed = []
    for name in WORKTREE_STUBS:
        if name in tracked or not _is_stub(worktree, name):
            continue
        try:
            (worktree / name).unlink()
        except OSError:
            continue
        removed.append(name)
    claude = worktree / ".claude"
    if removed and claude.is_dir() and not claude.is_symlink() and not any(claude.iterdir()):
        claude.rmdir()
    return removed
