"""A Python file parsed for the code screen: import aliases resolved, parents known, what its names are given (a
probe, a count, a number), and the statements that decide around a node; shared by the screen's rules."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Iterator
from functools import cached_property

from orchestrator.gate.spec.code_tokens import (
    TOUCHES,
    Finding,
    names_gate_place,
    names_git_file,
    names_runner,
)
from orchestrator.gate.spec.py_strings import folded

_PROBES = ("sys.modules", "sys.argv", "sys.orig_argv", "sys.executable", "os.environ", "os.getenv", "os.environb",
           "inspect.stack", "inspect.currentframe", "sys._getframe", "traceback.extract_stack",
           "traceback.format_stack", "importlib.util.find_spec", "importlib.import_module", "__import__",
           "pkgutil.find_loader", "sys.gettrace", "sys.excepthook", "sys.unraisablehook", "threading.excepthook",
           "sys.meta_path", "sys.path_hooks", "__main__", "os.getppid", "psutil", "gc.get_objects", "gc.get_referrers",
           "importlib.metadata", "importlib_metadata", "pkg_resources")
"""What a runner's presence is read through: loaded modules (or those that could load: the installed distributions),
the command line (the process's, `__main__`'s file, its parent's), the environment, the stack, the hooks and import
finders a runner puts its own in place of, the objects alive; a path under `/proc/` read, or a process listing run
(`ps`, `pgrep`), is one too."""
_PLACES = ("__file__", "__spec__", "__loader__", "__path__", "__cached__", "os.getcwd", "os.path", "os.readlink",
           "os.listdir", "os.scandir", "os.walk", "os.stat", "os.lstat", "os.popen", "pathlib", "sys.path",
           "sys.prefix", "sys.exec_prefix", "sys.base_prefix", "inspect", "tempfile", "site", "sysconfig", "subprocess",
           "open", "io.open", "builtins.open", "glob", "git", "pygit2", "dulwich")
"""Where the code runs: its file, the working directory, paths made absolute, the import path, what a file or a
program (git's branch) says; with a name of the gate's place (`".autobuild" in os.getcwd()`), the gate's run is told
from the user's."""
_WITHIN_PLACES = tuple(f"{place}." for place in _PLACES)
_READS_KIND = ("os.path.isfile", "open", "io.open", "builtins.open")
_READS_KIND_METHODS = (".is_file", ".read_text", ".read_bytes", ".open", ".readlines")
_EXISTENCE = ("os.path.exists", "os.path.isdir", "os.path.lexists", "os.access", "os.stat", "os.lstat")
_EXISTENCE_METHODS = (".exists", ".is_dir", ".stat", ".lstat")
"""Whether a path is a file, or what it holds: `.git` is a file only in a worktree, and nothing is inside it."""
_COMPARING_METHODS = frozenset({"startswith", "endswith", "find", "rfind", "index", "rindex", "count", "__contains__",
                                "__eq__", "__ne__"})
_PATTERN_SEARCHES = frozenset({"re.search", "re.match", "re.fullmatch", "re.findall", "re.finditer", "fnmatch.fnmatch",
                               "fnmatch.fnmatchcase"})
_LISTINGS = frozenset({"ps", "pgrep", "pidof"})
"""Programs that list the processes running (a parent `pytest` among them)."""
IN_USE = ("sys.stdout", "sys.stderr", "sys.stdin", "sys.excepthook", "sys.unraisablehook", "sys.displayhook",
          "sys.breakpointhook", "threading.excepthook")
"""The streams and hooks in use, which a runner may replace with its own."""
IMPORT_HOOKS = ("sys.meta_path", "sys.path_hooks")
"""The import system's finders and path hooks: installed into, they change how modules load; a runner's are there."""
STACK = ("inspect.stack", "inspect.currentframe", "inspect.getouterframes", "inspect.trace", "sys._getframe",
         "traceback.extract_stack", "traceback.format_stack", "traceback.walk_stack")
"""Who called: a branch on its callers' names tells a test's call from any other."""
_COUNTED = ("sys.modules", "os.environ", "os.environb", "sys.meta_path", "sys.path_hooks", "sys.path_importer_cache",
            "warnings.filters")
"""What a test run holds more of than any other run (loaded modules, variables, finders, warning filters): counted,
as the stack's frames (`STACK`) are, a test run is told from any other (`len(sys.modules) > 400`). `sys.argv` is
not: a command line's length is how any program reads its arguments."""
_WRAPPERS = ("list", "tuple", "set", "frozenset", "sorted", "dict", "reversed")
_IMPORTERS = frozenset({"__import__", "builtins.__import__", "importlib.import_module", "importlib.__import__"})
_PROBED_MODULES = frozenset({"sys", "os", "inspect", "traceback", "gc", "builtins", "importlib", "threading",
                             "faulthandler", "warnings", "__main__"})
"""Modules a probe is read from: `__import__("sys").modules` is `sys.modules` (any other module imported by name
stays the import: `importlib.import_module("pytest")`)."""


class Module:
    """One parsed file: import aliases resolved, parents known."""

    def __init__(self, tree: ast.Module, text: str, script: bool = False, ids: frozenset[str] = frozenset()) -> None:
        self.tree, self.text, self.script, self.ids = tree, text, script, ids  # ids: the run's (code_tokens.place_ids)
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
    def git_file_names(self) -> set[str]:
        """Names given a path to a checkout's `.git` (`marker = root / ".git"`), not into it through more parts
        (`os.path.join(root, ".git", "HEAD")`: git's own files, read as any tool reads a repository)."""
        return self.given(lambda value: any(isinstance(inner, ast.Constant) and isinstance(inner.value, str)
                                            and names_git_file(inner.value) and not self.more_path_follows(inner)
                                            for inner in ast.walk(value)))

    def more_path_follows(self, node: ast.AST) -> bool:
        """Whether more parts follow the path's part `node` (`os.path.join(root, ".git", "HEAD")`,
        `root / ".git" / "HEAD"`)."""
        parent = self.parent.get(node)
        if isinstance(parent, ast.Call) and node in parent.args:
            return self.dotted(parent.func).endswith(("join", "joinpath", "Path")) and parent.args[-1] is not node
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Div):
            above = self.parent.get(parent)
            return parent.left is node or (isinstance(above, ast.BinOp) and isinstance(above.op, ast.Div)
                                           and above.left is parent)
        return False

    @cached_property
    def place_names(self) -> set[str]:
        """Names assigned from where the code runs (`here = os.getcwd()`)."""
        return self.given(lambda value: self.locates(value, names=False))

    @cached_property
    def runner_names(self) -> dict[str, str]:
        """Names given a runner's name or the gate's place (`RUNNER = "py" + "test"`): the name, by what it is
        given."""
        return {target.id: value for node in self.nodes if isinstance(node, ast.Assign)
                and (value := folded(node.value)) is not None
                and (names_runner(value) or names_gate_place(value, self.ids))
                for target in node.targets if isinstance(target, ast.Name)}

    @cached_property
    def counted_names(self) -> set[str]:
        """Names given what is counted (`frames = inspect.stack()`, `mods = list(sys.modules)`)."""
        return self.given(lambda value: counted(self, value, False))

    @cached_property
    def count_names(self) -> set[str]:
        """Names given a count of it (`depth = len(inspect.stack())`)."""
        return self.given(lambda value: count(self, value, False))

    @cached_property
    def number_names(self) -> set[str]:
        """Names given a number written in the code once and never again (`LIMIT = 400`; not a loop's index)."""
        times = Counter(target.id for node in self.nodes if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                        if isinstance(target, ast.Name))
        return {name for name in self.given(lambda value: number(self, value, names=False)) if times[name] == 1}

    def dotted(self, node: ast.AST) -> str:
        """What `node` names (`sys.modules`), however it is reached: an alias, `getattr(sys, "modules")`,
        `vars(sys)["modules"]`, `sys.__dict__["modules"]`, `globals()["sys"]`, `__import__("sys")`."""
        if isinstance(node, ast.Call):  # each part named once: a chain of calls costs its length, not 2**length
            function = self.dotted(node.func)
            return self._by_call(node, function) or function
        if isinstance(node, ast.Attribute):
            return f"{self.dotted(node.value)}.{node.attr}"
        if isinstance(node, ast.Subscript):
            within = self.dotted(node.value)
            return self._by_key(node, within) or within
        return self.aliases.get(node.id, node.id) if isinstance(node, ast.Name) else ""

    def _by_call(self, node: ast.Call, function: str) -> str | None:
        name = folded(node.args[1]) if function == "getattr" and len(node.args) in (2, 3) else None
        if name is not None:
            return f"{self.dotted(node.args[0])}.{name}"
        module = folded(node.args[0]) if function in _IMPORTERS and node.args else None
        return module if module in _PROBED_MODULES else None

    def _by_key(self, node: ast.Subscript, within: str) -> str | None:
        """`within` is what the subscripted value names: a call names its function (`globals`, `vars`)."""
        name, value = folded(node.slice), node.value
        if name is None:
            return None
        if isinstance(value, ast.Call) and within in ("globals", "locals") and not value.args:
            return self.aliases.get(name, name)
        if isinstance(value, ast.Call) and within == "vars" and len(value.args) == 1:
            return f"{self.dotted(value.args[0])}.{name}"
        if isinstance(value, ast.Attribute) and value.attr == "__dict__":
            return f"{self.dotted(value.value)}.{name}"
        return None

    def probes(self, node: ast.AST, names: bool = True) -> bool:
        """Whether `node` reads through a probe (or, with `names`, a name assigned from one: `mods = sys.modules`)."""
        for inner in ast.walk(node):
            if isinstance(inner, ast.Constant) and isinstance(inner.value, str) and (
                    inner.value.startswith("/proc/") or self.lists_processes(inner)):
                return True
            if self.identity_of_in_use(inner):
                return True
            if isinstance(inner, (ast.Attribute, ast.Name, ast.Call, ast.Subscript)):
                name = self.dotted(inner)
                if name.startswith(_PROBES) or (names and isinstance(inner, ast.Name) and inner.id in self.probe_names):
                    return True
        return False

    def locates(self, node: ast.AST, names: bool = True) -> bool:
        """Whether `node` reads where the code runs (`_PLACES`, or a probe), or (with `names`) a name given it."""
        for inner in ast.walk(node):
            if isinstance(inner, (ast.Attribute, ast.Name, ast.Call, ast.Subscript)):
                name = self.dotted(inner)
                if name in _PLACES or name.startswith(_WITHIN_PLACES) or (
                        names and isinstance(inner, ast.Name) and inner.id in self.place_names):
                    return True
        return self.probes(node, names)

    def compared(self, node: ast.AST) -> bool:
        """Whether `node` (a string, or a name given one) is compared with something: an operand of a comparison
        (`in`, `==`), a method's argument that compares (`path.startswith(...)`), a pattern searched for; not a
        program's argument (`["git", "worktree", "list"]`) or other data."""
        current, parent = node, self.parent.get(node)
        while isinstance(parent, (ast.BinOp, ast.JoinedStr, ast.FormattedValue)) or (
                isinstance(parent, ast.Tuple) and isinstance(self.parent.get(parent), ast.Call)):
            current, parent = parent, self.parent.get(parent)
        if isinstance(parent, ast.Compare):
            return True
        if not isinstance(parent, ast.Call) or current not in parent.args:
            return False
        if isinstance(parent.func, ast.Attribute) and parent.func.attr in _COMPARING_METHODS:
            return True
        return self.dotted(parent.func) in _PATTERN_SEARCHES and parent.args[0] is current

    def reads_kind(self, node: ast.AST, existence: bool = False) -> bool:
        """Whether `node` asks if a path is a file, or reads what it holds (`os.path.isfile(p)`, `p.read_text()`);
        with `existence`, whether it is there at all (`os.path.exists(p)`)."""
        for inner in ast.walk(node):
            if not isinstance(inner, ast.Call):
                continue
            name = self.dotted(inner.func)
            method = f".{inner.func.attr}" if isinstance(inner.func, ast.Attribute) else ""
            if name in _READS_KIND or method in _READS_KIND_METHODS or method == ".read" or (
                    existence and (name in _EXISTENCE or method in _EXISTENCE_METHODS)):
                return True
        return False

    def lists_processes(self, node: ast.Constant) -> bool:
        """`node` is the program a call runs, and it lists the processes (`check_output(["ps", ...])`,
        `os.popen("ps -o args= -p " + pid)`); not the same word among other data."""
        if not isinstance(node.value, str) or (node.value.split() or [""])[0] not in _LISTINGS:
            return False
        current: ast.AST = node
        parent = self.parent.get(node)
        while isinstance(parent, (ast.BinOp, ast.JoinedStr)) or (
                isinstance(parent, (ast.List, ast.Tuple)) and parent.elts and parent.elts[0] is current):
            current, parent = parent, self.parent.get(parent)
        return isinstance(parent, ast.Call) and current in parent.args

    def identity_of_in_use(self, node: ast.AST) -> bool:
        """`node` reads what a stream or hook in use is (`type(sys.stdout)`, `sys.stdout.__class__`,
        `repr(sys.stdout)`): pytest's capture puts its own classes in place (`EncodedFile`, `CaptureIO`)."""
        if isinstance(node, ast.Call) and self.dotted(node.func) in ("type", "repr", "str") and len(node.args) == 1:
            return self.dotted(node.args[0]) in IN_USE
        return isinstance(node, ast.Attribute) and node.attr == "__class__" and self.dotted(node.value) in IN_USE

    def statements(self, node: ast.AST) -> Iterator[ast.stmt]:
        """The statements around `node`, innermost first, up to its function or class."""
        current: ast.AST | None = node
        while current is not None and not isinstance(current, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef,
                                                               ast.ClassDef)):
            if isinstance(current, ast.stmt):
                yield current
            current = self.parent.get(current)

    def function(self, node: ast.AST) -> ast.AST:
        """The function around `node` (the module, outside any)."""
        current = self.parent.get(node)
        while current is not None and not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
            current = self.parent.get(current)
        return current or self.tree

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
        try:
            return ast.unparse(self.statement(node)).splitlines()[0][:100]
        except RecursionError:  # a chain too deep for ast's recursive printer: the statement as written
            return self.written(self.statement(node))[:100]

    def written(self, node: ast.AST) -> str:
        """`node` as the file has it, its whitespace normalized (read without recursion)."""
        return " ".join((ast.get_source_segment(self.text, node) or "").split())


def header(statement: ast.stmt) -> list[ast.AST]:
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


def deciding(module: Module, node: ast.AST) -> Iterator[ast.AST]:
    """What decides around `node`: its statement, or the condition or head of the compound statement it is in, and
    the heads of the loops around it (`for frame in inspect.stack(): if "pytest" in frame.filename`)."""
    for depth, statement in enumerate(module.statements(node)):
        if depth == 0 or isinstance(statement, (ast.For, ast.AsyncFor, ast.While)):
            yield from header(statement)


def finding(module: Module, node: ast.AST, what: str, key_node: ast.AST | None = None) -> Finding:
    if what.startswith(TOUCHES):  # by where it is: a base function that swapped a stream may change how
        return Finding(getattr(node, "lineno", 1), what, "scope:" + module.scope(node))
    keyed = key_node or module.statement(node)
    try:
        key = ast.dump(keyed)
    except RecursionError:  # too deep for ast's recursive dump: the construct as written
        key = "written:" + module.written(keyed)
    return Finding(getattr(node, "lineno", 1), what, key)


def counted(module: Module, node: ast.AST, names: bool = True) -> bool:
    """`node` is what `_COUNTED` or `STACK` names itself (not a value in it), through a copy (`list(...)`), a view
    (`.keys()`) or (with `names`) a name given it (`frames = inspect.stack()`)."""
    while isinstance(node, ast.Call) and len(node.args) == 1 and module.dotted(node.func) in _WRAPPERS:
        node = node.args[0]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
            "keys", "values", "items", "copy") and not node.args:
        return counted(module, node.func.value, names)
    if isinstance(node, ast.Call):
        return module.dotted(node.func) in STACK or module.dotted(node.func) in _COUNTED
    if names and isinstance(node, ast.Name) and node.id in module.counted_names:
        return True
    return isinstance(node, (ast.Attribute, ast.Name)) and module.dotted(node) in _COUNTED


def count(module: Module, node: ast.AST, names: bool = True) -> bool:
    """`len(X)`, `X.__len__()` or `sum(... for ... in X)` of what is counted (all of it: not the part an `if` picks),
    or (with `names`) a name given such a count."""
    if isinstance(node, ast.Name):
        return names and node.id in module.count_names
    if not isinstance(node, ast.Call):
        return False
    if module.dotted(node.func) == "len" and len(node.args) == 1:
        return counted(module, node.args[0])
    if isinstance(node.func, ast.Attribute) and node.func.attr == "__len__":
        return counted(module, node.func.value)
    return module.dotted(node.func) == "sum" and bool(node.args) and isinstance(
        node.args[0], (ast.GeneratorExp, ast.ListComp)) and any(
        counted(module, generator.iter) and not generator.ifs for generator in node.args[0].generators)


def number(module: Module, node: ast.AST, names: bool = True) -> bool:
    """A number written in the code (`400`, `-1`), or (with `names`) a name given one (`LIMIT = 400`)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    if isinstance(node, ast.Name):
        return names and node.id in module.number_names
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
