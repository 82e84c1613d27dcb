"""How every git command of ours starts: none of the user's hooks, fsmonitor or filter drivers run.

Hooks (post-checkout on `worktree add`, pre-commit, reference-transaction…) and an fsmonitor daemon are code
of the user's we never asked to run; one failing hook would block every run. A filter driver (smudge, clean,
process) is a command the repository's config names and `.gitattributes` applies: `worktree add`, `reset --hard`
and `add` in our worktrees would start it. Git LFS's stays on: without its smudge a worktree holds pointer files,
and `run` checks up front that its objects are here (repo/lfs.py). `land`, the one commit made as the user, runs
hooks and filters (GitRepo.git's `user_hooks`), never the fsmonitor.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from orchestrator.errors import InputError
from orchestrator.processes import Completed, run
from orchestrator.repo import config_stamp

NO_FSMONITOR = ("-c", "core.fsmonitor=false")
NO_HOOKS = ("-c", "core.hooksPath=/dev/null", *NO_FSMONITOR)


def git_sync(where: Path, *args: str, stdin: str | None = None, timeout: float = 120.0,
             env: dict[str, str] | None = None) -> Completed:
    """A git command of ours, blocking (the CLI's checks, `land`'s recovery, reports): none of the user's hooks
    run. The one sync way to start git; `GitRepo.git` is the async one."""
    return run(["git", *NO_HOOKS, *args], where, timeout=timeout, env=env, stdin_text=stdin)


def check_branch_name(name: str, what: str = "base") -> str:
    """A branch name by git's own rules (`git check-ref-format --branch`), short (never `refs/…`), never a pattern
    or one of ours (`autobuild`, `autobuild/…`); InputError (one line) otherwise. Refspecs and fetches built from
    it can then only name that one branch."""
    ours = name == "autobuild" or name.startswith("autobuild/")
    if not name or name.startswith(("-", "refs/")) or "@{" in name or ours:
        why = "an autobuild/ branch is a run's, never a base" if ours else "not a plain branch name"
        raise InputError(f"{what} {name!r}: {why}: name the branch the feature starts from (e.g. main)")
    done = git_sync(Path(tempfile.gettempdir()), "check-ref-format", "--branch", name)
    if not done.ok or done.stdout.strip() != name:
        raise InputError(f"{what} {name!r} is not a valid branch name (git check-ref-format --branch): name the"
                         " branch the feature starts from (e.g. main)")
    return name


KEPT = frozenset({"lfs"})


_FILTERS: dict[tuple[object, ...], tuple[str, ...]] = {}
"""filters_off's answers, by the stamp of the config files they were read from (without the checkout's own names:
a repository's worktrees that read the same files share one answer)."""
_KEPT_ANSWERS = 64


def filters_off(root: Path) -> tuple[str, ...]:
    """`-c filter.<name>.smudge= …` for every filter driver the config of `root` defines (an empty command is no
    filter to git), except those in KEPT (blocking: one git call, none while the config files are unchanged)."""
    found = config_stamp.stamp(root)
    files = found[config_stamp.NAMES:] if found is not None else None
    if files is not None and (known := _FILTERS.get(files)) is not None:
        return known
    off = _filters_off(root)
    if files is not None and config_stamp.stamp(root) == found:  # unchanged while git read them
        _FILTERS[files] = off
        while len(_FILTERS) > _KEPT_ANSWERS:
            del _FILTERS[next(iter(_FILTERS))]
    return off


def _filters_off(root: Path) -> tuple[str, ...]:
    listed = run(["git", "config", "--name-only", "--get-regexp", r"^filter\..+\.(smudge|clean|process)$"], root)
    names = sorted({line[len("filter."):line.rindex(".")] for line in listed.stdout.splitlines() if "." in line}
                   - KEPT)
    return tuple(arg for name in names for key in ("smudge", "clean", "process", "required")
                 for arg in ("-c", f"filter.{name}.{key}={'false' if key == 'required' else ''}"))
