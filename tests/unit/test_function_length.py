"""Functions read as the steps they take: none in orchestrator/ or agents/ is longer than about 60 lines.

A length is counted from the `def` line to the function's last line, docstring and comments included (what a
reader has to hold in view). A longer one is split into the steps it takes; only a function that truly reads
better whole may stay, listed in ALLOWED with the reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.source_trees import parsed

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 60

ALLOWED: dict[str, str] = {
    # "package/module.py:function": "why it reads better whole",
}
"""Functions allowed over LIMIT (`path:qualified name`), each with its reason. Aim for none."""


def _lengths(path: Path) -> dict[str, int]:
    """Every function and method in `path` by its qualified name (`Class.method`, `outer.inner`) and length."""
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                found[name] = (child.end_lineno or child.lineno) - child.lineno + 1
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(parsed(path), "")
    return found


def _all_lengths() -> dict[str, int]:
    return {f"{path.relative_to(ROOT).as_posix()}:{name}": length
            for package in ("orchestrator", "agents")
            for path in sorted((ROOT / package).rglob("*.py"))
            for name, length in _lengths(path).items()}


def test_no_function_is_longer_than_the_limit() -> None:
    too_long = {name: length for name, length in _all_lengths().items()
                if length > LIMIT and name not in ALLOWED}
    assert not too_long, ("split these into the steps they take (or allow one in ALLOWED, saying why): "
                          + ", ".join(f"{name} ({length} lines)" for name, length in sorted(too_long.items())))


def test_every_allowed_function_is_still_long() -> None:
    lengths = _all_lengths()
    stale = [name for name in ALLOWED if lengths.get(name, 0) <= LIMIT]
    assert not stale, f"no longer over {LIMIT} lines (or gone): drop from ALLOWED: {', '.join(stale)}"


def test_the_count_sees_methods_and_nested_functions(tmp_path: Path) -> None:
    source = tmp_path / "sample.py"
    source.write_text("class A:\n"
                      "    async def m(self):\n"
                      "        x = 1\n"
                      "        def inner():\n"
                      "            pass\n"
                      "        return x\n"
                      "def f():\n"
                      "    pass\n")
    assert _lengths(source) == {"A.m": 5, "A.m.inner": 2, "f": 2}
