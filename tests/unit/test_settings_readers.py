"""One reader per setting: no module outside orchestrator/settings/ reads an `ORCHESTRATOR_*` variable or a worker's
(the engine's HOST, PORT, DATABASE_URL, REDIS_URL, LOG_LEVEL) from the process environment, found by an AST walk
(`os.environ[...]`, `.get`, `.pop`, `.setdefault`, `os.getenv`, `in os.environ`, also through a name bound to it);
and what the settings models hold is frozen once loaded."""

from __future__ import annotations

import ast
from pathlib import Path

import pydantic
import pytest

from orchestrator.server.worker import engine_env
from orchestrator.settings import Environment, RunSettings, WorkerSettings, environment
from tests.source_trees import parsed

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "orchestrator" / "settings"
WORKER_VARIABLES = frozenset({"HOST", "PORT", "DATABASE_URL", "REDIS_URL", "LOG_LEVEL"})
_READS = frozenset({"get", "pop", "setdefault"})


def _is_setting(name: str) -> bool:
    return name.startswith("ORCHESTRATOR_") or name in WORKER_VARIABLES


def _constants(trees: list[ast.Module]) -> dict[str, str]:
    """Every module-level text constant by name (`LOCK_DB_VARIABLE = "ORCHESTRATOR_LOCK_DB"`, f-strings of them)."""
    found: dict[str, str] = {}
    for _ in range(3):  # f-strings built from other constants (`f"{ENV_PREFIX}WAKE_SECONDS"`)
        for tree in trees:
            for node in tree.body:
                if (isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None
                        and (value := _text(node.value, found)) is not None and "*" not in value):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    found.update({target.id: value for target in targets if isinstance(target, ast.Name)})
    return found


def _text(node: ast.expr, constants: dict[str, str]) -> str | None:
    """The text an expression names, `*` for a part not known here; None when it is no text at all."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.JoinedStr):
        parts = [_text(part.value, constants) if isinstance(part, ast.FormattedValue) else _text(part, constants)
                 for part in node.values]
        return "".join("*" if part is None else part for part in parts)
    return None


def _is_environ(node: ast.expr, aliases: set[str]) -> bool:
    if isinstance(node, ast.Attribute) and node.attr == "environ":
        return isinstance(node.value, ast.Name) and node.value.id == "os"
    return isinstance(node, ast.Name) and (node.id == "environ" or node.id in aliases)


def _is_read(func: ast.expr, aliases: set[str]) -> bool:
    """`os.environ.get`, `.pop`, `.setdefault` (also of a name bound to it) or `os.getenv`."""
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr == "getenv":
        return isinstance(func.value, ast.Name) and func.value.id == "os"
    return func.attr in _READS and _is_environ(func.value, aliases)


def environment_reads(source: str | ast.Module, constants: dict[str, str]) -> list[str]:
    """The variable names a module's source (or its parsed tree) reads from the process environment (`*` for a
    part not known)."""
    tree = ast.parse(source) if isinstance(source, str) else source
    aliases = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
               and any(_is_environ(part, set()) for part in ast.walk(node.value))
               for target in node.targets if isinstance(target, ast.Name)}
    keys: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_environ(node.value, aliases):
            keys.append(node.slice)
        elif isinstance(node, ast.Call) and node.args and _is_read(node.func, aliases):
            keys.append(node.args[0])
        elif isinstance(node, ast.Compare) and any(isinstance(op, ast.In | ast.NotIn) for op in node.ops) and any(
                _is_environ(right, aliases) for right in node.comparators):
            keys.append(node.left)
    return [text for key in keys if (text := _text(key, constants)) is not None]


def _modules() -> list[Path]:
    return [path for package in ("orchestrator", "agents") for path in sorted((ROOT / package).rglob("*.py"))]


def test_the_walk_finds_every_form_of_a_read() -> None:
    constants = {"ENV_PREFIX": "ORCHESTRATOR_", "LOCK": "ORCHESTRATOR_LOCK_DB"}
    source = """
import os
from os import environ
a = os.environ.get("ORCHESTRATOR_DB")
b = os.environ["PORT"]
c = os.getenv(LOCK)
d = environ.get(f"{ENV_PREFIX}WORKSPACE", "")
env = os.environ if a else {}
e = env.get("HOST")
f = "REDIS_URL" in os.environ
g = os.environ.get("PATH")
h = {**os.environ, "ORCHESTRATOR_LOCK_DB": "written, not read"}
"""
    assert environment_reads(source, constants) == [
        "ORCHESTRATOR_DB", "PORT", "ORCHESTRATOR_LOCK_DB", "ORCHESTRATOR_WORKSPACE", "HOST", "REDIS_URL", "PATH"]


def _header(node: ast.ClassDef) -> str:
    """`class Name(bases):`, its decorators above it, without its body (unparsing whole classes was most of the
    test's time)."""
    return ast.unparse(ast.ClassDef(node.name, node.bases, node.keywords, [ast.Pass()], node.decorator_list,
                                    type_params=node.type_params)).split(":")[0]


def test_only_the_settings_package_reads_a_setting_from_the_environment() -> None:
    trees = {path: parsed(path) for path in _modules()}
    constants = _constants(list(trees.values()))
    offenders = [f"{path.relative_to(ROOT)} reads {name}" for path, tree in trees.items()
                 if not path.is_relative_to(SETTINGS)
                 for name in environment_reads(tree, constants) if _is_setting(name)]
    assert offenders == []
    models = [f"{path.relative_to(ROOT)}: {node.name}" for path, tree in trees.items()
              if not path.is_relative_to(SETTINGS) for node in ast.walk(tree)
              if isinstance(node, ast.ClassDef) and "BaseSettings" in _header(node)]
    assert models == []  # a pydantic-settings model reads the environment too


def test_settings_are_frozen_once_loaded(tmp_path: Path) -> None:
    run = RunSettings(repo=tmp_path, target="FEAT-001")
    with pytest.raises(pydantic.ValidationError):
        run.parallel = 2
    worker = WorkerSettings(database_url="postgresql://db", redis_url="redis://queue", auth_token=" spaced ")
    with pytest.raises(pydantic.ValidationError):
        worker.port = 1
    assert worker.checked().auth_token == "spaced"  # stripped at load, as the check compares it
    with pytest.raises(pydantic.ValidationError):
        environment().lock_db = "postgresql://elsewhere"
    assert isinstance(environment(), Environment)


def test_the_environment_reads_leniently_as_its_readers_did(monkeypatch: pytest.MonkeyPatch) -> None:
    """A served process's variables never stop a run: what `serve` checked and wrote, or a hand-set value the
    readers always took their default for."""
    monkeypatch.setenv("ORCHESTRATOR_YIELD_PAUSE_SECONDS", "soon")
    monkeypatch.setenv("ORCHESTRATOR_WAKE_SECONDS", "often")
    monkeypatch.delenv("HOST", raising=False)
    monkeypatch.delenv("PORT", raising=False)
    found = environment()
    assert (found.yield_pause_seconds, found.wake_seconds, found.host, found.port) == (0.0, 5.0, "127.0.0.1", "2026")
    monkeypatch.setenv("ORCHESTRATOR_YIELD_PAUSE_SECONDS", "-3")
    monkeypatch.setenv("ORCHESTRATOR_DB_LOCK_TIMEOUT", "0.5")
    assert (environment().yield_pause_seconds, environment().db_lock_wait_ms()) == (0.0, 500)
    monkeypatch.setenv("ORCHESTRATOR_DB_LOCK_TIMEOUT", "a while")
    with pytest.raises(ValueError, match="a while"):  # refused where it is used, as before (no new check here)
        environment().db_lock_wait_ms()


def test_the_engine_gets_the_log_level_serve_was_given(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    stores = {"database_url": "postgresql://db", "redis_url": "redis://queue"}
    monkeypatch.delenv("LOG_LEVEL", raising=False)
    assert engine_env(WorkerSettings(**stores), tmp_path / "aegra.json")["LOG_LEVEL"] == "WARNING"
    monkeypatch.setenv("LOG_LEVEL", "DEBUG")
    assert engine_env(WorkerSettings(**stores), tmp_path / "aegra.json")["LOG_LEVEL"] == "DEBUG"
