"""A src layout whose package imports the version file its install generated (hatch-vcs's `version-file`,
git-ignored): the file is copied into the gate's worktrees from the main checkout because the build
configuration names it; no other ignored file (`.env`, a key) ever is. On real git and a real pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.testing.repos import git, make_sample_repo
from orchestrator.gate import GateRequest, Gates
from orchestrator.gate.prepare.generated import named_generated
from orchestrator.repo.git import GitRepo

HATCH_VCS = """[build-system]
requires = ["hatchling", "hatch-vcs"]
build-backend = "hatchling.build"

[project]
name = "calc"
dynamic = ["version"]

[tool.hatch.version]
source = "vcs"

[tool.hatch.build.hooks.vcs]
version-file = "src/calc/_version.py"

[tool.pytest.ini_options]
pythonpath = ["src"]
"""
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\nsrc/calc/_version.py\n.env\nsecret.key\n",
    "pyproject.toml": HATCH_VCS,
    "src/calc/__init__.py": "from calc._version import __version__\n",
    "src/calc/mul.py": "def mul(a, b):\n    return a * b\n",
    "tests/test_mul.py": "from calc.mul import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
}


@pytest.mark.heavy
async def test_the_version_file_the_build_config_names_is_copied_and_nothing_else(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", FILES)
    (repo / "src" / "calc" / "_version.py").write_text("__version__ = '1.2.3'\n")  # what `pip install -e` wrote
    (repo / ".env").write_text("API_TOKEN=secret\n")
    (repo / "secret.key").write_text("-----BEGIN PRIVATE KEY-----\n")
    gates = Gates(GitRepo(repo), GateRequest(plan_verify="python -m pytest -q"), no_cache=True)
    decided = await gates.check_base("FEAT-001", git(repo, "rev-parse", "HEAD").strip())
    assert decided["base"] is not None and decided["base"]["passed"], decided["base"]
    worktree = repo / ".autobuild" / "worktrees" / "FEAT-001" / "TASK-001"
    git(repo, "worktree", "add", "-q", "--detach", str(worktree), "HEAD")
    await gates.set_up(worktree)
    assert (worktree / "src" / "calc" / "_version.py").read_text() == "__version__ = '1.2.3'\n"
    assert not (worktree / ".env").exists() and not (worktree / "secret.key").exists()
    assert git(worktree, "status", "--porcelain") == ""  # ignored there too: never the task's change


def test_only_version_files_the_configuration_names_are_copied(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools_scm]\nwrite_to = "pkg/_version.py"\nversion_file = "../outside.py"\n'
        '[tool.versioningit.write]\nfile = ".env"\n[tool.pdm.version]\nsource = "scm"\nwrite_to = "pkg/VERSION.txt"\n')
    (tmp_path / "setup.py").write_text('from setuptools import setup\nsetup(use_scm_version={"write_to": "lib/v.py"},'
                                       ' name="x")\n')
    assert named_generated(tmp_path) == ["pkg/_version.py", "pkg/VERSION.txt", "src/pkg/VERSION.txt", "lib/v.py"]
