"""The error trees drawn in orchestrator/errors.py and agents/errors.py are the class hierarchies in the code (an
AST walk finds every class derived from a drawn one, wherever it is defined), and the signals the orchestrator's
docstring names are exceptions outside both trees."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import agents.errors
import orchestrator.errors
from tests.source_trees import parsed

ROOT = Path(__file__).resolve().parents[2]
_DRAWN = re.compile(r"^    (?P<lead>[│├└─ ]*)(?P<name>[A-Z]\w+)(?:\s|$)")
_SIGNAL = re.compile(r"^    (?P<path>[a-z_.]+\.(?P<name>[A-Z]\w+))\s")


def drawn_tree(docstring: str) -> dict[str, str | None]:
    """Each class the docstring draws, with the class drawn as its parent (None: the root)."""
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in docstring.split("\n\n")[1].splitlines():
        found = _DRAWN.match(line)
        if found is None:
            continue  # a continuation line of the description
        depth = len(found["lead"])
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents[found["name"]] = stack[-1][1] if stack else None
        stack.append((depth, found["name"]))
    return parents


def coded_tree(package: str, root: str) -> dict[str, str | None]:
    """Every class in `package` derived (by name, directly) from `root` or from a class derived from it."""
    bases: dict[str, str] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.ClassDef) and node.bases:
                base = node.bases[0]
                name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")
                bases.setdefault(node.name, name)
    found: dict[str, str | None] = {root: None}
    grew = True
    while grew:
        grew = False
        for name, base in bases.items():
            if base in found and name not in found:
                found[name] = base
                grew = True
    return found


@pytest.mark.parametrize(("module", "package", "root"), [
    (orchestrator.errors, "orchestrator", "AutobuildError"), (agents.errors, "agents", "AgentError")])
def test_the_drawn_error_tree_is_the_code(module: object, package: str, root: str) -> None:
    assert drawn_tree(str(module.__doc__)) == coded_tree(package, root)


def test_the_signals_are_named_and_are_not_errors() -> None:
    text = str(orchestrator.errors.__doc__)
    section = text[text.index("Signals (not errors)"):]
    signals = [found for line in section.splitlines() if (found := _SIGNAL.match(line))]
    assert [found["name"] for found in signals] == ["UsageLimitExceeded", "UsageLimitYield", "Held"]
    for found in signals:
        module, name = found["path"].rsplit(".", 1)
        signal = getattr(importlib.import_module(module), name)
        assert issubclass(signal, Exception), name
        assert not issubclass(signal, orchestrator.errors.AutobuildError | agents.errors.AgentError), name
        assert str(signal.__doc__).startswith("A signal, not an error"), name


def test_a_drawing_that_differs_from_the_code_is_caught() -> None:
    wrong = orchestrator.errors.__doc__.replace("    │   ├── RunLockedError ", "    ├── RunLockedError     ")
    assert drawn_tree(wrong)["RunLockedError"] == "AutobuildError" != coded_tree("orchestrator",
                                                                                  "AutobuildError")["RunLockedError"]
