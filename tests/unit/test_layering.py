"""The architecture, asserted from the code itself (an AST walk of every import, also those inside functions
and under TYPE_CHECKING): the agent layer never imports the orchestrator or langgraph, the orchestrator never
imports the SDK, packages only import packages below their own, and no import circles anywhere."""

from __future__ import annotations

import ast
import functools
import graphlib
from pathlib import Path

import pytest

from tests.source_trees import parsed

ROOT = Path(__file__).resolve().parents[2]
# Bottom to top: a module may import its own package and anything on a lower layer, never a higher one.
LAYERS: list[set[str]] = [
    {"errors", "text", "jsonout", "processes", "sandbox", "sandbox_tmp", "settings", "causes", "facts", "events",
     "schemas", ""},
    {"repo"},
    {"gate"},
    {"plan"},
    {"store"},
    {"views"},
    {"graph"},
    {"landing"},
    {"web"},
    {"server"},
    {"cli", "__main__"},
]


def _modules() -> dict[str, Path]:
    found = {}
    for package in ("orchestrator", "agents"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


@functools.cache
def _imports(path: Path) -> set[str]:
    """Every module `path` imports (`from pkg import submodule` counts as the submodule)."""
    found: set[str] = set()
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names
                         if f"{node.module}.{alias.name}" in MODULES)
    return found


def _ours(name: str) -> str | None:
    """The module of ours that an imported name resolves to (its longest known prefix)."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in MODULES:
            return candidate
        parts.pop()
    return None


@functools.cache
def _graph() -> dict[str, set[str]]:
    """Which of our modules each of ours imports (built on first use, not when the module is collected)."""
    return {module: {ours for name in _imports(path) if (ours := _ours(name)) and ours != module}
            for module, path in MODULES.items()}


def _layer(module: str) -> int:
    top = module.split(".")[1] if module.count(".") else ""
    return next(index for index, names in enumerate(LAYERS) if top in names)


def test_the_agent_layer_never_imports_the_orchestrator_or_langgraph() -> None:
    offenders = [f"{module} imports {name}" for module, path in MODULES.items() if module.startswith("agents")
                 for name in _imports(path) if name.split(".")[0] in ("orchestrator", "langgraph")]
    assert offenders == []


def test_the_orchestrator_never_imports_the_sdk() -> None:
    offenders = [f"{module} imports {name}" for module, path in MODULES.items() if module.startswith("orchestrator")
                 for name in _imports(path) if name.split(".")[0] == "claude_agent_sdk"]
    assert offenders == []


def test_views_never_import_the_graph() -> None:
    offenders = [f"{module} imports {dep}" for module, deps in _graph().items()
                 if module.startswith("orchestrator.views")
                 for dep in deps if dep.startswith(("orchestrator.graph", "orchestrator.cli", "orchestrator.landing"))]
    assert offenders == []


def test_arrows_only_point_downward() -> None:
    offenders = [f"{module} (layer {_layer(module)}) imports {dep} (layer {_layer(dep)})"
                 for module, deps in _graph().items() if module.startswith("orchestrator")
                 for dep in deps if dep.startswith("orchestrator") and _layer(dep) > _layer(module)]
    assert offenders == []


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        if module.startswith("orchestrator"):
            _layer(module)  # StopIteration: a new top-level module or package needs a place in LAYERS


@pytest.mark.parametrize("package", ["orchestrator", "agents"])
def test_no_import_circles(package: str) -> None:
    edges = {module: {dep for dep in deps if dep.startswith(package)} for module, deps in _graph().items()
             if module.startswith(package)}
    # A package's __init__ re-exporting its own modules is not a circle: drop edges from a package to its children.
    edges = {module: {dep for dep in deps if not dep.startswith(module + ".")} for module, deps in edges.items()}
    try:
        graphlib.TopologicalSorter(edges).prepare()
    except graphlib.CycleError as exc:
        pytest.fail(f"import circle: {' -> '.join(exc.args[1])}")


# Where git may be started from outside orchestrator/repo/: agents/testing builds throwaway repos for tests and demos.
_STARTERS = {"run", "run_async", "run_shell", "Popen", "check_output", "check_call", "call", "system",
             "create_subprocess_exec", "create_subprocess_shell"}


def _starts_git(node: ast.AST) -> bool:
    """An argv whose first element is "git", or a shell string that starts with `git `."""
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        first = node.elts[0]
        return isinstance(first, ast.Constant) and first.value == "git"
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.lstrip().startswith("git ")
    if isinstance(node, ast.JoinedStr) and node.values:
        return _starts_git(node.values[0])
    return False


def _git_starts(path: Path) -> list[int]:
    found = []
    for node in ast.walk(parsed(path)):
        if isinstance(node, (ast.List, ast.Tuple)) and _starts_git(node):
            found.append(node.lineno)
        elif isinstance(node, ast.Call) and node.args:
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in _STARTERS and _starts_git(node.args[0]):
                found.append(node.lineno)
    return sorted(set(found))


def test_git_is_started_only_by_orchestrator_repo() -> None:
    """One guarded path runs git (no user hooks, no fsmonitor, the worktree ceiling): GitRepo.git, GitRepo.read
    and repo.commands.git_sync; an argv or shell string starting with git anywhere else is a bypass."""
    offenders = [f"{module}:{line}" for module, path in MODULES.items()
                 if not module.startswith(("orchestrator.repo", "agents.testing"))
                 for line in _git_starts(path)]
    assert offenders == []


def test_the_git_rule_sees_an_argv_and_a_shell_string() -> None:
    code = 'run(["git", "status"], here)\nrun_shell("git checkout x", here, 1)\nrun_shell(f"git {x}", here, 1)\n'
    tree = ast.parse(code)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    assert all(_starts_git(call.args[0]) for call in calls)
    assert not _starts_git(ast.parse('"github"').body[0].value)  # type: ignore[attr-defined]


# A program of its own, started by path or by `-m` and never imported by the core: its main() reads its argv and
# prints its usage like any command line.
PROGRAMS = {"orchestrator.landing.leash", "agents.testing.scripted_model"}


def _command_line_calls(path: Path) -> list[str]:
    return _command_line_calls_in(parsed(path))


def _command_line_calls_in(code: str | ast.Module) -> list[str]:
    """What only the command line does: import argparse, call print(), run an event loop with asyncio.run."""
    found = []
    for node in ast.walk(ast.parse(code) if isinstance(code, str) else code):
        if isinstance(node, ast.Import) and any(alias.name == "argparse" for alias in node.names):
            found.append(f"{node.lineno}: import argparse")
        elif isinstance(node, ast.ImportFrom) and node.module in ("argparse", "asyncio") and node.level == 0 and (
                node.module == "argparse" or any(alias.name == "run" for alias in node.names)):
            found.append(f"{node.lineno}: from {node.module} import")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            found.append(f"{node.lineno}: print()")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "run"
              and isinstance(node.func.value, ast.Name) and node.func.value.id == "asyncio"):
            found.append(f"{node.lineno}: asyncio.run()")
    return sorted(found, key=lambda entry: int(entry.split(":")[0]))


def test_argparse_printing_and_asyncio_run_only_in_the_command_line() -> None:
    """The core takes typed arguments and a callback to say things, and its async work is a coroutine the command
    runs: argparse, print() and asyncio.run anywhere outside orchestrator/cli/ is the command line leaking in."""
    offenders = [f"{module}:{call}" for module, path in MODULES.items()
                 if not module.startswith("orchestrator.cli") and module != "orchestrator.__main__"
                 and module not in PROGRAMS
                 for call in _command_line_calls(path)]
    assert offenders == []


def test_the_command_line_rule_sees_each_of_its_three_tools() -> None:
    code = ("import argparse\nfrom argparse import Namespace\nfrom asyncio import run\nprint('x')\n"
            "asyncio.run(main())\nconsole.print('x')\nloop.run(x)\n")
    found = _command_line_calls_in(code)
    assert [line.split(":")[0] for line in found] == ["1", "2", "3", "4", "5"]


# The modules that may start a process themselves, each for a reason the one owner (processes.py) can't serve:
# sandbox.py probes bubblewrap once (a blocking check at start-up), landing/leash.py is the leash `land` runs the
# user's git and hooks under (it must be the parent it leashes), cli/demo.py runs the demo's CLI in the foreground,
# agents/testing/repos.py builds throwaway repos for tests and demos, and the gate's `go` shim is a program of its
# own, run inside the gate's command, that must be the parent of the real `go` it records. The SDK starts the
# Claude CLI itself.
SUBPROCESS_STARTERS = {"orchestrator.processes", "orchestrator.sandbox", "orchestrator.landing.leash",
                       "orchestrator.cli.demo", "agents.testing.repos",
                       "orchestrator.gate.observe.runners.shim.autobuild_go"}
_PROCESS_CALLS = {("subprocess", name) for name in ("run", "Popen", "call", "check_call", "check_output",
                                                    "getoutput", "getstatusoutput")} | {
    ("asyncio", "create_subprocess_exec"), ("asyncio", "create_subprocess_shell"), ("os", "system"),
    ("os", "popen"), ("os", "fork"), ("os", "forkpty"), ("pty", "spawn"), ("os", "posix_spawn"),
    ("os", "posix_spawnp")} | {("os", f"exec{suffix}") for suffix in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")} \
    | {("os", f"spawn{suffix}") for suffix in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")}


def _process_starts(tree: ast.AST) -> list[int]:
    """Lines that start a process: `subprocess.run(...)`, `asyncio.create_subprocess_exec(...)`, `os.fork()`…, and
    any import of `subprocess` or of one of those names (`from subprocess import Popen`)."""
    return sorted({node.lineno for node in ast.walk(tree) if _starts_a_process(node)})


def _starts_a_process(node: ast.AST) -> bool:
    if isinstance(node, ast.Call):
        func = node.func
        return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
            and (func.value.id, func.attr) in _PROCESS_CALLS
    if isinstance(node, ast.Import):
        return any(alias.name == "subprocess" for alias in node.names)
    if isinstance(node, ast.ImportFrom):
        return node.module == "subprocess" or any((node.module, alias.name) in _PROCESS_CALLS for alias in node.names)
    return False


def test_only_the_allowed_modules_start_processes() -> None:
    """processes.py owns subprocesses (own session, killpg on timeout or cancel, output capped); a module outside
    the allow-list that starts one bypasses that."""
    offenders = [f"{module}:{line}" for module, path in MODULES.items() if module not in SUBPROCESS_STARTERS
                 for line in _process_starts(parsed(path))]
    assert offenders == []
    unused = [module for module in SUBPROCESS_STARTERS if not _process_starts(parsed(MODULES[module]))]
    assert unused == []  # an allow-list entry that starts nothing any more is dropped


def test_the_process_rule_sees_each_way_to_start_one() -> None:
    code = ("import subprocess\nfrom subprocess import Popen\nfrom asyncio import create_subprocess_exec\n"
            "asyncio.create_subprocess_shell('x')\nos.execvp('x', [])\nos.fork()\nos.system('x')\nprint('x')\n")
    assert _process_starts(ast.parse(code)) == [1, 2, 3, 4, 5, 6, 7]
