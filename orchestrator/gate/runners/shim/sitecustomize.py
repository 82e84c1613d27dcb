"""Put on PYTHONPATH by AutoBuild's gate: every unittest outcome, by test id, appended as a JSON line to the file
named by AUTOBUILD_UNITTEST_REPORT (python -m unittest honours no option like PYTEST_ADDOPTS), and no fail-fast.
Then the sitecustomize this one shadows (the interpreter's or the venv's own), if any, runs as it would have.
Runs inside the user's interpreter (any Python 3): plain code, and nothing here may raise."""

from __future__ import annotations

import contextlib
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
                if err is not None:
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

if os.environ.get("AUTOBUILD_UNITTEST_REPORT"):
    with contextlib.suppress(Exception):  # never break the user's interpreter: ids are then simply missing
        _record(os.environ["AUTOBUILD_UNITTEST_REPORT"])
    plugins = [name for name in os.environ.get("PYTEST_PLUGINS", "").split(",") if name.strip()]
    if _PYTEST_PLUGIN not in plugins:
        os.environ["PYTEST_PLUGINS"] = ",".join([*plugins, _PYTEST_PLUGIN])
with contextlib.suppress(Exception):
    _chain()
