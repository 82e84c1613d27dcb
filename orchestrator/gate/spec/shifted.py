"""Test ids that shift when a case is dropped, and the parametrize or table diff that shows which case it was.

pytest names a parameter it can't print by its position (`test_x[x0]`, `[x1]`), and go numbers duplicate subtest
names (`TestX/case#01`): drop one case and the ids after it move up, so "test_x[x2]: gone" names the wrong case.
For those, the feedback shows the test's cases as the base and the tree define them: pytest's `parametrize`
decorators, a Go test function (its table) whole.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterable

NOTE = ("These ids are positions, not names (pytest's `x0`, `x1`; go's `#01`): they shift when a case is dropped,"
        " so judge the cases below, as the base and this tree define them, not the ids.")
_POSITIONAL = re.compile(r"^[A-Za-z_]\w*?\d+$")
_GO_DUPLICATE = re.compile(r"#\d+(?:/|$)")
_GO_FUNC = re.compile(r"^func (Test\w*|Fuzz\w*)\(", re.MULTILINE)


def shifting(test_id: str) -> bool:
    """Whether the id names a case by its position: a pytest parameter id such as `x0`, a go `#01` suffix."""
    if _GO_DUPLICATE.search(test_id):
        return True
    found = re.search(r"\[(.*)\]$", test_id)
    return found is not None and any(_POSITIONAL.match(part) for part in found.group(1).split("-"))


def function_of(test_id: str) -> str:
    """The test function an id belongs to: `tests.t::C::test_x[x0]` -> `test_x`, `pkg.TestX/a#01` -> `TestX`."""
    if go := re.search(r"\.((?:Test|Fuzz|Example)\w*)(?:/|$)", test_id):
        return go.group(1)
    head = test_id.split("[", 1)[0]
    return re.split(r"::|\.| > ", head)[-1]


def cases(path: str, text: str | None) -> dict[str, str]:
    """Each test function's cases in `text`: its parametrize decorators (Python), its whole body (Go)."""
    if text is None:
        return {}
    if path.endswith(".go"):
        found = {}
        for match in _GO_FUNC.finditer(text):
            end = text.find("\n}", match.start())
            found[match.group(1)] = text[match.start():end + 2 if end >= 0 else len(text)]
        return found
    if not path.endswith(".py"):
        return {}
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    lines = text.splitlines(keepends=True)
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            marks = [d for d in node.decorator_list if "parametrize" in ast.unparse(d)]
            if marks:
                found[node.name] = "".join("".join(lines[d.lineno - 1:d.end_lineno or d.lineno]) for d in marks)
    return found


def case_diff(path: str, base_text: str | None, tree_text: str | None, names: Iterable[str] | None = None) -> str:
    """The unified diff of the named tests' cases (every test whose cases changed when `names` is None)."""
    before, after = cases(path, base_text), cases(path, tree_text)
    wanted = sorted(set(names) if names is not None else {*before, *after})
    hunks: list[str] = []
    for name in wanted:
        old, new = before.get(name, ""), after.get(name, "")
        if old != new and (old or new):
            hunks.extend(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                              f"a/{path} ({name}, the base)", f"b/{path} ({name}, this tree)"))
    return "".join(line if line.endswith("\n") else line + "\n" for line in hunks)
