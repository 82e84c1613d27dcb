"""Read-only questions about refs, commits and trees (the current branch, what changed, what a file held, who
descends from whom), asked through `GitRepo.read`/`GitRepo.git`: the guarded path's hooks-off, ceiling-bound git.
GitRepo inherits them; git.py keeps what writes."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from agents.bounded import read_text_bounded
from orchestrator.errors import GitError, InputError
from orchestrator.processes import Completed

PACKED_REFS = 256_000_000
"""The most read of a packed-refs file (a repository with many tags has a large one; a commondir an agent redirected
may lead anywhere)."""

_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_NAME_STATUS: dict[tuple[str, ...], str] = {}
"""Diffs of a worktree's HEAD against a base (name_status, changed_files) by (worktree, base commit, HEAD commit,
options), the oldest dropped first."""
_REMEMBERED = 256
_TREES_KEPT = 8
"""File lists of commits a GitRepo keeps (a large repository's is megabytes)."""
_TEXT_KEPT = 256 * 1024
"""A file's text at a commit is kept up to this size (a large generated file is read again)."""


def head_commit(worktree: Path) -> str | None:
    """The commit a worktree's HEAD names, read from its files (blocking): its git dir's HEAD, then the branch's
    loose ref or its packed-refs line; None when the files can't say for sure (a reftable repository, a symbolic
    ref to a symbolic ref, an unborn branch)."""
    try:
        dot_git = worktree / ".git"
        if dot_git.is_dir():
            admin = common = dot_git
        else:
            admin = Path(read_text_bounded(dot_git).strip().removeprefix("gitdir:").strip())
            admin = admin if admin.is_absolute() else worktree / admin
            common_file = admin / "commondir"
            common = admin / read_text_bounded(common_file).strip() if common_file.is_file() else admin
        head = read_text_bounded(admin / "HEAD").strip()
        if not head.startswith("ref:"):
            return head if _SHA.fullmatch(head) else None
        ref = head.removeprefix("ref:").strip()
        if not ref.startswith("refs/heads/") or ".." in ref or (common / "reftable").exists():
            return None
        loose = common / ref
        if loose.exists():
            text = read_text_bounded(loose).strip()
            return text if _SHA.fullmatch(text) else None
        packed = common / "packed-refs"
        lines = read_text_bounded(packed, PACKED_REFS).splitlines() if packed.is_file() else []
    except (OSError, UnicodeDecodeError):
        return None
    found = [line.split(" ", 1)[0] for line in lines if line.endswith(" " + ref)]
    return found[0] if len(found) == 1 and _SHA.fullmatch(found[0]) else None


class TreeQueries:
    """Queries that write nothing: any git whose `git` runs a command of ours. What a commit (a full id) holds never
    changes: its file list, a file's text, its tree and its ancestry are read once per GitRepo (a gate run and its
    accounting ask for the same ones several times)."""

    _at_commit: dict[tuple[str, str, str], str | list[str]]

    def _commit_reads(self) -> dict[tuple[str, str, str], str | list[str]]:
        try:
            return self._at_commit
        except AttributeError:  # GitRepo's __init__ is its own: made on first use
            self._at_commit = {}
            return self._at_commit

    def _known(self, key: tuple[str, str, str]) -> str | list[str] | None:
        return self._commit_reads().get(key)

    def _remember(self, key: tuple[str, str, str], value: str | list[str], limit: int = _REMEMBERED) -> None:
        known = self._commit_reads()
        known[key] = value
        kinds = [other for other in known if other[0] == key[0]]
        for other in kinds[:-limit]:  # the oldest of its kind first
            del known[other]

    def read(self, *args: str, cwd: Path | None = None) -> Completed:
        raise NotImplementedError  # GitRepo.read

    async def git(self, *args: str, cwd: Path | None = None, check: bool = True) -> Completed:
        raise NotImplementedError  # GitRepo.git

    def current_branch(self) -> str:
        result = self.read("symbolic-ref", "--short", "-q", "HEAD")
        if not result.ok:
            raise InputError("HEAD is detached: check out a branch or set base_branch in the plan")
        return result.stdout.strip()


    def has_branch(self, name: str) -> bool:
        return self.read("rev-parse", "--verify", "-q", f"refs/heads/{name}").ok


    def worktree_list(self) -> list[dict[str, str]]:
        """Every registered worktree: `path`, `head` and `branch` (a full ref, "" when detached)."""
        rows: list[dict[str, str]] = []
        for line in self.read("worktree", "list", "--porcelain").stdout.splitlines():
            key, _, value = line.partition(" ")
            if key == "worktree":
                rows.append({"path": value, "head": "", "branch": ""})
            elif key in ("HEAD", "branch") and rows:
                rows[-1]["head" if key == "HEAD" else "branch"] = value
        return rows


    def rev(self, ref: str) -> str:
        result = self.read("rev-parse", "--verify", "-q", f"{ref}^{{commit}}")
        if not result.ok:
            raise GitError(f"unknown revision {ref}")
        return result.stdout.strip()

    async def head(self, worktree: Path) -> str:
        """The commit the worktree's HEAD names: read from its files when they say for sure (no process; asked
        several times by each gate run and landing), else by git."""
        if (found := await asyncio.to_thread(head_commit, worktree)) is not None:
            return found
        return (await self.git("rev-parse", "HEAD", cwd=worktree)).stdout.strip()


    async def diff(self, worktree: Path, base: str, max_chars: int = 60_000) -> str:
        text = (await self.git("diff", "--stat", "-p", f"{base}..HEAD", cwd=worktree)).stdout
        return text if len(text) <= max_chars else text[:max_chars] + "\n… (diff truncated)"


    async def changed_files(self, worktree: Path, base: str) -> list[str]:
        # Both sides of a rename: a file the task moved away was changed too (the player reports it).
        out = await self._diff_to_head(worktree, base, "--name-only", "--no-renames")
        return [line for line in out.splitlines() if line]


    async def files_at(self, rev: str) -> list[str]:
        """Every file path in `rev`'s tree."""
        key = ("files", rev, "")
        if isinstance(known := self._known(key), list):
            return list(known)
        files = (await self.git("ls-tree", "-r", "--name-only", "-z", rev)).stdout.split("\0")[:-1]
        if _SHA.fullmatch(rev):
            self._remember(key, list(files), _TREES_KEPT)
        return files


    async def listing(self, rev: str, *options: str) -> list[str]:
        """`git ls-tree <options> -z <rev>`'s entries (`<mode> <type> <object>\t<path>`), read once per commit."""
        key = ("listing", rev, " ".join(options))
        if isinstance(known := self._known(key), list):
            return list(known)
        entries = (await self.git("ls-tree", *options, "-z", rev)).stdout.split("\0")[:-1]
        if _SHA.fullmatch(rev):
            self._remember(key, list(entries), _TREES_KEPT)
        return entries


    async def name_status(self, worktree: Path, base: str) -> str:
        """`git diff --name-status -M` of the worktree's HEAD against `base` (renames found by similarity). Asked
        by the spec check, the code screen and the clean room of one gate run."""
        return await self._diff_to_head(worktree, base, "--name-status", "-M")

    async def _diff_to_head(self, worktree: Path, base: str, *options: str) -> str:
        """`git diff <options> base..HEAD` in the worktree: between two commits it never changes, so it is
        remembered by the commits when `base` is one and HEAD reads as one from its files."""
        head = await asyncio.to_thread(head_commit, worktree) if _SHA.fullmatch(base) else None
        key = (str(worktree), base, head or "", *options)
        if head is not None and (known := _NAME_STATUS.get(key)) is not None:
            return known
        text = (await self.git("diff", *options, f"{base}..HEAD", cwd=worktree)).stdout
        if head is not None and await asyncio.to_thread(head_commit, worktree) == head:  # HEAD held meanwhile
            _NAME_STATUS[key] = text
            while len(_NAME_STATUS) > _REMEMBERED:
                del _NAME_STATUS[next(iter(_NAME_STATUS))]
        return text


    async def show_file(self, rev: str, path: str) -> str | None:
        """The text of `path` at `rev` (None when it isn't there)."""
        key, absent = ("show", rev, path), ("absent", rev, path)
        if isinstance(known := self._known(key), str):
            return known
        if self._known(absent) is not None:
            return None
        done = await self.git("show", f"{rev}:{path}", check=False)
        if _SHA.fullmatch(rev) and done.ok and len(done.stdout) <= _TEXT_KEPT:
            self._remember(key, done.stdout)
        elif _SHA.fullmatch(rev) and f"does not exist in '{rev}'" in done.stderr:  # the commit was read: not an
            self._remember(absent, "")  # object missing from a partial clone, which a later fetch may bring
        return done.stdout if done.ok else None


    async def grep_files(self, rev: str, text: str, word: bool = False) -> list[str]:
        """The files of `rev`'s tree that hold `text` (a fixed string; `word`: as a whole word)."""
        done = await self.git("grep", "-l", "-I", "-F", *(("-w",) if word else ()), "-e", text, rev, "--",
                              check=False)
        prefix = f"{rev}:"
        return [line.removeprefix(prefix) for line in done.stdout.splitlines() if line]


    async def patch_of(self, worktree: Path, base: str, path: str) -> str:
        """The worktree HEAD's diff of one path against `base`, without context."""
        return (await self.git("diff", "-U0", f"{base}..HEAD", "--", path, cwd=worktree)).stdout


    async def tree_of(self, sha: str) -> str:
        key = ("tree", sha, "")
        if isinstance(known := self._known(key), str):
            return known
        tree = (await self.git("rev-parse", f"{sha}^{{tree}}")).stdout.strip()
        if _SHA.fullmatch(sha):
            self._remember(key, tree)
        return tree


    async def parents(self, sha: str) -> list[str]:
        return (await self.git("rev-list", "--parents", "-n", "1", sha)).stdout.split()[1:]


    async def is_ancestor(self, commit: str, of: str) -> bool:
        """Whether `commit` is `of` or an ancestor of it; between two commits (full ids) that never changes, so it is
        asked once per GitRepo (a landing asks before it merges and again before it moves the branch)."""
        key = ("ancestor", commit, of)
        if isinstance(known := self._known(key), str):
            return known == "yes"
        done = await self.git("merge-base", "--is-ancestor", commit, of, check=False)
        if _SHA.fullmatch(commit) and _SHA.fullmatch(of) and done.returncode in (0, 1):  # 1: not one; else an error
            self._remember(key, "yes" if done.returncode == 0 else "no")
        return done.returncode == 0
