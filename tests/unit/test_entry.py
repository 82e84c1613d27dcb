"""The process's entry (`autobuild`, `python -m orchestrator`): the collector is off only while modules load, on
for the command itself, and out of the teardown."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.cli import main as cli_main


@pytest.fixture
def collector() -> Iterator[list[str]]:
    """Every automatic collection's start, with a threshold of 1 so that any work the command does collects; the
    interpreter's collector is restored as it was."""
    seen: list[str] = []
    threshold, enabled = gc.get_threshold(), gc.isenabled()

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 0:  # the collector's own passes, not an explicit gc.collect()
            seen.append(phase)

    gc.callbacks.append(note)
    gc.set_threshold(1)
    try:
        yield seen
    finally:
        gc.callbacks.remove(note)
        gc.set_threshold(*threshold)
        gc.unfreeze()  # entry() froze this test process's objects, as it does a real process's at its end
        (gc.enable if enabled else gc.disable)()


def test_the_command_runs_with_the_collector_on_and_the_teardown_skips_it(
        sample_repo: Path, collector: list[str], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["autobuild", "validate", "FEAT-001", "--repo", str(sample_repo)])
    collector.clear()  # what the set-up collected
    code = cli_main.entry()
    during = len(collector)  # read before anything here allocates: the collector is on again from now on
    assert code == 0
    assert "gate:" in capsys.readouterr().out
    # Collections ran: the collector was on while `validate` worked (it is off only until its modules are in).
    assert during > 0
    assert gc.isenabled()
    assert gc.get_freeze_count() > 0  # what exists at the end is left out of the teardown's collections


def test_a_usage_error_still_leaves_the_collector_on(collector: list[str], monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["autobuild", "validate", "FEAT-001", "--repo", "/nonexistent/repo"])
    assert cli_main.entry() == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert gc.isenabled()


class _Finalized:
    """Garbage only the collector frees (it refers to itself), whose finalizer leaves a mark: as a stream's
    finalizer closes it or a store's rolls back."""

    def __init__(self, mark: Path) -> None:
        self.me = self
        self.mark = mark

    def __del__(self) -> None:
        self.mark.write_text("finalized", encoding="utf-8")


def test_what_the_command_left_in_cycles_is_finalized_before_the_teardown_is_spared(
        collector: list[str], tmp_path: Path) -> None:
    gc.collect()
    _Finalized(tmp_path / "mark.txt")
    cli_main._spare_the_teardown()
    assert (tmp_path / "mark.txt").read_text(encoding="utf-8") == "finalized"


def test_a_usage_error_still_finalizes_what_it_left_in_cycles(collector: list[str], monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    gc.collect()

    class _Exits(SystemExit):
        """argparse's exit, after leaving garbage in a cycle."""

    def parse_and_fail(*_args: object, **_kwargs: object) -> None:
        _Finalized(tmp_path / "mark.txt")
        raise _Exits(2)

    # argparse is the standard library's (the boundary), not our code: it refuses the command line.
    monkeypatch.setattr(sys, "argv", ["autobuild", "no-such-command"])
    monkeypatch.setattr("argparse.ArgumentParser.parse_args", parse_and_fail)
    with pytest.raises(_Exits):
        cli_main.entry()
    assert (tmp_path / "mark.txt").read_text(encoding="utf-8") == "finalized"
    assert gc.isenabled()
