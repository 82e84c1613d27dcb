"""Layouts people have: a sparse checkout (our reports never depend on the sparse set), a run from one of the
user's linked worktrees (the main worktree's `.autobuild/`, that worktree's branch as the base, the only ref
`land` moves), an orphan or unborn checkout with `base_branch` set, and missing LFS objects (exit 2 before any
session, with the cause and the hint)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from orchestrator.cli.main import main
from orchestrator.errors import InputError
from orchestrator.graph import runner
from orchestrator.settings import RunSettings
from tests.graph.harness import CALC_FILES, Workflow, plan, task

SPARSE_FILES = {**CALC_FILES, "docs/guide.md": "# guide\n", "docs/more/deep.md": "deep\n"}


async def test_a_sparse_checkout_merges_keeps_the_reports_and_lands(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=SPARSE_FILES, plan=plan(task("A"), task("B", "A")))
    git(repo, "sparse-checkout", "set", "calc")
    assert not (repo / "docs").exists(), "docs/ is outside the sparse set"
    agents = ScriptedAgents({("player", "A"): writes({"calc/sub.py": "def sub(a, b):\n    return a - b\n"}),
                             ("player", "B"): writes({"calc/mul.py": "def mul(a, b):\n    return a * b\n"}),
                             "coach": approve()})
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "db.sqlite")) as saver:
        result = await Workflow(repo, agents, checkpointer=saver).run()
    assert result.status("A") == "approved" and result.status("B") == "approved", result.results
    merged = git(repo, "ls-tree", "-r", "--name-only", "autobuild/FEAT-001")
    assert "calc/sub.py" in merged and "calc/mul.py" in merged and "docs/more/deep.md" in merged
    assert not [name for name in merged.splitlines() if name.startswith(".autobuild/runs/")], "reports stay uncommitted"
    assert (repo / ".autobuild/runs/FEAT-001/A/AUTO-RUN.md").is_file()
    assert git(repo, "sparse-checkout", "list").split() == ["calc"], "the user's sparse set is unchanged"
    git(repo, "config", "user.name", "Dev")
    git(repo, "config", "user.email", "dev@example.com")
    code = await asyncio.to_thread(main, ["land", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "db.sqlite")])
    assert code == 0 and (repo / "calc/mul.py").is_file() and not (repo / "docs").exists()
    assert "docs/more/deep.md" in git(repo, "ls-tree", "-r", "--name-only", "main")
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""


async def test_from_a_linked_worktree_its_branch_is_the_base_and_the_only_ref_land_moves(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("A")))
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "topic", str(linked))
    (linked / "TOPIC.md").write_text("topic work\n")
    git(linked, "add", "TOPIC.md")
    git(linked, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-qm", "topic work")
    main_before, topic_before = git(repo, "rev-parse", "main").strip(), git(repo, "rev-parse", "topic").strip()
    db = str(tmp_path / "db.sqlite")
    agents = ScriptedAgents({("player", "A"): writes({"calc/sub.py": "def sub(a, b):\n    return a - b\n"}),
                             "coach": approve()})
    settings = RunSettings(repo=repo, checkout=linked / "calc", target="FEAT-001", db=db, agents=agents,
                           interactive=False)
    run_plan = runner.prepare(settings)
    assert run_plan.base_branch == "topic", "the branch checked out where the command ran"
    summary = await runner.execute(run_plan, lambda event: None)
    assert summary.results["A"]["status"] == "approved"
    assert git(repo, "merge-base", "autobuild/FEAT-001", "topic").strip() == topic_before, "started from topic"
    refs_before = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/main", "refs/tags")
    code = await asyncio.to_thread(main, ["land", "FEAT-001", "--repo", str(linked), "--db", db])
    assert code == 0
    assert git(repo, "rev-parse", "main").strip() == main_before
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert refs_before == git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/main",
                              "refs/tags")
    assert git(repo, "rev-parse", "topic").strip() != topic_before and (linked / "calc/sub.py").is_file()
    assert not (repo / "calc/sub.py").exists(), "the main worktree is not touched"


async def test_an_orphan_checkout_with_base_branch_set_runs_from_that_branch(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("A"), base_branch="main"))
    git(repo, "checkout", "-q", "--orphan", "gh-pages")
    git(repo, "rm", "-rq", "--cached", ".")
    master = git(repo, "rev-parse", "main").strip()
    db = str(tmp_path / "db.sqlite")
    agents = ScriptedAgents({("player", "A"): writes({"calc/sub.py": "def sub(a, b):\n    return a - b\n"}),
                             "coach": approve()})
    settings = RunSettings(repo=repo, target="FEAT-001", db=db, agents=agents, interactive=False)
    summary = await runner.execute(runner.prepare(settings), lambda event: None)
    assert summary.results["A"]["status"] == "approved", summary.results
    assert git(repo, "merge-base", "autobuild/FEAT-001", "main").strip() == master
    assert git(repo, "symbolic-ref", "HEAD").strip() == "refs/heads/gh-pages", "the user's checkout stays"
    code = await asyncio.to_thread(main, ["land", "FEAT-001", "--repo", str(repo), "--db", db])
    assert code == 0 and git(repo, "rev-parse", "main").strip() != master
    assert "calc/sub.py" in git(repo, "ls-tree", "-r", "--name-only", "main")

    without = make_sample_repo(tmp_path / "other", files=CALC_FILES, plan=plan(task("A")))
    git(without, "checkout", "-q", "--orphan", "fresh")
    with pytest.raises(InputError, match=r"no commits on its branch yet .* set base_branch in the plan"):
        runner.prepare(RunSettings(repo=without, target="FEAT-001", db=db, agents=agents, interactive=False))


@pytest.mark.skipif(shutil.which("git-lfs") is None, reason="git-lfs is not installed (`make install` adds it)")
@pytest.mark.heavy
def test_missing_lfs_objects_are_exit_2_before_any_session_with_the_cause_and_the_hint(tmp_path: Path) -> None:
    origin = make_sample_repo(tmp_path / "origin", files=CALC_FILES, venv=False)
    git(origin, "lfs", "install", "--local")  # never the user's global config
    git(origin, "lfs", "track", "*.bin")
    (origin / "model.bin").write_bytes(bytes(range(256)) * 8)
    git(origin, "add", "-A")
    git(origin, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-qm", "a large file")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True, capture_output=True,
                   env={**os.environ, "GIT_LFS_SKIP_SMUDGE": "1"})
    git(clone, "lfs", "install", "--local")
    shutil.rmtree(origin)  # the objects can't be fetched now
    (clone / ".autobuild/features").mkdir(parents=True)
    (clone / ".autobuild/features/FEAT-001.yaml").write_text(yaml.safe_dump(plan(task("A"))))
    db = tmp_path / "db.sqlite"
    command = [sys.executable, "-m", "orchestrator", "run", "FEAT-001", "--repo", str(clone), "--db", str(db)]
    env = {k: v for k, v in os.environ.items() if k != "GIT_LFS_SKIP_SMUDGE"}
    refused = subprocess.run(command, check=False, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "Git LFS object(s) of main are not in this repository (model.bin)" in refused.stderr
    assert "GIT_LFS_SKIP_SMUDGE=1" in refused.stderr and "git lfs fetch" in refused.stderr
    assert not db.exists() and not (clone / ".autobuild/db.json").exists()
    assert git(clone, "for-each-ref", "refs/heads/autobuild/") == ""
    skipped = subprocess.run([*command, "--dry-run"], check=False, capture_output=True, text=True,
                             stdin=subprocess.DEVNULL, env={**env, "GIT_LFS_SKIP_SMUDGE": "1"})
    assert skipped.returncode == 0, skipped.stderr
