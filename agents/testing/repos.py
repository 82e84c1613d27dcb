"""Sample repositories for tests and `make demo`: a small Python package with a pytest suite, a four-task plan
for it, and the environment that points the real CLI at the scripted model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from agents.testing.sample_venv import sample_venv

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
    (git-excluded) is a link to a venv of pytest, pip and setuptools from this interpreter's environment
    (sample_venv.py), so the repo's own environment has pytest the way a real project's would: the gate runs the
    repo's environment, never AutoBuild's."""
    path.mkdir(parents=True, exist_ok=True)
    for name, text in (files or SAMPLE_FILES).items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "-c", "user.name=Demo", "-c", "user.email=demo@localhost", "commit", "-q", "-m", "initial")
    if venv:
        (path / ".venv").symlink_to(sample_venv(), target_is_directory=True)
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
