"""Put on PYTHONPATH by AutoBuild's gate: every unittest outcome, by test id, appended as a JSON line to the file
named by AUTOBUILD_UNITTEST_REPORT (python -m unittest honours no option like PYTEST_ADDOPTS), and no fail-fast.
Then the sitecustomize this one shadows (the interpreter's or the venv's own), if any, runs as it would have.
Runs inside the user's interpreter (any Python 3): plain code, and nothing here may raise."""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from typing import Any


def _write(report: str, outcome: str, test: Any, reason: str = "") -> None:
    try:
        test_id = str(test.id()) if hasattr(test, "id") else str(test)
    except Exception:  # noqa: BLE001 - a test whose id() raises must not break the user's run
        test_id = str(test)
    with contextlib.suppress(OSError), open(report, "a", encoding="utf-8") as out:
        out.write(json.dumps({"outcome": outcome, "id": test_id, "reason": reason}) + "\n")


def _record(report: str) -> None:
    import unittest.result  # noqa: PLC0415 - loaded only in the gate's own runs, never in the user's others

    base: Any = unittest.result.TestResult

    def hook(name: str, outcome: str) -> None:
        original = getattr(base, name)

        def hooked(self: Any, *args: Any) -> Any:
            result = original(self, *args)
            if name == "startTestRun":
                _write(report, outcome, "")
            elif name == "addSubTest":
                test, sub, err = args
                if err is None:  # by its id, not counted as a test (unittest counts the test, not its subTests)
                    _write(report, "subtest-passed", sub)
                else:
                    failure = getattr(test, "failureException", AssertionError)
                    _write(report, "failed" if issubclass(err[0], failure) else "error", sub)
            else:
                _write(report, outcome, args[0], str(args[1]) if name == "addSkip" else "")
            return result

        setattr(base, name, hooked)

    # No fail-fast (-f): the base's run and each task's see the same tests.
    base.failfast = property(lambda self: False, lambda self, value: None)
    for name, outcome in (("startTestRun", "run"), ("addSuccess", "passed"), ("addFailure", "failed"),
                          ("addError", "error"), ("addSkip", "skipped"), ("addExpectedFailure", "xfail"),
                          ("addUnexpectedSuccess", "error"), ("addSubTest", "")):
        hook(name, outcome)


def _chain() -> None:
    """Run the sitecustomize this file shadows."""
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [entry for entry in sys.path if os.path.abspath(entry or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


_PYTEST_PLUGIN = "autobuild_gate_pytest"


class _PytestPlugin:
    """Adds the gate's pytest plugin to pytest's default plugins when `_pytest.config` is imported, in this
    process only (an environment variable such as PYTEST_PLUGINS would reach processes that can't import it)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "_pytest.config":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            inner = spec.loader

            class Loader(importlib.abc.Loader):
                def create_module(self, spec: Any) -> Any:
                    return inner.create_module(spec)

                def exec_module(self, module: Any) -> None:
                    inner.exec_module(module)
                    plugins = getattr(module, "default_plugins", None)
                    if isinstance(plugins, tuple) and _PYTEST_PLUGIN not in plugins:
                        module.default_plugins = (*plugins, _PYTEST_PLUGIN)

            spec.loader = Loader()
        return spec


if os.environ.get("AUTOBUILD_UNITTEST_REPORT"):
    with contextlib.suppress(Exception):  # never break the user's interpreter: ids are then simply missing
        _record(os.environ["AUTOBUILD_UNITTEST_REPORT"])
    sys.meta_path.insert(0, _PytestPlugin())
with contextlib.suppress(Exception):
    _chain()
