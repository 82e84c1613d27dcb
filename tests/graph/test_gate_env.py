"""The gate tests the worktree's code wherever the package lives: a package in a subfolder installed editable
(real `pip install -e`, offline: no deps, no build isolation, setuptools from this interpreter) into the repo's own
venv, in each style pip and setuptools write (a path `.pth`, a meta-path finder, compat mode), and a player's
break inside it is caught and not merged; the user's venv is never written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agents.testing.repos import git, make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from orchestrator.errors import GateUnusableError
from orchestrator.gate.choose.detect import choose_gate
from orchestrator.gate.prepare.environment import gate_env, gate_env_dir, run_env_dir, session_env
from orchestrator.gate.prepare.pyenv import editables
from orchestrator.gate.prepare.submodules import init_submodules, submodule_changes, undo_submodule_changes
from orchestrator.gate.report import gate_document, gate_lines
from orchestrator.repo.git import GitRepo
from tests.graph.editable_venv import install_editable
from tests.graph.harness import Workflow, plan, task

PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"
[project]
name = "calc"
version = "0.1"
"""
SRC_LAYOUT = {"pkg/pyproject.toml": PYPROJECT + "[tool.setuptools.packages.find]\nwhere = ['src']\n",
              "pkg/src/calc/__init__.py": "from calc.ops import add\n",
              "pkg/src/calc/ops.py": "def add(a, b):\n    return a + b\n"}
# A package-dir mapping setuptools can't express as a path entry: it installs a meta-path finder instead.
MAPPED = {"pkg/pyproject.toml": PYPROJECT + "[tool.setuptools]\npackages = ['calc']\n"
                                            "package-dir = {calc = 'lib/calc'}\n",
          "pkg/lib/calc/__init__.py": "from calc.ops import add\n",
          "pkg/lib/calc/ops.py": "def add(a, b):\n    return a + b\n"}
TESTS = {".gitignore": "__pycache__/\n.pytest_cache/\n*.egg-info/\nbuild/\n",
         "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"}


def editable_repo(tmp_path: Path, layout: dict[str, str], *pip_args: str) -> Path:
    """A repo whose own venv has `pkg/` installed editable by a real pip (the one this interpreter has)."""
    repo = make_sample_repo(tmp_path / "repo", files={**layout, **TESTS}, plan=plan(task("TASK-001"), verify=None),
                            venv=False)
    install_editable(repo, layout, pip_args)  # pip's real install, made once per layout
    with (repo / ".git" / "info" / "exclude").open("a") as exclude:
        exclude.write(".venv\n")
    return repo


def site_files(repo: Path) -> set[str]:
    return {str(p.relative_to(repo)) for p in (repo / ".venv").rglob("*") if "__pycache__" not in p.parts}


@pytest.mark.parametrize(("layout", "pip_args", "kind", "ops"), [
    (SRC_LAYOUT, (), "path", "pkg/src/calc/ops.py"),
    pytest.param(SRC_LAYOUT, ("--config-settings", "editable_mode=compat"), "path", "pkg/src/calc/ops.py",
                 marks=pytest.mark.heavy, id="compat"),  # second and third of the family: in make test-heavy
    pytest.param(MAPPED, (), "finder", "pkg/lib/calc/ops.py", marks=pytest.mark.heavy, id="finder"),
], ids=["src-layout", "compat", "finder"])
async def test_a_break_in_an_editable_package_in_a_subfolder_is_caught_and_not_merged(
        tmp_path: Path, layout: dict[str, str], pip_args: tuple[str, ...], kind: str, ops: str) -> None:
    repo = editable_repo(tmp_path, layout, *pip_args)
    assert [e.kind for e in editables(repo, repo / ".venv")] == [kind], "the install style this case is about"
    before = site_files(repo)
    broken = {ops: "def add(a, b):\n    return a - b\n"}
    agents = ScriptedAgents({"player": writes(broken), "coach": approve()})
    run = await Workflow(repo, agents).run(max_turns=1)
    gates = [e for e in run.events if e["event"] == "gate" and e.get("task") == "TASK-001"]
    assert gates and not gates[-1]["passed"], "the gate ran the worktree's broken copy, not the main checkout's"
    assert gates[-1]["failing"] == ["tests.test_calc::test_add"]
    assert run.status("TASK-001") == "failed"
    assert "a + b" in git(repo, "show", f"autobuild/FEAT-001:{ops}"), "the break was not merged"
    assert site_files(repo) == before, "the user's venv was not written"


def test_the_run_env_installs_into_its_own_venv_and_the_main_checkout_is_untouched(tmp_path: Path) -> None:
    repo = editable_repo(tmp_path, SRC_LAYOUT)
    worktree = repo / ".autobuild" / "worktrees" / "FEAT-001" / "TASK-001"
    subprocess.run(["git", "worktree", "add", "-q", "--detach", str(worktree)], cwd=repo, check=True)
    (worktree / "pkg/src/calc/ops.py").write_text("def add(a, b):\n    return 42\n")
    probe = "import calc, sys; print(calc.add(1, 1), sys.prefix)"
    env = gate_env(repo, worktree)
    seen = subprocess.run(["python", "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    assert seen.stdout.split() == ["42", str(gate_env_dir(repo, "FEAT-001") / "venv")]
    assert not [value for value in env.values() if str(run_env_dir(repo, "FEAT-001")) in value], \
        "nothing of the agents' environment on the gate's PATH or PYTHONPATH (a planted `pytest` script)"
    agent = {**os.environ, **session_env(repo, worktree)}  # how the SDK layers a session's env
    assert subprocess.run(["python", "-c", probe], cwd=tmp_path, env=agent, capture_output=True, text=True,
                          check=True).stdout.split() == ["42", str(run_env_dir(repo, "FEAT-001") / "venv")], \
        "an agent's own test run sees what the gate sees, from the agents' own venv"
    main = subprocess.run(["python", "-c", probe], cwd=tmp_path, env=gate_env(repo, repo), capture_output=True,
                          text=True, check=True)
    assert main.stdout.split() == ["2", str(repo / ".venv")], "the main checkout's own env is unchanged"
    before = site_files(repo)
    extra = tmp_path / "extra"
    (extra / "extra").mkdir(parents=True)
    (extra / "extra" / "__init__.py").write_text("")
    (extra / "pyproject.toml").write_text(PYPROJECT.replace('"calc"', '"extra"'))
    subprocess.run(["python", "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                    str(extra)], cwd=worktree, env=env, check=True, capture_output=True)
    assert site_files(repo) == before, "an install in the run's env never reaches the user's venv"
    assert list(gate_env_dir(repo, "FEAT-001").glob("venv/lib/python*/site-packages/extra/__init__.py"))
    assert subprocess.run(["python", "-c", "import extra"], cwd=tmp_path, env=agent, check=False).returncode == 0, \
        "what setup installed in the gate's venv is seen by the agents"
    agents_site = next(run_env_dir(repo, "FEAT-001").glob("venv/lib/python*/site-packages"))
    (agents_site / "zz-planted.pth").write_text("import os; os.environ['PLANTED'] = '1'\n")
    planted = "import os; print(os.environ.get('PLANTED'))"
    assert subprocess.run(["python", "-c", planted], cwd=tmp_path, env=agent, capture_output=True, text=True,
                          check=True).stdout.strip() == "1", "an agent's own venv runs its .pth lines"
    assert subprocess.run(["python", "-c", planted], cwd=tmp_path, env=gate_env(repo, worktree), capture_output=True,
                          text=True, check=True).stdout.strip() == "None", "the gate never runs the agents' venv"
    assert git(repo, "status", "--porcelain") == "?? .autobuild/\n", "nothing outside .autobuild/ (plan, run env)"


WORKSPACE = {
    ".gitignore": "__pycache__/\n.pytest_cache/\nnode_modules/\n",
    # The top's script tests the frontend only: gated by it, a backend break would pass.
    "package.json": json.dumps({"name": "shop", "private": True, "workspaces": ["frontend"],
                                "scripts": {"test": "npm test -w frontend"}}),
    "frontend/package.json": json.dumps({"name": "frontend", "scripts": {"test": "node --test"}}),
    "frontend/sum.js": "exports.sum = (a, b) => a + b;\n",
    "frontend/test/sum.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n"
                                 "const { sum } = require('../sum.js');\n"
                                 "test('sum', () => assert.strictEqual(sum(2, 3), 5));\n",
    "backend/pyproject.toml": "[project]\nname = 'backend'\nversion = '0.1'\n"
                              "[tool.pytest.ini_options]\npythonpath = ['.']\n",
    "backend/shop/__init__.py": "",
    "backend/shop/price.py": "def total(a, b):\n    return a + b\n",
    "backend/tests/test_price.py": "from shop.price import total\n\n\ndef test_total():\n    assert total(2, 3) == 5\n",
}


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed (make install installs it)")
async def test_a_workspace_monorepos_backend_break_is_caught_and_a_frontend_change_runs_only_the_frontend(
        tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=WORKSPACE,
                            plan=plan(task("BACKEND"), task("FRONTEND"), verify=None))
    broken = {"backend/shop/price.py": "def total(a, b):\n    return a * b\n"}
    frontend = {"frontend/sum.js": "exports.sum = (a, b) => b + a;\n"}
    agents = ScriptedAgents({("player", "BACKEND"): writes(broken), ("player", "FRONTEND"): writes(frontend),
                             "coach": approve()})
    run = await Workflow(repo, agents).run(max_turns=1)
    start = next(e for e in run.events if e["event"] == "feature_start")
    assert "2 package(s)" in start["gate_source"] and "backend" in start["gate_source"]
    gate = {e["task"]: e for e in run.events if e["event"] == "gate" and e.get("task") in ("BACKEND", "FRONTEND")}
    assert not gate["BACKEND"]["passed"] and gate["BACKEND"]["failing"] == ["backend::tests.test_price::test_total"]
    assert run.status("BACKEND") == "failed", "the backend break was not approved"
    assert "a + b" in git(repo, "show", "autobuild/FEAT-001:backend/shop/price.py")
    assert gate["FRONTEND"]["passed"] and "not touched by the change: backend" in gate["FRONTEND"]["summary"]
    assert run.status("FRONTEND") == "approved"
    report = (repo / ".autobuild/runs/FEAT-001/AUTO-RUN.md").read_text()
    assert "**Gate:** per package (2 package(s): backend `python" in report


SUPER = {".gitignore": "__pycache__/\n.pytest_cache/\n", "pytest.ini": "[pytest]\npythonpath = vendor/lib\n",
         "tests/test_total.py": "from libsum import total\n\n\ndef test_total():\n    assert total(2, 3) == 5\n"}


def repo_with_submodule(tmp_path: Path) -> Path:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "libsum.py").write_text("def total(a, b):\n    return a + b\n")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "lib"]):
        git(lib, *args)
    repo = make_sample_repo(tmp_path / "repo", files=SUPER, plan=plan(task("TASK-001"), verify=None))
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "add the submodule")
    return repo


async def test_worktrees_get_submodules_from_the_main_checkout_and_an_edit_inside_one_is_refused_with_its_reason(
        tmp_path: Path) -> None:
    repo = repo_with_submodule(tmp_path)
    config = (repo / ".git" / "config").read_text()
    inside = {"vendor/lib/libsum.py": "def total(a, b):\n    return a * b\n"}  # a break the gate would not see
    agents = ScriptedAgents({("player", "TASK-001", 1): writes(inside), ("player", "TASK-001", 2): writes(
        {"notes.md": "done in our own files\n"}), "coach": approve()})
    run = await Workflow(repo, agents).run(max_turns=2)
    start = next(e for e in run.events if e["event"] == "feature_start")
    assert "1 passed" in start["gate_base"], "the base's worktree had the submodule: its tests import from it"
    feedback = next(e for e in run.events if e["event"] == "feedback" and e.get("task") == "TASK-001")
    assert any("inside the submodule(s) vendor/lib" in note and "undone" in note for note in feedback["notes"])
    assert [c.turn for c in agents.calls if c.role == "coach"] == [2], "turn 1 never reached the coach"
    assert run.status("TASK-001") == "approved"
    assert git(repo, "rev-parse", "autobuild/FEAT-001:vendor/lib") == git(repo, "rev-parse", "HEAD:vendor/lib")
    assert "a + b" in (repo / "vendor/lib/libsum.py").read_text(), "the main checkout's submodule is untouched"
    assert (repo / ".git" / "config").read_text() == config, "the user's .git/config is untouched"


async def test_a_submodule_the_main_checkout_never_initialised_is_named_and_files_written_into_it_are_seen(
        tmp_path: Path) -> None:
    repo = repo_with_submodule(tmp_path)
    git(repo, "submodule", "deinit", "-q", "-f", "vendor/lib")  # the user never ran `git submodule update --init`
    git_repo = GitRepo(repo)
    worktree = git_repo.worktrees_dir / "FEAT-001" / "TASK-001"
    base = git_repo.rev("HEAD")
    await git_repo.add_worktree(worktree, "autobuild/FEAT-001.TASK-001", base)
    notes = await init_submodules(git_repo, worktree)
    assert len(notes) == 1 and "vendor/lib is not initialised in the main checkout" in notes[0]
    (worktree / "vendor/lib/libsum.py").write_text("def total(a, b):\n    return 0\n")
    assert git(worktree, "status", "--porcelain") == "", "git itself sees nothing there"
    assert await submodule_changes(git_repo, worktree, base) == ["vendor/lib"]
    await undo_submodule_changes(git_repo, worktree, base, ["vendor/lib"])
    assert list((worktree / "vendor/lib").iterdir()) == []
    assert await submodule_changes(git_repo, worktree, base) == []
    shown = gate_document(repo, choose_gate(repo, None, None), None, None)
    assert (shown["submodules"], shown["submodules_missing"]) == (["vendor/lib"], ["vendor/lib"])
    assert any("git submodule update --init" in line for line in gate_lines(shown, "x"))
    agents = ScriptedAgents({"player": writes({"notes.md": "x\n"}), "coach": approve()})
    try:  # the base's tests can't import from the empty submodule: refused, or judged red, the cause is named
        run = await Workflow(repo, agents).run(max_turns=1)
        said = next(e for e in run.events if e["event"] == "feature_start")["gate_base"]
    except GateUnusableError as refused:
        said = str(refused)
    assert "submodule vendor/lib is not initialised in the main checkout" in said
