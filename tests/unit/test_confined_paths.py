"""Paths that come from outside stay under their named root: a symlink a repository commits can't carry a
written file (or a read) out of the clone, into `.git`, or anywhere else; a write follows no symlink swapped in."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from agents.testing.repos import DEMO_PLAN, git, make_sample_repo
from orchestrator.cli.main import main
from orchestrator.errors import InputError, PlanError
from orchestrator.plan.model import load_plan
from orchestrator.repo import confined, remote
from orchestrator.repo.git import GitRepo
from orchestrator.store import traces


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    root = tmp_path / "clone"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "docs").symlink_to(tmp_path / "outside", target_is_directory=True)
    (root / "hooks").symlink_to(root / ".git" / "hooks", target_is_directory=True)
    (root / "inner").mkdir()
    (root / "alias").symlink_to(root / "inner", target_is_directory=True)
    (tmp_path / "outside").mkdir()
    return root


def test_plan_files_through_a_committed_symlink_are_refused_and_nothing_is_written(clone: Path,
                                                                                   tmp_path: Path) -> None:
    with pytest.raises(InputError, match="outside") as refused:
        asyncio.run(remote.write_plan(GitRepo(clone), None, {"docs/pwned.md": "x"}))
    assert "\n" not in str(refused.value)
    assert list((tmp_path / "outside").iterdir()) == []


@pytest.mark.parametrize("relative", ["hooks/pre-commit", ".git/hooks/post-checkout", ".GIT/config", "/etc/x",
                                      "../x", "", "a/../../x"])
def test_plan_files_into_git_or_out_are_refused(clone: Path, relative: str) -> None:
    hooks = sorted(os.listdir(clone / ".git" / "hooks"))
    with pytest.raises(InputError):
        asyncio.run(remote.write_plan(GitRepo(clone), None, {relative: "#!/bin/sh\ntouch /tmp/pwned\n"}))
    assert sorted(os.listdir(clone / ".git" / "hooks")) == hooks


def test_a_symlink_that_stays_inside_is_followed(clone: Path) -> None:
    asyncio.run(remote.write_plan(GitRepo(clone), None, {"alias/task.md": "body", "new/deep/t.md": "deep"}))
    assert (clone / "inner" / "task.md").read_text() == "body"
    assert (clone / "new" / "deep" / "t.md").read_text() == "deep"


def test_a_write_follows_no_symlink_swapped_in_after_the_check(clone: Path, tmp_path: Path) -> None:
    """The check resolved `inner/` as a folder; a link put in its place before the write is not followed."""
    resolved = confined.resolve_under(clone, "inner/x.md", "plan_files")
    (clone / "inner").rename(clone / "inner-was")
    (clone / "inner").symlink_to(tmp_path / "outside", target_is_directory=True)
    with pytest.raises(InputError, match="symlink"):
        confined.write_resolved(clone, resolved, "x", "plan_files")
    assert list((tmp_path / "outside").iterdir()) == []


def test_reads_stay_under_the_root(clone: Path, tmp_path: Path) -> None:
    (tmp_path / "outside" / "id_rsa").write_text("SECRET")
    with pytest.raises(InputError, match="outside") as refused:
        confined.read_under(clone, "docs/id_rsa", "plan", limit=1000)
    assert "SECRET" not in str(refused.value)
    (clone / "inner" / "ok.md").write_text("fine")
    assert confined.read_under(clone, "alias/ok.md", "plan", limit=1000) == b"fine"


def test_oversized_plan_files_are_refused(clone: Path) -> None:
    with pytest.raises(InputError, match="limit"):
        asyncio.run(remote.write_plan(GitRepo(clone), None, {"big.md": "x" * 6_000_000}))
    assert not (clone / "big.md").exists()


def test_a_plan_by_id_linked_out_of_the_repo_is_not_read(clone: Path, tmp_path: Path) -> None:
    (tmp_path / "outside" / "id_rsa").write_text("id: FEAT-001\nname: SECRET\ntasks: []\n")
    features = clone / ".autobuild" / "features"
    features.mkdir(parents=True)
    (features / "FEAT-001.yaml").symlink_to(tmp_path / "outside" / "id_rsa")
    with pytest.raises(PlanError, match="outside the repo") as refused:
        load_plan(clone, "FEAT-001")
    assert "SECRET" not in str(refused.value)


@pytest.mark.parametrize("kind", ["link", "file"])
def test_autobuild_as_a_file_or_a_link_out_is_refused_before_a_run(clone: Path, tmp_path: Path, kind: str) -> None:
    if kind == "link":
        (clone / ".autobuild").symlink_to(tmp_path / "outside", target_is_directory=True)
    else:
        (clone / ".autobuild").write_text("not a folder")
    with pytest.raises(InputError, match="symlink" if kind == "link" else "is a file"):
        confined.check_own_folders(clone)


def test_a_bare_repository_and_a_branch_named_autobuild_are_refused_in_one_line(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", venv=False)
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(tmp_path / "bare.git"))
    with pytest.raises(InputError, match="is a bare repository"):
        GitRepo(tmp_path / "bare.git").check()
    git(repo, "branch", "autobuild")
    with pytest.raises(InputError, match="a branch named `autobuild`") as refused:
        GitRepo(repo).check()
    assert "\n" not in str(refused.value)


def test_a_run_refuses_a_runs_folder_linked_out_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # should a session start, it reaches nothing
    repo = make_sample_repo(tmp_path / "repo", plan=DEMO_PLAN)
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".autobuild" / "runs").mkdir()
    (repo / ".autobuild" / "runs" / "FEAT-001").symlink_to(outside, target_is_directory=True)
    code = main(["run", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "db.sqlite")])
    err = capsys.readouterr().err
    assert (code, err.count("\n")) == (2, 1) and "is a symlink" in err, err
    assert list(outside.iterdir()) == [] and not (tmp_path / "db.sqlite").exists()


def test_a_trace_follows_no_link_put_in_the_runs_folder_mid_run(clone: Path, tmp_path: Path) -> None:
    traces.append(clone, "FEAT-001", "TASK-001", {"event": "start"})
    assert traces.read(clone, "FEAT-001", "TASK-001")[0]["event"] == "start"
    (clone / ".autobuild" / "runs" / "FEAT-002").symlink_to(tmp_path / "outside", target_is_directory=True)
    with pytest.raises(InputError, match="symlink"):
        traces.append(clone, "FEAT-002", "TASK-001", {"event": "start"})
    assert list((tmp_path / "outside").iterdir()) == []
