"""Notifications on the events a person waits for: `--notify` (terminal bell, desktop notification) and
`--on-event CMD` (the event as JSON on its stdin), run in order off the event loop and never failing the run.

Five kinds, from the one event model (`orchestrator.graph.events`):

    feature_finished   feature_end (also when it stopped with tasks waiting, interrupted or at a usage limit)
    question_waiting   question_asked, when the run waits for the answer (not with --autonomous: the task aborts)
    task_failed        finalize with status failed/blocked/aborted/conflict/error, task_error, or a merge that
                       did not land (a conflict, or the integration gate failed)
    budget_reached     finalize `aborted` because a feature, task or session budget was exhausted
    usage_limit        usage_limit: once per pause (a pause extended by further hits is not announced again)

A hook receives `dumps(event | {"notification": {"kind", "message"}})` on stdin (shape:
`orchestrator/schemas/notification.schema.json`), with AUTOBUILD_EVENT (the kind), AUTOBUILD_FEATURE,
AUTOBUILD_TASK and AUTOBUILD_MESSAGE in its environment, run by `sh -c` in the target repo. Its output is
captured (never mixed into `--json` stdout); a failure or timeout is a one-line warning.
"""

from __future__ import annotations

import html
import os
import queue
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TextIO

from orchestrator import processes
from orchestrator.causes import cause_of
from orchestrator.facts import FAILED
from orchestrator.jsonout import dumps, iso_utc
from orchestrator.settings import RunSettings
from orchestrator.text import plain_line

NotificationKind = Literal["feature_finished", "question_waiting", "task_failed", "budget_reached", "usage_limit"]
EventSink = Callable[[dict[str, Any]], None]

HOOK_TIMEOUT_S = 10.0
"""How long one hook (or desktop notification) may run before its process group is killed."""
DESKTOP_TIMEOUT_S = 5.0
_KILL_GRACE_S = 10.0
"""Beyond its timeout, how long a killed job may take to end (processes: SIGTERM, then SIGKILL after 3 s)."""
_TO_FILES = 'exec >"$1" 2>"$2"; cmd=$3; shift 3; eval "$cmd"'
"""`sh -c` of the hook with its stdout and stderr sent to the files named by $1 and $2 first."""
MESSAGE_CHARS = 300
STDERR_CHARS = 200
TITLES: dict[NotificationKind, str] = {
    "feature_finished": "feature finished", "question_waiting": "question waiting", "task_failed": "task failed",
    "budget_reached": "budget reached", "usage_limit": "usage-limit pause",
}


def classify(event: Mapping[str, Any], *, questions_wait: bool = True) -> NotificationKind | None:
    """Which notification an event is, if any (pure)."""
    kind = event.get("event")
    if kind == "feature_end":
        return "feature_finished"
    if kind == "question_asked":
        return "question_waiting" if questions_wait else None
    if kind == "usage_limit":
        return "usage_limit"
    if kind == "task_error" or (kind == "merge" and event.get("merged") is False):
        return "task_failed"
    if kind == "finalize" and event.get("status") in FAILED:
        budget = event.get("status") == "aborted" and cause_of(event) == "budget"
        return "budget_reached" if budget else "task_failed"
    return None


def clean(text: str, limit: int = MESSAGE_CHARS) -> str:
    """One line of plain text: control and format characters (terminal escapes, bidi overrides) become
    spaces, whitespace runs collapse, and it is capped at `limit` characters."""
    return plain_line(text, limit, control=" ")


def message(kind: NotificationKind, event: Mapping[str, Any]) -> str:
    """The one-line human message of a notification (cleaned: agent text can't reach a terminal raw)."""
    feature = str(event.get("feature") or "")
    task = str(event.get("task") or "")
    reason = str(event.get("reason") or "").strip().split("\n", 1)[0]
    if kind == "feature_finished":
        results = event.get("results") or {}
        counts = Counter(str((result or {}).get("status")) for result in results.values())
        done = ", ".join(f"{count} {status}" for status, count in sorted(counts.items())) or "no task finished"
        held = event.get("held") or {}
        waiting = ", ".join(f"{task_id} ({why})" for task_id, why in held.items())
        verb = "stopped at a usage limit" if event.get("usage_limit_exceeded") else "stopped" if held else "finished"
        text = f"{feature} {verb}: {done}" + (f"; not finished: {waiting}" if waiting else "")
    elif kind == "question_waiting":
        options = " | ".join(str(option) for option in event.get("options") or [])
        text = (f"{feature} {task} asks: {event.get('question')}" + (f" [{options}]" if options else "")
                + f" (question id {event.get('question_id')})")
    elif kind == "usage_limit":
        text = f"{feature} {event.get('status') or 'paused by a usage limit'}"
    elif kind == "budget_reached":
        text = f"{feature} {task} stopped: {reason}"
    else:
        status = str(event.get("status") or "")
        if event.get("event") == "task_error":
            status = "error"
        elif event.get("event") == "merge":
            status = "conflict" if cause_of(event) == "merge_conflict" else "failed"
        text = f"{feature} {task} {status}: {reason}"
    return clean(text)


def payload(kind: NotificationKind, event: Mapping[str, Any]) -> dict[str, Any]:
    """What a hook receives: the event itself (times as ISO-8601 UTC) plus what it notifies."""
    data = dict(event)
    if data.get("time"):
        data["time"] = iso_utc(str(data["time"]))
    data["notification"] = {"kind": kind, "message": message(kind, event)}
    return data


def desktop_command(env: Mapping[str, str], platform: str = sys.platform) -> Callable[[str, str], list[str]] | None:
    """How to show a desktop notification here, or None: `notify-send` on Linux with a display and a session
    bus, `osascript` on macOS. Text goes in as arguments (never into a script) and as plain text."""
    if platform == "darwin" and (osascript := shutil.which("osascript", path=env.get("PATH"))):
        script = ["-e", "on run argv", "-e", "display notification (item 2 of argv) with title (item 1 of argv)",
                  "-e", "end run"]
        return lambda title, body: [osascript, *script, title, body]
    if not platform.startswith("linux"):
        return None
    notify_send = shutil.which("notify-send", path=env.get("PATH"))
    display = env.get("DISPLAY") or env.get("WAYLAND_DISPLAY")
    runtime_dir = env.get("XDG_RUNTIME_DIR")
    bus = env.get("DBUS_SESSION_BUS_ADDRESS") or (runtime_dir and Path(runtime_dir, "bus").exists())
    if not (notify_send and display and bus):
        return None
    # The body may be read as markup by the notification server: escape it.
    return lambda title, body: [notify_send, "--app-name=AutoBuild", title, html.escape(body, quote=False)]


def terminal_bell() -> TextIO | None:
    """Where a bell is heard: stderr when it is a terminal, else the controlling terminal, else nowhere."""
    if sys.stderr.isatty():
        return sys.stderr
    try:
        return open("/dev/tty", "w")  # kept open for the run's bells; Notifier.close() closes it
    except OSError:
        return None


def _warn(text: str) -> None:
    sys.stderr.write(f"warning: {text}\n")
    sys.stderr.flush()


class Notifier:
    """An event sink that passes every event on, then notifies on the five kinds: the bell at once, desktop
    notifications and hooks on one worker thread, in order. `close()` runs what is still queued, for at
    most `drain_s` seconds (default: two hook timeouts, so the feature's end is still announced after one hung
    hook); whatever could not start by then is dropped with a warning."""

    def __init__(self, sink: EventSink, *, cwd: Path, on_event: str | None = None, notify: bool = False,
                 questions_wait: bool = True, env: Mapping[str, str] | None = None, bell: TextIO | None = None,
                 hook_timeout: float = HOOK_TIMEOUT_S, drain_s: float | None = None,
                 warn: Callable[[str], None] = _warn) -> None:
        self.sink = sink
        self.cwd = cwd
        self.on_event = on_event
        self.questions_wait = questions_wait
        self.env = dict(os.environ if env is None else env)
        self.bell = bell if notify else None
        self.desktop = desktop_command(self.env) if notify else None
        self.hook_timeout = hook_timeout
        self.drain_s = 2 * hook_timeout if drain_s is None else drain_s
        self.warn = warn
        self._paused = False
        self._jobs: queue.Queue[Callable[[float], None] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._deadline: float | None = None
        self._dropped = 0

    @classmethod
    def from_settings(cls, settings: RunSettings, sink: EventSink) -> Notifier:
        """The run's sink around `sink`, as `--notify`, `--on-event` (and their variables) ask."""
        return cls(sink, cwd=settings.repo, on_event=settings.on_event, notify=settings.notify,
                   questions_wait=settings.interactive, bell=terminal_bell() if settings.notify else None,
                   hook_timeout=settings.on_event_timeout)

    @property
    def active(self) -> bool:
        """Whether anything notifies at all (else this sink only passes events on)."""
        return bool(self.bell or self.desktop or self.on_event)

    def __enter__(self) -> Notifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __call__(self, event: dict[str, Any]) -> None:
        self.sink(event)
        if not self.active:
            return
        kind = self._kind(event)
        if kind is None:
            return
        data = payload(kind, event)
        text = data["notification"]["message"]
        if self.bell is not None:
            self._ring()
        if self.desktop is not None:
            command = self.desktop(f"AutoBuild: {TITLES[kind]}", text)
            self._submit(lambda timeout: self._desktop(command, timeout))
        if self.on_event:
            env = {**self.env, "AUTOBUILD_EVENT": kind, "AUTOBUILD_FEATURE": str(event.get("feature") or ""),
                   "AUTOBUILD_TASK": str(event.get("task") or ""), "AUTOBUILD_MESSAGE": text}
            document = dumps(data)
            self._submit(lambda timeout: self._hook(kind, document, env, timeout))

    def _kind(self, event: Mapping[str, Any]) -> NotificationKind | None:
        if event.get("event") == "usage_limit_over":
            self._paused = False
        kind = classify(event, questions_wait=self.questions_wait)
        if kind == "usage_limit":
            if self._paused:
                return None
            self._paused = True
        return kind

    def _ring(self) -> None:
        assert self.bell is not None
        try:
            self.bell.write("\a")
            self.bell.flush()
        except (OSError, ValueError):  # the terminal went away (closed, hung up): nobody hears it anyway
            self.bell = None

    def _desktop(self, command: list[str], timeout: float) -> None:
        done = processes.run(command, self.cwd, min(timeout, DESKTOP_TIMEOUT_S), self.env)
        if not done.ok:  # an unavailable desktop is silently skipped, a broken one said once
            self.warn(f"desktop notification failed: {clean(done.stderr, STDERR_CHARS) or done.returncode}")
            self.desktop = None

    def _hook(self, kind: NotificationKind, document: str, env: dict[str, str], timeout: float) -> None:
        # Its output goes to files, not to our pipes: a child it leaves running detached (`setsid … &`) would
        # otherwise hold the pipes open, and waiting for their end would cost this and every later event.
        with tempfile.TemporaryDirectory(prefix="autobuild-hook-") as folder:
            out, err = Path(folder, "out"), Path(folder, "err")
            done = processes.run(["sh", "-c", _TO_FILES, "sh", str(out), str(err), str(self.on_event)], self.cwd,
                                 timeout, env, stdin_text=document)
            stderr = err.read_text(errors="replace") if err.is_file() else ""
        if done.timed_out:
            self.warn(f"--on-event command timed out after {timeout:.1f}s on {kind} and was killed")
        elif done.returncode != 0:
            detail = clean(stderr, STDERR_CHARS)
            self.warn(f"--on-event command exited {done.returncode} on {kind}" + (f": {detail}" if detail else ""))

    def _submit(self, job: Callable[[float], None]) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="autobuild-notify", daemon=True)
            self._thread.start()
        self._jobs.put(job)

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            timeout = self.hook_timeout
            if self._deadline is not None:
                timeout = min(timeout, self._deadline - time.monotonic())
                if timeout <= 0:
                    self._dropped += 1
                    continue
            try:
                job(timeout)
            except Exception as exc:  # noqa: BLE001 - a notification must never stop the run or the next ones
                self.warn(f"notification failed: {clean(f'{type(exc).__name__}: {exc}', STDERR_CHARS)}")

    def close(self) -> None:
        """Run what is queued (bounded by `drain_s`), then stop the worker."""
        if self._thread is not None:
            self._deadline = time.monotonic() + self.drain_s
            self._jobs.put(None)
            # Each job ends by its own timeout: its process group is killed, with a grace period to die.
            self._thread.join(self.drain_s + _KILL_GRACE_S)
            if self._thread.is_alive():
                self.warn("notifications still running at exit were abandoned")
            else:
                self._deadline = None  # a later event starts a new worker with the full timeout
            self._thread = None
        if self._dropped:
            self.warn(f"{self._dropped} notification(s) not sent: no time left at exit")
            self._dropped = 0
        if self.bell is not None and getattr(self.bell, "name", None) == "/dev/tty":
            self.bell.close()
            self.bell = None
