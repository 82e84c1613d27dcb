"""Mixed manifests split key by key for the clean room: the base's version with only the task's code-side keys.

pyproject.toml: `[build-system]`, `[project]` (but extras named for tests, linting or docs, and entry points of a
pytest group), and the build's own tools (`[tool.setuptools]`, `[tool.hatch.build|version|metadata]`,
`[tool.poetry]` but its groups and dev-dependencies, flit, maturin, setuptools_scm) are code; any other `[tool.*]`
and `[dependency-groups]` are the test side. setup.cfg: `[metadata]` and `[options*]` are code (but a pytest entry
point or a test extra). package.json: what the package is and needs (`name`, `main`, `exports`, `imports`, `type`,
`bin`, `files`, `dependencies`, `peerDependencies`, `optionalDependencies`, `engines`, `workspaces`, ...) is code;
`scripts`, `devDependencies`, `overrides`, `resolutions`, `config`, and every tool's key (`jest`, `mocha`, `babel`,
...) the test side. A dependency redirected (Cargo's `[patch]`, npm's `overrides`, go.mod's `replace`) can swap
a library only the tests use (an assertion crate, testify) for a local fake: the base's redirections are kept.
Cargo.toml: `[package]` (but `build` and `metadata`), `[lib]`, `[[bin]]`, `[dependencies]`,
`[target.*.dependencies]`, `[features]`, `[workspace]` are code; `[patch]`, `[replace]`, `[dev-dependencies]`,
`[build-dependencies]` (build.rs is on the test side), `[[test]]`, `[[bench]]`, `[[example]]`, `[profile]` and
`[lints]` the test side. `[features]` are code: a feature only tests turn on needs a test-side key to turn it on
(a dev-dependency on the crate itself, a test target's `required-features`), and those are put back.
Written with tomli_w and json (comments are not kept: the clean room is a throwaway tree)."""

from __future__ import annotations

import configparser
import io
import json
import re
import tomllib
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any, Literal

import tomli_w

from orchestrator.gate.prepare import gomod

Kind = Literal["code", "test", "deeper"]
_TEST_EXTRA = re.compile(r"^(?:tests?|testing|dev|develop|development|lint|linting|docs?|typing|types|check|ci|"
                         r"coverage|all)$|test", re.IGNORECASE)
_PACKAGE_JSON_CODE = frozenset({
    "name", "version", "description", "keywords", "homepage", "bugs", "license", "author", "contributors",
    "funding", "repository", "main", "module", "browser", "exports", "imports", "type", "types", "typings", "bin",
    "man", "directories", "files", "dependencies", "peerDependencies", "peerDependenciesMeta",
    "optionalDependencies", "bundleDependencies", "bundledDependencies", "engines", "os", "cpu", "workspaces",
    "packageManager", "sideEffects", "publishConfig", "private"})
_CARGO_CODE = frozenset({"dependencies", "lib", "bin", "features", "workspace"})
_PYPROJECT_TOOLS = frozenset({"setuptools", "setuptools_scm", "setuptools-scm", "flit", "maturin"})
_SETUP_CFG_CODE = frozenset({"metadata", "options", "options.packages.find", "options.package_data",
                             "options.exclude_package_data", "options.data_files", "options.extras_require",
                             "options.entry_points"})


def _pyproject(path: tuple[str, ...]) -> Kind:
    head, rest = path[0], path[1:]
    if head in ("project", "tool") and not rest:
        return "deeper"
    if head == "project":
        if rest[0] not in ("optional-dependencies", "entry-points"):
            return "code"
        return "deeper" if len(rest) == 1 else _named_for_tests(rest[1])
    if head == "tool" and rest[0] in ("hatch", "poetry"):
        return "deeper" if len(rest) == 1 else _build_tool_key(rest[0], rest[1])
    return "code" if head == "build-system" or (head == "tool" and rest[0] in _PYPROJECT_TOOLS) else "test"


def _named_for_tests(extra: str) -> Kind:
    """An extra or entry-point group named for tests, lint or docs (`test`, `dev`, `pytest11`) is the test side."""
    return "test" if _TEST_EXTRA.search(extra) or "pytest" in extra else "code"


def _build_tool_key(tool: str, key: str) -> Kind:
    """hatch's build, version and metadata; poetry's all but its groups, dev-dependencies and plugins."""
    if tool == "hatch":
        return "code" if key in ("build", "version", "metadata") else "test"
    return "test" if key in ("group", "dev-dependencies", "plugins") else "code"


def _setup_cfg(path: tuple[str, ...]) -> Kind:
    if len(path) == 1:
        return "deeper"
    section, key = path[0], path[1]
    if section not in _SETUP_CFG_CODE or "pytest" in key:
        return "test"
    return "test" if section == "options.extras_require" and _TEST_EXTRA.search(key) else "code"


def _package_json(path: tuple[str, ...]) -> Kind:
    return "code" if path[0] in _PACKAGE_JSON_CODE else "test"


def _cargo(path: tuple[str, ...]) -> Kind:
    head, rest = path[0], path[1:]
    if head == "package":
        return "deeper" if not rest else "test" if rest[0] in ("build", "metadata") else "code"
    if head == "target":
        return "deeper" if len(rest) < 2 else "code" if rest[1] == "dependencies" else "test"
    return "code" if head in _CARGO_CODE else "test"


def _merge(base: dict[str, Any], tree: dict[str, Any], classify: Callable[[tuple[str, ...]], Kind],
           path: tuple[str, ...] = ()) -> dict[str, Any]:
    """The base's keys, with the tree's value (or absence) at every code-side key."""
    out: dict[str, Any] = {}
    for key in [*base, *(key for key in tree if key not in base)]:
        here = (*path, key)
        kind = classify(here)
        if kind == "deeper":
            inner_base, inner_tree = base.get(key, {}), tree.get(key, {})
            if isinstance(inner_base, dict) and isinstance(inner_tree, dict):
                merged = _merge(inner_base, inner_tree, classify, here)
                if merged or key in base:
                    out[key] = merged
                continue
            kind = "test"
        source = tree if kind == "code" else base
        if key in source:
            out[key] = source[key]
    return out


def _parse(name: str, text: str) -> dict[str, Any]:
    if name == "package.json":
        found = json.loads(text)
        if not isinstance(found, dict):
            raise ValueError("not an object")
        return found
    if name == "setup.cfg":
        parser = configparser.ConfigParser(interpolation=None)
        parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys as written
        parser.read_string(text)
        return {section: dict(parser[section]) for section in parser.sections()}
    return tomllib.loads(text)


def _dump(name: str, doc: dict[str, Any]) -> str:
    if name == "package.json":
        return json.dumps(doc, indent=2) + "\n"
    if name == "setup.cfg":
        parser = configparser.ConfigParser(interpolation=None)
        parser.optionxform = str  # type: ignore[assignment,method-assign]
        parser.read_dict(doc)
        out = io.StringIO()
        parser.write(out)
        return out.getvalue()
    return tomli_w.dumps(doc)


_CLASSIFY: dict[str, Callable[[tuple[str, ...]], Kind]] = {
    "pyproject.toml": _pyproject, "setup.cfg": _setup_cfg, "package.json": _package_json, "Cargo.toml": _cargo}


def clean(path: str, base_text: str | None, tree_text: str | None) -> tuple[str | None, bool]:
    """The clean room's text of a mixed manifest (None: absent) and whether the task changed its test side."""
    if PurePosixPath(path).name == "go.mod":
        return gomod.clean(base_text, tree_text)
    return _keyed(path, base_text, tree_text)


def _keyed(path: str, base_text: str | None, tree_text: str | None) -> tuple[str | None, bool]:
    """The clean room's text of a mixed manifest (None: absent) and whether the task changed its test side: the
    base's version with the tree's code-side keys; the base's text as it is when the task changed only test-side
    keys (or wrote something that doesn't parse), the tree's when it changed only code-side keys."""
    name = PurePosixPath(path).name
    classify = _CLASSIFY[name]
    try:
        base = _parse(name, base_text) if base_text is not None else {}
    except (ValueError, configparser.Error):
        return base_text, base_text != tree_text
    try:
        tree = _parse(name, tree_text) if tree_text is not None else {}
    except (ValueError, configparser.Error):
        return base_text, True
    rebuilt = _merge(base, tree, classify)
    if rebuilt == tree:
        return tree_text, False
    if rebuilt == base:
        return base_text, True
    if not rebuilt and base_text is None:
        return None, True
    return _dump(name, rebuilt), True
