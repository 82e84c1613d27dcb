"""Files agents and the gate's commands can write, read by the orchestrator: a worktree's `.git`, its admin folder's
HEAD and config, `.gitmodules`, conflicted files, the agents' venv layer's path files, a worktree's package.json. Any
of them made a FIFO never blocks the reader (nor the event loop a graph node reads on), and made a sparse 64 GB file
or a link to /dev/zero is never read whole: each reads as a file that can't be read, whose safe answer is the one
each caller already had for that (ask git, refuse the write, markers left)."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents.sandbox import _git_dirs as agents_git_dirs
from orchestrator.gate.prepare.node_modules import _read_json
from orchestrator.gate.prepare.pyenv import _entries
from orchestrator.gate.prepare.shared_setup import _names_path, _read_scanned
from orchestrator.gate.prepare.submodules import submodules
from orchestrator.graph.nodes.bring_up import markers_left
from orchestrator.repo.config_stamp import stamp
from orchestrator.repo.footing import footing
from orchestrator.repo.queries import head_commit
from orchestrator.sandbox import _git_paths

HUGE = 64 * 2**30


def _made(path: Path, kind: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "sparse":
        with path.open("wb") as handle:
            handle.truncate(HUGE)
    else:
        path.symlink_to("/dev/zero")
    return path


def _soon(read: Callable[[], Any]) -> Any:
    """`read()`'s answer; fails (never hangs the suite) when it is still reading after 60 s."""
    answer: list[Any] = []
    worker = threading.Thread(target=lambda: answer.append(read()), daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the read blocked (a FIFO opened for reading) or is reading without end"
    return answer[0]


def _worktree(tmp_path: Path) -> tuple[Path, Path]:
    """A linked worktree's layout: `.git` a `gitdir:` file, its admin folder with HEAD and commondir."""
    common, worktree = tmp_path / "repo" / ".git", tmp_path / "wt"
    admin = common / "worktrees" / "wt"
    admin.mkdir(parents=True)
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {admin}\n")
    (admin / "commondir").write_text("../..\n")
    (admin / "HEAD").write_text("ref: refs/heads/autobuild/FEAT-001/TASK-001\n")
    (common / "config").write_text("[core]\n\tbare = false\n")
    return worktree, admin


@pytest.mark.parametrize("kind", ["fifo", "sparse", "zero"])
def test_a_worktrees_git_files_made_fifos_or_endless_read_as_unreadable(tmp_path: Path, kind: str) -> None:
    worktree, admin = _worktree(tmp_path)
    (admin / "HEAD").unlink()
    _made(admin / "HEAD", kind)
    assert _soon(lambda: head_commit(worktree)) is None, "git is asked instead"
    _made(admin / "config.worktree", kind)
    assert _soon(lambda: stamp(worktree)) is None, "git is asked instead"
    assert _soon(lambda: footing(worktree, admin.parent.parent)) is not None, "HEAD's stamp, unread, is still taken"

    sparse_git, _ = _worktree(tmp_path / "sparse-git")
    (sparse_git / ".git").unlink()
    _made(sparse_git / ".git", kind)
    assert _soon(lambda: head_commit(sparse_git)) is None
    assert _soon(lambda: footing(sparse_git, tmp_path)) is None
    assert _soon(lambda: agents_git_dirs(sparse_git)) == (None, None)
    assert _soon(lambda: _git_paths(sparse_git)) == []
    assert _soon(lambda: stamp(sparse_git)) is None


@pytest.mark.parametrize("kind", ["fifo", "sparse", "zero"])
def test_gitmodules_venv_path_files_and_package_json_made_unreadable_read_as_absent(tmp_path: Path, kind: str) -> None:
    _made(tmp_path / "checkout" / ".gitmodules", kind)
    assert _soon(lambda: submodules(tmp_path / "checkout")) == {}
    site = tmp_path / "venv" / "lib" / "python3.12" / "site-packages"
    _made(site / "planted.pth", kind)
    (site / "ok.pth").write_text(f"{tmp_path / 'src'}\n")
    assert [entry.source for entry in _soon(lambda: _entries(tmp_path / "venv"))] == ["ok.pth"]
    assert _soon(lambda: _read_json(_made(tmp_path / "pkg" / "package.json", kind))) == {}


def test_a_conflicted_file_that_cant_be_read_still_holds_its_markers(tmp_path: Path) -> None:
    """Only a deleted file is a resolution without reading it: before, any read error counted as resolved, so a
    conflicted file made a FIFO (or unreadable) let the conflict through unjudged."""
    (tmp_path / "resolved.py").write_text("X = 1\n")
    (tmp_path / "marked.py").write_text("<<<<<<< HEAD\nX = 1\n=======\nX = 2\n>>>>>>> theirs\n")
    for name, kind in (("fifo.py", "fifo"), ("sparse.py", "sparse"), ("zero.py", "zero")):
        _made(tmp_path / name, kind)
    (tmp_path / "dangling.py").symlink_to(tmp_path / "nowhere")
    files = ["resolved.py", "marked.py", "fifo.py", "sparse.py", "zero.py", "dangling.py", "deleted.py"]
    assert _soon(lambda: markers_left(tmp_path, files)) == ["marked.py", "fifo.py", "sparse.py", "zero.py",
                                                              "dangling.py"]


def test_a_setup_product_swapped_for_a_fifo_or_grown_while_scanned_is_not_known_free(tmp_path: Path) -> None:
    """A sibling's setup products are scanned while its agent may still be at work there: what `lstat` saw is opened
    and checked again, so a FIFO swapped in never blocks the scan and a file grown past the limit is never read."""
    needles = (os.fsencode(str(tmp_path / "first")),)
    for kind in ("fifo", "sparse"):
        planted = _made(tmp_path / kind / "out" / "planted", kind)
        assert _soon(functools.partial(_read_scanned_or_error, planted)) == "OSError"
    (tmp_path / "fine" / "out").mkdir(parents=True)
    (tmp_path / "fine" / "out" / "a.txt").write_text("nothing of the sibling\n")
    assert _names_path(tmp_path / "fine" / "out", needles) is None
    (tmp_path / "fine" / "out" / "b.txt").write_text(f"{tmp_path / 'first'}/lib\n")
    assert _names_path(tmp_path / "fine" / "out", needles) == str(tmp_path / "fine" / "out" / "b.txt")


def _read_scanned_or_error(path: Path) -> str:
    try:
        return _read_scanned(path).decode()
    except OSError:
        return "OSError"
