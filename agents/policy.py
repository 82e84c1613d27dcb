"""Permission policy enforced by a PreToolUse hook: stay in the worktree, keep out of .autobuild/, no push, and
read nothing the run keeps from the agents (hidden acceptance tests)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

WRITE_TOOLS = {"Write", "Edit", "MultiEdit", "NotebookEdit"}
SEARCH_TOOLS = {"Grep", "Glob", "LS"}
"""Tools that read a folder's files or names: refused on a folder that holds something unreadable."""
_GLOB_CHARS = re.compile(r"[*?\[{]")
_GIT_PUSH = re.compile(r"(^|[;&|(\s])git(\s+-\S+(\s+\S+)?)*\s+push\b")
# Subcommands that move refs, HEAD or the index, or reach another checkout: the orchestrator owns all of that
# (it commits each turn itself). Options between `git` and the subcommand (-C DIR, -c k=v) are skipped over.
_GIT_REF_WRITE = re.compile(
    r"(^|[;&|(\s`])git(\s+-\S+(\s+[^-\s]\S*)?)*\s+(branch|checkout|switch|reset|rebase|merge|pull|fetch|tag|"
    r"update-ref|symbolic-ref|worktree|commit|stash|cherry-pick|revert|am|restore|replace|notes|filter-branch|"
    r"clone|init|gc|prune|reflog)\b")
_PARENT_GIT = re.compile(r"GIT_DIR=|GIT_WORK_TREE=|--git-dir|--work-tree")


@dataclass
class ToolPolicy:
    """What one session may do; `check` returns a denial reason or None."""

    root: Path
    read_only: bool = False
    file_scope: list[str] = field(default_factory=list)
    frozen: list[str] = field(default_factory=list)
    unreadable: tuple[Path, ...] = ()
    """Absolute files or folders no tool may read (the sandbox keeps Bash off them)."""
    denials: list[str] = field(default_factory=list)

    def check(self, tool_name: str, tool_input: dict[str, Any]) -> str | None:
        if self.unreadable and (reason := self._check_read(tool_name, tool_input)):
            return reason
        if tool_name in WRITE_TOOLS:
            return self._check_write(str(tool_input.get("file_path") or tool_input.get("notebook_path") or ""))
        if tool_name == "Bash":
            command = str(tool_input.get("command", ""))
            if _GIT_PUSH.search(command):
                return "git push is not allowed: the orchestrator owns branches and merges"
            if _GIT_REF_WRITE.search(command) or _PARENT_GIT.search(command):
                return ("git commands that change branches, commits, the index or other checkouts are not allowed:"
                        " the orchestrator commits your work after each turn (git status/diff/log/show are fine)")
            if ".autobuild" in command and not self.read_only:
                return "commands touching .autobuild/ are not allowed: it holds the orchestrator's state"
        return None

    def _check_read(self, tool_name: str, tool_input: dict[str, Any]) -> str | None:
        """A read of an unreadable file, or a search over a folder holding one (a symlink is followed first)."""
        hidden = [Path(os.path.realpath(path)) for path in self.unreadable]
        said = "it is a hidden acceptance test: only the gate runs it, and its failures come back to you by name"
        for key in ("file_path", "notebook_path", "path"):
            raw = str(tool_input.get(key) or "")
            if not raw and key == "path" and tool_name in SEARCH_TOOLS:
                raw = "."
            if not raw:
                continue
            target = Path(os.path.realpath(self.root / raw))
            if any(target == path or target.is_relative_to(path) for path in hidden):
                return f"{raw} can't be read: {said}"
            if tool_name in SEARCH_TOOLS and any(path.is_relative_to(target) for path in hidden):
                return f"{tool_name} over {raw} would read a hidden acceptance test: search inside your worktree"
        pattern = str(tool_input.get("pattern") or "") if tool_name == "Glob" else ""
        if pattern.startswith("/"):
            prefix = Path(os.path.realpath(_GLOB_CHARS.split(pattern, 1)[0].rsplit("/", 1)[0] or "/"))
            if any(path.is_relative_to(prefix) or prefix.is_relative_to(path) for path in hidden):
                return f"Glob {pattern} reaches a hidden acceptance test: search inside your worktree"
        return None

    def _check_write(self, raw_path: str) -> str | None:
        if self.read_only:
            return "this role is read-only: the coach reviews and runs tests, it does not change files"
        if not raw_path:
            return "a write needs a file path"
        root = Path(os.path.realpath(self.root))
        target = Path(os.path.realpath(self.root / raw_path))
        if not target.is_relative_to(root):
            return f"{raw_path} is outside the task's worktree {root}: only write inside it"
        return self._check_relative(target.relative_to(root).as_posix())

    def _check_relative(self, relative: str) -> str | None:
        if relative in (".git", ".autobuild") or relative.startswith((".git/", ".autobuild/")):
            return f"{relative} is orchestrator state: do not modify it"
        if relative in self.frozen:
            return f"{relative} is a frozen acceptance test: make the code pass it, do not change it"
        if self.file_scope and not any(_matches(relative, pattern) for pattern in self.file_scope):
            return f"{relative} is outside this task's file scope ({', '.join(self.file_scope)})"
        return None

    async def hook(self, hook_input: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        """PreToolUse hook callback: deny with a reason the model sees, and remember it."""
        reason = self.check(str(hook_input.get("tool_name", "")), dict(hook_input.get("tool_input") or {}))
        if reason is None:
            return {}
        self.denials.append(f"{hook_input.get('tool_name')}: {reason}")
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }


def _matches(path: str, pattern: str) -> bool:
    pattern = pattern.rstrip("/")
    if pattern.endswith("/**"):
        prefix = pattern[:-3]
        return path == prefix or path.startswith(prefix + "/")
    return fnmatch(path, pattern) or fnmatch(path, pattern.replace("**/", ""))
