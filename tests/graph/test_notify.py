"""Notifications from real event streams: one in-process run produces every kind (a question, a failed task, a
budget stop, a usage-limit pause, a crashed task, the feature's end); its events go through the Notifier to a
real `--on-event` command, the bell and a fake `notify-send` on PATH. One check goes through `run_command`."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import shlex
import stat
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any

import psutil
import pytest
from jsonschema import Draft202012Validator

from agents.roles import PlayerInput, SessionSettings
from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, Turn, approve, writes
from agents.types import AgentResult
from orchestrator.cli.main import main
from orchestrator.cli.run import run_command
from orchestrator.settings import RunSettings
from orchestrator.views import notify
from orchestrator.views.notify import Notifier
from tests.graph.harness import CALC_FILES, Workflow, plan, task

HOSTILE = "Use \x1b[2J\x1b]0;pwned\x07 <b>Postgres</b>\nor\u202e SQLite?"
KINDS = {"feature_finished", "question_waiting", "task_failed", "budget_reached", "usage_limit"}
SCHEMA = json.loads(resources.files("orchestrator.schemas").joinpath("notification.schema.json").read_text())


class LimitedAgents(ScriptedAgents):
    """Scripted sessions; task D's player hits a usage limit the way real sessions report one to the run's
    gate (a second session joins the same pause), waits it out, probes and goes on."""

    async def player(self, data: PlayerInput, settings: SessionSettings) -> AgentResult:
        gate = settings.limit_gate
        if data.brief.task_id == "D" and gate is not None:
            gate.hit(None, "rate limited (429)", self)
            gate.hit(None, "rate limited (429)", object())
            assert await gate.wait(self), "this session probes the limit"
            gate.cleared(self)
        return await super().player(data, settings)


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """One run, every notification kind: A asks (hostile text), B fails, C's session ends at its own budget (an
    interactive run would ask to raise a task's or the feature's budget: test_budget_question.py), D pauses at a
    usage limit and is approved, E crashes (task_error); the feature ends with A waiting for its answer."""
    repo = make_sample_repo(tmp_path_factory.mktemp("notify") / "repo", files=CALC_FILES, plan=plan(
        task("A"), task("B"), task("C"), task("D"), task("E"), verify=None))
    agents = LimitedAgents({("player", "A"): writes({"calc/a.py": "A = 1\n"}, question=HOSTILE),
                            ("player", "B"): Turn(status="max_turns"),
                            ("player", "C"): Turn(status="budget"),
                            ("player", "D"): writes({"calc/d.py": "D = 1\n"}),
                            ("player", "E"): Turn(raises=RuntimeError("disk on fire")), "coach": approve()})
    run = asyncio.run(Workflow(repo, agents, options={"interactive": True, "limit_probe": 0.05}).run())
    assert [i.value["task"] for i in run.interrupts] == ["A"]
    return run.events


def recorder(folder: Path, prelude: str = "") -> str:
    """An `--on-event` command: a script that appends its stdin and its AUTOBUILD_* variables to files."""
    script = folder / "hook.sh"
    script.write_text("#!/bin/sh\n" + prelude + 'cat >> "$1/payloads.jsonl"; echo >> "$1/payloads.jsonl"\n'
                      'printf "%s %s %s\\n" "$AUTOBUILD_EVENT" "$AUTOBUILD_FEATURE" "$AUTOBUILD_TASK" >> "$1/env.txt"\n'
                      "echo 'hook noise on stdout'\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return f"{shlex.quote(str(script))} {shlex.quote(str(folder))}"


def received(folder: Path) -> list[dict[str, Any]]:
    path = folder / "payloads.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line] if path.exists() else []


def feed(notifier: Notifier, events: list[dict[str, Any]]) -> None:
    with notifier:
        for event in events:
            notifier(event)


def expected(events: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    kinds = []
    for event in events:
        kind = notify.classify(event)
        if kind == "usage_limit" and kinds and kinds[-1][0] == "usage_limit":
            continue  # the same pause
        if kind:
            kinds.append((kind, event.get("task")))
    return kinds


def test_each_kind_reaches_the_on_event_command_as_schema_valid_json(events: list[dict[str, Any]],
                                                                     tmp_path: Path) -> None:
    warnings: list[str] = []
    feed(Notifier(lambda event: None, cwd=tmp_path, on_event=recorder(tmp_path), warn=warnings.append), events)
    payloads = received(tmp_path)
    validator = Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)
    for payload in payloads:
        validator.validate(payload)
    got = [(p["notification"]["kind"], p.get("task")) for p in payloads]
    assert {kind for kind, _ in got} == KINDS and got == expected(events), "every kind, in the events' order"
    assert ("budget_reached", "C") in got and ("task_failed", "B") in got and ("task_failed", "E") in got
    assert [kind for kind, _ in got].count("usage_limit") == 1, "two hits of one pause are one notification"
    assert sum(e["event"] == "usage_limit" for e in events) == 2
    assert got[-1] == ("feature_finished", None)
    assert (tmp_path / "env.txt").read_text().splitlines() == [f"{k} FEAT-001 {t or ''}" for k, t in got]
    question = next(p for p in payloads if p["notification"]["kind"] == "question_waiting")
    assert question["question"] == HOSTILE, "the event itself is passed on as it is"
    assert question["notification"]["message"] == ("FEAT-001 A asks: Use [2J ]0;pwned <b>Postgres</b> or SQLite?"
                                                   f" (question id {question['question_id']})")
    assert "not finished: A (waiting for an answer)" in payloads[-1]["notification"]["message"]
    assert not warnings


def test_questions_nobody_waits_for_are_not_announced(events: list[dict[str, Any]]) -> None:
    asked = next(event for event in events if event["event"] == "question_asked")
    assert notify.classify(asked, questions_wait=False) is None, "--autonomous: the task aborts instead"
    aborted = {"event": "finalize", "task": "A", "status": "aborted", "reason": "ambiguous decision point: …"}
    assert notify.classify(aborted) == "task_failed"
    conflict = {"event": "merge", "feature": "F", "task": "A", "merged": False, "reason": "merge conflict: x.py"}
    assert notify.message("task_failed", conflict) == "F A conflict: merge conflict: x.py"


def wait_gone(pid: int) -> bool:
    """Whether the process ended (or is a zombie nobody reaped yet) within a generous bound."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def test_a_hung_hook_is_killed_with_its_children_and_later_events_still_reach_the_command(
        events: list[dict[str, Any]], tmp_path: Path) -> None:
    hang = ('if [ "$AUTOBUILD_EVENT" = question_waiting ]; then\n'
            '  sleep 300 & echo $! > "$1/child.pid"; wait; fi\n')
    warnings: list[str] = []
    feed(Notifier(lambda event: None, cwd=tmp_path, on_event=recorder(tmp_path, hang), hook_timeout=0.5,
                  drain_s=30, warn=warnings.append), events)
    assert [w for w in warnings if "timed out" in w] == [
        "--on-event command timed out after 0.5s on question_waiting and was killed"], warnings
    assert wait_gone(int((tmp_path / "child.pid").read_text())), "the hook's whole process group was killed"
    got = [kind for kind, _ in expected(events)]
    assert [p["notification"]["kind"] for p in received(tmp_path)] == [k for k in got if k != "question_waiting"]


def test_at_exit_what_cannot_start_within_the_drain_bound_is_dropped_with_a_warning(
        events: list[dict[str, Any]], tmp_path: Path) -> None:
    started = tmp_path / "started"
    warnings: list[str] = []
    notifier = Notifier(lambda event: None, cwd=tmp_path, on_event=f"touch {started}; sleep 300", hook_timeout=0.5,
                        drain_s=0, warn=warnings.append)
    for event in events:
        notifier(event)
    deadline = time.monotonic() + 10
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    notifier.close()  # the first hook runs out its own timeout; nothing else may start
    assert warnings == ["--on-event command timed out after 0.5s on question_waiting and was killed",
                        f"{len(expected(events)) - 1} notification(s) not sent: no time left at exit"]


def fake_notify_send(folder: Path) -> Path:
    """A `notify-send` stand-in on PATH: records its arguments, NUL-separated."""
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    script = bin_dir / "notify-send"
    script.write_text(f'#!/bin/sh\nprintf "%s\\0" "$@" >> {shlex.quote(str(folder / "desktop.log"))}\n'
                      f'printf "\\n\\0" >> {shlex.quote(str(folder / "desktop.log"))}\n')
    script.chmod(0o755)
    return bin_dir


def test_notify_without_a_desktop_rings_the_bell_only(events: list[dict[str, Any]], tmp_path: Path) -> None:
    bin_dir = fake_notify_send(tmp_path)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HOME": str(tmp_path)}
    bell = io.StringIO()
    warnings: list[str] = []
    feed(Notifier(lambda event: None, cwd=tmp_path, notify=True, env=env, bell=bell, warn=warnings.append), events)
    assert bell.getvalue() == "\a" * len(expected(events))
    assert not (tmp_path / "desktop.log").exists() and not warnings


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="notify-send is the Linux desktop path")
def test_a_desktop_notification_gets_the_escaped_one_line_message(events: list[dict[str, Any]],
                                                                  tmp_path: Path) -> None:
    bin_dir = fake_notify_send(tmp_path)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "DISPLAY": ":0",
           "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"}
    bell = io.StringIO()
    feed(Notifier(lambda event: None, cwd=tmp_path, notify=True, env=env, bell=bell), events)
    calls = [call.strip("\0").split("\0") for call in (tmp_path / "desktop.log").read_text().split("\n\0") if call]
    assert len(calls) == len(expected(events)) and bell.getvalue() == "\a" * len(calls)
    question = next(args for args in calls if args[1] == "AutoBuild: question waiting")
    assert question[0] == "--app-name=AutoBuild"
    assert question[2].startswith("FEAT-001 A asks: Use [2J ]0;pwned &lt;b&gt;Postgres&lt;/b&gt; or SQLite?")
    for args in calls:
        assert not any(ch in arg for arg in args for ch in "\x1b\x07\n\u202e"), args


def test_a_failing_hook_warns_and_leaves_the_exit_code_and_the_json_output_alone(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("A"), verify=None))
    hook = "cat > /dev/null; echo 'not json'; printf 'it broke\\n\\033[31mred\\n' >&2; exit 3"
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(tmp_path / "db.sqlite"), interactive=False,
                           json_output=True, on_event=hook,
                           agents=ScriptedAgents({"player": writes({"calc/a.py": "A = 1\n"}), "coach": approve()}))
    assert run_command(argparse.Namespace(command="run"), settings) == 0
    out, err = capfd.readouterr()
    documents = [json.loads(line) for line in out.splitlines()]
    assert documents[-1]["event"] == "summary" and documents[-1]["exit_code"] == 0
    assert [line for line in err.splitlines() if line.startswith("warning:")] == [
        "warning: --on-event command exited 3 on feature_finished: it broke [31mred"]


def test_an_empty_on_event_command_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("A"), verify=None))
    assert main(["run", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "db.sqlite"), "--on-event", " "]) == 2
    monkeypatch.setenv("ORCHESTRATOR_ON_EVENT", "")
    assert main(["run", "FEAT-001", "--repo", str(repo), "--db", str(tmp_path / "db.sqlite")]) == 2
    assert capsys.readouterr().err.splitlines() == ["error: --on-event must be a command (or leave it out)"] * 2
    assert not (tmp_path / "db.sqlite").exists() and not (repo / ".autobuild/runs").exists()
