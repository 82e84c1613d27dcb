"""A gate run's worktree is located once for its snapshots (gate/observe/tracked.py `again`): the second snapshot
reuses it only while no `.git` and no config file git reads there changed; a filter driver the run configured is
switched off in the second snapshot too."""

from __future__ import annotations

import subprocess
from pathlib import Path

from orchestrator.gate.observe import tracked


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


async def test_a_worktree_is_located_again_only_when_its_config_changed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _git(tmp_path, "init", "-q", str(repo))
    (repo / "f").write_text("x")
    _git(repo, "add", "f")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "f")
    where = await tracked.locate(repo)
    assert where is not None and where.stamp is not None
    assert await tracked.again(repo, where) is where
    _git(repo, "config", "filter.planted.clean", "touch /tmp/never")  # what a run may write into its config
    moved = await tracked.again(repo, where)
    assert moved is not where and moved is not None
    assert "filter.planted.clean=" in moved.filters_off
    (repo / ".git").rename(tmp_path / "elsewhere")  # no worktree any more: nothing to compare
    assert await tracked.again(repo, moved) is None
