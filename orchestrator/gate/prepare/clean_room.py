"""The clean room: the task's code with the base's test side, where the base's tests give their verdict.

Every file the task added, changed, renamed or deleted that is on the test side (gate/prepare/sides.py: tests, their
support and data, any tool's configuration, dotfiles) is put back to the base's version or removed, and the mixed
manifests are rebuilt from the base's with the task's code-side keys (gate/prepare/manifests.py). The base's tests run
there (gate/spec/overlay.py runs it); a base test that passes in the task's tree and fails in the clean room passes
only with something the task added to the test side (a conftest.py, a preload, a mock, a runner option): it is
refused, naming those files, unless the coach accepted every one of them (or the test) by name. A task that
touched no test-side file has no clean room: its own tree is the clean room and nothing more runs."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.facts import Acceptance, Observation, TestChange, TestFate
from orchestrator.gate.observe.observed import green
from orchestrator.gate.prepare import manifests, sides, support
from orchestrator.gate.spec.accounting import file_of, parse_name_status
from orchestrator.repo import confined
from orchestrator.repo.git import GitRepo
from orchestrator.text import first_few

FATE: TestFate = "passes only with the task's test side"


@dataclass(frozen=True)
class Room:
    """What makes the clean room of one judged tree out of a checkout of it."""

    restore: tuple[str, ...] = ()
    """Test-side paths put back to the base's version (removed where the base has none)."""
    written: Mapping[str, str | None] = field(default_factory=dict)
    """Mixed manifests -> their clean text (None: removed)."""
    named: tuple[str, ...] = ()
    """The test-side files the task added or changed (a deleted one too), as a refusal names them."""

    @property
    def empty(self) -> bool:
        """The task touched no test-side file: its tree is the clean room."""
        return not self.named


async def plan(repo: GitRepo, worktree: Path, against: str, command: str | None) -> Room:
    """The clean room of the worktree's commit against `against`, for the gate's `command` (the files it names
    judge: they are on the test side)."""
    renamed, deleted, modified, added = parse_name_status(await repo.name_status(worktree, against))
    touched = sorted({*deleted, *modified, *added, *renamed, *(new for new, _ in renamed.values())})
    if not touched:
        return Room()
    base_files = frozenset(await repo.files_at(against))
    named_by_command, packages = sides.command_files(command, base_files), sides.python_packages(base_files)
    head = await repo.head(worktree)
    restore: list[str] = []
    written: dict[str, str | None] = {}
    code: list[str] = []
    for path in touched:
        side = sides.side_of(path, named_by_command, packages)
        if side == "test":
            restore.append(path)
        elif side == "code":
            code.append(path)
        elif side == "mixed":
            text, test_side = manifests.clean(path, await repo.show_file(against, path),
                                              await repo.show_file(head, path))
            if test_side:
                written[path] = text
    restore += sorted(await support.base_test_support(repo, against, code, base_files))
    return Room(restore=tuple(restore), written=written, named=tuple(sorted({*restore, *written})))


async def furnish(repo: GitRepo, place: Path, against: str, room: Room) -> None:
    """Make a checkout of the judged commit (a throwaway tree of the gate's) into the clean room."""
    await repo.restore_paths(place, against, room.restore, detached_ok=True)
    await asyncio.to_thread(_write, place, room.written)


def _write(place: Path, written: Mapping[str, str | None]) -> None:
    """The clean manifests, written by us: a committed link in their place is replaced, never followed."""
    for path, text in written.items():
        (place / path).unlink(missing_ok=True)
        if text is not None:
            confined.write_under(place, path, text, "the clean room's manifest")


def split(found: Mapping[str, str], owned: Iterable[str]) -> tuple[dict[str, str], dict[str, str]]:
    """The clean room's failures: (those of base tests whose own test files the task changed: changed
    expectations, the rest: tests that pass only with the task's test side)."""
    mine = set(owned)
    return ({test: why for test, why in found.items() if test in mine},
            {test: why for test, why in found.items() if test not in mine})


def changes(base: Observation, run: Observation, failing: Mapping[str, str], room: Room, base_files: Sequence[str], *,
            accepted: Sequence[Acceptance], unstable: Iterable[str] = ()) -> list[TestChange]:
    """A test change for each base test that passes in the task's tree and failed in the clean room (`failing`:
    test -> why), naming the test-side files the task added or changed; accepted when the coach's acceptances name
    every one of them."""
    if base.get("command") != run.get("command") or run["exit_code"] is None:
        return []  # as gate/spec/accounting.py: another command's run judges nothing here
    passing = set(run.get("passing") or [])
    if run["failing"] is None and green(run) and run["command"]:  # no ids: the run as a whole passed here
        passing.add(whole_run(run["command"]))
    skip = set(unstable)
    files = list(room.named)
    listed = first_few(files)
    reason = _accepted_all(files, accepted)
    return [TestChange(test=test, fate=FATE, file=file_of(test, base_files), accepted=reason,
                       detail=f"passes here but fails with the base's test side on this code ({why}); the task"
                              f" added or changed on the test side: {listed}")
            for test, why in sorted(failing.items()) if test in passing and test not in skip]


def whole_run(command: str) -> str:
    """The one "test" of a command whose runner names none: its whole run, judged by its exit status."""
    return f"{command} (the whole run: its runner names no test)"


def _accepted_all(files: Sequence[str], accepted: Sequence[Acceptance]) -> str | None:
    """The coach's reasons when its acceptances name every one of `files` (by path), else None."""
    reasons = {str(entry.get("test") or "").strip().removeprefix("./"): str(entry.get("reason") or "")
               for entry in accepted}
    if not files or any(path not in reasons for path in files):
        return None
    return "; ".join(dict.fromkeys(reasons[path] or "accepted by the coach" for path in files))
