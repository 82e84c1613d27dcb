"""Beside test_layering: the modules that take paths from outside (a plan, a served run's input) write files only
through the resolver (orchestrator/repo/confined.py), asserted by an AST walk."""

from __future__ import annotations

import ast

from tests.unit.test_layering import MODULES

# Modules whose paths come from outside, and the functions in them that write only where we chose (not input).
TAKE_OUTSIDE_PATHS: dict[str, set[str]] = {
    "orchestrator.repo.remote": {"ensure_clone"},  # the worker's workspace; the folder named by a digest
    "orchestrator.graph.by_url": set(),
    "orchestrator.plan.files": set(),
    "orchestrator.plan.model": set(),
    "orchestrator.server.client": set(),
    "orchestrator.server.app": set(),
    # What a run writes under `.autobuild/runs/<FEAT>` (a repository may commit links there): repo/run_files.py.
    "orchestrator.views.reports": set(),
    "orchestrator.views.html_report": set(),
    "orchestrator.views.pr_body": set(),
    "orchestrator.views.pictures": set(),
    "orchestrator.store.traces": set(),
    "orchestrator.store.pause": {"_write_shared"},  # the credential's record, in the checkpoints' folder
    "orchestrator.cli.graph": {"_write"},  # the file a user names with --output (else the run's folder)
    "orchestrator.graph.nodes.task": set(),
    "orchestrator.graph.replan": set(),
    "orchestrator.graph.workflow": set(),
    "orchestrator.landing.pull_request": set(),
}
# Modules of ours whose functions share a write's name: the resolvers themselves, and replan.replace (a task by others).
_NOT_FILE_WRITES = {"run_files", "confined", "replan"}
_WRITES = {"write_text", "write_bytes", "mkdir", "makedirs", "touch", "symlink_to", "hardlink_to", "replace",
           "rename", "copy", "copy2", "copyfile", "copytree", "move", "extractall", "extract", "unpack_archive"}


def _write_mode(call: ast.Call) -> bool:
    mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
    return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and bool(set(mode.value) & set("wax+"))


def _writes(tree: ast.AST, allowed: set[str]) -> list[str]:
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.name in allowed:
            continue
        for node in ast.walk(function):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if isinstance(node.func, ast.Attribute) and getattr(node.func.value, "id", "") in _NOT_FILE_WRITES:
                continue
            if name in ("replace", "rename") and len(node.args) == 2 and not (
                    isinstance(node.func, ast.Attribute) and getattr(node.func.value, "id", "") == "os"):
                continue  # str.replace(old, new); Path.replace(target) and os.replace(a, b) are moves
            if name == "copy" and not node.args and not node.keywords:
                continue  # dict.copy() and list.copy(); shutil.copy(a, b) copies a file
            if name in _WRITES or (name == "open" and _write_mode(node)):
                found.append(f"{function.name}:{node.lineno} {name}")
            # a write handed to a thread: asyncio.to_thread(path.mkdir, …)
            if name == "to_thread" and node.args and isinstance(node.args[0], ast.Attribute) and (
                    node.args[0].attr in _WRITES):
                found.append(f"{function.name}:{node.lineno} {node.args[0].attr}")
    return found


def test_outside_paths_are_written_only_through_the_resolver() -> None:
    offenders = {module: found for module, allowed in TAKE_OUTSIDE_PATHS.items()
                 if (found := _writes(ast.parse(MODULES[module].read_text()), allowed))}
    assert offenders == {}


def test_the_rule_sees_each_kind_of_write() -> None:
    code = ("def f(p, q):\n p.write_text('x')\n open(p, 'a')\n shutil.copy(p, q)\n os.replace(p, q)\n"
            " p.mkdir()\n tar.extractall(q)\n open(p)\n review.copy()\n")
    assert [entry.split()[1] for entry in _writes(ast.parse(code), set())] == [
        "write_text", "open", "copy", "replace", "mkdir", "extractall"]
