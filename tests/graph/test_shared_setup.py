"""A task's attempts share one worktree setup (issue 40 item 1), on real git and a real setup command: a sibling at
the same commit takes the first attempt's setup products by copy (its own files, recorded as setup's for the gate);
a product that names the first worktree's path, or one its agent changed since, is not shared: setup runs again; an
editable install setup made in the first is pointed at each attempt's own copy."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from orchestrator.facts import GateSetup
from orchestrator.gate import GateRequest, Gates
from orchestrator.gate.prepare import fresh_tree
from orchestrator.gate.prepare.environment import gate_env
from orchestrator.repo.git import GitRepo
from tests.graph.harness import CALC_FILES, Workflow, plan, task
from tests.graph.test_gate_env import MAPPED, SRC_LAYOUT, TESTS

FILES = {".gitignore": "out/\n", "VERSION": "0.0.0\n", "src/calc.py": "X = 1\n"}
MADE = ("mkdir -p out/deep && od -An -N8 -tx8 /dev/urandom > out/deep/token && ln -s ../src out/src"
        " && echo 1.2.3 > VERSION")
"""What setup makes: a token no second run makes alike, a relative link, a tracked version file rewritten."""


def worktrees(tmp_path: Path, setup: str) -> tuple[Gates, Path, Path]:
    return worktrees_of(make_sample_repo(tmp_path / "repo", FILES), setup)


def worktrees_of(repo: Path, setup: str) -> tuple[Gates, Path, Path]:
    """Gates deciding `setup`, and two attempts' worktrees at the repo's head."""
    base = git(repo, "rev-parse", "HEAD").strip()
    gates = Gates(GitRepo(repo), GateRequest(timeout_s=60), no_cache=True,
                  decided=GateSetup(command="true", source="plan", setup=setup, base=None))
    first, second = (repo / ".autobuild" / "worktrees" / "FEAT-001" / name for name in ("TASK-001", "TASK-001.a2"))
    for worktree in (first, second):
        git(repo, "worktree", "add", "-q", "--detach", str(worktree), base)
    return gates, first, second


async def test_a_sibling_takes_the_first_attempt_s_setup_products(tmp_path: Path) -> None:
    gates, first, second = worktrees(tmp_path, MADE)
    assert (await gates.set_up(first)) is not None
    assert await gates.share_setup(second, first)
    assert (second / "out/deep/token").read_text() == (first / "out/deep/token").read_text(), "copied, not made again"
    assert (second / "out/src").readlink() == Path("../src") and (second / "VERSION").read_text() == "1.2.3\n"
    assert (second / "out/deep/token").stat().st_ino != (first / "out/deep/token").stat().st_ino, "its own files"
    # Recorded as setup's: the gate's clean before a run there keeps them (and the tracked file setup rewrote).
    assert await fresh_tree.clean(gates.repo, second) == ([], False)
    assert (second / "VERSION").read_text() == "1.2.3\n" and (second / "out/deep/token").is_file()


@pytest.mark.parametrize("setup", [MADE + ' && echo "$PWD" > out/where', MADE + ' && ln -s "$PWD/src" out/abs'],
                         ids=["a file names its path", "a link into it"])
async def test_products_tied_to_the_first_worktree_s_path_are_not_shared(tmp_path: Path, setup: str) -> None:
    gates, first, second = worktrees(tmp_path, setup)
    await gates.set_up(first)
    assert not await gates.share_setup(second, first)
    assert not (second / "out").exists() and (second / "VERSION").read_text() == "0.0.0\n", "nothing left"


async def test_products_the_first_attempt_s_agent_changed_are_not_shared(tmp_path: Path) -> None:
    gates, first, second = worktrees(tmp_path, MADE)
    await gates.set_up(first)
    (first / "out/deep/planted.py").write_text("import os\n")  # its agent at work in setup's products
    assert not await gates.share_setup(second, first)
    assert not (second / "out").exists() and (second / "VERSION").read_text() == "0.0.0\n"


async def test_three_attempts_run_setup_once(tmp_path: Path) -> None:
    sub = {"calc/sub.py": "def sub(a, b):\n    return a - b\n"}
    repo = make_sample_repo(tmp_path / "repo", files={**CALC_FILES, ".gitignore": "__pycache__/\nout/\n"},
                            plan=plan(task("TASK-001", attempts=3), setup="mkdir -p out && od -An -N8 -tx8"
                                                                          " /dev/urandom > out/token"))
    agents = ScriptedAgents({("player", "TASK-001.a1"): writes({"calc/x.py": "X = 1\n"}),
                             ("player", "TASK-001.a2"): writes(sub), ("player", "TASK-001.a3"): writes(sub),
                             "coach": approve()})
    run = await Workflow(repo, agents).run(attempts_policy="best", parallel=3, max_turns=1, replan=0)
    assert run.results["TASK-001"]["merged"]
    shared = {e.get("attempt"): e.get("setup_from") for e in run.events if e["event"] == "initialize"}
    first = next(attempt for attempt, source in shared.items() if source is None)
    assert sorted(shared) == [1, 2, 3] and [source for source in shared.values() if source] == [
        "TASK-001" if first == 1 else f"TASK-001.a{first}"] * 2, shared


EDITABLE = "python -m pip install -q --no-deps --no-build-isolation --no-index -e pkg"


@pytest.mark.heavy  # a real `pip install -e` (setuptools builds the editable wheel): seconds
@pytest.mark.parametrize("layout", [SRC_LAYOUT, MAPPED], ids=["path entry", "finder"])
def test_an_editable_install_setup_made_in_one_attempt_imports_each_attempt_s_own_code(
        tmp_path: Path, layout: dict[str, str]) -> None:
    """Setup's `pip install -e` writes the worktree it ran in into the run's venv (a path entry, or a finder's
    mapping): every worktree of the run, the one that took its setup by copy too, imports its own copy."""
    repo = make_sample_repo(tmp_path / "repo", files={**layout, **TESTS}, venv=False)
    venv = repo / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (next((venv / "lib").glob("python*/site-packages")) / "_deps.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n")  # pip and setuptools from this interpreter: nothing downloaded
    (repo / ".git/info/exclude").write_text(".venv\n")
    gates, first, second = worktrees_of(repo, EDITABLE)
    gate_env(repo, first)  # the run's venv, layered over the repo's (the base's check makes it first)

    async def set_up_once() -> bool:
        done = await gates.set_up(first)
        assert done is not None and done.ok, done.stderr if done else ""
        return await gates.share_setup(second, first)

    assert asyncio.run(set_up_once())
    probe = "import calc, os; print(os.path.realpath(calc.__file__))"
    for worktree in (first, second):
        seen = subprocess.run(["python", "-c", probe], cwd=tmp_path, env=gate_env(repo, worktree),
                              capture_output=True, text=True, check=True).stdout.strip()
        assert seen.startswith(f"{worktree}/pkg/"), (worktree.name, seen)
