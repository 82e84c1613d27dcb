"""Every config file git reads in a checkout, stamped: an answer read from git's config stays valid while the stamp
is the same (commands.py remembers the filter drivers this way: asked ~13 times per gate test, always the same).

The stamp covers the system, global, repository and worktree config files (each by device, inode, size, mtime and
ctime, the entry and what a link leads to) and the environment variables that choose or add to them. None (never
remember) when it can't be sure that these are all git reads: a file that includes others (`[include]`,
`[includeIf]`), a `GIT_DIR` or `GIT_CONFIG*` override, a checkout whose git dir it can't find, a folder below the top.
A stale answer would run a filter driver of the user's, so any doubt means asking git.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from agents.bounded import CONFIG_FILE, read_bounded, read_text_bounded
from orchestrator.processes import run

NAMES = 2
"""A stamp starts with the checkout's own names (its top, its git dir); the rest is what git reads there: two
checkouts whose stamps agree past them read the same config files, unchanged."""
_ENVIRONMENT = ("HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_NOSYSTEM", "PREFIX")
_OVERRIDES = ("GIT_DIR", "GIT_COMMON_DIR", "GIT_WORK_TREE", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
              "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM")


@functools.cache
def _system_files() -> tuple[Path, ...]:
    """Where git's system config can be: /etc (git built with prefix /usr) or its build's `<prefix>/etc`, the
    prefix found from its exec path (`<prefix>/lib/git-core`, `<prefix>/libexec/git-core`). Asked once a process."""
    found = run(["git", "--exec-path"], Path("/"), timeout=30)
    prefixes = {Path(found.stdout.strip()).parent.parent} if found.ok and found.stdout.strip() else set()
    return (Path("/etc/gitconfig"), *sorted(prefix / "etc" / "gitconfig" for prefix in prefixes),
            Path("/usr/local/etc/gitconfig"), Path("/opt/homebrew/etc/gitconfig"))


def stamp(root: Path) -> tuple[object, ...] | None:
    """The stamp of every config file git reads at `root`, a checkout's top (blocking); None: ask git."""
    if any(name in os.environ for name in _OVERRIDES):
        return None
    dirs = _git_dirs(root)
    if dirs is None:
        return None
    admin, common = dirs
    home = Path(os.environ.get("HOME") or Path.home())
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    files = [*_system_files(), xdg / "git" / "config", home / ".gitconfig", common / "config",
             admin / "config.worktree", common / "config.worktree"]
    stamps: list[object] = [str(root), str(admin), *(os.environ.get(name) for name in _ENVIRONMENT)]  # NAMES first
    for path in files:
        try:
            text = read_bounded(path, CONFIG_FILE)
        except FileNotFoundError:
            stamps.append(None)
            continue
        except OSError:
            return None
        if b"include" in text.lower():
            return None
        for read in (path.lstat, path.stat):
            try:
                found = read()
            except OSError:
                return None
            stamps.append((found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns))
        stamps.append(hash(text))
    return tuple(stamps)


def _git_dirs(root: Path) -> tuple[Path, Path] | None:
    """(the checkout's own git dir, the shared one), from `root/.git` (a folder, or a worktree's `gitdir:` file)."""
    dot_git = root / ".git"
    try:
        if dot_git.is_dir() and not dot_git.is_symlink():
            return dot_git, dot_git
        if not dot_git.is_file():
            return None
        text = read_text_bounded(dot_git).strip()
        if not text.startswith("gitdir:"):
            return None
        admin = Path(text.removeprefix("gitdir:").strip())
        admin = admin if admin.is_absolute() else root / admin
        common_file = admin / "commondir"
        if not common_file.is_file():
            return admin, admin
        common = Path(read_text_bounded(common_file).strip())
        return admin, common if common.is_absolute() else admin / common
    except OSError:
        return None
