"""`land`'s recovery runs none of the user's hooks: a half-done landing undone from its journal leaves no trace
of a `post-checkout` hook (our own git commands run with `core.hooksPath=/dev/null`)."""

from __future__ import annotations

from pathlib import Path

from agents.testing.repos import git
from orchestrator.landing import journal
from orchestrator.repo.git import GitRepo


def _repo_with_a_landing_cut_off(root: Path) -> journal.Journal:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "app.py").write_text("old\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=T", "-c", "user.email=t@localhost", "commit", "-q", "-m", "base")
    old = git(root, "rev-parse", "HEAD").strip()
    git(root, "checkout", "-q", "-b", "autobuild/FEAT-001")
    (root / "app.py").write_text("new\n")
    git(root, "-c", "user.name=T", "-c", "user.email=t@localhost", "commit", "-q", "-am", "landed")
    new = git(root, "rev-parse", "HEAD").strip()
    git(root, "checkout", "-q", "main")
    (root / "app.py").write_text("new\n")  # the killed fast-forward had written the landed file
    return journal.Journal(feature="FEAT-001", ref="refs/heads/main", old=old, worktree=str(root / "gone"),
                           tag="no-such-tag", step="moving", new=new, checkout=str(root))


def test_recovery_runs_no_post_checkout_hook_of_the_user(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    left = _repo_with_a_landing_cut_off(root)
    marker = tmp_path / "hook-ran"
    hook = root / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    repo = GitRepo(root)
    journal.write(repo, left)

    said = journal.recover(repo)

    assert (root / "app.py").read_text() == "old\n", said
    assert not marker.exists()
    assert journal.read(repo) is None
