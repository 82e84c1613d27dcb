"""Which command gates a run: `--verify`, else the plan's `verify`, else the repo's own test command, found
from its files (Python, Node, Rust, Go, a Makefile `test` target), with where the choice came from."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

from orchestrator.gate.environment import gate_env
from orchestrator.processes import run

NO_GATE = "none"
_NPM_DEFAULT_TEST = "no test specified"
_NODE_RUNNERS = (("pnpm-lock.yaml", "pnpm test"), ("yarn.lock", "yarn test"), ("bun.lockb", "bun run test"),
                 ("bun.lock", "bun run test"))
_MAKE_TEST = re.compile(r"^test\s*:(?!=)", re.MULTILINE)


@dataclass(frozen=True)
class GateChoice:
    """The gate of a run: the command (None: nothing can check the work) and where it came from."""

    command: str | None
    source: str
    detected: bool = False
    """Found from the repo's files (not named by the user or the plan)."""

    def describe(self) -> str:
        if self.command is None:
            return f"no gate ({self.source}): approvals are reported as unverified"
        return f"`{self.command}` ({self.source})"


def choose_gate(root: Path, plan_verify: str | None, override: str | None) -> GateChoice:
    """`--verify` (or `--verify none`), else the plan's `verify`, else the repo's detected test command."""
    if override is not None:
        if override.strip().lower() == NO_GATE:
            return GateChoice(None, "--verify none")
        return GateChoice(override, "--verify")
    if plan_verify:
        return GateChoice(plan_verify, "the plan's verify")
    return detect_test_command(root)


def detect_test_command(root: Path) -> GateChoice:
    """The repo's own test command, from its files; GateChoice(None, why) when there is none."""
    for finder in (_python, _node, _rust, _go, _makefile):
        found = finder(root)
        if found is not None:
            return dataclasses.replace(found, detected=True)
    return GateChoice(None, "no verify in the plan and no test command found in the repo (pytest or unittest"
                            " tests, a package.json test script, Cargo.toml, go.mod, a Makefile test target)")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    except OSError:
        return ""


def _pytest_config(root: Path) -> str | None:
    if (root / "pytest.ini").is_file():
        return "pytest.ini"
    try:
        pyproject = tomllib.loads(_read(root / "pyproject.toml"))
    except tomllib.TOMLDecodeError:
        pyproject = {}
    if "pytest" in pyproject.get("tool", {}):
        return "pyproject.toml [tool.pytest]"
    if "[tool:pytest]" in _read(root / "setup.cfg"):
        return "setup.cfg [tool:pytest]"
    if "[pytest]" in _read(root / "tox.ini"):
        return "tox.ini [pytest]"
    if (root / "conftest.py").is_file():
        return "conftest.py"
    return None


def _tests_folder(root: Path) -> str | None:
    for name in ("tests", "test"):
        folder = root / name
        if folder.is_dir() and (any(folder.rglob("test_*.py")) or any(folder.rglob("*_test.py"))):
            return name
    return None


def _python(root: Path) -> GateChoice | None:
    config = _pytest_config(root)
    folder = _tests_folder(root)
    if config is None and folder is None:
        return None
    env = gate_env(root, root)
    # `python` where the repo's environment has it (a venv always does), else `python3`.
    python = "python" if shutil.which("python", path=env.get("PATH")) else "python3"
    if config:
        return GateChoice(f"{python} -m pytest", f"pytest configuration in {config}")
    try:
        has_pytest = run([python, "-c", "import pytest"], root, timeout=60, env=env).ok
    except OSError:
        has_pytest = False
    if has_pytest:
        return GateChoice(f"{python} -m pytest", f"Python tests in {folder}/, pytest in the repo's environment")
    top = " -t ." if (root / str(folder) / "__init__.py").is_file() else ""
    return GateChoice(f"{python} -m unittest discover -s {folder}{top}",
                      f"Python tests in {folder}/, unittest (no pytest in the repo's environment)")


def _node(root: Path) -> GateChoice | None:
    try:
        package = json.loads(_read(root / "package.json") or "{}")
    except json.JSONDecodeError:
        return None
    script = (package.get("scripts") or {}).get("test") if isinstance(package, dict) else None
    if not isinstance(script, str) or not script.strip() or _NPM_DEFAULT_TEST in script:
        return None
    command = next((cmd for lock, cmd in _NODE_RUNNERS if (root / lock).is_file()), "npm test")
    return GateChoice(command, f"package.json test script ({command.split()[0]})")


def _rust(root: Path) -> GateChoice | None:
    return GateChoice("cargo test", "Cargo.toml") if (root / "Cargo.toml").is_file() else None


def _go(root: Path) -> GateChoice | None:
    return GateChoice("go test ./...", "go.mod") if (root / "go.mod").is_file() else None


def _makefile(root: Path) -> GateChoice | None:
    for name in ("GNUmakefile", "makefile", "Makefile"):
        if _MAKE_TEST.search(_read(root / name)):
            return GateChoice("make test", f"{name} test target")
    return None
