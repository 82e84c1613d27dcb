"""Base test support that lives among the code: a module of the product's folders that only the base's tests import
and that asserts (a Python helper that asserts and returns nothing, a JS module that loads an assertion library, a Go
package that imports `testing`). By its name and place it is code; by its role it is the tests'. The clean room puts
a task's change to it back, as it does a test's: a weakened helper can't make the base's tests pass on broken code.

Judged on the base's version of each file (what the task can't write): the helper's role and who imports it there."""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath

from orchestrator.gate.prepare import sides
from orchestrator.gate.spec.code_tokens import parse, text_of
from orchestrator.repo.git import GitRepo

_PY_FRAMEWORKS = ("unittest", "pytest", "_pytest", "hypothesis", "nose", "nose2")
_JS_ASSERTIONS = frozenset({"assert", "node:assert", "assert/strict", "node:assert/strict", "chai", "expect",
                            "should", "power-assert", "@jest/globals", "vitest", "node:test", "uvu/assert", "tap",
                            "ava", "sinon", "@testing-library/jest-dom"})
_JS = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")


async def base_test_support(repo: GitRepo, against: str, paths: Iterable[str],
                            base_files: frozenset[str]) -> frozenset[str]:
    """The `paths` (code by their side) that on `against` are test support: they assert, some base test imports
    them and no code does."""
    found: set[str] = set()
    go_packages: dict[str, bool] = {}  # a Go package's role is its files': read once per folder
    for path in paths:
        if path not in base_files or not path.endswith((".py", ".go", *_JS)):
            continue
        if path.endswith(".go"):
            folder = posixpath.dirname(path)
            if folder not in go_packages:
                go_packages[folder] = await _go_package_tests(repo, against, folder, base_files)
            if not go_packages[folder]:
                continue
        else:
            text = await repo.show_file(against, path)
            if text is None or not _asserts(path, text):
                continue
        importers = await _importers(repo, against, path, base_files)
        if importers and all(sides.side_of(other) == "test" for other in importers):
            found.add(path)
    return frozenset(found)


async def _go_package_tests(repo: GitRepo, against: str, folder: str, base_files: frozenset[str]) -> bool:
    """Whether a Go package imports `testing` outside its `_test.go` files."""
    for other in sorted(base_files):
        sibling = posixpath.dirname(other) == folder and other.endswith(".go") and not other.endswith("_test.go")
        if sibling and "testing" in go_imports((await repo.show_file(against, other)) or ""):
            return True
    return False


def _asserts(path: str, text: str) -> bool:
    if path.endswith(".py"):
        return python_asserts(text)
    return bool(js_imports(text, path) & _JS_ASSERTIONS) or js_calls_expect(text, path)


def python_asserts(text: str) -> bool:
    """The module loads a test framework, or has a function that asserts (or raises AssertionError) and returns no
    value: a helper that checks, not code that computes."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(_framework(alias.name) for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and not node.level and _framework(node.module or ""):
            return True
    return any(_checking(node) for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))


def _framework(module: str) -> bool:
    return module.split(".", maxsplit=1)[0] in _PY_FRAMEWORKS and not module.startswith("unittest.mock")


def _checking(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    inner = list(ast.walk(function))
    asserts = any(isinstance(node, ast.Assert) or (isinstance(node, ast.Raise) and node.exc is not None and "Assertion"
                                                   in ast.unparse(node.exc)) for node in inner)
    returns = any(isinstance(node, ast.Return) and node.value is not None
                  and not (isinstance(node.value, ast.Constant) and node.value.value is None) for node in inner)
    return asserts and not returns


def js_imports(text: str, path: str) -> frozenset[str]:
    """The module specifiers a JS/TS file loads (`require('x')`, `import ... from 'x'`, `import('x')`)."""
    found = set()
    stack = [parse(_language(path), text)]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type in ("import_statement", "export_statement"):
            source = node.child_by_field_name("source")
            if source is not None:
                found.add(text_of(source).strip("'\"`"))
        elif node.type == "call_expression":
            function, arguments = node.child_by_field_name("function"), node.child_by_field_name("arguments")
            if text_of(function) in ("require", "import") and arguments is not None:
                strings = [child for child in arguments.children if child.type == "string"]
                if strings:
                    found.add(text_of(strings[0]).strip("'\"`"))
    return frozenset(found)


def js_calls_expect(text: str, path: str) -> bool:
    """A jest/vitest global `expect(...)` called in the file."""
    stack = [parse(_language(path), text)]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type == "call_expression" and text_of(node.child_by_field_name("function")) == "expect":
            return True
    return False


def _language(path: str) -> str:
    return "tsx" if path.endswith(".tsx") else "typescript" if path.endswith((".ts", ".mts", ".cts")) \
        else "javascript"


def go_imports(text: str) -> frozenset[str]:
    stack, found = [parse("go", text)], set()
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type == "import_spec":
            found.add(text_of(node.child_by_field_name("path")).strip('"`'))
    return frozenset(found)


async def _importers(repo: GitRepo, against: str, path: str, base_files: frozenset[str]) -> list[str]:
    """The base's files (other than `path`, and for Go other than its own package's) that import `path`."""
    if path.endswith(".go"):
        module = await _go_module(repo, against, path, base_files)
        if module is None:
            return []
        prefix, folder = module
        wanted = posixpath.join(prefix, folder) if folder else prefix
        hits = await repo.grep_files(against, f'"{wanted}"')
        return [hit for hit in hits if hit.endswith(".go") and posixpath.dirname(hit) != posixpath.dirname(path)
                and wanted in go_imports((await repo.show_file(against, hit)) or "")]
    stem = PurePosixPath(path).stem
    if stem in ("__init__", "index"):
        stem = PurePosixPath(path).parent.name
    hits = [hit for hit in await repo.grep_files(against, stem, word=True) if hit != path]
    found = []
    for hit in hits:
        text = (await repo.show_file(against, hit)) or ""
        python = path.endswith(".py") and hit.endswith(".py") and path in python_targets(hit, text, base_files)
        if python or (path.endswith(_JS) and hit.endswith(_JS) and path in _js_targets(hit, text, base_files)):
            found.append(hit)
    return found


def python_targets(importer: str, text: str, files: frozenset[str]) -> frozenset[str]:
    """The repository's module files `importer` imports (absolute from the root or a `src/` folder, or relative)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return frozenset()
    package = list(PurePosixPath(importer).parts[:-1])
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join([*package[:len(package) - node.level + 1], *(node.module or "").split(".")]
                            if node.level else (node.module or "").split(".")).strip(".")
            names += [base, *(f"{base}.{alias.name}" for alias in node.names)]
    return frozenset(found for name in names for found in _module_files(name, files))


def _module_files(dotted: str, files: frozenset[str]) -> Iterable[str]:
    path = dotted.replace(".", "/")
    for root in ("", "src/", "lib/"):
        for candidate in (f"{root}{path}.py", f"{root}{path}/__init__.py"):
            if candidate in files:
                yield candidate


def _js_targets(importer: str, text: str, files: frozenset[str]) -> frozenset[str]:
    folder = posixpath.dirname(importer)
    found: set[str] = set()
    for spec in js_imports(text, importer):
        if not spec.startswith("."):
            continue
        target = posixpath.normpath(posixpath.join(folder, spec))
        candidates = [target, *(target + ext for ext in _JS), *(f"{target}/index{ext}" for ext in _JS)]
        found.update(candidate for candidate in candidates if candidate in files)
    return frozenset(found)


async def _go_module(repo: GitRepo, against: str, path: str, files: frozenset[str]) -> tuple[str, str] | None:
    """(the module path of the nearest go.mod above `path`, the package's folder below it)."""
    parts: Sequence[str] = PurePosixPath(path).parts[:-1]
    for depth in range(len(parts), -1, -1):
        mod = posixpath.join(*parts[:depth], "go.mod") if depth else "go.mod"
        if mod in files:
            for line in ((await repo.show_file(against, mod)) or "").splitlines():
                if line.startswith("module "):
                    return line.split()[1].strip('"'), "/".join(parts[depth:])
            return None
    return None
