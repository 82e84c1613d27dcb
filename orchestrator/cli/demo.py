"""`make demo`: a sample repo, a four-task plan and the scripted model, run through the real CLI."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
from importlib import resources
from pathlib import Path

import yaml

from agents.testing.scenario import Scenario
from agents.testing.scripted_model import ScriptedModel

SAMPLE_FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n*.pyc\n",
    "README.md": "# calc\n\nA tiny calculator package used by the AutoBuild demo.\n",
    # Its own pytest config: without one, pytest would take the config of whatever project encloses the
    # sample repo (demo-workspace/ sits inside this checkout) as its own.
    "pytest.ini": "[pytest]\n",
    "calc/__init__.py": '"""A tiny calculator."""\n',
    "calc/add.py": "def add(a: float, b: float) -> float:\n    return a + b\n",
    "tests/test_add.py": "from calc.add import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}

DEMO_PLAN = {
    "id": "FEAT-001",
    "name": "Calculator operations",
    "description": "Add subtract, multiply and divide to the calc package, with tests and docs.",
    "status": "planned",
    "complexity": 4,
    "estimated_tasks": 4,
    "verify": "python -m pytest -q",
    "tasks": [
        {"id": "TASK-001", "name": "Add subtract", "complexity": 2, "dependencies": [],
         "requirements": ["calc/subtract.py defines subtract(a, b) returning a - b"],
         "acceptance_criteria": ["tests/test_subtract.py passes"]},
        {"id": "TASK-003", "name": "Add multiply", "complexity": 2, "dependencies": [],
         "requirements": ["calc/multiply.py defines multiply(a, b) returning a * b"],
         "acceptance_criteria": ["tests/test_multiply.py passes"]},
        {"id": "TASK-002", "name": "Add divide", "complexity": 4, "dependencies": ["TASK-001"],
         "requirements": ["calc/divide.py defines divide(a, b) with true division",
                          "divide raises ZeroDivisionError when b is 0"],
         "acceptance_criteria": ["divide(7, 2) == 3.5", "tests/test_divide.py passes"]},
        {"id": "TASK-004", "name": "Document the operations", "complexity": 1,
         "dependencies": ["TASK-001", "TASK-002", "TASK-003"],
         "requirements": ["docs/OPERATIONS.md lists every operation"], "files": ["docs/**"]},
    ],
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def make_sample_repo(path: Path, files: dict[str, str] | None = None, plan: dict[str, object] | None = None, *,
                     venv: bool = True) -> Path:
    """A git repo with a small Python package, a pytest suite and (optionally) a feature plan. Its `.venv`
    (git-excluded) is a link to this interpreter's environment, so the repo's own environment has pytest the
    way a real project's would: the gate runs the repo's environment, never AutoBuild's."""
    path.mkdir(parents=True, exist_ok=True)
    for name, text in (files or SAMPLE_FILES).items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "-c", "user.name=Demo", "-c", "user.email=demo@localhost", "commit", "-q", "-m", "initial")
    if venv:
        (path / ".venv").symlink_to(sys.prefix, target_is_directory=True)
        with (path / ".git" / "info" / "exclude").open("a") as exclude:
            exclude.write(".venv\n")
    if plan is not None:
        features = path / ".autobuild" / "features"
        features.mkdir(parents=True, exist_ok=True)
        (features / f"{plan['id']}.yaml").write_text(yaml.safe_dump(plan, sort_keys=False))
    return path


def scripted_env(base_url: str, workspace: Path) -> dict[str, str]:
    """Environment that points the real CLI at the scripted model, isolated from the user's own config."""
    env = dict(os.environ)
    env.update(
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="sk-demo-not-a-real-key",
        CLAUDE_CONFIG_DIR=str(workspace / "claude-config"),
        # The sample repo's pytest runs under this venv: without this it would load every plugin our own dev
        # dependencies register (3 s per run instead of 0.3 s), and the sample needs none of them.
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
    )
    return env


def main() -> int:
    workspace = Path(os.environ.get("AUTOBUILD_DEMO_DIR", "demo-workspace")).resolve()
    if workspace.exists():
        shutil.rmtree(workspace)
    repo = make_sample_repo(workspace / "sample-repo", plan=DEMO_PLAN)
    db = workspace / "checkpoints.sqlite"
    scenario = Scenario.load(Path(str(resources.files("agents.testing") / "demo_scenario.yaml")))
    print(f"demo workspace: {workspace}\n")
    started = time.monotonic()
    with ScriptedModel(scenario, workspace / "model-requests.jsonl") as model:
        command = [sys.executable, "-m", "orchestrator", "run", "FEAT-001", "--repo", str(repo),
                   "--db", str(db), "--autonomous"]
        print("$ " + " ".join(["python", *command[1:]]) + "\n", flush=True)
        code = subprocess.run(command, env=scripted_env(model.base_url, workspace), check=False).returncode
    print(f"\nexit code {code} after {time.monotonic() - started:.1f}s")
    if code not in (0, 1):
        print("the demo run did not complete; see the error above", file=sys.stderr)
        return code
    print(textwrap.dedent(f"""
        Where things are:
          branch:       autobuild/FEAT-001 in {repo}   (git -C {repo} log --oneline autobuild/FEAT-001)
          your branch:  main, untouched; `git -C {repo} status` lists only the
                        plan we wrote for you (.autobuild/features/, untracked)
          checkpoints:  {db}   (remembered: commands inside the repo find it without --db)
          reports:      {repo}/.autobuild/runs/FEAT-001/AUTO-RUN.md and …/TASK-00N/AUTO-RUN.md
          traces:       {repo}/.autobuild/runs/FEAT-001/TASK-00N/trace.jsonl
          model log:    {workspace}/model-requests.jsonl
    """))
    print(git(repo, "log", "--oneline", "--graph", "autobuild/FEAT-001"))
    print("Look around (paste these):")
    for line in closing_commands(repo):
        print(f"  {line}")
    print("\nNext steps, as after a run of your own:")
    for line in next_commands(code):
        print(f"  {line}")
    return code


def _autobuild() -> str:
    script = Path(sys.executable).parent / "autobuild"
    return shlex.quote(str(script)) if script.is_file() else f"{shlex.quote(sys.executable)} -m orchestrator"


def closing_commands(repo: Path) -> list[str]:
    """Ready-to-paste commands that inspect the demo's run from inside its repo, with no flags."""
    autobuild = _autobuild()
    return [f"cd {shlex.quote(str(repo))}", f"{autobuild} status FEAT-001", f"{autobuild} show FEAT-001 TASK-001",
            f"{autobuild} history FEAT-001"]


def next_commands(code: int) -> list[str]:
    """What a person does after a run, from inside the demo's repo: read the work, then land it (every task
    approved), or see why and go on."""
    autobuild = _autobuild()
    if code != 0:
        return ["# what was not approved, and why", f"{autobuild} status FEAT-001",
                "# run the failed and skipped tasks again", f"{autobuild} resume FEAT-001"]
    return ["# read what was built, task by task, with the coach's reasons", f"{autobuild} review FEAT-001",
            "# then put it on main, the demo repo's branch (it has no remote for `autobuild pr`)",
            f"{autobuild} land FEAT-001"]


if __name__ == "__main__":
    raise SystemExit(main())
