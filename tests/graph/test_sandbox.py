"""The gate and setup run sandboxed (bubblewrap), our git commands run none of the user's hooks, and what the user
owns beyond refs is watched: in-process runs on real repos, real git, real bwrap."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from orchestrator import sandbox
from tests.graph.harness import CALC_FILES, Workflow, plan, task

pytestmark = pytest.mark.skipif(not sandbox.available(), reason=sandbox.why_unavailable())

SUB = {"calc/sub.py": "def sub(a, b):\n    return a - b\n"}
# From a task's worktree (.autobuild/worktrees/FEAT-001/<TASK>) the user's checkout is four levels up.
ROGUE = ("G=git; $G update-ref refs/heads/main $($G commit-tree 'HEAD^{tree}' -p HEAD -m rogue);"
         " printf x >> ../../../../README.md; python check.py")


def repo_with(tmp_path: Path, files: dict[str, str] | None = None, **plan_fields: Any) -> Path:
    return make_sample_repo(tmp_path / "repo", files={**CALC_FILES, "README.md": "mine\n", **(files or {})},
                            plan=plan(task("A"), **plan_fields))


def main_sha(repo: Path) -> str:
    return git(repo, "rev-parse", "refs/heads/main").strip()


async def test_a_gate_that_moves_the_users_branch_and_edits_their_files_is_refused_and_reported(
        tmp_path: Path) -> None:
    repo = repo_with(tmp_path, verify=ROGUE)
    before = main_sha(repo)
    run = await Workflow(repo, ScriptedAgents({"player": writes(SUB), "coach": approve()})).run()
    assert run.status("A") == "approved", run.results["A"]
    assert main_sha(repo) == before, "the gate could not move the user's branch"
    assert (repo / "README.md").read_text() == "mine\n", "nor edit the user's files"
    gates = [event for event in run.events if event["event"] == "gate"]
    assert gates and "autobuild sandbox: refused writes outside the run's worktree" in gates[-1]["output"]
    assert "README.md: Read-only file system" in gates[-1]["output"]
    assert "refs/heads/main" in gates[-1]["output"]
    refused = [event for event in run.events if event["event"] == "sandbox_refused"]
    # The task's gate (the integration gate may reuse its run of the same tree from the gate cache).
    assert "A" in {event.get("task") for event in refused}
    assert all(any("README.md" in line for line in event["refused"]) for event in refused)


async def test_a_husky_like_prepare_in_setup_leaves_the_shared_git_config_byte_identical(tmp_path: Path) -> None:
    # husky's `prepare` runs `git config core.hooksPath .husky/_` and only prints git's error when it fails.
    package = {"name": "calc", "version": "1.0.0", "private": True,
               "scripts": {"prepare": "git config core.hooksPath .husky/_ || echo 'husky - git config failed'"}}
    repo = repo_with(tmp_path, {"package.json": json.dumps(package)}, verify="python check.py",
                     setup="npm install --offline --no-audit --no-fund")
    config = (repo / ".git/config").read_bytes()
    run = await Workflow(repo, ScriptedAgents({"player": writes(SUB), "coach": approve()})).run()
    assert run.status("A") == "approved", run.results["A"]
    assert (repo / ".git/config").read_bytes() == config
    assert "user_state_changed" not in run.kinds()


async def test_failing_user_hooks_run_for_none_of_our_git_commands(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files={**CALC_FILES, "README.md": "mine\n"},
                            plan=plan(task("A"), task("B", "A"), verify="python check.py"))
    ran = tmp_path / "hooks-ran"
    ran.mkdir()
    for name in ("post-checkout", "pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-merge",
                 "reference-transaction", "pre-merge-commit"):
        hook = repo / ".git/hooks" / name
        hook.write_text(f"#!/bin/sh\ntouch {ran}/{name}\necho '{name} refuses' >&2\nexit 1\n")
        hook.chmod(0o755)
    agents = ScriptedAgents({("player", "A"): writes(SUB), ("player", "B"): writes({"calc/b.py": "B = 1\n"}),
                             "coach": approve()})
    run = await Workflow(repo, agents).run()
    assert run.status("A") == "approved" and run.status("B") == "approved", run.results
    assert sorted(path.name for path in ran.iterdir()) == []
    assert git(repo, "show", "autobuild/FEAT-001:calc/b.py") == "B = 1\n"
    assert not (repo / ".autobuild/worktrees/FEAT-001/_baseline").exists()


async def test_a_change_to_the_users_git_config_during_a_session_is_noted_and_kept(tmp_path: Path) -> None:
    repo = repo_with(tmp_path, verify="python check.py")

    def user_edits_config(_worktree: Path) -> None:
        subprocess.run(["git", "config", "user.name", "Me Meanwhile"], cwd=repo, check=True)

    agents = ScriptedAgents({"player": writes(SUB, effect=user_edits_config), "coach": approve()})
    run = await Workflow(repo, agents).run()
    assert run.status("A") == "approved"
    assert git(repo, "config", "user.name").strip() == "Me Meanwhile", "kept: it is the user's"
    changes = [change for event in run.events if event["event"] == "user_state_changed"
               for change in event["changes"]]
    assert any(change.startswith(".git/config changed:") and "Me Meanwhile" in change for change in changes), changes


def tree_bytes(folder: Path) -> dict[str, str]:
    """Every file under `folder` (bytecode caches aside), by content."""
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file() and "__pycache__" not in path.parts}


PYPROJECT = ('[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
             '[project]\nname = "calc"\nversion = "1.0"\n[tool.setuptools]\npackages = ["calc"]\n')


def editable_venv(repo: Path) -> Path:
    """The user's own `.venv` with the repo installed in it, editable (git-excluded, like a real one)."""
    venv = repo / ".venv"
    # Python 3.12 venvs come without setuptools, which `--no-build-isolation` needs in the venv itself.
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin/pip"), "install", "-q", "setuptools", "wheel"], check=True, capture_output=True)
    subprocess.run([str(venv / "bin/pip"), "install", "-q", "--no-build-isolation", "--no-deps", "-e", "."],
                   cwd=repo, check=True, capture_output=True)
    with (repo / ".git/info/exclude").open("a") as exclude:
        exclude.write(".venv\n*.egg-info\n")
    return venv


def imported_from(venv: Path, cwd: Path) -> str:
    done = subprocess.run([str(venv / "bin/python"), "-c", "import calc; print(calc.__file__)"], cwd=cwd,
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.mark.heavy
async def test_the_users_venv_with_an_editable_install_is_byte_identical_after_a_setup_that_pip_installs(
        tmp_path: Path) -> None:
    setup = "pip install -q --no-build-isolation --no-deps -e ."
    repo = make_sample_repo(tmp_path / "repo", files={**CALC_FILES, "pyproject.toml": PYPROJECT}, venv=False,
                            plan=plan(task("A"), verify="python check.py", setup=setup))
    venv = editable_venv(repo)
    before = tree_bytes(venv)
    run = await Workflow(repo, ScriptedAgents({"player": writes(SUB), "coach": approve()})).run()
    assert run.status("A") == "approved", run.results["A"]
    assert tree_bytes(venv) == before, "the user's venv is untouched: setup's install went to the run's own folder"
    assert imported_from(venv, tmp_path) == str(repo / "calc" / "__init__.py"), "still the user's checkout"
    assert "user_state_changed" not in run.kinds()


def doctor_sandbox_row(repo: Path, path: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "orchestrator", "doctor", "--offline", "--json", "--repo", str(repo),
                           "--db", str(repo.parent / "db.sqlite")], capture_output=True, text=True, check=False,
                          env={**os.environ, "PATH": path})
    return next(row for row in json.loads(done.stdout) if row["check"] == "sandbox")


def test_doctor_says_when_the_sandbox_cant_run_here(tmp_path: Path) -> None:
    repo = repo_with(tmp_path)
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    row = doctor_sandbox_row(repo, f"{fake}{os.pathsep}{os.environ['PATH']}")
    assert row["ok"] is False and "bubblewrap can't start a sandbox here" in row["detail"]
