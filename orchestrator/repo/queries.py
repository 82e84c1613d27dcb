"""Read-only questions about refs, commits and trees (the current branch, what changed, what a file held, who
descends from whom), asked through `GitRepo.read`/`GitRepo.git`: the guarded path's hooks-off, ceiling-bound git.
GitRepo inherits them; git.py keeps what writes."""

from __future__ import annotations

from pathlib import Path

from orchestrator.errors import GitError, InputError
from orchestrator.processes import Completed


class TreeQueries:
    """Queries that write nothing: any git whose `git` runs a command of ours."""

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
        return (await self.git("rev-parse", "HEAD", cwd=worktree)).stdout.strip()


    async def diff(self, worktree: Path, base: str, max_chars: int = 60_000) -> str:
        text = (await self.git("diff", "--stat", "-p", f"{base}..HEAD", cwd=worktree)).stdout
        return text if len(text) <= max_chars else text[:max_chars] + "\n… (diff truncated)"


    async def changed_files(self, worktree: Path, base: str) -> list[str]:
        # Both sides of a rename: a file the task moved away was changed too (the player reports it).
        out = (await self.git("diff", "--name-only", "--no-renames", f"{base}..HEAD", cwd=worktree)).stdout
        return [line for line in out.splitlines() if line]


    async def files_at(self, rev: str) -> list[str]:
        """Every file path in `rev`'s tree."""
        return (await self.git("ls-tree", "-r", "--name-only", "-z", rev)).stdout.split("\0")[:-1]


    async def name_status(self, worktree: Path, base: str) -> str:
        """`git diff --name-status -M` of the worktree's HEAD against `base` (renames found by similarity)."""
        return (await self.git("diff", "--name-status", "-M", f"{base}..HEAD", cwd=worktree)).stdout


    async def show_file(self, rev: str, path: str) -> str | None:
        """The text of `path` at `rev` (None when it isn't there)."""
        done = await self.git("show", f"{rev}:{path}", check=False)
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
        return (await self.git("rev-parse", f"{sha}^{{tree}}")).stdout.strip()


    async def parents(self, sha: str) -> list[str]:
        return (await self.git("rev-list", "--parents", "-n", "1", sha)).stdout.split()[1:]


    async def is_ancestor(self, commit: str, of: str) -> bool:
        return (await self.git("merge-base", "--is-ancestor", commit, of, check=False)).returncode == 0
