"""The Mermaid text itself: escaped labels, outcome classes, and the timeline read back from traces."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from orchestrator.plan.model import parse_plan
from orchestrator.store import traces as trace
from orchestrator.views.mermaid import MAX_GANTT_BARS, Bar, flowchart, gantt, gantt_text, label_text, style_of
from orchestrator.views.pictures import run_outcomes
from orchestrator.views.timeline import pause_bars, task_bars

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC).timestamp()


def decoded(label: str) -> str:
    return re.sub(r"#(\d+);", lambda match: chr(int(match.group(1))), label)


@given(st.text())
def test_a_label_holds_only_safe_characters_and_decodes_to_the_printable_text(name: str) -> None:
    label = label_text(name, limit=10_000)
    assert all(ch.isalnum() or ch in " -_.,/+=!?@()'#;" or ord(ch) > 0x7F for ch in label), label
    assert not any(unicodedata.category(ch).startswith("C") or (ch.isspace() and ch != " ") for ch in label)
    assert '"' not in label and "%%" not in label and "<" not in label and "`" not in label
    assert decoded(label) == " ".join("".join(ch for ch in name if ch.isspace() or
                                              not unicodedata.category(ch).startswith("C")).split())


def test_hostile_names_are_escaped_and_cut() -> None:
    name = 'a"]\n%%{init}%% <b>`x`</b>;#quot;\x1b[31m\u202e\u2028é'
    assert label_text(name) == ("a#34;#93; #37;#37;#123;init#125;#37;#37; #60;b#62;#96;x#96;#60;/b#62;#59;#35;quot#59;"
                                "#91;31m é")
    assert decoded(label_text("x" * 100)) == "x" * 59 + "…"
    assert gantt_text('T: 1; #2 %% "q"\nnext') == "T 1 2 q next"


def test_the_flowchart_has_a_node_per_task_an_edge_per_dependency_and_a_class_per_outcome() -> None:
    plan = parse_plan({"id": "F", "name": "f", "tasks": [
        {"id": "end", "name": "reserved word as an id"}, {"id": "a-b", "name": "n", "dependencies": ["end"]},
        {"id": "c_d", "name": "n", "dependencies": ["end", "a-b"]}]}, "test")
    plain = flowchart(plan)
    assert (plain.nodes, plain.edges, plain.node_ids) == (3, 3, {"end": "t0", "a-b": "t1", "c_d": "t2"})
    assert "classDef" not in plain.text and "<br/>" not in plain.text
    assert plain.text.splitlines()[4:] == ["    t0 --> t1", "    t0 --> t2", "    t1 --> t2"]
    colored = flowchart(plan, {"end": "approved", "a-b": "error (resumable)"})
    assert '    t1["a-b: n<br/>error (resumable)"]' in colored.text
    assert "    class t0 approved" in colored.text and "    class t1 erred" in colored.text
    assert "    class t2 notrun" in colored.text and "not run" in colored.text
    assert [style_of(s)[0] for s in ("approved-unverified", "running (coach)", "waiting for an answer", "pending",
                                     "conflict", "blocked", "skipped", "aborted", "failed")] == [
        "unverified", "running", "running", "notrun", "conflict", "blocked", "skipped", "aborted", "failed"]


def at(seconds: float) -> str:
    return datetime.fromtimestamp(T0 + seconds, UTC).isoformat(timespec="milliseconds")


def events(*rows: tuple[float, str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"time": at(seconds), "event": kind, **fields} for seconds, kind, fields in rows]


def spans(bars: list[Bar]) -> list[tuple[str, str, float, float]]:
    return [(bar.label, bar.kind, round(bar.start - T0, 3), round(bar.end - T0, 3)) for bar in bars]


def test_the_timeline_of_a_task_from_its_trace() -> None:
    trace = events(
        (0, "initialize", {}), (1, "player_start", {"turn": 1}),  # an older run (before `run --fresh`)
        (100, "initialize", {}), (101, "player_start", {"turn": 1}),
        (110, "session_end", {"role": "player", "turn": 1}), (111, "player_report", {"turn": 1}),
        (112, "coach_validate", {"turn": 1}), (113, "retry", {"role": "coach"}),
        (120, "session_end", {"role": "coach", "turn": 1}), (121, "contract_violation", {"turn": 1}),
        (125, "gate", {"turn": 1}), (126, "coach_decision", {"turn": 1}),
        (130, "player_start", {"turn": 2}), (135, "question_asked", {"turn": 2, "question_id": "q1"}),
        (200, "question_answered", {"question_id": "q1"}),
        (201, "player_start", {"turn": 2}), (210, "player_start", {"turn": 2}),  # killed, resumed at the node
        (220, "player_report", {"turn": 2}), (222, "coach_validate", {"turn": 2}),
        (230, "coach_decision", {"turn": 2}), (233, "finalize", {}), (240, "merge", {"merged": True}),
        (241, "usage_limit", {}),
    )
    assert spans(task_bars(trace, now=T0 + 999)) == [
        ("P1", "player", 101, 110), ("C1", "coach", 112, 120), ("G", "gate", 120, 125), ("P2", "player", 130, 135),
        ("Q", "wait", 135, 200), ("P2", "player", 201, 210), ("P2", "player", 210, 220),
        ("C2", "coach", 222, 230), ("merged", "merged", 240, 240)]


def test_what_is_still_open_runs_until_now_and_skips_are_milestones() -> None:
    waiting = events((0, "initialize", {}), (1, "player_start", {"turn": 1}),
                     (5, "question_asked", {"question_id": "q"}))
    assert spans(task_bars(waiting, now=T0 + 50)) == [("P1", "player", 1, 5), ("Q", "wait", 5, 50)]
    running = events((0, "initialize", {}), (1, "coach_validate", {"turn": 3}), (2, "tool", {}))
    assert spans(task_bars(running, now=T0 + 9)) == [("C3", "coach", 1, 9)]
    assert spans(task_bars(events((3, "skipped", {})), now=T0)) == [("skipped", "skipped", 3, 3)]
    assert task_bars([{"time": "garbage", "event": "player_start"}], now=T0) == []


def test_usage_limit_pauses_from_the_feature_trace() -> None:
    trace = events((50, "usage_limit", {"until": T0 + 300}), (60, "usage_limit", {"until": T0 + 400}),
                   (350, "usage_limit_over", {}), (500, "usage_limit", {"until": T0 + 900}))
    assert spans(pause_bars(trace, now=T0 + 600)) == [("paused", "pause", 50, 350), ("paused", "pause", 500, 600)]


def test_the_gantt_chart_stays_within_mermaids_size_limit_for_a_big_run() -> None:
    sections = [(f"TASK-{i:03d}", [Bar(f"P{k}", "player", T0 + i + k * 60, T0 + i + k * 60 + 50) for k in range(21)]
                 + [Bar("merged", "merged", T0 + 2000, T0 + 2000)]) for i in range(40)]
    text = gantt("FEAT-001 - what ran when (UTC)", sections)
    assert len(text) < 50_000 and text.count("21 sessions") == 40 and text.count(":milestone") == 40
    small = gantt("F", sections[:2])
    assert small.count(" :") == 44 and "sessions" not in small
    assert "    P0 :2026-01-02 03:04:05.000, 2026-01-02 03:04:55.000" in small
    huge = gantt("F", [(f"T{i}", [Bar("x", "wait", T0, T0)]) for i in range(MAX_GANTT_BARS + 3)])
    assert huge.count(" :crit, ") == MAX_GANTT_BARS
    assert huge.rstrip().endswith("3 more bars left out (mermaid's size limit)")
    assert "2026-01-02 03:04:05.000, 2026-01-02 03:04:05.001" in huge  # a zero-length bar is drawn 1 ms long


def test_a_trace_line_cut_short_by_a_kill_is_left_out(tmp_path: Path) -> None:
    trace.append(tmp_path, "F", "T", {"event": "player_start", "turn": 1})
    with (trace.runs_dir(tmp_path, "F", "T") / "trace.jsonl").open("a") as out:
        out.write('{"event": "player_rep\n[1]\n')
    trace.append(tmp_path, "F", None, {"event": "usage_limit"})
    assert [e["event"] for e in trace.read(tmp_path, "F", "T")] == ["player_start"]
    assert [e["event"] for e in trace.read(tmp_path, "F", None)] == ["usage_limit"]


def test_a_held_task_is_an_error_by_how_it_was_held_never_by_its_reason_text() -> None:
    held = {"A": "error: RuntimeError: boom", "B": "errors elsewhere: waits for A", "C": "interrupted"}
    outcomes = run_outcomes({}, held, ["A", "B", "C"], errored={"A"})
    assert outcomes == {"A": "error (resumable)", "B": "not finished", "C": "not finished"}
