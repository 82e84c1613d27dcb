"""Python code that knows it is judged, read with `ast`: reads of the runner's presence (py_presence.py), touches of
the runner or its output, comparison, truth and hash dunders that ignore their operand, and code run from a string the
screen can't read (`exec` of bytes decoded at run time, of a data file's text)."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from pathlib import PurePosixPath

from orchestrator.gate.spec.code_tokens import LIES, OPAQUE, TOUCHES, Finding
from orchestrator.gate.spec.py_module import IMPORT_HOOKS, Module, finding
from orchestrator.gate.spec.py_presence import presence
from orchestrator.gate.spec.py_strings import folded

_RUNNERS = ("pytest", "_pytest", "unittest", "nose", "nose2", "doctest")
_ASSERTION_LIBRARIES = ("numpy.testing", "pandas.testing", "pandas._testing", "polars.testing", "torch.testing",
                        "xarray.testing", "hamcrest", "assertpy", "sure", "expects")
"""The tests' assertion libraries beside the runners' own: the code may call them, never change them."""
_IMPORT_SYSTEM = ("builtins.__import__", "sys.meta_path", "sys.path_hooks", "importlib.import_module",
                  "importlib.__import__")
"""How Python finds and loads modules: replaced or given a finder of the code's, an import of the tests' (an
assertion library, the runner's own) can be answered with a fake."""
_CHANNEL = ("sys.stdout", "sys.stderr", "sys.__stdout__", "sys.__stderr__", "sys.exit", "os._exit", "builtins.print")
_EXITS = ("sys.exit", "os._exit", "os.abort", "os.kill", "exit", "quit", "os.killpg")
_DESCRIPTORS = ("os.dup2", "os.close", "os.closerange", "os.dup")
_MOCKS = ("mock", "dirty_equals")
"""Libraries whose values equal anything (`mock.ANY`, `dirty_equals.IsAnything`): the test side's, not a product's."""
_RUNS_CODE = ("exec", "eval", "compile", "builtins.exec", "builtins.eval", "builtins.compile", "runpy.run_path",
              "marshal.loads", "types.CodeType", "types.FunctionType")
"""What runs code given as data: the screen reads a literal's code as if written in place; any other is a hit (what
it runs, bytes decoded or a data file read at run time, can patch the runner the way code in place would)."""
_SETTERS = ("setattr", "delattr", "type.__setattr__", "object.__setattr__", "type.__delattr__", "object.__delattr__")
"""What sets an attribute by name: `type.__setattr__(unittest.TestCase, "assert" + "In", ...)` is an assignment."""
_BINARY = frozenset({"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__contains__", "__instancecheck__",
                     "__subclasscheck__"})


def _touches(module: Module, path: str) -> Iterator[Finding]:
    for node in module.nodes:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [alias.name for alias in node.names]
            for name in names:
                if name.split(".")[0] in ("pytest", "_pytest"):
                    yield finding(module, node, f"{TOUCHES}: imports `{name}` in code that is not a test")
                elif _mock_library(name, node):
                    yield finding(module, node, f"{LIES}: imports `{name}`, whose values equal anything, in code"
                                                 " that is not a test")
        targets = _assigned(module, node)
        for target in targets:
            if target in _IMPORT_SYSTEM:
                yield finding(module, node, f"{TOUCHES}: changes how modules load (`{target}`)")
                continue
            if target.startswith(_CHANNEL) or target.split(".")[0] in _RUNNERS or any(
                    target == library or target.startswith(f"{library}.") for library in _ASSERTION_LIBRARIES):
                yield finding(module, node, f"{TOUCHES}: replaces `{target}`")
        if isinstance(node, ast.Call):
            yield from _call(module, node)
        yield from _code_runner_taken(module, node)
    yield from _exits_at_import(module, path)


def _mock_library(name: str, node: ast.Import | ast.ImportFrom) -> bool:
    if name.split(".", maxsplit=1)[0] in _MOCKS or name.startswith("unittest.mock"):
        return True
    return isinstance(node, ast.ImportFrom) and name == "unittest" and any(a.name == "mock" for a in node.names)


def _assigned(module: Module, node: ast.AST) -> list[str]:
    """The dotted names an assignment, `setattr` or `del` writes."""
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        return [module.dotted(t) for t in targets if isinstance(t, ast.Attribute)]
    if isinstance(node, ast.Call) and module.dotted(node.func) in _SETTERS and len(node.args) >= 2:
        field = folded(node.args[1])
        if field is not None:
            return [f"{module.dotted(node.args[0])}.{field}"]
    return []


def _call(module: Module, node: ast.Call) -> Iterator[Finding]:
    name = module.dotted(node.func)
    if name in _DESCRIPTORS and any(_standard_descriptor(module, arg) for arg in node.args):
        yield finding(module, node, f"{TOUCHES}: `{name}` on a standard stream's descriptor")
    elif name in ("os.dup2", "os.closerange"):  # another process's inherited pipe is taken over this way
        yield finding(module, node, f"{TOUCHES}: `{name}` on the process's inherited descriptors")
    if name == "atexit.register" and node.args and _exits(module, node.args[0]):
        yield finding(module, node, f"{TOUCHES}: an exit registered to run at exit")
    if name in _RUNS_CODE:
        yield from _runs_code(module, node, name)
    if name.rpartition(".")[0] in IMPORT_HOOKS and name.rpartition(".")[2] in (
            "insert", "append", "extend", "__setitem__"):
        yield finding(module, node, f"{TOUCHES}: changes how modules load (`{name}`)")


_RUNNER_NAMES = frozenset({"exec", "eval", "compile"})
"""The builtins that run a string: taken as a value (not called in place), what they run is read nowhere."""


def _code_runner_taken(module: Module, node: ast.AST) -> Iterator[Finding]:
    """A code runner taken as a value to call later (`run = exec`, `getattr(builtins, "ex" + "ec")`,
    `__builtins__["eval"]`): what it will run is not read here."""
    parent = module.parent.get(node)
    if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load) \
            and module.dotted(node).removeprefix("builtins.") in _RUNNER_NAMES \
            and not (isinstance(parent, ast.Call) and parent.func is node) \
            and not isinstance(parent, ast.Attribute):
        yield finding(module, node, f"{OPAQUE} (`{ast.unparse(node)}` taken to run later)", module.statement(node))
    elif _looked_up(module, node):
        yield finding(module, node, f"{OPAQUE} (`{ast.unparse(node)[:100]}`)", node)


def _looked_up(module: Module, node: ast.AST) -> bool:
    """`getattr(anything, "exec")` or `__builtins__["eval"]` (`vars(builtins)`, `globals()`), the name folded."""
    if isinstance(node, ast.Call) and module.dotted(node.func) == "getattr" and len(node.args) >= 2:
        return folded(node.args[1]) in _RUNNER_NAMES
    if isinstance(node, ast.Subscript) and folded(node.slice) in _RUNNER_NAMES:
        holder = module.dotted(node.value)
        return "builtins" in holder or holder in ("vars", "globals", "locals")
    return False


def _runs_code(module: Module, node: ast.Call, name: str) -> Iterator[Finding]:
    """`exec`, `eval`, `compile` and their kin: the code of a literal screened in place, any other a hit."""
    source = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "source"), None)
    if isinstance(source, ast.Call) and module.dotted(source.func) in _RUNS_CODE:
        return  # `exec(compile(text, ...))`: the inner call is the one that says it
    text = folded(source) if source is not None else None
    if text is None:
        shown = ast.unparse(node).splitlines()[0][:100]
        yield finding(module, node, f"{OPAQUE} (`{shown}`: built or read at run time)", node)
        return
    for inner in findings("<string>", text):
        yield finding(module, node, f"{inner.what} (in the code `{name}` runs)", node)


def _standard_descriptor(module: Module, node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in (0, 1, 2)
    return any(module.dotted(inner).startswith(("sys.stdout", "sys.stderr", "sys.__std", "sys.stdin"))
               for inner in ast.walk(node))


def _exits(module: Module, node: ast.AST) -> bool:
    """Whether `node` is or calls a process exit (a lambda's body, a function this module defines)."""
    code = module.functions.get(node.id, node) if isinstance(node, ast.Name) else node
    return any(module.dotted(inner) in _EXITS or (isinstance(inner, ast.Raise) and inner.exc is not None
                                                  and module.dotted(inner.exc) == "SystemExit")
               for inner in ast.walk(code) if isinstance(inner, (ast.Attribute, ast.Name, ast.Raise)))


def _exits_at_import(module: Module, path: str) -> Iterator[Finding]:
    """A process exit the module runs when it is imported (not under `if __name__ == "__main__"`); a script (a
    `__main__.py`, a setup.py, a file with a `#!` line) exits at its end by design."""
    if PurePosixPath(path).name in ("__main__.py", "setup.py") or module.script:
        return
    pending: list[ast.stmt] = list(module.tree.body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(statement, ast.If) and "__main__" in ast.unparse(statement.test):
            pending += statement.orelse
            continue
        if isinstance(statement, (ast.If, ast.Try, ast.With, ast.For, ast.While, ast.ClassDef)):
            pending += [child for child in ast.iter_child_nodes(statement) if isinstance(child, ast.stmt)]
            pending += [s for handler in getattr(statement, "handlers", []) for s in handler.body]
            continue
        if _exits(module, statement) and not any(isinstance(n, ast.Lambda) for n in ast.walk(statement)):
            yield finding(module, statement, f"{TOUCHES}: exits the process when the module is imported", statement)


def _lies(module: Module) -> Iterator[Finding]:
    for node in module.nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in _BINARY | {"__bool__",
                                                                                                  "__hash__"}:
            if (why := _lying(node.name, node.args, node.body)) is not None:
                yield finding(module, node, f"{LIES}: `{node.name}` {why}", node)
        else:
            for name, function in _bound_lambdas(node):
                why = _lying(name, function.args, [ast.Return(function.body)]) if name in _BINARY | {
                    "__bool__", "__hash__"} else None
                if why is not None:
                    yield finding(module, node, f"{LIES}: `{name}` {why}", node)


def _bound_lambdas(node: ast.AST) -> Iterator[tuple[str, ast.Lambda]]:
    """The names lambdas are given: assigned (`P.__eq__ = lambda ...`), a class body's dict (`type("P", (int,),
    {"__eq__": lambda ...})`) or `setattr(P, "__e" + "q__", lambda ...)`."""
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
        for target in node.targets:
            if isinstance(target, (ast.Name, ast.Attribute)):
                yield (target.id if isinstance(target, ast.Name) else target.attr), node.value
    elif isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values, strict=True):
            if key is not None and isinstance(value, ast.Lambda) and (name := folded(key)) is not None:
                yield name, value
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
          and len(node.args) == 3 and isinstance(node.args[2], ast.Lambda) and (name := folded(node.args[1]))):
        yield name, node.args[2]


def _lying(name: str, args: ast.arguments, body: Sequence[ast.stmt]) -> str | None:
    """Why a dunder's answer ignores its operand: a comparison that never reads the other side, or the same
    constant whatever it is given; None for one that reads it, returns NotImplemented or raises."""
    returns = [node.value for statement in body for node in _own(statement)
               if isinstance(node, ast.Return) and node.value is not None
               and not (isinstance(node.value, ast.Name) and node.value.id == "NotImplemented")]
    constants = [value.value for value in returns if isinstance(value, ast.Constant)]
    if not returns:  # it raises, or returns NotImplemented: Python asks the other side
        return None
    same = len(constants) == len(returns) and len({repr(value) for value in constants}) == 1
    if name == "__bool__":
        return "is always True" if same and constants[0] is True else None
    if name == "__hash__":
        return "is the same number for every value" if same and isinstance(constants[0], int) else None
    positional = [*args.posonlyargs, *args.args]
    operand = positional[1].arg if len(positional) > 1 else args.vararg.arg if args.vararg else None
    if operand is None or not any(isinstance(node, ast.Name) and node.id == operand
                                  for statement in body for node in ast.walk(statement)):
        return "never reads the value it is compared with"
    if same and isinstance(constants[0], bool):
        return f"returns {constants[0]} whatever it is compared with"
    return None


def _own(statement: ast.stmt) -> Iterator[ast.AST]:
    """The nodes of a function's statement, not those of functions nested in it."""
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        yield node
        pending += [c for c in ast.iter_child_nodes(node) if not isinstance(c, (ast.FunctionDef, ast.Lambda,
                                                                                ast.AsyncFunctionDef, ast.ClassDef))]


def findings(path: str, text: str, ids: frozenset[str] = frozenset()) -> list[Finding]:
    """Every construct of a Python file that knows it is judged (`ids`: the run's, code_tokens.place_ids); nothing
    when it doesn't parse."""
    try:
        module = Module(ast.parse(text), text, script=text.startswith("#!"), ids=ids)
    except (SyntaxError, ValueError):
        return []
    found = [*presence(module), *_touches(module, path), *_lies(module)]
    return list({(hit.line, hit.key, hit.what): hit for hit in found}.values())
