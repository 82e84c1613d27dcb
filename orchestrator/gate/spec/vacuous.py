"""Assertions that can't fail, per runner, for the tamper screen (gate/spec/screen.py): a constant or an expression
compared with itself (`assertTrue(True)`, `assert.ok(true)`, `assert_eq!(x, x)`), an assertion that never runs
(behind a constant-false branch, after a `return`, behind an environment check), and a Go test whose failure calls
became log calls. Python is read with `ast`; the others from the screen's blanked text (comments and strings gone)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence

Found = tuple[str | None, str, int]
"""(test, what, line), as the screen's markers are."""
CANT_FAIL = "an assertion that can't fail"

_TRUTHY_CALLS = {"assertTrue", "assert_", "failUnless", "assertIsNotNone"}
_FALSY_CALLS = {"assertFalse", "failIf", "assertIsNone"}
_SAME_CALLS = re.compile(r"^assert(?:Equal|Equals|Is|DictEqual|ListEqual|TupleEqual|SetEqual|SequenceEqual"
                         r"|MultiLineEqual|CountEqual|ItemsEqual|AlmostEqual|AlmostEquals|GreaterEqual|LessEqual"
                         r"|_equal|_array_equal|_allclose)$")
_ENV_CALLS = {("os", "getenv"), ("environ", "get")}


def _leaf(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _literal(node: ast.expr) -> tuple[bool, object]:
    """(True, value) when the expression is a literal (a constant, a tuple/list/dict of them)."""
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _is_assertion(node: ast.AST) -> bool:
    """An `assert` statement, or a call of something named assert* / fail (unittest, pytest, numpy helpers)."""
    if isinstance(node, ast.Assert):
        return True
    return isinstance(node, ast.Call) and (_leaf(node.func).lower().startswith("assert") or _leaf(node.func) == "fail")


def _cant_fail(node: ast.AST, constants: dict[str, object]) -> bool:
    """An assertion whose outcome the source decides: `assert x or True`, assertTrue(True), assertIsNotNone(1),
    assertFalse(0), assertEqual(x, x)."""
    if isinstance(node, ast.Assert):
        return _truth(node.test, constants) is True
    if not isinstance(node, ast.Call):
        return False
    name, args = _leaf(node.func), node.args
    if name in _TRUTHY_CALLS | _FALSY_CALLS and args:
        known, value = _literal(args[0])
        if name in ("assertIsNotNone", "assertIsNone"):
            return known and (value is None) == (name == "assertIsNone")
        return _truth(args[0], constants) is (name in _TRUTHY_CALLS)
    if _SAME_CALLS.match(name) and len(args) >= 2:
        return ast.dump(args[0]) == ast.dump(args[1])
    return False


def _env_lookup(node: ast.expr) -> bool:
    """Whether the expression reads the environment (os.environ.get, os.getenv, `"X" in os.environ`)."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute):
            owner = inner.func.value
            if (_leaf(owner), inner.func.attr) in _ENV_CALLS:
                return True
        if isinstance(inner, ast.Attribute) and inner.attr == "environ":
            return True
    return False


def _truth(test: ast.expr, constants: dict[str, object]) -> bool | None:
    """The branch condition's value when the source decides it (a literal, a module constant, `not` of one, an
    `and` with a false part, an `or` with a true one); None when it depends on the run."""
    value: bool | None = None
    if isinstance(test, ast.Name) and test.id in constants:
        value = bool(constants[test.id])
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _truth(test.operand, constants)
        value = None if inner is None else not inner
    elif isinstance(test, ast.BoolOp):
        parts = [_truth(part, constants) for part in test.values]
        decisive, other = (False, True) if isinstance(test.op, ast.And) else (True, False)
        value = decisive if decisive in parts else other if all(part is other for part in parts) else None
    elif (literal := _literal(test))[0]:
        value = bool(literal[1])
    elif isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq)):
        left, right = _literal(test.left), _literal(test.comparators[0])
        if left[0] and right[0]:
            value = (left[1] == right[1]) == isinstance(test.ops[0], ast.Eq)
    return value


def _dead(body: Sequence[ast.stmt], constants: dict[str, object]) -> Iterator[tuple[ast.AST, str]]:
    """(statement, why) for each statement of a block that never runs, or runs only when the environment says."""
    for index, statement in enumerate(body):
        if isinstance(statement, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
            for rest in body[index + 1:]:
                yield rest, f"after a `{type(statement).__name__.lower()}`"
            return
        if isinstance(statement, (ast.If, ast.While)):
            truth = _truth(statement.test, constants)
            if truth is False:
                yield from ((inner, "behind a condition that is always false") for inner in statement.body)
            if truth is True and isinstance(statement, ast.If):
                yield from ((inner, "in the else of a condition that is always true") for inner in statement.orelse)
            negated = isinstance(statement.test, ast.UnaryOp) and isinstance(statement.test.op, ast.Not)
            if truth is None and _env_lookup(statement.test):
                branch = statement.orelse if negated else statement.body
                yield from ((inner, "behind an environment check") for inner in branch)
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner_body = getattr(statement, field, None)
            if isinstance(inner_body, list) and inner_body and isinstance(inner_body[0], ast.stmt):
                yield from _dead(inner_body, constants)
            elif isinstance(inner_body, list):
                for handler in inner_body:
                    yield from _dead(getattr(handler, "body", []), constants)


_SWALLOWING = {"AssertionError", "Exception", "BaseException"}


def _swallowed(node: ast.AST) -> list[ast.stmt]:
    """A `try` body whose failures a handler catches and doesn't raise again (`except AssertionError: pass`)."""
    if not isinstance(node, ast.Try):
        return []
    for handler in node.handlers:
        caught = [] if handler.type is None else (
            handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type])
        names = {_leaf(kind) for kind in caught}
        raises = any(isinstance(inner, ast.Raise) or (isinstance(inner, ast.Call) and _leaf(inner.func) == "fail")
                     for statement in handler.body for inner in ast.walk(statement))
        if (handler.type is None or names & _SWALLOWING) and not raises:
            return node.body
    return []


def python(tree: ast.Module) -> set[Found]:
    """The vacuous assertions of every function and class of a parsed Python file."""
    constants = {target.id: value for statement in tree.body if isinstance(statement, ast.Assign)
                 for target in statement.targets if isinstance(target, ast.Name)
                 for known, value in [_literal(statement.value)] if known}
    found: set[Found] = set()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for inner in ast.walk(node):
            if _cant_fail(inner, constants):
                found.add((node.name, CANT_FAIL, getattr(inner, "lineno", 0)))
        swallowed = [(statement, "an assertion that never fails (its failure caught and dropped)")
                     for inner in ast.walk(node) for statement in _swallowed(inner)]
        dead = [(statement, f"an assertion that never runs ({why})") for statement, why in _dead(node.body, constants)]
        for statement, what in [*dead, *swallowed]:
            for inner in ast.walk(statement):
                if _is_assertion(inner):
                    found.add((node.name, what, getattr(inner, "lineno", 0)))
                    break
    return found


_ATOM = r"(?:-?\d[\w.]*|true|false|null|undefined|[A-Za-z_$][\w$.]*)"
_JS_CANT_FAIL = [
    re.compile(r"\bassert(?:\.ok)?\s*\(\s*(?:true|[1-9]\d*)\s*[,)]"),
    re.compile(r"\bassert\.(?:equal|strictEqual|deepEqual|deepStrictEqual)\s*\(\s*(" + _ATOM + r")\s*,\s*\1\s*[,)]"),
    re.compile(r"\bexpect\(\s*(" + _ATOM + r")\s*\)\.(?:toBe|toEqual|toStrictEqual)\(\s*\1\s*\)"),
    re.compile(r"\bexpect\(\s*(?:true|[1-9]\d*)\s*\)\.(?:toBeTruthy|toBeDefined)\(\s*\)"),
    re.compile(r"\bt\.(?:ok|true|assert)\(\s*(?:true|[1-9]\d*)\s*[,)]"),
]
_RUST_CANT_FAIL = [
    re.compile(r"\b(?:debug_)?assert!\(\s*true\s*[,)]"),
    re.compile(r"\b(?:debug_)?assert_eq!\(\s*([\w.:&*]+)\s*,\s*\1\s*[,)]"),
    re.compile(r"\b(?:debug_)?assert!\(\s*([\w.:&*]+)\s*==\s*\1\s*[,)]"),
]
_FALSE_BRANCH = {
    "js": re.compile(r"\bif\s*\(\s*(?:false|0|null|undefined|!\s*true|process\.env\.\w+)\s*\)\s*\{"),
    "go": re.compile(r"\bif\s+(?:false|os\.Getenv\(\s*\)\s*!=\s*|!\s*true)\s*\{"),
    "rust": re.compile(r"\bif\s+(?:false|!\s*true|std::env::var\(\s*\)\.is_ok\(\))\s*\{"),
}
_ASSERTS = {
    "js": re.compile(r"\b(?:assert|expect|t\.(?:ok|equal|is|deepEqual|true|false|fail|throws))\b"),
    "go": re.compile(r"\b\w+\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\("),
    "rust": re.compile(r"\b(?:assert|assert_eq|assert_ne|panic)!"),
}


_JS_TRY = re.compile(r"\btry\s*\{")
_JS_EMPTY_CATCH = re.compile(r"\s*catch\s*(?:\(\s*\w*\s*\))?\s*\{\s*\}")


def _block_end(text: str, brace: int) -> int:
    """The offset after the `}` matching the `{` at `brace` (the text's end when unbalanced)."""
    depth = 0
    for offset in range(brace, len(text)):
        depth += {"{": 1, "}": -1}.get(text[offset], 0)
        if depth == 0:
            return offset + 1
    return len(text)


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def tokens(family: str, blank: str) -> set[Found]:
    """The vacuous assertions in a JS, Go or Rust file's blanked text (comments and strings gone)."""
    found: set[Found] = set()
    for pattern in {"js": _JS_CANT_FAIL, "rust": _RUST_CANT_FAIL}.get(family, []):
        found |= {(None, CANT_FAIL, _line(blank, match.start())) for match in pattern.finditer(blank)}
    if family == "js":  # try { assert… } catch (e) {}: a failing assertion caught and dropped
        for match in _JS_TRY.finditer(blank):
            end = _block_end(blank, match.end() - 1)
            inner = _ASSERTS["js"].search(blank, match.end(), end)
            if inner is not None and _JS_EMPTY_CATCH.match(blank, end):
                found.add((None, "an assertion that never fails (its failure caught and dropped)",
                           _line(blank, inner.start())))
    if family in _FALSE_BRANCH:
        for match in _FALSE_BRANCH[family].finditer(blank):
            block = blank[match.end() - 1:_block_end(blank, match.end() - 1)]
            if (inner := _ASSERTS[family].search(block)) is not None:
                line = _line(blank, match.end() - 1 + inner.start())
                found.add((None, "an assertion that never runs (behind a condition that is always false)", line))
    return found


_GO_TEST = re.compile(r"^func\s+((?:Test|Benchmark|Fuzz|Example)\w*)\s*\([^)]*\)\s*\{", re.MULTILINE)
_GO_FAILS = re.compile(r"\b\w+\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(")
_GO_HANDS_T = re.compile(r"[(,]\s*t\s*[,)]|\bt\.Run\s*\(")
"""`t` given to a helper (`check(t, got)`, `assert.Equal(t, …)`) or a subtest: it can fail the test."""
_GO_LOGS = re.compile(r"\b\w+\.(?:Log|Logf)\s*\(")


def go_functions(blank: str) -> dict[str, tuple[int, str]]:
    """A Go file's test functions (blanked text) -> (the line it starts on, its body)."""
    return {match.group(1): (_line(blank, match.start()), blank[match.end() - 1:_block_end(blank, match.end() - 1)])
            for match in _GO_TEST.finditer(blank)}


def go_unfailing(base_blank: str, blank: str) -> list[Found]:
    """Go tests the base didn't have that can't fail: no failure call (`t.Error`, `t.Fatal`, `t.Fail`, an
    assertion helper's), and `t` handed to no other function that could make one."""
    before, found = go_functions(base_blank), list[Found]()
    for name, (line, body) in sorted(go_functions(blank).items()):
        if name in before or not name.startswith("Test"):
            continue
        if not _GO_FAILS.search(body) and not _GO_HANDS_T.search(body):
            found.append((name, f"{CANT_FAIL} (a Go test with no failure call)", line))
    return found


def go_demoted(base_blank: str, blank: str) -> list[Found]:
    """Base Go tests whose failure calls became log calls: fewer `t.Error`/`t.Fatal` calls, more `t.Log` ones."""
    before, after = go_functions(base_blank), go_functions(blank)
    found: list[Found] = []
    for name, (line, body) in sorted(after.items()):
        if name not in before:
            continue
        old = before[name][1]
        lost = len(_GO_FAILS.findall(old)) - len(_GO_FAILS.findall(body))
        if lost > 0 and len(_GO_LOGS.findall(body)) > len(_GO_LOGS.findall(old)):
            found.append((name, f"{lost} failure call(s) turned into log calls (t.Log/t.Logf)", line))
    return found
