"""The filter drivers of a checkout are read from git once while no config file git reads changes: a filter added
to the repository's, the worktree's or the global config is seen at once, and a config that includes another file
is never remembered (its stamp can't cover what it includes)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from orchestrator.repo import config_stamp
from orchestrator.repo.commands import filters_off


def _git(where: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=where, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    (tmp_path / "home").mkdir()
    path = tmp_path / "repo"
    path.mkdir()
    _git(path, "init", "-q", "-b", "main")
    _git(path, "config", "filter.one.clean", "cat")
    return path


def _no_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `git` first on PATH that fails: an answer given now was remembered."""
    folder = tmp_path / "no-git"
    folder.mkdir()
    (folder / "git").write_text("#!/bin/sh\nexit 3\n")
    (folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin:/bin")


def test_the_answer_is_remembered_while_no_config_changes(repo: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    first = filters_off(repo)
    assert "filter.one.clean=" in first
    _no_git(tmp_path, monkeypatch)
    assert filters_off(repo) == first


@pytest.mark.parametrize("where", ["repository", "global", "worktree"])
def test_a_filter_added_to_any_config_file_is_seen_at_once(repo: Path, tmp_path: Path, where: str) -> None:
    worktree = tmp_path / "wt"
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
    _git(repo, "worktree", "add", "-q", "--detach", str(worktree))
    _git(repo, "config", "extensions.worktreeConfig", "true")
    assert "filter.one.clean=" in filters_off(worktree)
    assert "filter.two.clean=" not in filters_off(worktree)
    scope = {"repository": ["--local"], "global": ["--global"], "worktree": ["--worktree"]}[where]
    _git(worktree, "config", *scope, "filter.two.clean", "cat")
    assert "filter.two.clean=" in filters_off(worktree)


def test_a_config_that_includes_another_file_is_never_remembered(repo: Path, tmp_path: Path) -> None:
    assert config_stamp.stamp(repo) is not None
    extra = tmp_path / "extra.gitconfig"
    extra.write_text("")
    _git(repo, "config", "include.path", str(extra))
    assert config_stamp.stamp(repo) is None
    extra.write_text('[filter "three"]\n\tclean = cat\n')
    assert "filter.three.clean=" in filters_off(repo)


def test_a_folder_below_the_top_and_a_git_dir_override_are_never_remembered(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "sub").mkdir()
    assert config_stamp.stamp(repo / "sub") is None
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    assert config_stamp.stamp(repo) is None


def test_worktrees_that_read_the_same_config_files_share_one_answer(repo: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
    _git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "wt"))
    _git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "own"))
    _git(repo, "config", "extensions.worktreeConfig", "true")
    _git(tmp_path / "own", "config", "--worktree", "filter.mine.clean", "cat")  # a config file the others don't read
    first, path = filters_off(repo), os.environ["PATH"]
    _no_git(tmp_path, monkeypatch)
    assert filters_off(tmp_path / "wt") == first
    monkeypatch.setenv("PATH", path)
    assert "filter.mine.clean=" in filters_off(tmp_path / "own")
    assert "filter.mine.clean=" not in filters_off(tmp_path / "wt")
