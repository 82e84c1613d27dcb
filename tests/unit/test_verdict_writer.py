"""`passed` has one writer (issue 38): an AST scan of orchestrator/ finds every place a value is given to a
`passed` key (a GateResult(...) or dict(...) keyword, `x["passed"] = ...`, a dict literal's key, `update(passed=...)`,
`setdefault("passed", ...)`, `__setitem__("passed", ...)`, a `("passed", value)` pair); only gate/verdict.py may make
one. Copying a verdict already made (`row["passed"] = bool(event.get("passed"))`, a report's `"passed":
result["passed"]`) and an empty slot (`None`) are not verdicts. A key computed at run time is out of its reach."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.source_trees import parsed

ROOT = Path(__file__).resolve().parents[2]
WRITER = ROOT / "orchestrator" / "gate" / "verdict.py"
_RECORDS = {"GateResult", "Observation", "dict", "update"}


def _is_passed(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value == "passed"


def _copied(value: ast.expr) -> bool:
    """A value that is a verdict already made (read from another record) or no verdict at all."""
    if isinstance(value, ast.Constant) and value.value is None:
        return True
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "bool" and value.args:
        return _copied(value.args[0])
    if isinstance(value, ast.Subscript):
        return _is_passed(value.slice)
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get"
            and bool(value.args) and _is_passed(value.args[0]))


def _callee(call: ast.Call) -> str:
    return call.func.id if isinstance(call.func, ast.Name) else call.func.attr if isinstance(
        call.func, ast.Attribute) else ""


def writes(source: str | ast.Module) -> list[int]:
    """The lines of `source` (or its tree) that give `passed` a value of their own."""
    found = []
    for node in ast.walk(ast.parse(source) if isinstance(source, str) else source):
        values: list[ast.expr] = []
        if isinstance(node, ast.Call) and _callee(node) in _RECORDS:
            values += [kw.value for kw in node.keywords if kw.arg == "passed"]
        if isinstance(node, ast.Call) and _callee(node) in ("setdefault", "__setitem__") and node.args \
                and _is_passed(node.args[0]):
            values += node.args[1:2] or [ast.Constant(value=True)]
        if isinstance(node, ast.Call) and _callee(node) in _RECORDS:  # dict([("passed", True)]), update([...])
            values += [pair.elts[1] for arg in node.args if isinstance(arg, ast.List | ast.Tuple) for pair in arg.elts
                       if isinstance(pair, ast.Tuple) and len(pair.elts) == 2 and _is_passed(pair.elts[0])]
        if isinstance(node, ast.Dict):
            values += [value for key, value in zip(node.keys, node.values, strict=True) if _is_passed(key)]
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AugAssign | ast.AnnAssign) else []
        for target in targets:
            for part in target.elts if isinstance(target, ast.Tuple) else [target]:
                if isinstance(part, ast.Subscript) and _is_passed(part.slice):
                    value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) and node.value else None
                    values.append(value if value is not None and not isinstance(target, ast.Tuple)
                                  and not isinstance(node, ast.AugAssign) else ast.Constant(value=True))
        found += [value.lineno if hasattr(value, "lineno") else getattr(node, "lineno", 0)
                  for value in values if not _copied(value)]
    return found


def test_only_the_verdict_writes_passed() -> None:
    offenders = [f"{path.relative_to(ROOT)}:{line}" for path in sorted((ROOT / "orchestrator").rglob("*.py"))
                 if path != WRITER for line in writes(parsed(path))]
    assert offenders == [], f"only gate/verdict.py may write `passed` (decide): {offenders}"
    assert writes(parsed(WRITER)), "the scan finds the verdict's own writes"


def test_the_scan_sees_every_way_of_writing_it() -> None:
    for source in ('GateResult(passed=True, command="x")', 'result["passed"] = False', 'x = {"passed": ok}',
                   'result.update(passed=all(runs))', 'dict(run, passed=True)', 'result.setdefault("passed", True)',
                   'result["passed"], result["summary"] = True, "s"', 'result["passed"] |= flaky',
                   'merged = result | {"passed": False}', 'found: GateResult = {"passed": True, **run}',
                   'result.__setitem__("passed", True)', 'result.update([("passed", True)])'):
        assert writes(source), source
    for source in ('row["passed"] = bool(event.get("passed"))', 'out = {"passed": result["passed"]}',
                   'row = {"passed": None}', 'Observed("pytest", passed=3)', 'if gate["passed"]: pass',
                   'if status in ("passed", "xpassed"): pass'):
        assert not writes(source), source
