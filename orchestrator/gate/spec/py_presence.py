"""Python code that reads whether a test runner is running: a runner's name compared with what the process holds
(its modules, command line, environment, callers, its parent), counts of them against a number, the streams and hooks
a runner puts in place, and uses of a helper that reads any of these."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from orchestrator.gate.spec.code_tokens import (
    PRESENCE,
    Finding,
    into_git_folder,
    names_gate_place,
    names_git_file,
    names_runner,
    names_runner_variable,
)
from orchestrator.gate.spec.py_module import IMPORT_HOOKS, IN_USE, STACK, Module, count, deciding, finding, number
from orchestrator.gate.spec.py_strings import folded

_ORIGINALS = ("sys.__stdout__", "sys.__stderr__", "sys.__stdin__", "sys.__excepthook__", "sys.__unraisablehook__",
              "sys.__displayhook__", "sys.__breakpointhook__", "threading.__excepthook__")
"""The interpreter's own streams and hooks, kept beside those in use: pytest captures `sys.stdout` and puts its own
`sys.unraisablehook` and `threading.excepthook` in place while it runs, so `sys.stdout is not sys.__stdout__` tells
a test run from any other with no runner's name to read."""

def _presence(module: Module) -> Iterator[Finding]:
    """A runner's name (however it is built, or a name given one) where a probe of the process decides, a variable
    or file only a runner has, anywhere, and the gate's place where the code's own place decides (its file, the
    working directory, the branch; whether `.git` is a file)."""
    for node in module.nodes:
        value = folded(node) if isinstance(node, (ast.Constant, ast.BinOp, ast.JoinedStr, ast.Subscript,
                                                  ast.Call)) else None
        if value is not None and not isinstance(node, ast.Constant) and isinstance(module.parent.get(node), (
                ast.BinOp, ast.JoinedStr)):
            continue  # the whole expression is read, not its pieces
        if isinstance(node, ast.Attribute) and node.attr == "_called_from_test":
            value = node.attr
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in module.runner_names:
            value = module.runner_names[node.id]  # `name = "pytest"`, then `if name in sys.modules:`
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in module.git_file_names:
            value = ".git"  # `marker = root / ".git"`, then `if marker.is_file():`
        if value is None:
            continue
        if names_runner_variable(value):
            yield finding(module, node, f"{PRESENCE} (`{value}`)")
        elif names_runner(value) and any(module.probes(part) for part in deciding(module, node)):
            yield finding(module, node, f"{PRESENCE} (`{module.shown(node)}`)")
        elif names_gate_place(value, module.ids) and module.compared(node) and any(module.locates(part)
                                                                        for part in deciding(module, node)):
            yield finding(module, node, f"{PRESENCE} (asks where it runs: `{module.shown(node)}`)")
        elif names_git_file(value) and not module.more_path_follows(node) and any(
                module.reads_kind(part, into_git_folder(value)) for part in deciding(module, node)):
            yield finding(module, node, f"{PRESENCE} (asks whether it runs in a git worktree: `{module.shown(node)}`)")


def _callers(module: Module) -> Iterator[Finding]:
    """A branch on the stack (its frames' files or functions) compared with a string: code that asks whether a test
    called it."""
    for node in module.nodes:
        if not (isinstance(node, ast.Call) and module.dotted(node.func) in STACK):
            continue
        for part in deciding(module, node):
            if any(folded(inner) for inner in ast.walk(part) if inner is not node):
                yield finding(module, node, f"{PRESENCE} (branches on its callers: `{module.shown(node)}`)")
                break


def _import_hooks(module: Module) -> Iterator[Finding]:
    """A branch on the import system's finders or path hooks (or a name given them) compared with a string: pytest's
    assertion rewriter is one, told by its class's name (`"Rewrit" in type(f).__name__`) with no runner's name to
    read."""
    if not any(_reads_hooks(module, node) for node in module.nodes):  # most files: no string is looked at
        return
    bound = module.given(lambda value: any(_reads_hooks(module, inner) for inner in ast.walk(value)))
    for node in module.nodes:
        if not (isinstance(node, (ast.Constant, ast.BinOp, ast.JoinedStr)) and folded(node)
                and module.compared(node)):
            continue
        for part in deciding(module, node):
            if any(_reads_hooks(module, inner) or (isinstance(inner, ast.Name) and inner.id in bound)
                   for inner in ast.walk(part)):
                yield finding(module, node, f"{PRESENCE} (branches on the import hooks: `{module.shown(node)}`)")
                break


def _reads_hooks(module: Module, node: ast.AST) -> bool:
    """`sys.meta_path` read; not `sys.meta_path.insert(0, finder)`, `.append`, `.remove` (installing a hook)."""
    if not (isinstance(node, (ast.Attribute, ast.Name)) and isinstance(node.ctx, ast.Load) and module.dotted(node) in
            IMPORT_HOOKS):
        return False
    method = module.parent.get(node)
    return not (isinstance(method, ast.Attribute) and method.attr in ("insert", "append", "extend", "remove", "pop",
                                                                      "clear"))


def _counts(module: Module) -> Iterator[Finding]:
    """A count of the loaded modules, the variables or the stack's frames compared with a number: how much the
    process holds, or how deep the code is called, tells a test run from any other with no runner's name to read.
    Compared with another count it is not (a cache kept in step with `sys.modules`, a loop's index)."""
    for node in module.nodes:
        parts = [node.left, *node.comparators] if isinstance(node, ast.Compare) else []
        if any(count(module, part) and any(number(module, other) for other in parts if other is not part)
               for part in parts):
            yield finding(module, node,
                          f"{PRESENCE} (counts what the process holds or who called it: `{module.shown(node)}`)")


def _replaced(module: Module) -> Iterator[Finding]:
    """A stream or hook in use compared with the interpreter's own (`sys.stdout is not sys.__stdout__`), or its class
    compared (`type(sys.stdout) is not io.TextIOWrapper`): whether a runner put its own in place. Not another stream
    compared with it (`stream is sys.__stdout__`), nor with None."""
    for node in module.nodes:
        names = [module.dotted(part) for part in [node.left, *node.comparators]
                 if isinstance(part, (ast.Attribute, ast.Name))] if isinstance(node, ast.Compare) else []
        classes = isinstance(node, ast.Compare) and any(
            module.identity_of_in_use(inner) for part in [node.left, *node.comparators] for inner in ast.walk(part))
        if classes or (any(name in _ORIGINALS for name in names) and any(name in IN_USE for name in names)):
            yield finding(module, node,
                          f"{PRESENCE} (asks whether a runner replaced a stream or hook: `{module.shown(node)}`)")


def _switched_on(module: Module) -> Iterator[Finding]:
    """`faulthandler.is_enabled()` deciding what the code does: pytest turns faulthandler on for its run. Not in a
    function that turns it on or off itself (`if not faulthandler.is_enabled(): faulthandler.enable()`)."""
    for node in module.nodes:
        if not (isinstance(node, ast.Call) and module.dotted(node.func) == "faulthandler.is_enabled"):
            continue
        statement = module.statement(node)
        deciding = isinstance(statement, (ast.If, ast.While, ast.Return, ast.Assert)) or any(
            isinstance(around, ast.IfExp) for around in _around(module, node, statement))
        if deciding and not any(isinstance(inner, ast.Call) and inner is not node and module.dotted(
                inner.func).startswith("faulthandler.") for inner in ast.walk(module.function(node))):
            yield finding(module, node, f"{PRESENCE} (asks whether a runner turned on faulthandler: "
                                         f"`{module.shown(node)}`)")


def _around(module: Module, node: ast.AST, until: ast.AST) -> Iterator[ast.AST]:
    """The expressions around `node` inside the statement `until`."""
    current = module.parent.get(node)
    while current is not None and current is not until:
        yield current
        current = module.parent.get(current)


_TOO_SHALLOW = frozenset({"ValueError", "IndexError", "LookupError", "Exception", "BaseException"})
"""What a frame asked for above the stack's top raises (`sys._getframe`: ValueError; a list of frames: IndexError)."""


def _far_frames(module: Module) -> Iterator[Finding]:
    """A frame far up the stack asked for where its absence is caught (`try: sys._getframe(20)`, `inspect.stack()[20]`):
    how deep the code is called, told by whether the call raises."""
    for node in module.nodes:
        if not isinstance(node, (ast.Try, ast.TryStar)):
            continue
        if not any(handler.type is None or module.dotted(handler.type) in _TOO_SHALLOW or (
                isinstance(handler.type, ast.Tuple) and any(module.dotted(kind) in _TOO_SHALLOW
                                                            for kind in handler.type.elts))
                   for handler in node.handlers):
            continue
        for inner in (inner for statement in node.body for inner in ast.walk(statement)):
            depth = None
            if isinstance(inner, ast.Call) and module.dotted(inner.func) == "sys._getframe" and inner.args:
                depth = inner.args[0]
            elif isinstance(inner, ast.Subscript) and isinstance(inner.value, ast.Call) and module.dotted(
                    inner.value.func) in STACK:
                depth = inner.slice
            far = depth is not None and number(module, depth) and not (
                isinstance(depth, ast.Constant) and isinstance(depth.value, (int, float)) and depth.value < 3)
            if far:
                yield finding(module, inner, f"{PRESENCE} (counts what the process holds or who called it: "
                                              f"`{module.shown(inner)}`)")


def _through_helpers(module: Module, found: list[Finding]) -> Iterator[Finding]:
    """Uses of a module-level function or name whose own code reads the runner's presence (`TESTING = "pytest" in
    sys.modules` on the base, `if TESTING:` added)."""
    lines = {hit.line for hit in found}
    helpers: dict[str, int] = {}
    for statement in module.tree.body:
        span = range(statement.lineno, (statement.end_lineno or statement.lineno) + 1)
        if any(line in span for line in lines):
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                helpers[statement.name] = statement.lineno
            elif isinstance(statement, ast.Assign):
                helpers.update({t.id: statement.lineno for t in statement.targets if isinstance(t, ast.Name)})
    for node in module.nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in helpers:
            yield finding(module, node, f"{PRESENCE} (through `{node.id}`)")


def presence(module: Module) -> list[Finding]:
    """Every read of the runner's presence in the file, and every use of a helper that reads it."""
    found = [*_presence(module), *_callers(module), *_import_hooks(module), *_counts(module), *_replaced(module),
             *_switched_on(module), *_far_frames(module)]
    return [*found, *_through_helpers(module, found)]
