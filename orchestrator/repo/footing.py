"""What a worktree's proof rests on: the files git resolves a worktree from, stamped, so that a worktree git proved
ours (repo/git.py `worktree_problem`, which guards every write) isn't asked about again while none of them changed;
and the shared git dir a checkout resolves to."""

from __future__ import annotations

from pathlib import Path

from agents.bounded import read_text_bounded

Footing = tuple[object, ...]


def footing(path: Path, common_dir: Path) -> Footing | None:
    """What git resolves a worktree from (blocking: callers run it in a thread): the folder, its `.git` file, the
    admin folder's HEAD, commondir, gitdir and config.worktree, and the shared config; each by device, inode, size,
    and modification and change times (a file rewritten or replaced, even with its mtime put back, changes its
    ctime), both the entry and, when it is a link, what it points to (a HEAD made a link to a file elsewhere
    changes with that file). None when `.git` is not a file."""
    dot_git = path / ".git"
    try:
        if not dot_git.is_file():
            return None
        text = read_text_bounded(dot_git).strip()
    except OSError:
        return None
    admin = Path(text.removeprefix("gitdir:").strip())
    admin = admin if admin.is_absolute() else path / admin
    watched = [path, dot_git, admin / "HEAD", admin / "commondir", admin / "gitdir", admin / "config.worktree",
               common_dir / "config"]
    stamps: list[object] = [text]
    try:
        reftable = read_text_bounded(admin / "HEAD").strip() == "ref: refs/heads/.invalid" \
            or (common_dir / "reftable").is_dir()
    except OSError:
        reftable = False
    if reftable:  # HEAD and refs live in reftable stacks these stamps don't cover: git is asked every time
        stamps.append(object())
    for item in watched:
        for read in (item.lstat, item.stat):  # the entry, and what it leads to when it is a link
            try:
                found = read()
                stamps.append((found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns,
                               found.st_mode))
            except OSError:
                stamps.append(None)
    return tuple(stamps)


class Proofs:
    """The worktrees git proved ours (with or without a detached HEAD allowed), each with the footing it was proved
    on: a proof holds only while the footing found now is the same."""

    def __init__(self) -> None:
        self._by: dict[tuple[Path, bool], Footing] = {}

    def holds(self, path: Path, detached_ok: bool, found: Footing) -> bool:
        return self._by.get((path, detached_ok)) == found

    def settle(self, path: Path, detached_ok: bool, found: Footing, problem: str | None) -> None:
        """What git answered on `found`: a proof to remember, or none."""
        if problem is None:
            self._by[(path, detached_ok)] = found
        else:
            self._by.pop((path, detached_ok), None)

    def forget(self, path: Path) -> None:
        """The worktree at `path` is gone."""
        self._by = {key: value for key, value in self._by.items() if key[0] != path}


def common_git_dir(root: Path) -> Path | None:
    """The repository's shared git dir (`.git` of the main checkout, or where a `.git` file points)."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():
        text = dot_git.read_text(errors="replace").strip()
        if text.startswith("gitdir:"):
            admin = (root / text.removeprefix("gitdir:").strip()).resolve()
            common = admin / "commondir"
            return (admin / common.read_text().strip()).resolve() if common.is_file() else admin
    return None
