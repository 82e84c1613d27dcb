"""The durable per-task event log (issue 41): every trace line has an id one above the last, kept across writers,
and `autobuild logs FEAT TASK [--follow] [--since ID]` reads it."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from orchestrator.cli.logs import follow
from orchestrator.cli.main import main
from orchestrator.errors import EXIT_INTERRUPTED
from orchestrator.store import event_log
from orchestrator.store import traces as trace
from tests.graph.harness import CALC_FILES, plan, task
from tests.graph.test_one_truth import SUB, run


async def ran(tmp_path: Path) -> tuple[Path, Path]:
    repo, db = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-001"))), tmp_path / "db"
    summary = await run(repo, db, "FEAT-001", ScriptedAgents({"player": writes(SUB), "coach": approve()}))
    assert summary.results["TASK-001"]["status"] == "approved"
    return repo, db


def logs(repo: Path, db: Path, *args: str) -> int:
    return main(["logs", "FEAT-001", *args, "--repo", str(repo), "--db", str(db)])


async def test_a_tasks_log_has_increasing_ids_and_resumes_after_the_last_seen(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, db = await ran(tmp_path)
    events = event_log.task_events(repo, "FEAT-001", "TASK-001")
    assert [e.id for e in events] == list(range(1, len(events) + 1)) and len(events) > 3
    assert "initialize" in [e.kind for e in events] and event_log.has_ended(events)
    capsys.readouterr()

    assert logs(repo, db, "TASK-001", "--json") == 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [p["id"] for p in printed] == [e.id for e in events] and printed[-1]["event"] == "merge"
    assert logs(repo, db, "TASK-001", "--since", str(events[-3].id), "--json") == 0
    assert [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()] == [e.id for e in events[-2:]]
    assert logs(repo, db, "TASK-001", "--follow") == 0, "a finished task: follow prints it all and ends"
    text = capsys.readouterr().out.splitlines()
    assert len(text) == len(events) and text[-1].startswith(f"#{events[-1].id} ") and " merge" in text[-1]
    assert not [line for line in text if line.endswith("=") or "= " in line or "=[]" in line], "no empty values"


def written(tmp_path: Path, *kinds: str) -> tuple[Path, Path]:
    """A repo with a one-task plan whose task's trace holds `kinds`, as the trace writer writes them."""
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-001")))
    for kind in kinds:
        trace.append(repo, "FEAT-001", "TASK-001", {"event": kind})
    return repo, tmp_path / "db"


def test_another_writers_lines_are_counted_before_the_next_id(tmp_path: Path) -> None:
    repo, _ = written(tmp_path, "initialize", "player_start")
    path = trace.runs_dir(repo, "FEAT-001", "TASK-001") / "trace.jsonl"
    with path.open("a") as out:  # another process (a worker that took the run over) wrote since
        out.write(json.dumps({"id": 500, "event": "initialize", "task": "TASK-001"}) + "\n")
    trace.append(repo, "FEAT-001", "TASK-001", {"event": "player_start", "turn": 1})
    events = event_log.task_events(repo, "FEAT-001", "TASK-001", since=499)
    assert [(e.id, e.kind) for e in events] == [(500, "initialize"), (501, "player_start")]
    assert not event_log.has_ended(events), "a new attempt started: the log is live again"


def test_unknown_feature_task_or_id_is_one_line_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, db = written(tmp_path, "initialize")
    capsys.readouterr()
    assert logs(repo, db, "TASK-009") == 2
    assert capsys.readouterr().err.strip() == "error: FEAT-001 has no task TASK-009: tasks are TASK-001"
    assert main(["logs", "FEAT-404", "TASK-001", "--repo", str(repo), "--db", str(db)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    with pytest.raises(SystemExit) as usage:
        logs(repo, db, "TASK-001", "--since", "abc")
    assert usage.value.code == 2 and "--since takes an event id" in capsys.readouterr().err


def test_following_a_live_task_stops_on_ctrl_c_without_a_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    repo, db = written(tmp_path, "initialize", "finalize", "initialize")  # it failed and runs again: not ended

    def interrupted(_: float) -> None:
        raise KeyboardInterrupt

    # Only the follower's clock: a global time.sleep patch reaches every thread of the test worker (xdist's own).
    monkeypatch.setattr("orchestrator.cli.logs.time", types.SimpleNamespace(sleep=interrupted))
    capsys.readouterr()
    assert logs(repo, db, "TASK-001", "--follow") == EXIT_INTERRUPTED
    captured = capsys.readouterr()
    assert "initialize" in captured.out.splitlines()[-1] and captured.err == ""


def test_follow_prints_each_event_once_until_the_end_is_read() -> None:
    written: list[event_log.LoggedEvent] = []
    shown: list[int] = []
    script: list[list[dict[str, Any]]] = [[{"event": "initialize"}], [], [{"event": "gate"}, {"event": "finalize"}]]

    def read(since: int) -> list[event_log.LoggedEvent]:
        if script:
            for raw in script.pop(0):
                written.append(event_log.LoggedEvent(len(written) + 1, raw["event"], "", None, {}))
        return [e for e in written if e.id > since]

    assert follow(read, lambda: event_log.has_ended(written), lambda e: shown.append(e.id), 0, poll_s=0) == 0
    assert shown == [1, 2, 3]
