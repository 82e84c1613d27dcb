"""The target repo's conventions for its agents, as Claude Code would give them: CLAUDE.md memory (the root's,
`.claude/CLAUDE.md`, nested folders' files, `@path` imports) and the tool-neutral AGENTS.md beside each, read the
same way, `.claude/settings.json`'s `permissions.deny`, and its `hooks` for runs that ask for them.

We read them ourselves rather than letting the CLI load project settings, because those would also bring the
repo's `env`, `apiKeyHelper` and MCP servers, none of which an unattended run should execute.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MEMORY_NAMES = ("AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
"""The root's memory files, in the order read: the general first, so the more specific one (a later file) wins
where they differ. A file already read (an `@AGENTS.md` import, a CLAUDE.md linked to AGENTS.md) is read once."""
NESTED_NAMES = ("AGENTS.md", "CLAUDE.md")
"""A nested folder's memory files, in the same order."""
MAX_IMPORT_DEPTH = 5  # Claude Code's own limit for `@path` imports
MAX_FILE_CHARS = 40_000
MAX_TOTAL_CHARS = 120_000
_SKIP_DIRS = {".git", ".autobuild", ".venv", "venv", "node_modules", "__pycache__", ".tox", "target", "dist",
              "build", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
_IMPORT = re.compile(r"(?<![\w`])@((?:~|\.{1,2})?/?[\w./-]+)")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass
class Conventions:
    """What the repo tells its agents: memory text and tool rules to deny."""

    memory: str = ""
    deny: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    hooks: dict[str, Any] = field(default_factory=dict)
    """The project's `hooks` settings: run only when the run asks for them (`--repo-hooks`)."""


def load_conventions(root: Path) -> Conventions:
    """The conventions of the checkout at `root` (a worktree: the task's own version of the files)."""
    found = Conventions()
    seen: set[Path] = set()
    parts: list[str] = []
    for path in _memory_files(root):
        text = _expand(path, root, seen, depth=0)
        if text.strip():
            shown = path.relative_to(root).as_posix()
            found.sources.append(shown)
            parts.append(f"## {shown}\n\n{text.strip()}")
    memory = "\n\n".join(parts)
    if len(memory) > MAX_TOTAL_CHARS:
        memory = memory[:MAX_TOTAL_CHARS] + "\n\n(… the rest of the project's CLAUDE.md and AGENTS.md files was cut)"
    found.memory = memory
    found.deny, found.hooks = _project_settings(root)
    return found


def _memory_files(root: Path) -> list[Path]:
    """The root's memory files first, then nested folders' AGENTS.md and CLAUDE.md, shallowest first."""
    files = [root / name for name in MEMORY_NAMES if (root / name).is_file()]
    nested: list[Path] = []
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir() and not entry.is_symlink() and entry.name not in _SKIP_DIRS:
                stack.append(entry)
            elif entry.name in NESTED_NAMES and folder != root and entry.parent.name != ".claude":
                nested.append(entry)
    return files + sorted(nested, key=lambda p: (len(p.relative_to(root).parts), p.parent.as_posix(),
                                                 NESTED_NAMES.index(p.name)))


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except OSError:
        return False


def _expand(path: Path, root: Path, seen: set[Path], depth: int) -> str:
    """The file's text with `@path` imports inlined (outside code blocks and spans, inside the repo only)."""
    resolved = path.resolve()
    if resolved in seen or not _inside(path, root):
        return ""
    seen.add(resolved)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")[:MAX_FILE_CHARS]
    except OSError:
        return ""
    if depth >= MAX_IMPORT_DEPTH:
        return text
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        out.append(line)
        if fenced:
            continue
        for target in _IMPORT.findall(re.sub(r"`[^`]*`", "", line)):
            imported = (path.parent / target).resolve() if not target.startswith("~") else None
            if imported is not None and imported.is_file():
                body = _expand(imported, root, seen, depth + 1)
                if body.strip():
                    out.append(f"\n<!-- imported from {target} -->\n{body.strip()}\n")
    return "\n".join(out)


def _project_settings(root: Path) -> tuple[list[str], dict[str, Any]]:
    """`permissions.deny` (always honoured) and `hooks` (only on request) of the project's settings; nothing
    else of them (env, apiKeyHelper, MCP servers) ever reaches a session."""
    rules: list[str] = []
    hooks: dict[str, Any] = {}
    for name in (".claude/settings.json", ".claude/settings.local.json"):
        if not _inside(root / name, root):
            continue  # a symlink out of the repo
        try:
            data = json.loads((root / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        deny = (data.get("permissions") or {}).get("deny")
        rules += [rule for rule in deny or [] if isinstance(rule, str) and rule.strip() and rule not in rules]
        if isinstance(data.get("hooks"), dict):
            for event, matchers in data["hooks"].items():
                if isinstance(matchers, list):
                    hooks.setdefault(str(event), []).extend(matchers)
    return rules, hooks
