"""Which side of the product a file is on: code (what the product's build or import reaches) or the test side
(tests, their support and data, and the configuration of any tool); mixed manifests are split key by key.

The clean room (gate/prepare/clean_room.py) puts every test-side file a task added or changed back to the base's
version. A file is code only when it is a source module of the product: not named or placed as a test, test support, a
hook a tool loads by its name (conftest.py, sitecustomize.py, a `.pth`, a `*.config.*`, a dotfile) or a file the
gate's command names. A source module that is neither is code even outside a declared package (a root `mul.py`
the tests import): counting it on the test side would put a broken module back together with the cheat that
hides the break. Any other file (docs, data, build scripts, a Makefile, CMake, `build.rs`) is on the test side:
when in doubt, test side. pyproject.toml, setup.cfg, package.json and Cargo.toml are split by key (CODE_KEYS)."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Literal

from orchestrator.gate.spec.test_files import is_test_file

Side = Literal["code", "test", "mixed"]

MIXED = ("pyproject.toml", "setup.cfg", "package.json", "Cargo.toml", "go.mod")
"""Manifests split key by key (gate/prepare/manifests.py)."""
_LOCKS = ("package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "Cargo.lock",
          "go.sum", "poetry.lock", "uv.lock", "pdm.lock", "Pipfile.lock")
"""Dependency pins: what the product is built with."""
_TEST_FOLDERS = frozenset({"tests", "test", "testing", "__tests__", "__mocks__", "__fixtures__", "spec", "specs",
                           "testdata", "fixtures", "snapshots", "__snapshots__", "e2e", "benches", "benchmarks",
                           "examples", "docs", "doc", "scripts", "tools", "ci", "node_modules"})
_HOOKS = ("conftest.py", "sitecustomize.py", "usercustomize.py", "*.pth", "setup.py", "noxfile.py", "tasks.py",
          "*.config.*", "*.conf.*", "*rc", "*rc.json", "*.setup.*", "setupTests.*", "setup-tests.*",
          "jest.*", "vitest.*", "vite.*", "karma.*", "babel.*", "tsconfig*.json", "jsconfig*.json", "build.rs",
          "Makefile", "makefile", "GNUmakefile", "*.mk", "CMakeLists.txt", "*.cmake", "*.ini", "*.cfg", "*.toml",
          "*.yml", "*.yaml", "Dockerfile*", "*.sh")
"""Files a tool loads by their name (or configuration of one): never the product's modules."""
_PY = (".py", ".pyi", ".pyx")
_JS = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx", ".vue", ".svelte")
_NATIVE = (".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".java", ".kt", ".swift", ".rb", ".php", ".cs")
_SUPPORT_WORDS = re.compile(r"^(?:test(?:s|ing|utils?|lib|helpers?|kit)?|mocks?|stubs?|fakes?|fixtures?|conftest)$")
"""Words of a source file's name that say it is test support (a file only a test-side config loads needs no name:
that config is put back)."""


def side_of(path: str, named_by_command: frozenset[str] = frozenset(),
            packages: frozenset[str] = frozenset()) -> Side:
    """The side `path` is on (in the task's tree); `named_by_command`: files the gate's command names (`python
    check.py`), which judge rather than get judged; `packages`: the base's Python package folders (a folder with
    an `__init__.py`), whose other files are the package's data, which its own code reads."""
    posix = PurePosixPath(path)
    name, folders = posix.name, posix.parts[:-1]
    if path in named_by_command or any(part.startswith(".") for part in posix.parts):
        return "test"
    if name in MIXED:
        return "mixed"
    if name in _LOCKS:
        return "code"
    if (is_test_file(path) or any(part.lower() in _TEST_FOLDERS for part in folders)
            or any(fnmatch.fnmatch(name, pattern) for pattern in _HOOKS)):
        return "test"
    if _is_source(name, folders):
        return "code"
    return "code" if any("/".join(folders[:depth]) in packages for depth in range(1, len(folders) + 1)) else "test"


def python_packages(files: Iterable[str]) -> frozenset[str]:
    """The folders of `files` that are Python packages (they hold an `__init__.py`), outside test folders."""
    return frozenset(str(PurePosixPath(path).parent) for path in files if PurePosixPath(path).name == "__init__.py"
                     and not any(part.lower() in _TEST_FOLDERS for part in PurePosixPath(path).parts[:-1]))


def _is_source(name: str, folders: tuple[str, ...]) -> bool:
    """A module of the product, by its language: Python and JS/TS not named as test support, any Go file (its
    tests and testdata are test files), Rust under a `src/` (tests/, benches/, examples/, build.rs are not), C,
    C++ and the others by suffix."""
    if name.endswith(_PY + _JS):
        return not _support_named(name)
    if name.endswith(".rs"):
        return "src" in folders
    return name.endswith((".go", *_NATIVE))


def _support_named(name: str) -> bool:
    """A source file named as test support (`test_utils.py`, `mock-db.js`, `setup.ts`): the tests', not the
    product's."""
    stem = name.split(".", 1)[0].lower()
    words = re.split(r"[_\-]", stem)
    return any(_SUPPORT_WORDS.match(word) for word in words)


def command_files(command: str | None, files: Mapping[str, object] | frozenset[str]) -> frozenset[str]:
    """The repository's files a gate command names as words (`python check.py`, `bash ci/test.sh`)."""
    if not command:
        return frozenset()
    words = {word.strip("'\"").removeprefix("./") for word in re.split(r"[\s;&|()]+", command)}
    return frozenset(word for word in words if word in files)
