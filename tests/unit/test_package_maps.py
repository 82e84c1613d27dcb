"""Beside test_layering: the package maps can't drift. Outside a package whose internals are private, code imports
only the package itself; and every package's docstring names each of its modules, one line each."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

from tests.source_trees import parsed
from tests.unit.test_layering import MODULES, ROOT

# Packages whose `__init__` is their one import surface: outside them, `orchestrator.gate` and never
# `orchestrator.gate.<module>`. Tests are exempt: a unit test of gate/spec/accounting.py is that module's own spec (as
# langgraph's tests import `langgraph.pregel._algo`), and exporting internals only for tests would widen the very
# surface this rule narrows. The benchmarks are code we ship beside the package, so they count as importers.
PRIVATE = ("orchestrator.gate",)
IMPORTERS = ("orchestrator", "agents", "benchmarks")


def _imported(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import in `path`, a `from pkg import name` counted as `pkg.name`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.lineno, node.module)]
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _reaches_inside(name: str, package: str) -> bool:
    """`name` is one of `package`'s modules (not a name the package's `__init__` exports)."""
    parts = name.split(".")
    prefixes = (".".join(parts[:end]) for end in range(1, len(parts) + 1))  # `name` itself and each package above
    return name.startswith(package + ".") and any(prefix.startswith(package + ".") and prefix in MODULES
                                                  for prefix in prefixes)


def _sources(top: str) -> list[Path]:
    """The Python files under `top` that are ours: tracked or new, not what git ignores (the real-history bench's
    downloaded releases and its builder venv, about a thousand files of other projects' code)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                             f"{top}/*.py"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    found = sorted(ROOT / name for name in set(listed.split("\0")) if name and (ROOT / name).is_file())
    assert found, f"no Python file listed under {top}/"
    return found


def test_outside_a_private_package_only_the_package_is_imported() -> None:
    offenders: set[str] = set()
    for top in IMPORTERS:
        for path in _sources(top):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            for line, name in _imported(path):
                offenders.update(f"{path.relative_to(ROOT)}:{line} reaches inside {package}"
                                 for package in PRIVATE
                                 if not module.startswith(package + ".") and _reaches_inside(name, package))
    assert sorted(offenders) == []


def test_the_private_rule_sees_every_way_in(tmp_path: Path) -> None:
    source = tmp_path / "importer.py"
    source.write_text("import orchestrator.gate.cache\nfrom orchestrator.gate.observe.judge import judge\n"
                      "from orchestrator.gate import spec, Gates\n"
                      "from orchestrator.gate.observe.runners import python\n")
    inside = sorted({line for line, name in _imported(source) if _reaches_inside(name, "orchestrator.gate")})
    assert inside == [1, 2, 3, 4]
    assert not _reaches_inside("orchestrator.gate.Gates", "orchestrator.gate")
    assert not _reaches_inside("orchestrator.gateway", "orchestrator.gate")


# A module's line in its package's docstring: its file name (a subpackage's folder) at the start, then what it is.
LISTED = re.compile(r"^(\w+\.py|\w+/): ", re.MULTILINE)
PACKAGES = sorted(init.parent.relative_to(ROOT) for top in ("orchestrator", "agents")
                  for init in (ROOT / top).rglob("__init__.py"))


def _members(package: Path) -> list[str]:
    return sorted([path.name for path in package.glob("*.py") if path.name != "__init__.py"]
                  + [f"{path.name}/" for path in package.iterdir() if (path / "__init__.py").is_file()])


@pytest.mark.parametrize("package", PACKAGES, ids=str)
def test_every_module_is_named_in_its_package_docstring(package: Path) -> None:
    """One line per module, `name.py: what it is`, so the map in `__init__` can't drift from the folder."""
    doc = ast.get_docstring(ast.parse((ROOT / package / "__init__.py").read_text())) or ""
    listed = LISTED.findall(doc)
    members = _members(ROOT / package)
    assert sorted(set(listed)) == sorted(listed), f"{package}/__init__.py names a module twice"
    assert [name for name in members if name not in listed] == [], f"not in {package}/__init__.py's docstring"
    assert [name for name in listed if name not in members] == [], f"named in {package}/__init__.py, not there"


def test_the_map_rule_reads_a_module_line_and_nothing_else() -> None:
    doc = "Summary naming main.py in passing.\n\nmain.py: the parser.\nnodes/: the nodes.\n    wrapped text.py: no\n"
    assert LISTED.findall(doc) == ["main.py", "nodes/"]
