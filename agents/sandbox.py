"""Claude Code's own Bash sandbox for a session in a task's worktree: the settings that make it write only the
worktree, its git admin folder, the object store and the run's own folders, and what it refused."""

from __future__ import annotations

from pathlib import Path

from agents.bounded import read_text_bounded


def _git_dirs(cwd: Path) -> tuple[Path | None, Path | None]:
    """The worktree's own git admin folder and the repository's common git dir (None outside a worktree)."""
    dot_git = cwd / ".git"
    try:
        text = read_text_bounded(dot_git).strip() if dot_git.is_file() else ""
    except OSError:
        return None, None
    if not text.startswith("gitdir:"):
        return None, None
    admin = (cwd / text.removeprefix("gitdir:").strip()).resolve()
    common_file = admin / "commondir"
    try:
        common = (admin / read_text_bounded(common_file).strip()).resolve() if common_file.is_file() else admin
    except OSError:
        common = admin
    return admin, common


# What the user owns in the shared git dir, which Claude Code's sandbox leaves writable for a worktree session:
# their branches and tags, HEAD, index and logs (refs are ours to move only through the orchestrator).
_USER_GIT_FILES = ("refs", "packed-refs", "HEAD", "index", "logs", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD",
                   "config", "hooks", "info")


def settings(cwd: Path, writable: tuple[Path, ...], unreadable: tuple[Path, ...] = ()) -> dict[str, object]:
    """Claude Code's Bash sandbox for a session in `cwd`: commands can't run outside it, and write only the
    worktree, its git admin folder, the object store and `writable` (measured with the bundled CLI: it makes the
    whole common git dir writable for a worktree, so the user's refs, HEAD and index are denied here; a path is
    denied only when it exists, as a missing one would be made unreadable); `unreadable` (files or folders, which
    must exist when the session starts: the run makes the gate's folder first) can't be read by any command
    (measured: a file reads "Permission denied", a folder reads as empty)."""
    admin, common = _git_dirs(cwd)
    allow = [str(path) for path in writable]
    deny: list[str] = []
    if admin is not None and common is not None:
        allow += [str(admin), str(common / "objects")]
        deny = [str(common / name) for name in _USER_GIT_FILES if (common / name).exists()]
    filesystem: dict[str, list[str]] = {"allowWrite": allow, "denyWrite": deny}
    if unreadable:
        filesystem["denyRead"] = [str(path.resolve()) for path in unreadable]
    return {"enabled": True, "failIfUnavailable": True, "allowUnsandboxedCommands": False,
            "autoAllowBashIfSandboxed": True, "filesystem": filesystem}


SANDBOX_REFUSED = "read-only file system"
"""Matched case-blind: bash says "Read-only file system", zsh "(eval):1: read-only file system: PATH" (the CLI runs
the user's $SHELL; seen on CI), node "EROFS: read-only file system"."""


def refusals(tool: str | None, content: object) -> list[str]:
    """What the Bash sandbox refused in one tool result (writes outside the worktree fail read-only)."""
    if isinstance(content, list):
        text = "\n".join(str(item.get("text", "")) for item in content if isinstance(item, dict))
    else:
        text = str(content or "")
    lines = [line.strip() for line in text.splitlines() if SANDBOX_REFUSED in line.lower()]
    name = (tool or "Bash").split(":", 1)[0]
    return [f"{name}: sandbox refused a write: {line[:300]}" for line in lines[:5]]
