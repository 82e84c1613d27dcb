"""A pytest plugin the gate's sitecustomize adds to pytest's default plugins (only where that shim was imported,
so this module is importable too): no fail-fast (`-x`, `--maxfail`), so the base's run and each task's see the same
tests. Options given on the command line come after PYTEST_ADDOPTS, so only a plugin can overrule them.

A run the gate's timeout would kill (SIGKILL, through the sandbox) writes no JUnit report; so just before that
deadline (AUTOBUILD_GATE_DEADLINE, seconds since the epoch) pytest is interrupted as by Ctrl+C, and still writes the
report of the tests that finished: a test that hangs leaves the others' results, and its own id unreported. It
says so last (STOPPED), for the gate to call the run timed out.

The first session in this process (not one a test starts inside it, as pytester's inline runs do) sends every
report on the gate's channel as it happens (autobuild_channel.py): per test and phase, the id JUnit would give
it, its outcome and the category pytest's own summary counts it in; its start and its end with pytest's exit
status.
Where the gate asks (AUTOBUILD_PYTEST_READS), it records which files each test read (autobuild_gate_reads.py):
once per process, in the first session only (pytest's own tests start sessions inside a session)."""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
import threading
import time
from typing import Any

import autobuild_channel
import pytest

DEADLINE = "AUTOBUILD_GATE_DEADLINE"
STOPPED = "autobuild: pytest interrupted at the gate's deadline"
_fired = threading.Event()
_reporting: list[Any] = []


def _junit_names(nodeid: str) -> tuple[str, str]:
    """(classname, name) as pytest's JUnit report writes them."""
    try:
        from _pytest.junitxml import mangle_test_address  # noqa: PLC0415 - pytest's own, as its report does

        names = mangle_test_address(nodeid)
    except Exception:  # noqa: BLE001 - an older or newer pytest: the node id as it is
        names = [nodeid]
    return ".".join(names[:-1]), names[-1]


def _cut(text: str, prefix: str) -> str:
    return text[len(prefix):] if text.startswith(prefix) else text


def _reason(report: Any) -> str:
    if hasattr(report, "wasxfail"):
        return _cut(str(report.wasxfail), "reason: ")
    longrepr = report.longrepr
    if report.skipped and isinstance(longrepr, tuple) and len(longrepr) == 3:
        return _cut(str(longrepr[2]), "Skipped: ")
    return ""


def _subtest(report: Any) -> str:
    """A subtest's report (pytest 9's `subtests`, unittest's subTest under pytest): its block's message and
    parameters, as pytest's SUBFAILED line names them; "" for a test's own report. Its test reports again."""
    context = getattr(report, "context", None)
    if context is None or not hasattr(context, "kwargs"):
        return ""
    message = getattr(context, "msg", None)
    kwargs = getattr(context, "kwargs", None) or {}
    parts = ([f"[{message}]"] if message is not None else []) + \
        ([f"({', '.join(f'{key}={value!r}' for key, value in kwargs.items())})"] if kwargs else [])
    return " ".join(parts) or "(<subtest>)"


class _ChannelReporter:
    """Every report of this process's first session, on the gate's channel as it happens."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self.session: autobuild_channel.Session | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: Any) -> None:
        self.session = autobuild_channel.Session("pytest")

    def _send(self, report: Any, phase: str) -> None:
        if self.session is None:
            return
        try:
            category = self.config.hook.pytest_report_teststatus(report=report, config=self.config)[0]
        except Exception:  # noqa: BLE001 - a plugin's own status hook failing: the outcome still goes out
            category = report.outcome
        classname, name = _junit_names(report.nodeid)
        extra = {"subtest": subtest} if (subtest := _subtest(report)) else {}
        self.session.test(id=report.nodeid, classname=classname, name=name, phase=phase, outcome=report.outcome,
                          category=str(category or ""), xfail=hasattr(report, "wasxfail"), reason=_reason(report),
                          **extra)

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed or report.skipped:
            self._send(report, "collect")

    def pytest_runtest_logreport(self, report: Any) -> None:
        self._send(report, report.when)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: Any, exitstatus: Any) -> None:
        if self.session is not None:
            self.session.end(int(exitstatus), owners=_OWN)


_OWN = [("_pytest.python", "Function", ()), ("_pytest.unittest", "TestCaseFunction", ()),
        ("_pytest.reports", "TestReport", ()), ("_pytest.runner", "", ("pytest_runtest_call", "call_and_report",
                                                                       "runtestprotocol", "call_runtest_hook")),
        ("unittest.case", "TestCase", ())]
"""pytest's own code that runs a test and reports it, and unittest's TestCase: the run's code may not replace it."""


def _interrupt() -> None:
    _fired.set()
    os.kill(os.getpid(), signal.SIGINT)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: Any) -> None:
    config.option.maxfail = 0
    _record_reads(config)
    if not _reporting:
        _reporting.append(config)
        config.pluginmanager.register(_ChannelReporter(config), "autobuild_channel")
    deadline = os.environ.get(DEADLINE, "")
    try:
        delay = float(deadline) - time.time()
    except ValueError:
        return
    if delay > 0:
        timer = threading.Timer(delay, _interrupt)
        timer.daemon = True
        timer.start()


def pytest_unconfigure(config: Any) -> None:
    if _fired.is_set():  # after pytest's own capture ended: straight to the run's output
        os.write(1, f"\n{STOPPED}\n".encode())


_recording: list[object] = []


def _record_reads(config: Any) -> None:
    folder, root = os.environ.get("AUTOBUILD_PYTEST_READS"), os.environ.get("AUTOBUILD_GATE_ROOT")
    if not folder or not root or _recording or not hasattr(sys, "addaudithook"):
        return
    try:  # beside this module, on the shim's path
        recorder = importlib.import_module("autobuild_gate_reads").ReadsRecorder(root, folder)
    except Exception:  # noqa: BLE001 - the user's run goes on: the gate then has no record of reads
        return
    _recording.append(recorder)
    sys.addaudithook(recorder.audit)
    config.pluginmanager.register(_Reads(recorder), "autobuild_gate_reads")


def _junit_id(nodeid: str) -> str:
    """The test's id as the gate names it from pytest's JUnit report (`classname::name`)."""
    try:
        from _pytest.junitxml import mangle_test_address  # noqa: PLC0415 - pytest's own, as its JUnit writes it

        names = mangle_test_address(nodeid)
    except Exception:  # noqa: BLE001 - another pytest: the node id, which the gate then doesn't match
        return nodeid
    return "::".join(part for part in (".".join(names[:-1]), names[-1]) if part)


class _Reads:
    """Tells the recorder which test runs, which modules were collected, and writes its record at the end."""

    def __init__(self, recorder: Any) -> None:
        self.recorder = recorder
        self.items: dict[str, str] = {}

    def pytest_collection_finish(self, session: Any) -> None:
        for item in session.items:
            self.items[_junit_id(item.nodeid)] = os.path.realpath(str(getattr(item, "path", None) or item.fspath))
        self.recorder.collected = frozenset(self.items.values())

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Any:
        self.recorder.current = _junit_id(item.nodeid)
        try:
            yield
        finally:
            self.recorder.current = None

    @pytest.hookimpl(tryfirst=True)  # before pytest-xdist's worker says it finished (then it may be ended)
    def pytest_sessionfinish(self, session: Any) -> None:
        with contextlib.suppress(Exception):  # the user's run goes on: the gate then has no record of reads
            recorder = self.recorder
            importlib.import_module("autobuild_gate_reads").write(recorder.folder, recorder.by_test(self.items))
