"""The test commands one folder's files call for, best first: the maintainers' own (a Makefile `test` target,
tox/nox's test command, a package.json `test` script, a CI workflow's test step), then a guess from the layout
(pytest or unittest, Cargo, Go, CMake's ctest); and GateChoice, what a run is gated by."""

from __future__ import annotations

import re
import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.facts import PackageGate
from orchestrator.gate.choose import maintainers
from orchestrator.gate.prepare.environment import gate_env, package_json
from orchestrator.processes import run

_NPM_DEFAULT_TEST = "no test specified"
_TOP_TEST_MODULE = re.compile(r"test_\w+\.py|\w+_test\.py|tests?\.py")
_NODE_RUNNERS = (("pnpm-lock.yaml", "pnpm test"), ("yarn.lock", "yarn test"), ("bun.lockb", "bun run test"),
                 ("bun.lock", "bun run test"))


@dataclass(frozen=True)
class GateChoice:
    """The gate of a run: the command (None: nothing can check the work) and where it came from."""

    command: str | None
    source: str
    detected: bool = False
    """Found from the repo's files (not named by the user or the plan)."""
    packages: tuple[PackageGate, ...] = ()
    """A monorepo: each package with its own tests, gated in its own folder (`command` then runs them all)."""
    also: tuple[str, ...] = field(default=(), compare=False)
    """What else was found and not chosen, as "`command` (source)"."""

    def describe(self) -> str:
        if self.command is None:
            return f"no gate ({self.source}): approvals are reported as unverified"
        if self.packages:
            return f"per package ({self.source})"
        return f"`{self.command}` ({self.source})"


def candidates(folder: Path, root: Path | None = None) -> list[GateChoice]:
    """Every test command `folder`'s own files call for, best first: the maintainers' commands, then guesses.
    Commands are the same text wherever they came from, so duplicates are dropped (the first source wins)."""
    python = _python_name(root or folder)
    found: list[GateChoice] = []
    top = root or folder
    for finder in (maintainers.makefile, maintainers.tox, maintainers.nox, maintainers.ci):
        found += [GateChoice(command, source) for command, source in finder(folder, python)]
        if finder is maintainers.nox:  # a package.json script comes before a CI step
            found += [GateChoice(command, source) for command, source in _node(folder, top)]
    for guess in (_python, _rust, _go, _cmake):
        choice = guess(folder, python, root or folder)
        if choice is not None:
            found.append(choice)
    unique: dict[str, GateChoice] = {}
    for choice in found:
        unique.setdefault(str(choice.command), choice)
    return _build_only_last(folder, list(unique.values()))


def _build_only_last(folder: Path, found: list[GateChoice]) -> list[GateChoice]:
    """A Makefile test target that only builds is no test run: the maintainers' CI test step comes before it (else
    CMake's ctest, when the project has tests)."""
    first = found[0] if found else None
    if first is None or not first.source.endswith(" target") or first.command is None:
        return found
    ci_step = next((c for c in found if c.source.startswith((".github", ".gitlab"))), None) or next(
        (c for c in found if c.source.startswith("CMakeLists.txt")), None)
    if ci_step is None or not maintainers.builds_only(folder, first.command.split()[-1]):
        return found
    rest = [c for c in found if c is not first and c is not ci_step]
    return [ci_step, GateChoice(first.command, f"{first.source}; it only builds"), *rest]


def _python_name(root: Path) -> str:
    """`python` where the repo's environment has it (a venv always does), else `python3`."""
    return "python" if shutil.which("python", path=gate_env(root, root).get("PATH")) else "python3"


def read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    except OSError:
        return ""


def _pytest_config(root: Path) -> str | None:
    if (root / "pytest.ini").is_file():
        return "pytest.ini"
    try:
        pyproject = tomllib.loads(read(root / "pyproject.toml"))
    except tomllib.TOMLDecodeError:
        pyproject = {}
    if "pytest" in pyproject.get("tool", {}):
        return "pyproject.toml [tool.pytest]"
    if "[tool:pytest]" in read(root / "setup.cfg"):
        return "setup.cfg [tool:pytest]"
    if "[pytest]" in read(root / "tox.ini"):
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


def _top_test_modules(folder: Path) -> list[str]:
    """Test modules at the folder's top (`test_gnupg.py`, `tests.py`): a one-module library's tests."""
    return sorted(path.name for path in folder.glob("*.py") if _TOP_TEST_MODULE.fullmatch(path.name))


def _python(folder: Path, python: str, root: Path) -> GateChoice | None:
    config = _pytest_config(folder)
    tests = _tests_folder(folder)
    modules = _top_test_modules(folder) if tests is None else []
    if config is None and tests is None and not modules:
        return None
    if config:
        return GateChoice(f"{python} -m pytest", f"pytest configuration in {config}")
    if modules:
        return _top_level(folder, python, root, modules)
    if _has_pytest(folder, python, root):
        return GateChoice(f"{python} -m pytest", f"Python tests in {tests}/, pytest in the repo's environment")
    top = " -t ." if (folder / str(tests) / "__init__.py").is_file() else ""
    return GateChoice(f"{python} -m unittest discover -s {tests}{top}",
                      f"Python tests in {tests}/, unittest (no pytest in the repo's environment)")


_FINDS_PYTEST = "import importlib.util, sys; sys.exit(importlib.util.find_spec('pytest') is None)"
"""Whether the interpreter finds pytest, without importing it: the import alone costs ~0.35 CPU-s, and the gate
is chosen several times in a run (a pytest installed broken fails the base's run, which says so)."""


def _has_pytest(folder: Path, python: str, root: Path) -> bool:
    try:
        return run([python, "-c", _FINDS_PYTEST], folder, timeout=60, env=gate_env(root, root)).ok
    except OSError:
        return False


def _top_level(folder: Path, python: str, root: Path, modules: list[str]) -> GateChoice:
    """The test modules at the top, by pytest when the repo's environment has it (unless only `tests.py`, which
    pytest doesn't collect), else by unittest's discovery there."""
    named = ", ".join(modules[:3])
    if _has_pytest(folder, python, root) and any(name not in ("test.py", "tests.py") for name in modules):
        return GateChoice(f"{python} -m pytest", f"Python test modules at the top ({named}), pytest in the repo's"
                                                 " environment")
    return GateChoice(f"{python} -m unittest discover -s . -p 'test*.py'",
                      f"Python test modules at the top ({named}), unittest")


def node_runner(folder: Path, root: Path) -> str:
    """`npm test`, or the test command of the package manager whose lockfile the package (or, in a workspace,
    the repo's top) has."""
    for where in (folder, root):
        found = next((cmd for lock, cmd in _NODE_RUNNERS if (where / lock).is_file()), None)
        if found or (where / "package-lock.json").is_file():
            return found or "npm test"
    return "npm test"


def _node(folder: Path, root: Path) -> list[tuple[str, str]]:
    scripts = package_json(folder).get("scripts")
    script = scripts.get("test") if isinstance(scripts, dict) else None
    if not isinstance(script, str) or not script.strip() or _NPM_DEFAULT_TEST in script:
        return []
    command = node_runner(folder, root)
    return [(command, f"package.json test script ({command.split()[0]})")]


def _rust(folder: Path, python: str, root: Path) -> GateChoice | None:
    if not (folder / "Cargo.toml").is_file():
        return None
    text = read(folder / "Cargo.toml")
    # A workspace with a root package tests only that package unless told `--workspace` (one gate for all).
    if "[workspace]" in text:
        return GateChoice("cargo test --workspace" if "[package]" in text else "cargo test", "Cargo.toml workspace")
    return GateChoice("cargo test", "Cargo.toml")


def _go(folder: Path, python: str, root: Path) -> GateChoice | None:
    return GateChoice("go test ./...", "go.mod") if (folder / "go.mod").is_file() else None



CMAKE_TESTS = "cmake -S . -B build && cmake --build build && (cd build && ctest)"
"""A CMake project with tests, built in `build/` (the folder CMake projects usually ignore) and run by ctest."""


def _cmake(folder: Path, python: str, root: Path) -> GateChoice | None:
    text = read(folder / "CMakeLists.txt")
    if not re.search(r"^\s*(enable_testing\s*\(|include\s*\(\s*CTest\b|add_test\s*\()", text, re.MULTILINE):
        return None
    return GateChoice(CMAKE_TESTS, "CMakeLists.txt (enable_testing: ctest)")
