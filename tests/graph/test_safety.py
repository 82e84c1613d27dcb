"""Repository safety on real git: whatever an agent does and whatever breaks, the user's HEAD, index, working
tree and refs outside autobuild/ are never changed by us, and never put back either: a change the user makes
during a run is theirs and is kept; without the sandbox a change around a session stops the task."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, writes
from orchestrator import sandbox
from orchestrator.repo.lock import lock_path, repo_lock
from tests.cli_in_process import cli_in_process
from tests.graph.harness import CALC_FILES, Workflow, plan, task, unsandboxed


def user_view(repo: Path) -> tuple[str, ...]:
    """Everything the user owns: HEAD, refs outside autobuild/, index bytes, tracked files' status."""
    refs = [line for line in git(repo, "for-each-ref", "--format=%(refname) %(objectname)").splitlines()
            if not line.startswith("refs/heads/autobuild/")]
    index = hashlib.sha256((repo / ".git" / "index").read_bytes()).hexdigest()
    return (git(repo, "symbolic-ref", "HEAD"), git(repo, "rev-parse", "HEAD"), "\n".join(refs), index,
            git(repo, "status", "--porcelain", "--untracked-files=no"))


def repo_with(tmp_path: Path, *tasks: dict[str, Any]) -> Path:
    return make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(*tasks, verify=None))


def in_worktree(*command: str) -> Any:
    return lambda worktree: subprocess.run(list(command), cwd=worktree, check=False, capture_output=True)


def in_checkout(repo: Path, *command: str) -> Any:
    """A callback run while the player's session runs: the user working in their own checkout meanwhile."""
    return lambda _worktree: subprocess.run(list(command), cwd=repo, check=True, capture_output=True)


USER = ("-c", "user.name=Me", "-c", "user.email=me@example.com")


@pytest.mark.skipif(not sandbox.agents_available(), reason=sandbox.why_unavailable())
async def test_a_user_commit_and_a_user_checkout_during_a_player_session_are_kept(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, task("A"), task("B", "A"))
    git(repo, "branch", "other")

    def commit(_worktree: Path) -> None:
        (repo / "notes.txt").write_text("my own work\n")
        git(repo, "add", "notes.txt")
        git(repo, *USER, "commit", "-qm", "my commit during the run")

    agents = ScriptedAgents({("player", "A"): writes({"calc/a.py": "A = 1\n"}, effect=commit),
                             ("player", "B"): writes({"calc/b.py": "B = 1\n"},
                                                     effect=in_checkout(repo, "git", "checkout", "-q", "other")),
                             "coach": approve()})
    run = await Workflow(repo, agents).run()
    assert run.status("A") == "approved-unverified" and run.status("B") == "approved-unverified"
    assert git(repo, "log", "-1", "--format=%s", "main").strip() == "my commit during the run", "the commit stays"
    assert git(repo, "symbolic-ref", "HEAD").strip() == "refs/heads/other", "the user's checkout stays"
    assert git(repo, "show", "main:notes.txt") == "my own work\n"
    assert not (repo / "notes.txt").exists(), "the tree is the user's `other`, not a mix of branches"
    assert git(repo, "status", "--porcelain", "--untracked-files=no").strip() == "", "nothing half put back"
    assert git(repo, "for-each-ref", "refs/heads/autobuild/rescued/").strip() == ""
    noted = [e for e in run.events if e["event"] == "user_state_changed"]
    assert any("refs/heads/main moved" in change for e in noted if e.get("task") == "A" for change in e["changes"])
    assert any("HEAD changed refs/heads/main → refs/heads/other" in change
               for e in noted if e.get("task") == "B" for change in e["changes"])
    assert "repo_tampering" not in run.kinds()
    report = (repo / ".autobuild/runs/FEAT-001/A/AUTO-RUN.md").read_text()
    assert "refs/heads/main moved" in report and "not reverted" in report



async def test_a_run_never_starts_from_a_snapshot_of_an_earlier_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Unsandboxed, a change seen around a session fails its task. The user commits right after one run ends (well
    # within the 2 s a watched operation may reuse the last snapshot): the next run must not count it as its own.
    unsandboxed(tmp_path, monkeypatch)
    repo = repo_with(tmp_path, task("A"))
    script: dict[Any, Any] = {("player", "A"): writes({"calc/a.py": "A = 1\n"}), "coach": approve()}
    first = await Workflow(repo, ScriptedAgents(script), thread="one").run()
    assert first.status("A") == "approved-unverified"
    (repo / "mine.txt").write_text("mine\n")
    git(repo, "add", "mine.txt")
    git(repo, "-c", "user.name=me", "-c", "user.email=me@x", "commit", "-qm", "my commit between runs")
    git(repo, "branch", "-D", "autobuild/FEAT-001")
    second = await Workflow(repo, ScriptedAgents(script), thread="two").run()
    assert second.status("A") == "approved-unverified", second.results["A"].get("reason")
    assert "repo_tampering" not in second.kinds()

async def test_without_the_sandbox_a_change_around_a_session_fails_its_task_and_nothing_is_reverted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unsandboxed(tmp_path, monkeypatch)
    assert not sandbox.available()
    repo = repo_with(tmp_path, task("A"), task("B"))
    rogue = writes({"calc/a.py": "A = 1\n"}, effect=in_worktree(
        "sh", "-c", "git update-ref refs/heads/main $(git commit-tree 'HEAD^{tree}' -p HEAD -m rogue)"))
    agents = ScriptedAgents({("player", "A"): rogue, ("player", "B"): writes({"calc/b.py": "B = 1\n"}),
                             "coach": approve()})
    run = await Workflow(repo, agents).run()
    assert run.status("A") == "failed"
    assert "refs/heads/main moved" in run.results["A"]["reason"]
    assert "nothing reverted" in run.results["A"]["reason"]
    assert git(repo, "log", "-1", "--format=%s", "main").strip() == "rogue", "not put back: it might be the user's"
    assert git(repo, "for-each-ref", "refs/heads/autobuild/rescued/").strip() == ""
    assert "repo_tampering" in run.kinds("A")
    unavailable = [event for event in run.events if event["event"] == "sandbox_unavailable"]
    assert len(unavailable) == 1 and "bubblewrap can't start a sandbox here" in unavailable[0]["detail"]


async def test_a_worktree_replaced_by_a_plain_folder_is_recreated_and_nothing_lands_on_main(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, task("A"))
    before = user_view(repo)
    crash = Turn(raises=OSError("the machine went down"))
    agents = ScriptedAgents({("player", "A"): [crash, writes({"calc/a.py": "A = 1\n"})], "coach": approve()})
    workflow = Workflow(repo, agents, checkpointer=InMemorySaver())
    first = await workflow.run()
    assert first.output is None
    worktree = repo / ".autobuild/worktrees/FEAT-001/A"
    shutil.rmtree(worktree)
    worktree.mkdir()
    (worktree / "stray.txt").write_text("a plain folder where the worktree was\n")
    second = await workflow.run(fresh_input=False)
    assert second.status("A") == "approved-unverified"
    assert user_view(repo) == before
    assert git(repo, "show", "autobuild/FEAT-001:calc/a.py") == "A = 1\n"
    assert "stray.txt" not in git(repo, "ls-tree", "-r", "--name-only", "autobuild/FEAT-001")


def lock_holder(repo: Path) -> subprocess.Popen[str]:
    """Another process holding the repository's lock as `run FEAT-001` (returns once it holds it)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; from orchestrator.repo.lock import "
         "repo_lock\nwith repo_lock(Path(sys.argv[1]), 'run FEAT-001'):\n print('held', flush=True); time.sleep(60)",
         str(repo)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_a_second_writer_on_the_repo_is_refused_whatever_its_db(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, task("A"))
    holder = lock_holder(repo)
    try:
        before = user_view(repo)
        for args in (["run", "FEAT-001", "--db", str(tmp_path / "other.sqlite")], ["run", "A", "--ignore-deps"],
                     ["clean"]):
            refused = cli_in_process(tmp_path, *args, "--repo", str(repo))  # main here; the holder is a process
            assert refused.returncode == 2, refused.stderr
            assert f"already being run by pid {holder.pid} (`run FEAT-001` since" in refused.stderr
            assert "Traceback" not in refused.stderr
        assert user_view(repo) == before
        assert not (tmp_path / "other.sqlite").exists(), "nothing written"
    finally:
        holder.kill()
        holder.wait()


def test_the_lock_of_a_killed_holder_is_taken_over_with_a_message(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, task("A"))
    holder = lock_holder(repo)
    holder.kill()  # SIGKILL: the holder's record stays in the lock file, the kernel drops its flock
    holder.wait()
    notices: list[str] = []
    with repo_lock(repo, "clean", notices.append):
        assert json.loads(lock_path(repo).read_text())["command"] == "clean"
    assert len(notices) == 1, notices
    assert notices[0].startswith(f"taking over the lock of pid {holder.pid} (`run FEAT-001` since ")
    assert notices[0].endswith("): that process is gone")
