"""A tamper screen on what the task added to test code, by parsing: skip / only / xfail / ignore markers (aliases
and module-level `pytestmark` included), early exits in test or conftest code, and assertions that can't fail.
Only what the task's version has and the base's hasn't counts. Python is read with `ast`; JS, Go and Rust with a
tokenizer that drops comments and string literals first, so a marker in a string or a comment never counts."""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath

from orchestrator.gate.spec import vacuous

_SKIPS = {"skip", "skipif", "xfail", "skipIf", "skipUnless", "expectedFailure"}
_EXITS = {("sys", "exit"), ("os", "_exit"), ("pytest", "exit"), ("os", "abort")}


@dataclass(frozen=True)
class Hit:
    """One marker the task added: where, in which test (None: the module), and what."""

    file: str
    line: int
    test: str | None
    what: str

    def describe(self) -> str:
        return f"{self.file}:{self.line}: {self.what}" + (f" ({self.test})" if self.test else "")


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def _is_skip(node: ast.AST, aliases: set[str]) -> bool:
    name = _dotted(node)
    return name.split(".")[-1] in _SKIPS or name in aliases


def _trivial(test: ast.expr) -> bool:
    """An assertion that can't fail: a truthy constant, or a comparison of an expression with itself."""
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.Is)):
        return ast.dump(test.left) == ast.dump(test.comparators[0])
    return False


def _python(path: str, text: str) -> set[tuple[str | None, str, int]]:
    """(test, what, line) for every marker in a Python file; nothing when it doesn't parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    aliases = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
               for target in node.targets if isinstance(target, ast.Name) and _is_skip(node.value, set())}
    found: set[tuple[str | None, str, int]] = set()
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                     for t in statement.targets):
            value = statement.value
            marks = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
            if any(_is_skip(mark, aliases) for mark in marks):
                found.add((None, "a module-level skip/xfail mark (pytestmark)", statement.lineno))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for decorator in node.decorator_list:
                if _is_skip(decorator, aliases):
                    found.add((node.name, f"a {_dotted(decorator) or 'skip'} marker", decorator.lineno))
            for inner in ast.walk(node):
                if isinstance(inner, ast.Assert) and _trivial(inner.test):
                    found.add((node.name, "an assertion that can't fail", inner.lineno))
                if isinstance(inner, ast.Call) and _is_skip(inner.func, aliases) and "pytest" in _dotted(inner):
                    found.add((node.name, f"a call to {_dotted(inner)}", inner.lineno))
        if isinstance(node, ast.Call) and tuple(_dotted(node).split(".")[-2:]) in _EXITS:
            found.add((None, f"an early exit ({_dotted(node)})", node.lineno))
    return found | vacuous.python(tree)


_JS_LIKE = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`", re.DOTALL)
_RUST_LIKE = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\])*\"", re.DOTALL)
_TOKENS: dict[str, list[tuple[re.Pattern[str], str]]] = {
    "js": [(re.compile(r"\.(skip|only|todo|fixme)\s*\("), "a .{0} marker"),
           (re.compile(r"\bx(it|describe|test)\s*\("), "an x{0} marker"),
           # jest's `test.failing`, vitest's `test.fails`: a test that passes when its assertion fails
           (re.compile(r"\b(?:it|test)\.(failing|fails)\b"), "a .{0} marker"),
           (re.compile(r"\bprocess\.exit\s*\("), "an early exit (process.exit)"),
           ],
    "go": [(re.compile(r"\.(Skip|SkipNow|Skipf)\s*\("), "a t.{0} call"),
           (re.compile(r"\bos\.Exit\s*\("), "an early exit (os.Exit)")],
    "rust": [(re.compile(r"#\[\s*ignore\b"), "an #[ignore] attribute"),
             (re.compile(r"\bstd::process::exit\s*\("), "an early exit (process::exit)")],
}


_SHOULD_PANIC = re.compile(r"#\[\s*should_panic\b[^\]]*\]")
"""A test that passes when it panics: bare, or expecting an assertion's own panic, it passes on a broken fix."""


def _family(path: str) -> str | None:
    suffix = PurePosixPath(path).suffix
    if suffix in (".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".mts", ".cts"):
        return "js"
    return {".go": "go", ".rs": "rust", ".py": "python"}.get(suffix)


def _blank(family: str, text: str) -> str:
    """The text with its comments and string literals blanked (lines kept)."""
    return (_RUST_LIKE if family == "rust" else _JS_LIKE).sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


def _tokens(family: str, text: str) -> set[tuple[str | None, str, int]]:
    """(None, what, line) for each marker; the line of its first character, comments and strings blanked."""
    blank = _blank(family, text)
    found: set[tuple[str | None, str, int]] = vacuous.tokens(family, blank)
    for pattern, what in _TOKENS[family]:
        for match in pattern.finditer(blank):
            found.add((None, what.format(*match.groups()), blank.count("\n", 0, match.start()) + 1))
    if family == "rust":
        for match in _SHOULD_PANIC.finditer(blank):
            expected = text[match.start():match.end()]  # the raw attribute: its `expected` message is a string
            if "expected" not in expected or "assert" in expected.lower():
                found.add((None, "a #[should_panic] attribute (it passes when its assertions fail)",
                           blank.count("\n", 0, match.start()) + 1))
    return found


def _markers(path: str, text: str) -> set[tuple[str | None, str, int]]:
    family = _family(path)
    if family is None:
        return set()
    return _python(path, text) if family == "python" else _tokens(family, text)


def screen(path: str, base_text: str | None, text: str) -> list[Hit]:
    """The markers the task's version of a test file has and its base version hasn't (by test and kind, so a
    line that merely moved is no hit)."""
    before = Counter((test, what) for test, what, _ in _markers(path, base_text or ""))
    hits = []
    for test, what, line in sorted(_markers(path, text), key=lambda found: (found[2], found[1])):
        if before[(test, what)] > 0:
            before[(test, what)] -= 1
        else:
            hits.append(Hit(path, line, test, what))
    if _family(path) == "go":  # a base test's failure calls turned into log calls; a new test with none
        base_blank, blank = _blank("go", base_text or ""), _blank("go", text)
        hits += [Hit(path, line, test, what) for test, what, line in
                 [*vacuous.go_demoted(base_blank, blank), *vacuous.go_unfailing(base_blank, blank)]]
    return hits


def defines(text: str | None, test: str) -> bool:
    """Whether a Python file's text defines the function or class `test` (a Go file's, the function)."""
    pattern = rf"^\s*(?:async\s+)?(?:def|class|func)\s+{re.escape(test)}\b"
    return bool(text) and re.search(pattern, text or "", re.MULTILINE) is not None
