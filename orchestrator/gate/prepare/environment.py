"""The repo's own environment for its gate, setup and agents' test runs: never AutoBuild's virtualenv; the
repo's (`.venv`/`venv` of the main checkout) when it has one, with the gate's own venv layered over it (setup's
installs, out of the agents' reach), the agents' venv over that for their sessions only, and the worktree's code
ahead of every editable install. Plus the default `setup` that makes a fresh worktree able to
run the repo's tests."""

from __future__ import annotations

import functools
import json
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from orchestrator import sandbox
from orchestrator.gate.prepare.node_bins import main_checkout_bins
from orchestrator.gate.prepare.pyenv import editables, layered_venv, overlay, worktree_editables
from orchestrator.repo import watch

_CLEAN_INSTALLS = (("pnpm-lock.yaml", "pnpm install --frozen-lockfile"),
                   ("yarn.lock", "yarn install --frozen-lockfile"),
                   ("package-lock.json", "npm ci --no-audit --no-fund"))
# Variables that point Python at AutoBuild's own interpreter or packages.
_OURS = ("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH", "PYTHONSTARTUP", "__PYVENV_LAUNCHER__")


def repo_venv(root: Path) -> Path | None:
    """The main checkout's virtualenv, reused by every worktree (they share the repo's dependencies)."""
    for name in watch.VENV_NAMES:
        venv = root / name
        if (venv / "bin" / "python").exists() and (venv / "pyvenv.cfg").is_file():
            return venv
    return None


@functools.lru_cache(maxsize=8)
def _without_ours(path: str) -> tuple[str, ...]:
    """PATH's entries but AutoBuild's own venv's: remembered by PATH, as every gate run and session asks again and
    resolving each entry is most of the environment's cost."""
    if sys.prefix == sys.base_prefix:
        return tuple(entry for entry in path.split(os.pathsep) if entry)  # not a virtualenv: nothing of ours to drop
    ours = {Path(sys.prefix).resolve() / "bin", Path(sys.executable).parent.resolve()}
    kept = []
    for entry in path.split(os.pathsep):
        try:
            resolved = Path(entry).resolve()
        except (OSError, RuntimeError):
            resolved = Path(entry)
        if entry and resolved not in ours:
            kept.append(entry)
    return tuple(kept)


def run_env_dir(root: Path, feature_id: str) -> Path:
    """The agents' environment: `.autobuild/worktrees/<FEATURE>/_env/` (sandbox.ENV_FOLDER, excluded from git with
    the worktrees, removed by `clean`/`discard` with them). `venv/` is the agents' virtualenv layered over the
    gate's (an agent's installs go there, never into the gate's nor the user's), `overlay/<worktree>/` their
    per-worktree redirections. No gate run, setup or hidden run imports anything from it."""
    return root / ".autobuild" / "worktrees" / feature_id / sandbox.ENV_FOLDER


def gate_env_dir(root: Path, feature_id: str) -> Path:
    """The gate's own environment: `.autobuild/worktrees/<FEATURE>/_gate-own/env/` (in sandbox.GATE_FOLDER, which
    setup and the gate write and no agent can): `venv/` layered over the user's (setup's installs go there),
    `overlay/<worktree>/` the gate's redirections, `site-packages/` setup's installs when the repo has no venv."""
    return root / ".autobuild" / "worktrees" / feature_id / sandbox.GATE_FOLDER / sandbox.GATE_ENV


def _feature_of(root: Path, worktree: Path) -> str | None:
    """`<FEATURE>` of a worktree at `.autobuild/worktrees/<FEATURE>/<NAME>` (None for the main checkout)."""
    try:
        parts = worktree.resolve().relative_to((root / ".autobuild" / "worktrees").resolve()).parts
    except ValueError:
        return None
    return parts[0] if len(parts) == 2 else None


def run_env_of(root: Path, worktree: Path) -> Path | None:
    """The agents' environment of a run's worktree (None for the main checkout or another folder)."""
    feature = _feature_of(root, worktree)
    return run_env_dir(root, feature) if feature is not None else None


def gate_env_of(root: Path, worktree: Path) -> Path | None:
    """The gate's own environment of a run's worktree (None for the main checkout or another folder)."""
    feature = _feature_of(root, worktree)
    return gate_env_dir(root, feature) if feature is not None else None


def gate_env(root: Path, worktree: Path, feature_id: str | None = None, package: str = ".") -> dict[str, str]:
    """Environment for the gate and setup in `worktree` of the repo at `root`: the user's (minus AutoBuild's own
    Python), the repo's venv on PATH (a monorepo package's own, `<package>/.venv`, first), and for a run's
    worktree the gate's own venv layered over it (`gate_env_dir`: nothing an agent wrote is imported) with every
    editable install or path entry that points into the main checkout pointed at the worktree's copy instead.
    Writes only under `gate_env_dir` (nothing for the main checkout itself)."""
    return _python_env(root, worktree, feature_id or _feature_of(root, worktree), package, agents=False)


def session_env(root: Path, worktree: Path) -> dict[str, str]:
    """What an agent session in `worktree` needs over the orchestrator's own environment (the SDK layers a
    session's `env` over it) so the agent's own test runs see what the gate sees: the gate's environment with
    the agents' own venv layered over the gate's (what setup installed is seen; what an agent installs goes
    only to theirs, which the gate never uses). PATH, VIRTUAL_ENV and PYTHONPATH."""
    env = _python_env(root, worktree, _feature_of(root, worktree), ".", agents=True)
    return {key: env[key] for key in ("PATH", "VIRTUAL_ENV", "PYTHONPATH") if key in env}


def _python_env(root: Path, worktree: Path, feature: str | None, package: str, *, agents: bool) -> dict[str, str]:
    """`gate_env` (the layers user <- gate), or with `agents` the agents' (user <- gate <- agents)."""
    env = {key: value for key, value in os.environ.items() if key not in _OURS}
    path = list(_without_ours(os.environ.get("PATH", "")))
    own = repo_venv(root / package) if package != "." else None
    venv = own or repo_venv(root)
    redirected: list[str] = []
    installed: list[str] = []  # setup's installs without a venv (sandbox PIP_TARGET): after the run's code
    path[:0] = main_checkout_bins(root, worktree, package)  # yarn's and pnpm's runners don't walk up to them
    if venv is not None:
        path.insert(0, str(venv / "bin"))
        env["VIRTUAL_ENV"] = str(venv)
        if feature is not None:
            name = "venv" if own is None else "venv-" + package.replace("/", "-")
            layers = [gate_env_dir(root, feature), *([run_env_dir(root, feature)] if agents else [])]
            top = venv
            for folder in layers:
                top = layered_venv(top, folder / name, root)
                path.insert(0, str(top / "bin"))
            env["VIRTUAL_ENV"] = str(top)
            # The user's editable installs into the main checkout, and those setup (or an agent) made into one of
            # the run's worktrees: each pointed at this worktree's copy.
            found = editables(root, venv) + [entry for folder in layers for entry in worktree_editables(
                root, folder / name, run_env_dir(root, feature).parent)]
            redirected = overlay(root, worktree, found, layers[-1] / "overlay" / worktree.name)
    elif feature is not None and agents and (gate_env_dir(root, feature) / "site-packages").is_dir():
        installed.append(str(gate_env_dir(root, feature) / "site-packages"))
    env["PATH"] = os.pathsep.join(path)
    # Ahead of the user's editable installs (path entries and finders come after PYTHONPATH): the worktree's code.
    sources = [str(worktree / "src")] if (worktree / "src").is_dir() else []
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([*redirected, *sources, str(worktree), *installed]))
    return env


def default_setup(root: Path, packages: Sequence[str] = ()) -> str | None:
    """What a fresh worktree needs before it can run the tests, when the plan names no `setup`.

    Python: nothing (the main checkout's venv is reused, layered). Node: nothing when the main checkout has
    `node_modules` (Node and npm find it by walking up from the worktree, which lives inside the repo);
    otherwise the lockfile's clean install. A monorepo's Node packages outside a workspace (`frontend/` with its
    own lockfile) each get theirs in their folder: the main checkout's `frontend/node_modules` is not on the
    worktree's way up."""
    commands = [_node_install(root)]
    if not workspace_root(root):
        commands += [f"(cd {shlex.quote(path)} && {install})" for path in packages
                     if path != "." and (install := _node_install(root / path, own=True))]
    return " && ".join(command for command in commands if command) or None


def workspace_root(root: Path) -> bool:
    """Is `root` the top of a JavaScript workspace (pnpm's, or package.json `workspaces`)?"""
    return (root / "pnpm-workspace.yaml").is_file() or "workspaces" in package_json(root)


def package_json(folder: Path) -> dict[str, object]:
    """The folder's package.json ({} when it is missing, unreadable or not an object)."""
    try:
        package = json.loads((folder / "package.json").read_text(encoding="utf-8", errors="replace") or "{}")
    except (OSError, json.JSONDecodeError):
        return {}
    return package if isinstance(package, dict) else {}


def _node_install(folder: Path, own: bool = False) -> str | None:
    """The clean install a folder's package.json needs, None when it has no dependencies or (at the top, where
    worktrees find it by walking up) the main checkout already has node_modules."""
    package = package_json(folder)
    if not package or (not own and (folder / "node_modules").is_dir()):
        return None
    if not (package.get("dependencies") or package.get("devDependencies")):
        return None
    return next((command for lockfile, command in _CLEAN_INSTALLS if (folder / lockfile).is_file()),
                "npm install --no-audit --no-fund")
