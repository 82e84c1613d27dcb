"""A gate run judges the commit's own files (gate/prepare/checkout.py through gate/prepare/fresh_tree.py), on real git:
what an agent can do to its worktree's index — hide an edit behind `--skip-worktree` or `--assume-unchanged`, stage a
file no commit has, flip a mode, move a submodule or edit inside one — is undone before the gate runs there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agents.testing.repos import git, make_sample_repo
from orchestrator.gate.prepare import fresh_tree
from orchestrator.repo.git import GitRepo

GOOD, BROKEN = "def mul(a, b):\n    return a * b\n", "def mul(a, b):\n    return a + b\n"


async def test_what_the_index_hides_is_put_back_as_committed(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", {"src/calc.py": BROKEN, "src/other.py": "X = 1\n",
                                                "run.sh": "#!/bin/sh\necho ok\n"})
    worktree = repo / ".autobuild" / "worktrees" / "FEAT-001" / "TASK-001"
    git(repo, "worktree", "add", "-q", "--detach", str(worktree), "HEAD")
    await fresh_tree.record(GitRepo(repo), worktree, "setup")
    git(worktree, "update-index", "--skip-worktree", "src/calc.py")
    (worktree / "src" / "calc.py").write_text(GOOD)  # the good code, where the gate would run, never committed
    git(worktree, "update-index", "--assume-unchanged", "src/other.py")
    (worktree / "src" / "other.py").write_text("X = 2\n")
    (worktree / "src" / "planted.py").write_text("import sys\n")
    git(worktree, "add", "src/planted.py")  # staged, never committed
    os.chmod(worktree / "run.sh", 0o755)
    assert sorted(git(worktree, "status", "--porcelain", "--ignored").split()) == ["A", "M", "run.sh", "src/planted.py"]
    await fresh_tree.clean(GitRepo(repo), worktree)
    assert (worktree / "src" / "calc.py").read_text() == BROKEN
    assert (worktree / "src" / "other.py").read_text() == "X = 1\n"
    assert not (worktree / "src" / "planted.py").exists()
    assert not os.access(worktree / "run.sh", os.X_OK)
    assert git(worktree, "ls-files", "-v").split()[::2] == ["H", "H", "H"], "no flag the agent set is left"


@pytest.mark.heavy
async def test_a_submodule_is_put_back_at_its_recorded_commit_without_its_dirt(tmp_path: Path) -> None:
    library = make_sample_repo(tmp_path / "lib", {"lib.py": "VALUE = 1\n"})
    first = git(library, "rev-parse", "HEAD").strip()
    repo = make_sample_repo(tmp_path / "repo", {"src/calc.py": GOOD})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "vendor/lib")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "vendor")
    (library / "lib.py").write_text("VALUE = 2\n")
    git(library, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "later")
    worktree = repo / ".autobuild" / "worktrees" / "FEAT-001" / "TASK-001"
    git(repo, "worktree", "add", "-q", "--detach", str(worktree), "HEAD")
    git(worktree, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init")
    await fresh_tree.record(GitRepo(repo), worktree, "setup")
    inside = worktree / "vendor" / "lib"
    git(inside, "update-index", "--skip-worktree", "lib.py")
    (inside / "lib.py").write_text("VALUE = 3\n")
    (inside / "extra.py").write_text("planted\n")
    await fresh_tree.clean(GitRepo(repo), worktree)
    assert (inside / "lib.py").read_text() == "VALUE = 1\n"
    assert not (inside / "extra.py").exists()
    (worktree / "vendor" / "lib" / ".git").unlink()  # as if never checked out: git sees no file written there
    for child in inside.iterdir():
        child.unlink()
    (inside / "lib.py").write_text("VALUE = 4\n")
    await fresh_tree.clean(GitRepo(repo), worktree)
    assert list(inside.iterdir()) == [], "a submodule not checked out is emptied again"
    git(worktree, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init", "--force")
    git(inside, "fetch", "-q", str(library))
    git(inside, "checkout", "-q", "FETCH_HEAD")  # the submodule moved to a commit the tree doesn't record
    await fresh_tree.clean(GitRepo(repo), worktree)
    assert git(inside, "rev-parse", "HEAD").strip() == first
    assert (inside / "lib.py").read_text() == "VALUE = 1\n"


async def test_a_tracked_file_setup_changed_is_kept_while_it_holds_what_setup_made(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", {"package-lock.json": "{}\n", "src/calc.py": GOOD})
    worktree = repo / ".autobuild" / "worktrees" / "FEAT-001" / "TASK-001"
    git(repo, "worktree", "add", "-q", "--detach", str(worktree), "HEAD")
    (worktree / "package-lock.json").write_text('{"lockfileVersion": 3}\n')  # an install rewrote the lockfile
    await fresh_tree.record(GitRepo(repo), worktree, "setup")
    assert await fresh_tree.clean(GitRepo(repo), worktree) == ([], False)
    assert (worktree / "package-lock.json").read_text() == '{"lockfileVersion": 3}\n'
    (worktree / "package-lock.json").write_text('{"planted": true}\n')
    gone, again = await fresh_tree.clean(GitRepo(repo), worktree)
    assert gone == ["package-lock.json"] and again, "put back, and setup runs again"
    assert (worktree / "package-lock.json").read_text() == "{}\n"
