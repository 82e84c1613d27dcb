"""What a run writes under `.autobuild/runs/<FEAT>` (reports, report.html, the PR body, the pause record, pictures)
goes through repo/run_files.py: a symlink a repository commits there, or one swapped in mid-run (`.autobuild`
itself, the feature's folder, a task's folder, the file), is refused and nothing is written outside the run."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest

from agents.limits import Pause
from agents.stream import Transcript, _opened_at
from orchestrator.errors import InputError
from orchestrator.gate.cache import CACHE_NAME, GateCache
from orchestrator.repo import run_files
from orchestrator.store import traces
from orchestrator.store.pause import pause_path, read_pause, write_pause
from orchestrator.store.traces import runs_dir
from orchestrator.views import html_report, reports
from orchestrator.views.pr_body import write_body

FEATURE = "FEAT-001"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "id_rsa").write_text("SECRET KEY\n")
    return folder


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return root


def _plant(repo: Path, outside: Path, where: str) -> None:
    """A link planted where a run writes: `.autobuild` out, the feature's or a task's folder out, or a report."""
    if where == ".autobuild":
        (repo / ".autobuild").symlink_to(outside, target_is_directory=True)
        return
    (repo / ".autobuild" / "runs").mkdir(parents=True)
    if where == "feature":
        runs_dir(repo, FEATURE).symlink_to(outside, target_is_directory=True)
    elif where == "task":
        runs_dir(repo, FEATURE).mkdir()
        runs_dir(repo, FEATURE, "TASK-001").symlink_to(outside, target_is_directory=True)
    else:
        runs_dir(repo, FEATURE, "TASK-001").mkdir(parents=True)
        (runs_dir(repo, FEATURE, "TASK-001") / reports.REPORT_NAME).symlink_to(outside / "id_rsa")
        (runs_dir(repo, FEATURE) / reports.REPORT_NAME).symlink_to(outside / "id_rsa")
        (runs_dir(repo, FEATURE) / html_report.REPORT_HTML).symlink_to(outside / "id_rsa")


@pytest.mark.parametrize("where", [".autobuild", "feature", "task", "file"])
def test_no_report_is_written_through_a_link_planted_in_the_runs_folder(repo: Path, outside: Path,
                                                                      where: str) -> None:
    _plant(repo, outside, where)
    writes = [lambda: reports.write(runs_dir(repo, FEATURE, "TASK-001") / reports.REPORT_NAME, "# task\n"),
              lambda: reports.write(runs_dir(repo, FEATURE, "TASK-001") / "feedback-turn-1.md", "# feedback\n")]
    if where != "task":
        writes += [lambda: reports.write(runs_dir(repo, FEATURE) / reports.REPORT_NAME, "# feature\n"),
                   lambda: html_report.write(runs_dir(repo, FEATURE) / html_report.REPORT_HTML, "<html>")]
    for write in writes:
        if where == "file":
            write()  # a link at the file's own name is replaced by the file (a temporary file renamed over it)
            continue
        with pytest.raises(InputError, match="symlink") as refused:
            write()
        assert "\n" not in str(refused.value)
    if where == "file":
        assert not any(p.is_symlink() for p in runs_dir(repo, FEATURE).rglob("*"))
    assert sorted(p.name for p in outside.iterdir()) == ["id_rsa"]
    assert (outside / "id_rsa").read_text() == "SECRET KEY\n"


def test_a_report_is_written_and_replaced_in_the_run_folder(repo: Path) -> None:
    path = reports.write(runs_dir(repo, FEATURE, "TASK-001") / reports.REPORT_NAME, "# task\n")
    assert path.read_text() == "# task\n"
    reports.note_replacement(path, ["TASK-001a", "TASK-001b"], 0.5)
    reports.note_replacement(path, ["TASK-001a", "TASK-001b"], 0.5)
    assert path.read_text().count("## Replaced") == 1


def test_the_pull_request_body_never_carries_a_linked_report(repo: Path, outside: Path) -> None:
    """The body is published: an AUTO-RUN.md linked to a secret is refused, not read into it."""
    _plant(repo, outside, "file")
    with pytest.raises(InputError, match="symlink"):
        write_body(repo, FEATURE, ["TASK-001"], {}, {})
    assert not (runs_dir(repo, FEATURE) / "pr-body.md").exists()


def test_the_pull_request_body_is_written_beside_the_report(repo: Path) -> None:
    reports.write(runs_dir(repo, FEATURE) / reports.REPORT_NAME, "# AUTO-RUN: FEAT-001\n")
    body, report = write_body(repo, FEATURE, ["TASK-001"], {}, {})
    assert report.startswith("# AUTO-RUN") and body.parent == runs_dir(repo, FEATURE) and body.is_file()


def test_the_pause_record_replaces_a_planted_link_and_leaves_its_target(repo: Path, outside: Path) -> None:
    path = pause_path(repo, FEATURE)
    path.parent.mkdir(parents=True)
    path.symlink_to(outside / "id_rsa")
    pause = Pause(until=time.time() + 60, reason="limit", since=time.time(), kind="limit")
    write_pause(path, pause, in_run=True)
    assert not path.is_symlink() and read_pause(path) == pause
    assert (outside / "id_rsa").read_text() == "SECRET KEY\n"
    write_pause(path, None, in_run=True)
    assert not path.exists() and (outside / "id_rsa").exists()


def test_the_pause_record_is_not_written_or_removed_through_a_linked_feature_folder(repo: Path,
                                                                                     outside: Path) -> None:
    _plant(repo, outside, "feature")
    (outside / "usage-limit.json").write_text("theirs\n")
    with pytest.raises(InputError, match="symlink"):
        write_pause(pause_path(repo, FEATURE), Pause(until=time.time() + 60, reason="x", since=time.time()),
                    in_run=True)
    with pytest.raises(InputError, match="symlink"):
        write_pause(pause_path(repo, FEATURE), None, in_run=True)
    assert sorted(p.name for p in outside.iterdir()) == ["id_rsa", "usage-limit.json"]


def test_autobuild_as_a_file_refuses_a_report_in_one_line(repo: Path) -> None:
    (repo / ".autobuild").write_text("not a folder")
    with pytest.raises(InputError, match="a symlink or a file") as refused:
        reports.write(runs_dir(repo, FEATURE) / reports.REPORT_NAME, "# feature\n")
    assert "\n" not in str(refused.value) and (repo / ".autobuild").read_text() == "not a folder"


def test_only_a_run_folder_is_written_through_it(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a file of a run"):
        run_files.write(tmp_path / "elsewhere.md", "x")


def test_a_transcript_is_not_written_through_a_link_planted_in_the_runs_folder(repo: Path, outside: Path) -> None:
    """Session transcripts (agents/stream.py, which can't use the orchestrator's resolver) check their folder for
    links before they make it, and pin it: the same refusal, nothing made or written outside."""
    _plant(repo, outside, "feature")
    with pytest.raises(OSError, match="symlink on the transcript's path"):
        Transcript(runs_dir(repo, FEATURE, "TASK-001") / "turn-1-player.jsonl")
    assert sorted(p.name for p in outside.iterdir()) == ["id_rsa"]


def test_a_transcript_keeps_to_its_folder_when_a_link_is_swapped_in_later(repo: Path, outside: Path) -> None:
    folder = runs_dir(repo, FEATURE, "TASK-001")
    transcript = Transcript(folder / "turn-1-player.jsonl")
    transcript.write({"first": 1})
    folder.rename(folder.with_name("moved"))
    folder.symlink_to(outside, target_is_directory=True)
    transcript.write({"second": 2})
    transcript.close()
    assert sorted(p.name for p in outside.iterdir()) == ["id_rsa"]
    assert len((folder.with_name("moved") / "turn-1-player.jsonl").read_text().splitlines()) == 2


def test_a_transcript_folder_opened_elsewhere_than_its_name_is_refused(repo: Path, outside: Path) -> None:
    """The race between the transcript's link check and its open: whatever folder the open reached, it is used only
    when it is the one the path names. A link swapped in for the check-to-open moment and swapped back leaves the
    path clean by name, with the open at `outside`: refused by where the descriptor is, not by the name."""
    folder = runs_dir(repo, FEATURE, "TASK-001")
    folder.mkdir(parents=True)
    opened = os.open(outside, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(OSError, match="symlink on the transcript's path"):
            _opened_at(opened, folder)
        _opened_at(opened, outside)  # the folder it is
    finally:
        os.close(opened)


def test_a_trace_linked_out_of_the_run_is_not_read(repo: Path, outside: Path) -> None:
    """The feature report reads traces (and a pull request carries the report): a committed link in a trace's place
    reads as no trace, never as the file it points at."""
    (outside / "events.jsonl").write_text('{"event": "from outside"}\n')
    folder = runs_dir(repo, FEATURE, "TASK-001")
    folder.mkdir(parents=True)
    (folder / "trace.jsonl").symlink_to(outside / "events.jsonl")
    assert traces.read(repo, FEATURE, "TASK-001") == []
    (folder / "trace.jsonl").unlink()
    (folder / "trace.jsonl").write_text('{"event": "ours"}\n')
    assert traces.read(repo, FEATURE, "TASK-001") == [{"event": "ours"}]


def _hard_linked(outside: Path, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.link(outside / "id_rsa", path)
    return path


def test_a_hard_link_planted_at_a_run_file_is_replaced_never_written_through(repo: Path, outside: Path) -> None:
    """A hard link is no symlink: O_NOFOLLOW opens it. Every run file is written by a temporary file renamed over
    its name (reports, the page, the PR body, the pause record), and an appended one (a trace, a transcript) is
    made anew when its name has another link: the file outside keeps its bytes, the run's file has the run's."""
    task = runs_dir(repo, FEATURE, "TASK-001")
    written = {
        _hard_linked(outside, task / reports.REPORT_NAME): lambda p: reports.write(p, "# task\n"),
        _hard_linked(outside, runs_dir(repo, FEATURE) / reports.REPORT_NAME): lambda p: reports.write(p, "# f\n"),
        _hard_linked(outside, runs_dir(repo, FEATURE) / html_report.REPORT_HTML): lambda p: html_report.write(
            p, "<html>"),
        _hard_linked(outside, pause_path(repo, FEATURE)): lambda p: write_pause(
            p, Pause(until=time.time() + 60, reason="x", since=time.time()), in_run=True),
        _hard_linked(outside, task / "trace.jsonl"): lambda p: traces.append(repo, FEATURE, "TASK-001",
                                                                             {"event": "ours"}),
    }
    for path, write in written.items():
        write(path)
        assert path.stat().st_nlink == 1 and "SECRET" not in path.read_text(), path.name
    transcript = Transcript(_hard_linked(outside, task / "turn-1-player.jsonl"))
    transcript.write({"line": 1})
    transcript.close()
    assert "SECRET" not in (task / "turn-1-player.jsonl").read_text()
    assert (outside / "id_rsa").read_text() == "SECRET KEY\n" and (outside / "id_rsa").stat().st_nlink == 1
    assert not [p for p in runs_dir(repo, FEATURE).rglob("*.tmp")]


def test_a_trace_appends_to_its_own_file(repo: Path) -> None:
    traces.append(repo, FEATURE, "TASK-001", {"event": "one"})
    traces.append(repo, FEATURE, "TASK-001", {"event": "two"})
    assert [e["event"] for e in traces.read(repo, FEATURE, "TASK-001")] == ["one", "two"]


def test_the_gate_cache_is_written_as_a_run_file(repo: Path, outside: Path) -> None:
    """`.autobuild/runs/gate-cache.json`: a hard link at its name is replaced, a linked runs folder refused."""
    async def passing() -> Any:
        return {"passed": True, "summary": "1 passed"}

    cached = _hard_linked(outside, repo / ".autobuild" / "runs" / CACHE_NAME)
    asyncio.run(GateCache.for_repo(repo).run("key", passing))
    assert '"key"' in cached.read_text() and (outside / "id_rsa").read_text() == "SECRET KEY\n"
    cached.unlink()
    (repo / ".autobuild" / "runs").rmdir()
    (repo / ".autobuild" / "runs").symlink_to(outside, target_is_directory=True)
    with pytest.raises(InputError, match="symlink"):
        asyncio.run(GateCache.for_repo(repo).run("key", passing))
    assert sorted(p.name for p in outside.iterdir()) == ["id_rsa"]
