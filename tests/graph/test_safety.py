"""Repository safety on real git: whatever an agent does and whatever breaks, the user's HEAD, index, working
tree and refs outside autobuild/ stay byte-identical, and the run either goes on or stops with the evidence."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, writes
from orchestrator.cli.demo import git, make_sample_repo
from orchestrator.repo.lock import lock_path, repo_lock
from tests.graph.harness import CALC_FILES, Workflow, plan, task


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


async def test_an_agent_moving_main_fails_its_task_and_main_is_put_back(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, task("A"), task("B"))
    before = user_view(repo)
    # `git branch -f main` is refused while main is checked out; update-ref is not.
    rogue = writes({"calc/a.py": "A = 1\n"}, effect=in_worktree(
        "sh", "-c", "git update-ref refs/heads/main $(git commit-tree 'HEAD^{tree}' -p HEAD -m rogue)"))
    agents = ScriptedAgents({("player", "A"): rogue, ("player", "B"): writes({"calc/b.py": "B = 1\n"}),
                             "coach": approve()})
    run = await Workflow(repo, agents).run()
    assert run.status("A") == "failed" and "refs/heads/main moved" in run.results["A"]["reason"]
    assert run.status("B") == "approved-unverified", "the sibling is unaffected"
    assert user_view(repo) == before
    rescued = git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/autobuild/rescued/")
    assert "heads/main" in rescued, "what the agent pointed main at is kept, under autobuild/"
    assert "repo_tampering" in run.kinds("A")


async def test_an_agent_committing_in_the_users_checkout_is_undone(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, task("A"))
    before = user_view(repo)
    sneaky = writes({"calc/a.py": "A = 1\n"}, effect=in_worktree(
        "git", "-C", str(repo), "-c", "user.name=x", "-c", "user.email=x@x", "commit", "--allow-empty", "-qm", "x"))
    run = await Workflow(repo, ScriptedAgents({"player": sneaky, "coach": approve()})).run()
    assert run.status("A") == "failed" and "changed your repository" in run.results["A"]["reason"]
    assert user_view(repo) == before


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
            refused = subprocess.run([sys.executable, "-m", "orchestrator", *args, "--repo", str(repo)],
                                     capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
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
