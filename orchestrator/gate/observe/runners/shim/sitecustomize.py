"""Put on PYTHONPATH by AutoBuild's gate: every unittest outcome, by test id, appended as a JSON line to the file
named by AUTOBUILD_UNITTEST_REPORT (python -m unittest honours no option like PYTEST_ADDOPTS), and no fail-fast.
Each outcome of a run goes on the gate's channel too (autobuild_channel.py), as it happens: a session per run of
this process's tests (a run started inside another one, by a test, is not reported), ended with its verdict.
Then the sitecustomize this one shadows (the interpreter's or the venv's own), if any, runs as it would have.
Runs inside the user's interpreter (any Python 3): plain code, and nothing here may raise."""

from __future__ import annotations

import contextlib
import functools  # loaded by contextlib already: free
import importlib.machinery
import importlib.util
import json
import os
import sys

TYPE_CHECKING = False  # importing typing would cost every Python process of a gate run ~8 ms
if TYPE_CHECKING:
    from typing import Any

_running: list[Any] = []
"""The result object whose run this process reports on the channel, and its session (one at a time)."""


def _channel(result: Any, name: str, outcome: str, test_id: str, reason: str) -> None:
    if name == "startTestRun" and not _running:
        _running.extend([result, autobuild_channel.Session("unittest")])
    elif _running and _running[0] is result:
        if name == "stopTestRun":
            _running.pop(1).end(0 if result.wasSuccessful() else 1, owners=[("unittest.case", "TestCase", ())])
            _running.clear()
        elif name != "startTestRun":
            _running[1].test(outcome=outcome, id=test_id, reason=reason)


def _write(report: str, outcome: str, test: Any, reason: str = "", *, result: Any = None, name: str = "") -> None:
    try:
        test_id = str(test.id()) if hasattr(test, "id") else str(test)
    except Exception:  # noqa: BLE001 - a test whose id() raises must not break the user's run
        test_id = str(test)
    with contextlib.suppress(Exception):
        _channel(result, name, outcome, test_id, reason)
    if name in ("stopTestRun", "startTest"):  # on the channel only: what unittest's "Ran N tests" counts
        return
    with contextlib.suppress(OSError), open(report, "a", encoding="utf-8") as out:
        out.write(json.dumps({"outcome": outcome, "id": test_id, "reason": reason}) + "\n")


def _record(report: str, module: Any) -> None:
    """Hooks `unittest.result` (`module`, just loaded) to report every outcome."""
    base: Any = module.TestResult

    def hook(name: str, outcome: str) -> None:
        original = getattr(base, name)

        def hooked(self: Any, *args: Any) -> Any:
            result = original(self, *args)
            if name in ("startTestRun", "stopTestRun"):
                _write(report, outcome, "", result=self, name=name)
            elif name == "addSubTest":
                test, sub, err = args
                if err is None:  # by its id, not counted as a test (unittest counts the test, not its subTests)
                    _write(report, "subtest-passed", sub, result=self, name=name)
                else:
                    failure = getattr(test, "failureException", AssertionError)
                    _write(report, "failed" if issubclass(err[0], failure) else "error", sub, result=self,
                           name=name)
            else:
                _write(report, outcome, args[0], str(args[1]) if name == "addSkip" else "", result=self, name=name)
            return result

        setattr(base, name, hooked)

    # No fail-fast (-f): the base's run and each task's see the same tests.
    base.failfast = property(lambda self: False, lambda self, value: None)
    for name, outcome in (("startTestRun", "run"), ("stopTestRun", "end"), ("startTest", "start"),
                          ("addSuccess", "passed"), ("addFailure", "failed"), ("addError", "error"),
                          ("addSkip", "skipped"), ("addExpectedFailure", "xfail"),
                          ("addUnexpectedSuccess", "unexpected"), ("addSubTest", "")):
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


class _Loaded:
    """Wraps a module's loader to call `then(module)` once the module has run. A plain class: `importlib.abc`
    would import importlib.resources (pathlib, tempfile, inspect: ~50 ms in every Python process of a run)."""

    def __init__(self, inner: Any, then: Any) -> None:
        self.inner = inner
        self.then = then

    def create_module(self, spec: Any) -> Any:
        return self.inner.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.inner.exec_module(module)
        with contextlib.suppress(Exception):
            self.then(module)


class _WhenLoaded:
    """Calls `then(module)` right after the module `name` is first imported, in this process only: the unittest
    hooks cost a process that never runs unittest nothing (importing unittest is ~20 ms), and the pytest plugin is
    added when `_pytest.config` loads (an environment variable such as PYTEST_PLUGINS would reach processes that
    can't import it)."""

    def __init__(self, name: str, then: Any, before: Any = None) -> None:
        self.name = name
        self.then = then
        self.before = before

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            if self.before is not None:
                with contextlib.suppress(Exception):
                    self.before()
            spec.loader = _Loaded(spec.loader, self.then)  # type: ignore[assignment]  # a loader by its methods
        return spec


def _add_pytest_plugin(module: Any) -> None:
    plugins = getattr(module, "default_plugins", None)
    if isinstance(plugins, tuple) and _PYTEST_PLUGIN not in plugins:
        module.default_plugins = (*plugins, _PYTEST_PLUGIN)


def _take_channel() -> None:
    """pytest is starting: the channel is taken before its plugins and conftests load."""
    autobuild_channel.take()


if os.environ.get("AUTOBUILD_UNITTEST_REPORT"):
    with contextlib.suppress(Exception):
        import autobuild_channel

        if autobuild_channel.named_runner():  # started as a runner: the channel is taken before anything else
            autobuild_channel.take()
    for _name, _then, _before in (
            ("unittest.result", functools.partial(_record, os.environ["AUTOBUILD_UNITTEST_REPORT"]), None),
            ("_pytest.config", _add_pytest_plugin, _take_channel)):
        if _name in sys.modules:  # loaded before this file ran (a site-packages .pth imports it): hooked now
            with contextlib.suppress(Exception):  # never break the user's interpreter: ids are then simply missing
                _then(sys.modules[_name])
        else:
            sys.meta_path.insert(0, _WhenLoaded(_name, _then, _before))
with contextlib.suppress(Exception):
    _chain()
