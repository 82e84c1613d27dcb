"""The repo's own environment for its gate and setup commands: never AutoBuild's virtualenv, the repo's
(`.venv`/`venv` of the main checkout) when it has one, and a worktree's sources ahead of an editable install.
Plus the default `setup` that makes a fresh worktree able to run the repo's tests."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

_VENV_NAMES = (".venv", "venv", "env")
_CLEAN_INSTALLS = (("pnpm-lock.yaml", "pnpm install --frozen-lockfile"),
                   ("yarn.lock", "yarn install --frozen-lockfile"),
                   ("package-lock.json", "npm ci --no-audit --no-fund"))
# Variables that point Python at AutoBuild's own interpreter or packages.
_OURS = ("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH", "PYTHONSTARTUP", "__PYVENV_LAUNCHER__")


def repo_venv(root: Path) -> Path | None:
    """The main checkout's virtualenv, reused by every worktree (they share the repo's dependencies)."""
    for name in _VENV_NAMES:
        venv = root / name
        if (venv / "bin" / "python").exists() and (venv / "pyvenv.cfg").is_file():
            return venv
    return None


def _without_ours(path: str) -> list[str]:
    if sys.prefix == sys.base_prefix:
        return [entry for entry in path.split(os.pathsep) if entry]  # not a virtualenv: nothing of ours to drop
    ours = {Path(sys.prefix).resolve() / "bin", Path(sys.executable).parent.resolve()}
    kept = []
    for entry in path.split(os.pathsep):
        try:
            resolved = Path(entry).resolve()
        except (OSError, RuntimeError):
            resolved = Path(entry)
        if entry and resolved not in ours:
            kept.append(entry)
    return kept


def gate_env(root: Path, worktree: Path) -> dict[str, str]:
    """Environment for the gate and setup in `worktree` of the repo at `root`."""
    env = {key: value for key, value in os.environ.items() if key not in _OURS}
    path = _without_ours(os.environ.get("PATH", ""))
    venv = repo_venv(root)
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
        path.insert(0, str(venv / "bin"))
    env["PATH"] = os.pathsep.join(path)
    # An editable install in the main checkout's venv points at the main checkout's sources: put the
    # worktree's own first, or its tests would check code the task never touched.
    sources = [str(worktree / "src")] if (worktree / "src").is_dir() else []
    env["PYTHONPATH"] = os.pathsep.join([*sources, str(worktree)])
    return env


def default_setup(root: Path) -> str | None:
    """What a fresh worktree needs before it can run the tests, when the plan names no `setup`.

    Python: nothing (the main checkout's venv is reused). Node: nothing when the main checkout has
    `node_modules` (Node and npm find it by walking up from the worktree, which lives inside the repo);
    otherwise the lockfile's clean install."""
    if not (root / "package.json").is_file() or (root / "node_modules").is_dir():
        return None
    try:
        package = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(package, dict) or not (package.get("dependencies") or package.get("devDependencies")):
        return None
    return next((command for lockfile, command in _CLEAN_INSTALLS if (root / lockfile).is_file()),
                "npm install --no-audit --no-fund")
