"""Registered by the gate's pytest plugin (autobuild_gate_pytest.py) when AUTOBUILD_PYTEST_READS names a folder:
which files of the tree (AUTOBUILD_GATE_ROOT) each test read, when the code that opened the file is a test or
test-support file. Those are its data wherever they live (`golden/out.txt`): a task that rewrites one has the
base's version put back under the base's test. Not recorded: imports, and the files the code under test opens
from its own package (the first frame outside the standard library and installed packages is then the
product's); a file it opens elsewhere during a test is an input the test handed it, and recorded.

A `sys.addaudithook` sees every `open` (builtins, io, os, pathlib, json.load(open(...))); a read outside a test
(a test module or support module reading data at import, as a parametrize table does) is its module's, given to
the tests collected under it. Runs inside the user's interpreter (any Python 3.8+): plain code, nothing may raise."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import sysconfig
from typing import Any

READS = "AUTOBUILD_PYTEST_READS"
ROOT = "AUTOBUILD_GATE_ROOT"
PER_TEST = 100
TOTAL = 10_000
"""At most PER_TEST files a test, TOTAL pairs a process: the record stays small whatever the suite does."""
_TEST_NAME = re.compile(r"^(?:test_.*|.*_test|tests|conftest)\.py$")
_TEST_FOLDERS = frozenset({"tests", "test", "__tests__", "__snapshots__", "testdata", "snapshots", "fixtures"})
_INSTALLED = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)
_IMPORT = ("<frozen importlib", "<frozen zipimport")
_NOT_DATA = frozenset({".git", ".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__", "site-packages"})


def _stdlib() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple({os.path.join(os.path.realpath(paths[key]), "") for key in ("stdlib", "platstdlib") if key in paths})


def test_side(filename: str, root: str, collected: frozenset[str] = frozenset()) -> bool:
    """Whether the code in `filename` (absolute, links resolved) is a test or test-support file of the tree at
    `root`: a module pytest collected tests from, a conftest, a test-named module, or any module in a test folder."""
    if filename in collected:
        return True
    if not filename.startswith(root + os.sep):
        return False
    relative = filename[len(root) + 1:].split(os.sep)
    return bool(_TEST_NAME.match(relative[-1])) or any(part in _TEST_FOLDERS for part in relative[:-1])


def opener(frame: Any, skipped: tuple[str, ...]) -> str | None:
    """The file whose code asked for the open: the innermost frame that is not the standard library's, an
    installed package's or this module's; None when the import system asked (a module being loaded)."""
    while frame is not None:
        name = str(frame.f_code.co_filename)
        if name.startswith(_IMPORT):
            return None
        if not (name.startswith("<") or name.startswith(skipped) or any(part in name for part in _INSTALLED)):
            return name
        frame = frame.f_back
    return None


class ReadsRecorder:
    """Collects {test id: files it read} in one pytest process; `write` leaves it in the report folder."""

    def __init__(self, root: str, folder: str) -> None:
        self.root, self.folder = os.path.realpath(root), folder
        self.skipped = (*_stdlib(), os.path.abspath(__file__))
        self.current: str | None = None
        self.collected: frozenset[str] = frozenset()
        self.reads: dict[str, set[str]] = {}
        self.at_import: dict[str, set[str]] = {}
        self.resolved: dict[str, str] = {}
        self.packages: dict[str, str] = {}
        self.pairs = 0

    def audit(self, event: str, args: Any) -> None:
        if event != "open" or self.pairs >= TOTAL:
            return
        with contextlib.suppress(Exception):  # the user's run goes on: this read is simply not recorded
            self._opened(args)

    def _opened(self, args: Any) -> None:
        path, _mode, flags = args
        if not isinstance(path, (str, bytes)) or (isinstance(flags, int) and flags & os.O_ACCMODE != os.O_RDONLY):
            return
        caller = opener(sys._getframe(2), self.skipped)  # the frames above the audit hook
        if caller is None:
            return
        caller = self._real(caller)
        full = os.path.realpath(os.fsdecode(path))
        if not full.startswith(self.root + os.sep) or full == caller or _NOT_DATA & set(full.split(os.sep)):
            return
        if not test_side(caller, self.root, self.collected) and (self.current is None or self._own(caller, full)):
            return
        if not os.path.isfile(full):  # a missing file the test expects an error for, a path hook's name
            return
        found = self.reads.setdefault(self.current, set()) if self.current else self.at_import.setdefault(caller, set())
        if len(found) < PER_TEST and full not in found:
            found.add(full)
            self.pairs += 1

    def _own(self, caller: str, full: str) -> bool:
        """Whether the code under test opened a file of its own: inside the top package its module belongs to (a
        resource beside its modules), or, for a module of no package, inside its folder. A file it opens elsewhere
        during a test is one the test handed it (an input: `golden/in.txt`), the test's data."""
        if caller not in self.packages:
            top = folder = os.path.dirname(caller)
            while os.path.isfile(os.path.join(folder, "__init__.py")) and folder.startswith(self.root + os.sep):
                top, folder = folder, os.path.dirname(folder)
            self.packages[caller] = top
        return full.startswith(os.path.join(self.packages[caller], ""))

    def _real(self, filename: str) -> str:
        if filename not in self.resolved:
            self.resolved[filename] = os.path.realpath(filename)
        return self.resolved[filename]

    def by_test(self, items: dict[str, str]) -> dict[str, list[str]]:
        """{test id: files it read, relative to the root}; a module's reads at import go to its tests (`items`:
        test id -> the file it was collected from), a support module's to the tests in its folder and below."""
        found = {test: set(paths) for test, paths in self.reads.items()}
        modules = set(items.values())
        for module, paths in self.at_import.items():
            folder = os.path.dirname(module) + os.sep
            for test, file in items.items():
                if file == module or (module not in modules and file.startswith(folder)):
                    found.setdefault(test, set()).update(paths)
        return {test: sorted(os.path.relpath(path, self.root) for path in paths)[:PER_TEST]
                for test, paths in found.items() if paths}


def write(folder: str, reads: dict[str, list[str]]) -> None:
    """The report: one JSON document per process (pytest-xdist's workers each write their own)."""
    if not reads:
        return
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"reads-{os.getpid()}.json"), "w", encoding="utf-8") as out:
        json.dump(reads, out)
