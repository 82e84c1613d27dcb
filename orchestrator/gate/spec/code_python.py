"""Python code that knows it is judged, read with `ast`: reads of the runner's presence, touches of the runner or its
output, comparison, truth and hash dunders that ignore their operand, and code run from a string the screen can't
read (`exec` of bytes decoded at run time, of a data file's text)."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from pathlib import PurePosixPath

from orchestrator.gate.spec.code_tokens import (
    LIES,
    OPAQUE,
    PRESENCE,
    TOUCHES,
    Finding,
    names_runner,
    names_runner_variable,
)
from orchestrator.gate.spec.py_strings import folded

_PROBES = ("sys.modules", "sys.argv", "sys.orig_argv", "sys.executable", "os.environ", "os.getenv", "os.environb",
           "inspect.stack", "inspect.currentframe", "sys._getframe", "traceback.extract_stack",
           "traceback.format_stack", "importlib.util.find_spec", "importlib.import_module", "__import__",
           "pkgutil.find_loader", "sys.gettrace", "sys.excepthook", "sys.unraisablehook", "threading.excepthook")
"""What a runner's presence is read through: loaded modules, the command line, the environment, the stack, the hooks
a runner puts its own in place of; a path under `/proc/` read (the process's own or its parent's command line) is
one too."""
_IN_USE = ("sys.stdout", "sys.stderr", "sys.stdin", "sys.excepthook", "sys.unraisablehook", "sys.displayhook",
           "sys.breakpointhook", "threading.excepthook")
_ORIGINALS = ("sys.__stdout__", "sys.__stderr__", "sys.__stdin__", "sys.__excepthook__", "sys.__unraisablehook__",
              "sys.__displayhook__", "sys.__breakpointhook__", "threading.__excepthook__")
"""The interpreter's own streams and hooks, kept beside those in use: pytest captures `sys.stdout` and puts its own
`sys.unraisablehook` and `threading.excepthook` in place while it runs, so `sys.stdout is not sys.__stdout__` tells
a test run from any other with no runner's name to read."""
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
_STACK = ("inspect.stack", "inspect.currentframe", "inspect.getouterframes", "inspect.trace", "sys._getframe",
          "traceback.extract_stack", "traceback.format_stack", "traceback.walk_stack")
"""Who called: a branch on its callers' names tells a test's call from any other."""
_COUNTED = ("sys.modules", "os.environ", "os.environb", "sys.meta_path", "sys.path_hooks", "sys.path_importer_cache")
"""What a test run holds more of than any other run (loaded modules, variables, finders): counted,
as the stack's frames (`_STACK`) are, a test run is told from any other (`len(sys.modules) > 400`). `sys.argv` is
not: a command line's length is how any program reads its arguments."""
_WRAPPERS = ("list", "tuple", "set", "frozenset", "sorted", "dict", "reversed")
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


class _Module:
    """One parsed file: import aliases resolved, parents known."""

    def __init__(self, tree: ast.Module, script: bool = False) -> None:
        self.tree, self.script = tree, script
        self.nodes = list(ast.walk(tree))
        self.parent: dict[ast.AST, ast.AST] = {child: node for node in self.nodes
                                               for child in ast.iter_child_nodes(node)}
        self.aliases: dict[str, str] = {}
        for node in self.nodes:
            if isinstance(node, ast.Import):
                self.aliases.update({alias.asname: alias.name for alias in node.names if alias.asname})
            elif isinstance(node, ast.ImportFrom) and node.module:
                self.aliases.update({alias.asname or alias.name: f"{node.module}.{alias.name}" for alias in node.names})
        self.functions = {node.name: node for node in self.nodes
                          if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}

    def given(self, value: Callable[[ast.AST], bool]) -> set[str]:
        """The names an assignment gives a value `value` holds for (`mods = sys.modules`)."""
        return {target.id for node in self.nodes if isinstance(node, ast.Assign) and value(node.value)
                for target in node.targets if isinstance(target, ast.Name)}

    @cached_property
    def probe_names(self) -> set[str]:
        """Names assigned from a probe (`mods = sys.modules`): read only when a runner's name is in the file."""
        return self.given(lambda value: self.probes(value, names=False))

    @cached_property
    def counted_names(self) -> set[str]:
        """Names given what is counted (`frames = inspect.stack()`, `mods = list(sys.modules)`)."""
        return self.given(lambda value: _counted(self, value, False))

    @cached_property
    def count_names(self) -> set[str]:
        """Names given a count of it (`depth = len(inspect.stack())`)."""
        return self.given(lambda value: _count(self, value, False))

    @cached_property
    def number_names(self) -> set[str]:
        """Names given a number written in the code once and never again (`LIMIT = 400`; not a loop's index)."""
        times = Counter(target.id for node in self.nodes if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                        if isinstance(target, ast.Name))
        return {name for name in self.given(lambda value: _number(self, value)) if times[name] == 1}

    def dotted(self, node: ast.AST) -> str:
        if isinstance(node, ast.Call):
            return self.dotted(node.func)
        if isinstance(node, ast.Attribute):
            return f"{self.dotted(node.value)}.{node.attr}"
        if isinstance(node, ast.Subscript):
            return self.dotted(node.value)
        return self.aliases.get(node.id, node.id) if isinstance(node, ast.Name) else ""

    def probes(self, node: ast.AST, names: bool = True) -> bool:
        """Whether `node` reads through a probe (or, with `names`, a name assigned from one: `mods = sys.modules`)."""
        for inner in ast.walk(node):
            if isinstance(inner, ast.Constant) and isinstance(inner.value, str) and inner.value.startswith("/proc/"):
                return True
            if isinstance(inner, (ast.Attribute, ast.Name)):
                name = self.dotted(inner)
                if name.startswith(_PROBES) or (names and isinstance(inner, ast.Name) and inner.id in self.probe_names):
                    return True
        return False

    def statements(self, node: ast.AST) -> Iterator[ast.stmt]:
        """The statements around `node`, innermost first, up to its function or class."""
        current: ast.AST | None = node
        while current is not None and not isinstance(current, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef,
                                                               ast.ClassDef)):
            if isinstance(current, ast.stmt):
                yield current
            current = self.parent.get(current)

    def scope(self, node: ast.AST) -> str:
        """The functions and classes around `node`, outermost first (`Command.main`)."""
        names = []
        current = self.parent.get(node)
        while current is not None:
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.append(current.name)
            current = self.parent.get(current)
        return ".".join(reversed(names))

    def statement(self, node: ast.AST) -> ast.AST:
        return next(self.statements(node), node)

    def shown(self, node: ast.AST) -> str:
        """The statement around `node`, as a finding quotes it (its first line)."""
        return ast.unparse(self.statement(node)).splitlines()[0][:100]


def _header(statement: ast.stmt) -> list[ast.AST]:
    """The expressions a compound statement evaluates itself (its body is other statements)."""
    if isinstance(statement, (ast.If, ast.While)):
        return [statement.test]
    if isinstance(statement, (ast.For, ast.AsyncFor)):
        return [statement.iter, statement.target]
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in statement.items]
    if isinstance(statement, (ast.Try, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return []
    return [statement]


def _deciding(module: _Module, node: ast.AST) -> Iterator[ast.AST]:
    """What decides around `node`: its statement, or the condition or head of the compound statement it is in, and
    the heads of the loops around it (`for frame in inspect.stack(): if "pytest" in frame.filename`)."""
    for depth, statement in enumerate(module.statements(node)):
        if depth == 0 or isinstance(statement, (ast.For, ast.AsyncFor, ast.While)):
            yield from _header(statement)


def _finding(module: _Module, node: ast.AST, what: str, key_node: ast.AST | None = None) -> Finding:
    if what.startswith(TOUCHES):  # by where it is: a base function that swapped a stream may change how
        return Finding(getattr(node, "lineno", 1), what, "scope:" + module.scope(node))
    return Finding(getattr(node, "lineno", 1), what, ast.dump(key_node or module.statement(node)))


def _presence(module: _Module) -> Iterator[Finding]:
    for node in module.nodes:
        value = folded(node) if isinstance(node, (ast.Constant, ast.BinOp, ast.JoinedStr, ast.Subscript,
                                                  ast.Call)) else None
        if value is not None and not isinstance(node, ast.Constant) and isinstance(module.parent.get(node), (
                ast.BinOp, ast.JoinedStr)):
            continue  # the whole expression is read, not its pieces
        if isinstance(node, ast.Attribute) and node.attr == "_called_from_test":
            value = node.attr
        if value is None:
            continue
        if names_runner_variable(value):
            yield _finding(module, node, f"{PRESENCE} (`{value}`)")
        elif names_runner(value) and any(module.probes(part) for part in _deciding(module, node)):
            yield _finding(module, node, f"{PRESENCE} (`{module.shown(node)}`)")


def _callers(module: _Module) -> Iterator[Finding]:
    """A branch on the stack (its frames' files or functions) compared with a string: code that asks whether a test
    called it."""
    for node in module.nodes:
        if not (isinstance(node, ast.Call) and module.dotted(node.func) in _STACK):
            continue
        for part in _deciding(module, node):
            if any(folded(inner) for inner in ast.walk(part) if inner is not node):
                yield _finding(module, node, f"{PRESENCE} (branches on its callers: `{module.shown(node)}`)")
                break


def _counted(module: _Module, node: ast.AST, names: bool = True) -> bool:
    """`node` is what `_COUNTED` or `_STACK` names itself (not a value in it), through a copy (`list(...)`), a view
    (`.keys()`) or (with `names`) a name given it (`frames = inspect.stack()`)."""
    while isinstance(node, ast.Call) and len(node.args) == 1 and module.dotted(node.func) in _WRAPPERS:
        node = node.args[0]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
            "keys", "values", "items", "copy") and not node.args:
        return _counted(module, node.func.value, names)
    if isinstance(node, ast.Call):
        return module.dotted(node.func) in _STACK or module.dotted(node.func) in _COUNTED
    if names and isinstance(node, ast.Name) and node.id in module.counted_names:
        return True
    return isinstance(node, (ast.Attribute, ast.Name)) and module.dotted(node) in _COUNTED


def _count(module: _Module, node: ast.AST, names: bool = True) -> bool:
    """`len(X)`, `X.__len__()` or `sum(... for ... in X)` of what is counted (all of it: not the part an `if` picks),
    or (with `names`) a name given such a count."""
    if isinstance(node, ast.Name):
        return names and node.id in module.count_names
    if not isinstance(node, ast.Call):
        return False
    if module.dotted(node.func) == "len" and len(node.args) == 1:
        return _counted(module, node.args[0])
    if isinstance(node.func, ast.Attribute) and node.func.attr == "__len__":
        return _counted(module, node.func.value)
    return module.dotted(node.func) == "sum" and bool(node.args) and isinstance(
        node.args[0], (ast.GeneratorExp, ast.ListComp)) and any(
        _counted(module, generator.iter) and not generator.ifs for generator in node.args[0].generators)


def _number(module: _Module, node: ast.AST) -> bool:
    """A number written in the code (`400`, `-1`), or a name given one (`LIMIT = 400`)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    if isinstance(node, ast.Name):
        return node.id in module.number_names
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)


def _counts(module: _Module) -> Iterator[Finding]:
    """A count of the loaded modules, the variables or the stack's frames compared with a number: how much the
    process holds, or how deep the code is called, tells a test run from any other with no runner's name to read.
    Compared with another count it is not (a cache kept in step with `sys.modules`, a loop's index)."""
    for node in module.nodes:
        parts = [node.left, *node.comparators] if isinstance(node, ast.Compare) else []
        if any(_count(module, part) and any(_number(module, other) for other in parts if other is not part)
               for part in parts):
            yield _finding(module, node,
                           f"{PRESENCE} (counts what the process holds or who called it: `{module.shown(node)}`)")


def _replaced(module: _Module) -> Iterator[Finding]:
    """A stream or hook in use compared with the interpreter's own (`sys.stdout is not sys.__stdout__`): whether a
    runner put its own in place. Not another stream compared with it (`stream is sys.__stdout__`), nor with None."""
    for node in module.nodes:
        names = [module.dotted(part) for part in [node.left, *node.comparators]
                 if isinstance(part, (ast.Attribute, ast.Name))] if isinstance(node, ast.Compare) else []
        if any(name in _ORIGINALS for name in names) and any(name in _IN_USE for name in names):
            yield _finding(module, node,
                           f"{PRESENCE} (asks whether a runner replaced a stream or hook: `{module.shown(node)}`)")


def _through_helpers(module: _Module, found: list[Finding]) -> Iterator[Finding]:
    """Uses of a module-level function or name whose own code reads the runner's presence (`TESTING = "pytest" in
    sys.modules` on the base, `if TESTING:` added)."""
    lines = {finding.line for finding in found}
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
            yield _finding(module, node, f"{PRESENCE} (through `{node.id}`)")


def _touches(module: _Module, path: str) -> Iterator[Finding]:
    for node in module.nodes:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [alias.name for alias in node.names]
            for name in names:
                if name.split(".")[0] in ("pytest", "_pytest"):
                    yield _finding(module, node, f"{TOUCHES}: imports `{name}` in code that is not a test")
                elif _mock_library(name, node):
                    yield _finding(module, node, f"{LIES}: imports `{name}`, whose values equal anything, in code"
                                                 " that is not a test")
        targets = _assigned(module, node)
        for target in targets:
            if target in _IMPORT_SYSTEM:
                yield _finding(module, node, f"{TOUCHES}: changes how modules load (`{target}`)")
                continue
            if target.startswith(_CHANNEL) or target.split(".")[0] in _RUNNERS or any(
                    target == library or target.startswith(f"{library}.") for library in _ASSERTION_LIBRARIES):
                yield _finding(module, node, f"{TOUCHES}: replaces `{target}`")
        if isinstance(node, ast.Call):
            yield from _call(module, node)
        yield from _code_runner_taken(module, node)
    yield from _exits_at_import(module, path)


def _mock_library(name: str, node: ast.Import | ast.ImportFrom) -> bool:
    if name.split(".", maxsplit=1)[0] in _MOCKS or name.startswith("unittest.mock"):
        return True
    return isinstance(node, ast.ImportFrom) and name == "unittest" and any(a.name == "mock" for a in node.names)


def _assigned(module: _Module, node: ast.AST) -> list[str]:
    """The dotted names an assignment, `setattr` or `del` writes."""
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        return [module.dotted(t) for t in targets if isinstance(t, ast.Attribute)]
    if isinstance(node, ast.Call) and module.dotted(node.func) in _SETTERS and len(node.args) >= 2:
        field = folded(node.args[1])
        if field is not None:
            return [f"{module.dotted(node.args[0])}.{field}"]
    return []


def _call(module: _Module, node: ast.Call) -> Iterator[Finding]:
    name = module.dotted(node.func)
    if name in _DESCRIPTORS and any(_standard_descriptor(module, arg) for arg in node.args):
        yield _finding(module, node, f"{TOUCHES}: `{name}` on a standard stream's descriptor")
    elif name in ("os.dup2", "os.closerange"):  # another process's inherited pipe is taken over this way
        yield _finding(module, node, f"{TOUCHES}: `{name}` on the process's inherited descriptors")
    if name == "atexit.register" and node.args and _exits(module, node.args[0]):
        yield _finding(module, node, f"{TOUCHES}: an exit registered to run at exit")
    if name in _RUNS_CODE:
        yield from _runs_code(module, node, name)
    if name.rpartition(".")[0] in ("sys.meta_path", "sys.path_hooks") and name.rpartition(".")[2] in (
            "insert", "append", "extend", "__setitem__"):
        yield _finding(module, node, f"{TOUCHES}: changes how modules load (`{name}`)")


_RUNNER_NAMES = frozenset({"exec", "eval", "compile"})
"""The builtins that run a string: taken as a value (not called in place), what they run is read nowhere."""


def _code_runner_taken(module: _Module, node: ast.AST) -> Iterator[Finding]:
    """A code runner taken as a value to call later (`run = exec`, `getattr(builtins, "ex" + "ec")`,
    `__builtins__["eval"]`): what it will run is not read here."""
    parent = module.parent.get(node)
    if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load) \
            and module.dotted(node).removeprefix("builtins.") in _RUNNER_NAMES \
            and not (isinstance(parent, ast.Call) and parent.func is node) \
            and not isinstance(parent, ast.Attribute):
        yield _finding(module, node, f"{OPAQUE} (`{ast.unparse(node)}` taken to run later)", module.statement(node))
    elif _looked_up(module, node):
        yield _finding(module, node, f"{OPAQUE} (`{ast.unparse(node)[:100]}`)", node)


def _looked_up(module: _Module, node: ast.AST) -> bool:
    """`getattr(anything, "exec")` or `__builtins__["eval"]` (`vars(builtins)`, `globals()`), the name folded."""
    if isinstance(node, ast.Call) and module.dotted(node.func) == "getattr" and len(node.args) >= 2:
        return folded(node.args[1]) in _RUNNER_NAMES
    if isinstance(node, ast.Subscript) and folded(node.slice) in _RUNNER_NAMES:
        holder = module.dotted(node.value)
        return "builtins" in holder or holder in ("vars", "globals", "locals")
    return False


def _runs_code(module: _Module, node: ast.Call, name: str) -> Iterator[Finding]:
    """`exec`, `eval`, `compile` and their kin: the code of a literal screened in place, any other a hit."""
    source = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "source"), None)
    if isinstance(source, ast.Call) and module.dotted(source.func) in _RUNS_CODE:
        return  # `exec(compile(text, ...))`: the inner call is the one that says it
    text = folded(source) if source is not None else None
    if text is None:
        shown = ast.unparse(node).splitlines()[0][:100]
        yield _finding(module, node, f"{OPAQUE} (`{shown}`: built or read at run time)", node)
        return
    for inner in findings("<string>", text):
        yield _finding(module, node, f"{inner.what} (in the code `{name}` runs)", node)


def _standard_descriptor(module: _Module, node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in (0, 1, 2)
    return any(module.dotted(inner).startswith(("sys.stdout", "sys.stderr", "sys.__std", "sys.stdin"))
               for inner in ast.walk(node))


def _exits(module: _Module, node: ast.AST) -> bool:
    """Whether `node` is or calls a process exit (a lambda's body, a function this module defines)."""
    code = module.functions.get(node.id, node) if isinstance(node, ast.Name) else node
    return any(module.dotted(inner) in _EXITS or (isinstance(inner, ast.Raise) and inner.exc is not None
                                                  and module.dotted(inner.exc) == "SystemExit")
               for inner in ast.walk(code) if isinstance(inner, (ast.Attribute, ast.Name, ast.Raise)))


def _exits_at_import(module: _Module, path: str) -> Iterator[Finding]:
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
            yield _finding(module, statement, f"{TOUCHES}: exits the process when the module is imported", statement)


def _lies(module: _Module) -> Iterator[Finding]:
    for node in module.nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in _BINARY | {"__bool__",
                                                                                                  "__hash__"}:
            if (why := _lying(node.name, node.args, node.body)) is not None:
                yield _finding(module, node, f"{LIES}: `{node.name}` {why}", node)
        else:
            for name, function in _bound_lambdas(node):
                why = _lying(name, function.args, [ast.Return(function.body)]) if name in _BINARY | {
                    "__bool__", "__hash__"} else None
                if why is not None:
                    yield _finding(module, node, f"{LIES}: `{name}` {why}", node)


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


def findings(path: str, text: str) -> list[Finding]:
    """Every construct of a Python file that knows it is judged; nothing when it doesn't parse."""
    try:
        module = _Module(ast.parse(text), script=text.startswith("#!"))
    except (SyntaxError, ValueError):
        return []
    presence = [*_presence(module), *_callers(module), *_counts(module), *_replaced(module)]
    found = [*presence, *_through_helpers(module, presence), *_touches(module, path), *_lies(module)]
    return list({(finding.line, finding.key, finding.what): finding for finding in found}.values())
