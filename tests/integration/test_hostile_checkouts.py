"""Checkouts a clumsy user (or a hostile repository) brings, from outside through the real CLI: a read-only
checkout (a read-only bind mount by bubblewrap: we run as root, so permissions alone can't make one), a checkout
whose work tree is read-only while its git dir is not, a bare repository, a branch named `autobuild`, `.autobuild`
as a file or a link out. Each writing command: exit 2, one line, no traceback, nothing written."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agents.testing.repos import DEMO_PLAN, make_sample_repo
from orchestrator import sandbox
from orchestrator.cli.as_found import AsFound
from orchestrator.cli.main import main
from orchestrator.errors import InputError
from orchestrator.plan.model import parse_plan
from orchestrator.plan.planner import write_plan
from orchestrator.repo.git import GitRepo
from orchestrator.store.checkpoints import CheckpointStore
from tests.conftest import CliRun, cli_env, git

# Every command that writes, with the --db it takes; resume and answer find no checkpoint first (one line, too).
WRITERS = (["run", "FEAT-001", "--db", "{db}"], ["plan", "add a thing"], ["clean", "--db", "{db}"],
           ["land", "FEAT-001", "--db", "{db}"], ["discard", "FEAT-001"])
NOTHING_TO_RESUME = (["resume", "FEAT-001", "--db", "{db}"],
                     ["answer", "FEAT-001", "TASK-001-q1", "yes", "--db", "{db}"])


def _snapshot(repo: Path) -> tuple[str, str, str, list[str]]:
    """What a command must leave as it found it: refs, HEAD, status, and every file (the git dir's too)."""
    files = sorted(str(p.relative_to(repo)) for p in repo.rglob("*") if "__pycache__" not in p.parts)
    return (git(repo, "for-each-ref"), git(repo, "rev-parse", "HEAD"), git(repo, "status", "--porcelain"), files)


def _one_line_refusal(done: CliRun, *needles: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert all(needle in done.stderr for needle in needles), done.stderr


@pytest.mark.heavy  # seven CLI starts per case (~20 s)
@pytest.mark.skipif(not sandbox.available(), reason=sandbox.why_unavailable())
@pytest.mark.parametrize("writable_git_dir", [False, True])
def test_a_read_only_checkout_is_refused_in_one_line(writable_git_dir: bool, tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", plan=DEMO_PLAN, venv=False)
    (repo / ".autobuild" / "runs").mkdir()
    before = _snapshot(repo)
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    mount = ["--dev-bind", "/", "/", "--ro-bind", str(repo), str(repo)]
    if writable_git_dir:  # only the work tree (and so `.autobuild`) read-only
        mount += ["--bind", str(repo / ".git"), str(repo / ".git")]
    db = tmp_path / "db.sqlite"
    env = cli_env(None, tmp_path)
    for command in (*WRITERS, *NOTHING_TO_RESUME):
        argv = [bwrap, *mount, "--", sys.executable, "-m", "orchestrator",
                *(a.replace("{db}", str(db)) for a in command), "--repo", str(repo)]
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=240,
                              check=False)
        done = CliRun(proc.returncode, proc.stdout, proc.stderr)
        _one_line_refusal(done, *(("can't be written", "read-only") if command in WRITERS else ()))
    assert _snapshot(repo) == before and not db.exists()


def _hostile_repo(tmp_path: Path, case: str) -> tuple[Path, Path]:
    """A repository of the kind `case` names, and a folder outside it that must stay as it is."""
    repo = make_sample_repo(tmp_path / "repo", plan=DEMO_PLAN, venv=False)
    outside = tmp_path / "outside"
    (outside / "worktrees" / "FEAT-001").mkdir(parents=True)  # what clean and discard remove in our folder
    (outside / "worktrees" / "FEAT-001" / "keep.txt").write_text("mine\n")
    (outside / "features").mkdir()
    if case in ("link", "features link", "file"):
        shutil.copytree(repo / ".autobuild", outside, dirs_exist_ok=True)  # the plan, where the link leads
        shutil.rmtree(repo / ".autobuild")
    if case == "link":
        (repo / ".autobuild").symlink_to(outside, target_is_directory=True)
    elif case == "features link":
        (repo / ".autobuild").mkdir()
        (repo / ".autobuild" / "features").symlink_to(outside / "features", target_is_directory=True)
        (repo / ".autobuild" / "tasks").symlink_to(outside / "tasks", target_is_directory=True)
    elif case == "file":
        (repo / ".autobuild").write_text("not a folder\n")
    elif case == "bare":
        git(tmp_path, "clone", "-q", "--bare", str(repo), str(tmp_path / "bare.git"))
        return tmp_path / "bare.git", outside
    else:
        git(repo, "branch", "autobuild")
    return repo, outside


@pytest.mark.parametrize(("case", "reason"), [("link", "is a symlink"), ("file", "is a file"),
                                              ("bare", "is a bare repository"),
                                              ("branch", "a branch named `autobuild`")])
def test_every_writing_command_refuses_a_hostile_checkout_and_writes_nothing(
        case: str, reason: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # should a session start, it reaches nothing
    repo, outside = _hostile_repo(tmp_path, case)
    before, inside = sorted(outside.rglob("*")), sorted(p for p in repo.rglob("*") if "__pycache__" not in p.parts)
    refs = git(repo, "for-each-ref")
    db = tmp_path / "db.sqlite"
    for command in (["run", "FEAT-001", "--db", str(db)], ["plan", "add a thing"], ["clean", "--db", str(db)],
                    ["clean", "FEAT-001", "--db", str(db)], ["discard", "FEAT-001"]):
        code = main([*command, "--repo", str(repo)])
        err = capsys.readouterr().err
        assert (code, err.count("\n")) == (2, 1) and reason in err and "Traceback" not in err, (command, code, err)
    assert sorted(outside.rglob("*")) == before and (outside / "worktrees" / "FEAT-001" / "keep.txt").is_file()
    assert sorted(p for p in repo.rglob("*") if "__pycache__" not in p.parts) == inside
    assert git(repo, "for-each-ref") == refs and not db.exists()


def test_plan_writes_no_file_through_a_features_folder_linked_out(tmp_path: Path) -> None:
    """The planner's plan and task files go through the resolver: a committed `.autobuild/features` link out is
    refused, not written through (the plan itself is refused by the same rule when read)."""
    repo, outside = _hostile_repo(tmp_path, "features link")
    before = sorted(outside.rglob("*"))
    data = yaml.safe_load((outside / "features" / "FEAT-001.yaml").read_text())
    plan = parse_plan({**data, "id": "FEAT-002"}, "the planner")
    with pytest.raises(InputError, match="resolves outside the repo"):
        write_plan(repo, plan)
    assert sorted(outside.rglob("*")) == before


def test_undoing_a_refused_run_removes_nothing_through_a_link_swapped_in(tmp_path: Path) -> None:
    """Exit 2 removes what the refused run made (cli/as_found.py): never what a link planted meanwhile leads to."""
    repo = make_sample_repo(tmp_path / "repo", plan=DEMO_PLAN, venv=False)
    outside = tmp_path / "outside"
    (outside / "runs" / "FEAT-001").mkdir(parents=True)
    (outside / "runs" / "FEAT-001" / "keep.txt").write_text("mine\n")
    found = AsFound(GitRepo(repo), "FEAT-001", "FEAT-001",
                    CheckpointStore.for_repo(repo, str(tmp_path / "db.sqlite"), "FEAT-001")).note()
    (repo / ".autobuild").rename(tmp_path / "moved")
    (repo / ".autobuild").symlink_to(outside, target_is_directory=True)
    found.undo()
    assert (outside / "runs" / "FEAT-001" / "keep.txt").read_text() == "mine\n"
