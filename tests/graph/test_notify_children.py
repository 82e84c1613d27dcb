"""An `--on-event` hook that leaves a detached child holding its output (`setsid … &`, a notifier daemon) does not
cost later events: the hook's output goes to files, so its end is its own exit, not its children's."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from orchestrator.views.notify import Notifier


def test_a_hook_leaving_a_detached_child_does_not_delay_or_drop_later_events(tmp_path: Path) -> None:
    pids, log = tmp_path / "pids", tmp_path / "log"
    hook = (f"setsid sh -c 'echo $$ >> {pids}; exec sleep 60' & echo \"$AUTOBUILD_EVENT\" >> {log};"
            " echo 'said on stderr' >&2; exit 3")
    warnings: list[str] = []
    notifier = Notifier(lambda event: None, cwd=tmp_path, on_event=hook, hook_timeout=2, drain_s=4,
                        warn=warnings.append)
    try:
        with notifier:
            for task in ("A", "B", "C"):
                notifier({"event": "task_error", "feature": "FEAT-001", "task": task, "reason": "boom"})
            notifier({"event": "feature_end", "feature": "FEAT-001", "results": {}})
        assert log.read_text().split() == ["task_failed"] * 3 + ["feature_finished"], "every event, none dropped"
        assert warnings == ["--on-event command exited 3 on task_failed: said on stderr"] * 3 + [
            "--on-event command exited 3 on feature_finished: said on stderr"], "its own stderr still read"
    finally:
        for pid in (int(line) for line in pids.read_text().split()) if pids.exists() else ():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
