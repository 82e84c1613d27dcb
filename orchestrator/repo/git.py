"""Git operations on the target repo: feature/task branches, worktrees, commits, merges.

The one guarded write path: every write in a worktree first proves where it is (a worktree registered in
this repo, on an `autobuild/` branch) and git never discovers a repository on its own from a worktree folder
(`GIT_CEILING_DIRECTORIES`), so a deleted-and-recreated folder can't make git find the user's checkout.
Refs are only ever written under `refs/heads/autobuild/` (the one user branch `land` moves is moved by
repo/guard.py under a LandPermit, never here). Operations that change shared refs or the worktree list are
serialized with one lock per repo.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.errors import GitError, InputError
from orchestrator.processes import Completed, run_async
from orchestrator.repo.commands import NO_FSMONITOR, NO_HOOKS, filters_off, git_sync
from orchestrator.repo.footing import Proofs, footing
from orchestrator.repo.queries import TreeQueries
from orchestrator.repo.sandbox_stubs import remove_worktree_stubs, worktree_stub_candidates

# Commits are made by the orchestrator, with its own identity, and without the repo's hooks.
# Nor a `git maintenance run --auto` after each (one more process per commit): the user's own next git runs it.
_IDENTITY = ["-c", "user.name=AutoBuild", "-c", "user.email=autobuild@localhost", "-c", "commit.gpgsign=false",
             "-c", "maintenance.auto=false"]
AUTOBUILD_REFS = "refs/heads/autobuild/"
# Worktrees, and reports (never committed now; feature branches of older runs carry them, and an ignored file never
# blocks a checkout of such a branch; an untracked one would).
EXCLUDE_LINES = ("/.autobuild/worktrees/", "/.autobuild/runs/")

def feature_branch(feature_id: str) -> str:
    return f"autobuild/{feature_id}"


def _add_exclude_lines(exclude: Path) -> None:
    """Our lines in `.git/info/exclude`, each once (blocking file work: callers run it in a thread)."""
    exclude = exclude.resolve()
    exclude.parent.mkdir(parents=True, exist_ok=True)
    text = exclude.read_text() if exclude.exists() else ""
    missing = [line for line in EXCLUDE_LINES if line not in text.splitlines()]
    if missing:
        exclude.write_text(text + ("" if text.endswith("\n") or not text else "\n") + "\n".join(missing) + "\n")


def task_branch(feature_id: str, task_id: str) -> str:
    # Not autobuild/FEAT/TASK: a ref can't be both a branch and a folder of branches.
    return f"autobuild/{feature_id}.{task_id}"


@dataclass
class MergeResult:
    """A merge that either landed or was aborted with the conflicting files."""

    merged: bool
    sha: str
    conflicts: list[str] = field(default_factory=list)
    detail: str = ""


@dataclass(frozen=True)
class Leash:
    """What `land` puts on the git it starts: `env` (the landing's process tag, which the next command's recovery
    finds) on every one, and `wrap` (a command line that dies with `land`) on those that run the user's code."""

    env: Mapping[str, str]
    wrap: Callable[[list[str]], list[str]]


class GitRepo(TreeQueries):
    """The target repository."""

    # One lock per repo per event loop, on purpose (an asyncio.Lock belongs to one loop).
    _locks: dict[tuple[Path, int], asyncio.Lock] = {}  # noqa: RUF012 - shared by every GitRepo of a repo

    def __init__(self, root: Path) -> None:
        self.root = root
        self.worktrees_dir = root / ".autobuild" / "worktrees"
        self._common_dir: Path | None = None
        self._git_dir: Path | None = None
        self._proofs = Proofs()  # worktree_problem's answers, by footing
        self._filters: tuple[str, ...] | None = None  # the user's filter drivers, switched off (repo/commands.py)
        self.leash: Leash | None = None
        """Set by `land` while it lands: every git it starts carries the landing's tag, and the ones that run the
        user's hooks or write the user's checkout die with it (a kill -9 of `land` leaves neither running)."""

    @property
    def lock(self) -> asyncio.Lock:
        return self._locks.setdefault((self.root, id(asyncio.get_running_loop())), asyncio.Lock())

    # ---- checks before anything is written (sync, used by the CLI) ----
    def read(self, *args: str, cwd: Path | None = None, stdin: str | None = None,
             timeout: float = 120.0) -> Completed:
        """A blocking git command of ours in the repo (or `cwd`): a query, or `land`'s recovery in the user's
        checkout; never the user's hooks, and never a repository git found above a worktree folder."""
        where = cwd or self.root
        return git_sync(where, *self._no_filters(), *args, stdin=stdin, timeout=timeout, env=self._env(where))

    def _no_filters(self) -> tuple[str, ...]:
        if self._filters is None:
            self._filters = filters_off(self.root) if self.root.is_dir() else ()
        return self._filters

    def check(self, allow_unborn: bool = False) -> bool:
        """Fail with an InputError unless this is a git repo with at least one commit; with `allow_unborn`, a
        checkout on a branch with no commit yet passes too (True then: only a plan's `base_branch` can say what
        to build on)."""
        try:
            self._check()
        except InputError:
            if not (allow_unborn and self.root.is_dir()):
                raise
            if self.read("rev-parse", "--verify", "-q", "HEAD").ok or not self.read("symbolic-ref", "-q", "HEAD").ok:
                raise
            return True
        return False

    def _check(self) -> None:
        if not self.root.is_dir():
            raise InputError(f"repo {self.root} does not exist: pass --repo PATH of a git repository")
        top = self.read("rev-parse", "--show-toplevel")
        if not top.ok:
            if self.read("rev-parse", "--is-bare-repository").stdout.strip() == "true":
                raise InputError(f"{self.root} is a bare repository (no checkout to build in): pass --repo of a"
                                 " clone of it")
            raise InputError(f"{self.root} is not a git repository: run `git init` or pass --repo")
        if not self.read("rev-parse", "--verify", "-q", "HEAD").ok:
            raise InputError(f"{self.root} has no commits yet: commit something first")
        if self.read("rev-parse", "--verify", "-q", "refs/heads/autobuild").ok:
            raise InputError(f"{self.root} has a branch named `autobuild`: git can't also hold the run's"
                             " autobuild/… branches; rename it first (git branch -m autobuild <new-name>)")

    # ---- async operations used by graph nodes ----
    def _env(self, cwd: Path) -> dict[str, str] | None:
        """Inside a worktree folder git may not look further up for a repository: a plain folder where a
        worktree used to be must fail, not resolve to the user's checkout."""
        inside = self.worktrees_dir.parts  # not is_relative_to, which builds every parent: asked before each git call
        if cwd.parts[:len(inside)] == inside:
            return {**os.environ, "GIT_CEILING_DIRECTORIES": str(cwd.parent)}
        return None

    async def git(self, *args: str, cwd: Path | None = None, check: bool = True, user_hooks: bool = False,
                  user_filters: bool = False) -> Completed:
        """A git command of ours: no hooks or filter drivers of the user's run, unless `user_hooks` (land's merge and
        commit as the user, which run both) or `user_filters` (land writing the user's checkout as their git
        would)."""
        where = cwd or self.root
        hooks = NO_FSMONITOR if user_hooks else NO_HOOKS
        if self._filters is None:
            await asyncio.to_thread(self._no_filters)
        off = () if user_hooks or user_filters else self._no_filters()
        command, env = ["git", *hooks, *off, *args], self._env(where)
        if self.leash is not None:
            env = {**(env or os.environ), **self.leash.env}
            command = self.leash.wrap(command) if user_hooks or user_filters else command
        result = await run_async(command, where, timeout=300, env=env)
        if check and not result.ok:
            raise GitError(f"git {' '.join(args)} failed: {result.tail(5)}")
        return result

    async def ensure_excluded(self) -> None:
        """Keep worktrees out of `git status` of the user's checkout (.git/info/exclude)."""
        await asyncio.to_thread(_add_exclude_lines, await self.common_dir() / "info" / "exclude")

    async def ensure_branch(self, name: str, start: str) -> str:
        """Create the branch at `start` unless it exists; returns its head."""
        if not name.startswith("autobuild/"):
            raise GitError(f"refusing to create {name}: only autobuild/ branches are ours")
        async with self.lock:  # made, or refused because it exists (asked only then): one git call, not two
            made = await self.git("branch", name, start, check=False)
            if not made.ok and not await asyncio.to_thread(self.has_branch, name):
                raise GitError(f"git branch {name} {start} failed: {made.tail(5)}")
        return await asyncio.to_thread(self.rev, name)

    async def _recreate_worktree(self, path: Path, commitish: str, *options: str) -> None:
        """The one way a worktree is (re)made: only under our worktrees folder, whatever was at `path`
        (a stale worktree, a plain folder put there by hand) cleared first, then `git worktree add`."""
        if not path.resolve().is_relative_to(self.worktrees_dir.resolve()):
            raise GitError(f"refusing to add a worktree at {path}: only {self.worktrees_dir} is ours")
        async with self.lock:
            if path.exists():
                await self.git("worktree", "remove", "--force", str(path), check=False)
                if path.exists():
                    await asyncio.to_thread(shutil.rmtree, path)
            await asyncio.to_thread(path.parent.mkdir, parents=True, exist_ok=True)
            added = await self.git("worktree", "add", "--force", *options, str(path), commitish, check=False)
            if not added.ok:  # a registration whose folder is gone (say, the branch's): pruned, then once more
                await asyncio.to_thread(shutil.rmtree, path, ignore_errors=True)
                await self.git("worktree", "prune")
                await self.git("worktree", "add", "--force", *options, str(path), commitish)

    async def add_worktree(self, path: Path, branch: str, start: str) -> str:
        """(Re)create a worktree at `path` on `branch` reset to `start`; idempotent for resume."""
        await self._recreate_worktree(path, start, "-B", branch)
        return await self.head(path)

    async def add_detached_worktree(self, path: Path, sha: str) -> None:
        """A throwaway worktree at `sha` with no branch (the gate's run on the base): moves no ref."""
        await self._recreate_worktree(path, sha, "--detach")

    async def remove_worktree(self, path: Path, branch: str | None = None) -> None:
        async with self.lock:
            if await asyncio.to_thread(path.exists):
                await self.git("worktree", "remove", "--force", str(path), check=False)
            else:  # its folder went some other way: only its registration is left
                await self.git("worktree", "prune", check=False)
            self._proofs.forget(path)
            if branch and branch.startswith("autobuild/") and await asyncio.to_thread(self.has_branch, branch):
                await self.git("branch", "-D", branch, check=False)

    async def rename_branch(self, name: str, new_name: str) -> None:
        if not (name.startswith("autobuild/") and new_name.startswith("autobuild/")):
            raise GitError(f"refusing to rename {name} to {new_name}: only autobuild/ branches are ours")
        async with self.lock:
            await self.git("branch", "-m", name, new_name)

    async def delete_branch(self, name: str) -> None:
        if not name.startswith("autobuild/"):
            raise GitError(f"refusing to delete {name}: only autobuild/ branches are ours")
        async with self.lock:
            await self.git("branch", "-D", name)

    async def worktree_problem(self, path: Path, detached_ok: bool = False) -> str | None:
        """Why `path` is not a worktree of this repo on an autobuild branch (or, with `detached_ok`, on a
        detached HEAD, which moves no branch), or None when it is. A worktree proven by git is remembered with
        the files git resolved it from (repo/footing.py): while none of them changed, git would answer the same, so it
        isn't asked again (this check guards every write: one git call each was ~15 per task)."""
        found = await asyncio.to_thread(footing, path, await self.common_dir())
        if found is None:
            return f"{path} is not a git worktree (missing or replaced)"
        if self._proofs.holds(path, detached_ok, found):
            return None
        problem = await self._ask_git(path, detached_ok)
        self._proofs.settle(path, detached_ok, found, problem)
        return problem

    async def common_dir(self) -> Path:
        """The repository's shared git folder (asked once)."""
        if self._common_dir is None:
            ours = (await self.git("rev-parse", "--git-common-dir")).stdout.strip()
            self._common_dir = await asyncio.to_thread((self.root / ours).resolve)
        return self._common_dir

    async def git_dir(self) -> Path:
        """The checkout's own git folder (its HEAD and index; a linked worktree's differs from `common_dir`)."""
        if self._git_dir is None:
            path = (await self.git("rev-parse", "--git-dir")).stdout.strip()
            self._git_dir = await asyncio.to_thread((self.root / path).resolve)
        return self._git_dir

    async def _ask_git(self, path: Path, detached_ok: bool) -> str | None:
        # One git call per check (it guards every write): where it is, whose it is, which branch.
        found = await self.git("rev-parse", "--show-toplevel", "--git-common-dir", "--symbolic-full-name", "HEAD",
                               cwd=path, check=False)
        lines = found.stdout.splitlines()
        if not found.ok or len(lines) != 3 or Path(lines[0]).resolve() != path.resolve():
            return f"{path} does not resolve to its own worktree"
        if (path / lines[1]).resolve() != await self.common_dir():
            return f"{path} belongs to another repository"
        branch = "" if lines[2] == "HEAD" else lines[2]
        if detached_ok and not branch:
            return None
        if not branch.startswith(AUTOBUILD_REFS):
            return f"{path} is on {branch or 'a detached HEAD'}, not an autobuild/ branch"
        return None

    async def _guard(self, worktree: Path, detached_ok: bool = False) -> None:
        """Refuse any write that could land outside our worktrees and branches."""
        if not worktree.resolve().is_relative_to(self.worktrees_dir.resolve()):
            raise GitError(f"refusing to write in {worktree}: only worktrees under {self.worktrees_dir} are ours")
        problem = await self.worktree_problem(worktree, detached_ok)
        if problem:
            raise GitError(f"refusing to write: {problem}")

    async def ensure_worktree(self, path: Path, branch: str, sha: str) -> bool:
        """The worktree exactly at `sha` on `branch`; recreated with `git worktree add` if it went missing
        (True: it was, and needs the run's setup again)."""
        if await self.worktree_problem(path) is None:
            return False
        if not branch.startswith("autobuild/"):
            raise GitError(f"refusing to recreate {path} on {branch}: not an autobuild/ branch")
        await self._recreate_worktree(path, sha, "-B", branch)
        return True

    async def reset(self, worktree: Path, sha: str) -> None:
        """Put the worktree exactly at `sha`: the interrupted node runs again on its checkpointed start."""
        await self._guard(worktree)
        await self.git("reset", "-q", "--hard", sha, cwd=worktree)
        await self.git("clean", "-q", "-fd", cwd=worktree)

    async def commit_all(self, worktree: Path, message: str, force: Sequence[Path] = ()) -> str:
        """Commit everything in the worktree (if anything changed), plus `force` paths even if ignored; never the
        empty mount points a killed agent session's sandbox left (WORKTREE_STUBS)."""
        await self._guard(worktree)
        await self._without_sandbox_stubs(worktree)
        await self.git("add", "-A", cwd=worktree)
        for path in force:
            await self.git("add", "-f", "--sparse", "--", str(path), cwd=worktree)  # ours, whatever the sparse set
        staged = await self.git("diff", "--cached", "--quiet", cwd=worktree, check=False)
        if staged.returncode == 1:
            await self.git(*_IDENTITY, "commit", "-q", "--no-verify", "-m", message, cwd=worktree)
        return await self.head(worktree)

    async def _without_sandbox_stubs(self, worktree: Path) -> None:
        if not (candidates := await asyncio.to_thread(worktree_stub_candidates, worktree)):
            return
        listed = await self.git("ls-files", "--", *candidates, cwd=worktree, check=False)
        await asyncio.to_thread(remove_worktree_stubs, worktree, set(listed.stdout.split()))

    async def restore_paths(self, worktree: Path, base: str, paths: Sequence[str], *, detached_ok: bool = False
                            ) -> None:
        """Put paths back exactly as they are at `base` (deleting those that did not exist there)."""
        await self._guard(worktree, detached_ok)
        for path in paths:
            if (await self.git("cat-file", "-e", f"{base}:{path}", cwd=worktree, check=False)).ok:
                await self.git("checkout", base, "--", path, cwd=worktree)
            else:
                await self.git("rm", "-q", "-f", "--", path, cwd=worktree, check=False)

    async def merge(self, worktree: Path, branch: str, message: str, keep_conflicts: bool = False) -> MergeResult:
        """Merge `branch` into the worktree's branch; a conflict is aborted, leaving it unchanged (or, with
        `keep_conflicts`, left in progress: markers in the files, MERGE_HEAD set, for a conflict turn)."""
        await self._guard(worktree)
        async with self.lock:
            # A crash mid-merge leaves MERGE_HEAD behind: clear it before anything else.
            await self.git("merge", "--abort", cwd=worktree, check=False)
            await self.git("reset", "-q", "--hard", "HEAD", cwd=worktree)
            result = await self.git(
                *_IDENTITY, "merge", "--no-ff", "--no-verify", "-m", message, branch, cwd=worktree, check=False
            )
            if result.ok:
                return MergeResult(True, await self.head(worktree))
            listed = await self.git("diff", "--name-only", "--diff-filter=U", cwd=worktree, check=False)
            if not keep_conflicts:
                await self.git("merge", "--abort", cwd=worktree, check=False)
                await self.git("reset", "-q", "--hard", "HEAD", cwd=worktree)
            return MergeResult(
                False, await self.head(worktree), listed.stdout.split(), result.tail(10)
            )

    async def commit_merge(self, worktree: Path, message: str) -> str:
        """Conclude a merge left in progress (a resolved conflict turn) as a merge commit, even when the
        resolution equals HEAD's tree; a worktree with no merge in progress is committed as usual."""
        await self._guard(worktree)
        if not (await self.git("rev-parse", "-q", "--verify", "MERGE_HEAD", cwd=worktree, check=False)).ok:
            return await self.commit_all(worktree, message)
        await self._without_sandbox_stubs(worktree)
        await self.git("add", "-A", cwd=worktree)
        await self.git(*_IDENTITY, "commit", "-q", "--no-verify", "-m", message, cwd=worktree)
        return await self.head(worktree)

    async def advance_branch(self, name: str, new: str, old: str) -> bool:
        """Fast-forward an autobuild/ branch from `old` to its descendant `new`, atomically (compare and swap):
        False, and nothing moved, when the branch is no longer at `old`."""
        if not name.startswith("autobuild/"):
            raise GitError(f"refusing to move {name}: only autobuild/ branches are ours")
        if not await self.is_ancestor(old, new):
            raise GitError(f"refusing to move {name} to {new[:10]}: not a fast-forward of {old[:10]}")
        async with self.lock:
            moved = await self.git("update-ref", "-m", "autobuild: fast-forward", f"refs/heads/{name}", new, old,
                                   check=False)
        return moved.ok

    async def push_branches(self, url: str, branches: Sequence[str], forced: Sequence[str] = ()) -> None:
        """Push autobuild/ branches that exist here to the URL itself (never a remote name: no remote-tracking ref
        moves); `forced` ones may move back (a task branch reset to its base). One git call."""
        specs = []
        for name in (*branches, *forced):
            if not name.startswith("autobuild/"):
                raise GitError(f"refusing to push {name}: only autobuild/ branches are ours")
            if (await self.git("rev-parse", "--verify", "-q", f"refs/heads/{name}", check=False)).ok:
                specs.append(f"{'+' if name in forced else ''}refs/heads/{name}:refs/heads/{name}")
        if specs:
            await self.git("push", "-q", "--no-verify", "--", url, *specs)

    async def merge_as_user(self, worktree: Path, rev: str, message: str, squash: bool,
                            leave_out: Sequence[str] = ()) -> MergeResult:
        """In a detached throwaway worktree (`land`): merge `rev` as a merge commit, or as one squashed commit,
        made by plain `git merge`/`git commit`, so the user's identity, hooks and signing apply (never
        --no-verify); paths under `leave_out` stay as HEAD has them. A conflict or a refusing hook leaves the
        worktree where it was, with the files or the command's output; nothing to commit leaves HEAD as is."""
        await self._guard(worktree, detached_ok=True)
        async with self.lock:
            before = await self.head(worktree)
            # Whatever a gate run left that git doesn't ignore would block the merge.
            await self.git("reset", "-q", "--hard", before, cwd=worktree)
            await self.git("clean", "-q", "-fd", cwd=worktree)
            how = ["--squash"] if squash else ["--no-ff", "--no-commit"]
            result = await self.git("merge", *how, rev, cwd=worktree, check=False, user_hooks=True)
            if result.ok:
                for path in leave_out:
                    await self.git("reset", "-q", before, "--", path, cwd=worktree, check=False)
                staged = await self.git("diff", "--cached", "--quiet", cwd=worktree, check=False)
                if staged.returncode == 0:
                    await self._undo_merge(worktree, before)
                    return MergeResult(True, before)
                result = await self.git("commit", "-q", "-m", message, cwd=worktree, check=False, user_hooks=True)
                if result.ok:
                    return MergeResult(True, await self.head(worktree))
            listed = await self.git("diff", "--name-only", "--diff-filter=U", cwd=worktree, check=False)
            await self._undo_merge(worktree, before)
            return MergeResult(False, before, listed.stdout.split(), result.tail(15))

    async def _undo_merge(self, worktree: Path, sha: str) -> None:
        await self.git("merge", "--abort", cwd=worktree, check=False)
        await self.git("reset", "-q", "--hard", sha, cwd=worktree)
