"""The tests are the spec, for one judged tree: what became of every test that passed on the commit it is judged
against (gate/spec/accounting.py), the base's tests run on its code with the base's test side
(gate/prepare/clean_room.py, gate/spec/overlay.py), the tamper screen on what it added (gate/spec/screen.py) and on its
code (gate/spec/code_screen.py), tests inside code files (gate/spec/inline_tests.py) and ids that shift
(gate/spec/shifted.py), gathered as evidence of the one verdict the gate service returns (gate/verdict.py); a monorepo's
packages each accounted the same way in their folders (gate/spec/package_accounting.py)."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from orchestrator.facts import Acceptance, GateResult, Observation, PackageGate, TestChange
from orchestrator.gate import verdict
from orchestrator.gate.choose import base_command
from orchestrator.gate.observe import reads
from orchestrator.gate.prepare import clean_room
from orchestrator.gate.spec import (
    accounting,
    code_screen,
    inline_tests,
    new_tests,
    overlay,
    oversized,
    package_accounting,
    screen,
    shifted,
    test_files,
)
from orchestrator.processes import Completed
from orchestrator.repo.git import GitRepo


@dataclass
class SpecCheck:
    """The accounting of one repository's gate: it runs trees through the service's own callables."""

    repo: GitRepo
    tree_run: Callable[[str, str, Path], Awaitable[GateResult | None]]
    """(commit, command, near): the command's run on that commit's tree, remembered (Gates.tree_run)."""
    run_in: Callable[[str, Path, Mapping[str, str]], Awaitable[GateResult]]
    """(command, worktree, extra variables): one sandboxed run, not remembered (an overlay's)."""
    set_up: Callable[[Path], Awaitable[Completed | None]]
    run_package_in: Callable[[PackageGate, Path, Mapping[str, str]], Awaitable[GateResult]]
    """(package, worktree, extra variables): a monorepo package's command in its folder, not remembered."""
    _overlaid: dict[tuple[str, str, str], dict[str, str]] = field(default_factory=dict)
    _on_base: dict[tuple[str, str, str], new_tests.Shown | None] = field(default_factory=dict)
    _diffs: dict[tuple[str, str, str], tuple[accounting.TreeDiff, dict[str, str]]] = field(default_factory=dict)

    async def account(self, worktree: Path, command: str, result: Observation, against: str,
                      accepted: Sequence[Acceptance], *, unstable: Sequence[str] = ()) -> verdict.Accounted | None:
        """What became of every test that passed on `against`'s tree in `result` (None: no run of that tree)."""
        base = await self.tree_run(against, command, worktree)
        if base is None:
            return None
        base_files = await self.repo.files_at(against)
        diff, texts = await self._tree_diff(worktree, command, against, base_files,
                                            accounting.test_hosts(base, base_files))
        diff = dataclasses.replace(diff, reads=reads.data_read(base, base_files))
        room = await clean_room.plan(self.repo, worktree, against, command)
        found = await self._expectations(worktree, command, base, against, diff=diff, base_files=base_files, room=room)
        expectations, elsewhere = clean_room.split(found, overlay.judged_by(base, diff.test_files_changed, base_files,
                                                                                   diff.reads))
        every_unstable = {*(base.get("unstable") or []), *unstable}
        changes = accounting.account(base, result, diff, base_files, expectations=expectations,
                                     unstable=every_unstable)
        changes += clean_room.changes(base, result, elsewhere, room, base_files, accepted=accepted,
                                      unstable=every_unstable)
        screened, unverified = await self._screened(worktree, against, diff, texts)
        screened += accounting.new_only_skipped(base, result)
        code = await self._code(worktree, against, diff)
        judged = accounting.accept([*changes, *screened, *code], accepted, diff.test_files_changed, diff.reads)
        self._diffs[(await self.repo.head(worktree), against, command)] = (diff, texts)
        return verdict.Accounted(tuple([*changes, *screened, *code]), tuple(diff.test_files_changed),
                                 tuple(unverified), await self._case_diff(judged, against, diff, texts),
                                 _reads(diff))

    async def new_tests_in_packages(self, worktree: Path, command: str, against: str, kind: str, *,
                                    runs: Sequence[tuple[PackageGate, Observation]]) -> new_tests.Finding | None:
        """The new-tests rule in each monorepo package's folder (its run, its tests, its command), once per commit,
        base, kind and package, with the tree's diff `account_packages` read: the first package that breaks it."""
        head = await self.repo.head(worktree)
        if (read := self._diffs.get((head, against, command))) is None:
            return None
        diff, texts = read
        for package, run in runs:
            key = (head, against, f"{kind}\0{package['path']}\0{package['command']}")
            if key not in self._on_base:
                self._on_base[key] = await new_tests.check(
                    self.repo, worktree, against, kind, result=run, diff=diff, texts=texts, folder=package["path"],
                    run_in=functools.partial(self.run_package_in, package),
                    set_up=self.set_up)
            if (shown := self._on_base[key]) is not None and shown.finding is not None:
                return shown.finding
        return None

    async def new_tests(self, worktree: Path, command: str, result: Observation, against: str,
                        kind: str) -> new_tests.Finding | None:
        """Whether the task's new tests can fail (gate/spec/new_tests.py): run on the base's code once per commit, base,
        kind and command, with the tree's diff `account` read (None before it)."""
        head = await self.repo.head(worktree)
        key = (head, against, f"{kind}\0{command}")
        if key not in self._on_base:
            if (read := self._diffs.get((head, against, command))) is None:
                return None
            diff, texts = read
            self._on_base[key] = await new_tests.check(
                self.repo, worktree, against, kind, result=result, diff=diff, texts=texts,
                run_in=lambda place, extra: self.run_in(command, place, extra), set_up=self.set_up)
        shown = self._on_base[key]
        return shown.finding if shown is not None else None

    async def failing_on_base(self, worktree: Path, against: str, kind: str) -> int | None:
        """How many of the task's new tests failed on the base's code in the runs `new_tests` (or a monorepo's
        packages) made for this commit, base and kind (None: none ran, or the runner named no test)."""
        head = await self.repo.head(worktree)
        counts = [shown.failing for (sha, base, what), shown in self._on_base.items()
                  if sha == head and base == against and what.split("\0")[0] == kind
                  and shown is not None and shown.failing is not None]
        return sum(counts) if counts else None

    async def account_packages(self, worktree: Path, command: str, against: str, *,
                               runs: Sequence[tuple[PackageGate, GateResult]],
                               accepted: Sequence[Acceptance]) -> verdict.Accounted:
        """A monorepo's run accounted package by package as the top is: each package's run against its
        base run (ids and files relative to its folder, named back with its path), its base tests run in its folder
        of the clean room (the task's code with the base's test side), and the tamper screen on every test file."""
        every = await self.repo.files_at(against)
        hosts = frozenset(package_accounting.joined(package["path"], host) for package, _ in runs if package["base"]
                          for host in accounting.test_hosts(package["base"],
                                                            package_accounting.local_files(package["path"], every)))
        diff, texts = await self._tree_diff(worktree, command, against, every, hosts)
        changes: list[TestChange] = []
        unverified: list[str] = []
        read_in_repo: dict[str, frozenset[str]] = {}
        room = await clean_room.plan(self.repo, worktree, against, command)  # the base's test side everywhere
        for package, run in runs:
            folder, base = package["path"], package["base"]
            if base is None:
                continue
            local, files = package_accounting.local_diff(diff, folder), package_accounting.local_files(folder, every)
            local = dataclasses.replace(local, reads=reads.data_read(base, files))
            read_in_repo.update(reads.in_repo(local.reads, folder))
            found = await self._expectations(worktree, package["command"], base, against, diff=local,
                                             base_files=files, package=package, room=room)
            expectations, elsewhere = clean_room.split(found, overlay.judged_by(base, local.test_files_changed, files,
                                                                                local.reads))
            unstable = base.get("unstable") or []
            changes += package_accounting.named_in_repo([*accounting.account(
                base, run, local, files, expectations=expectations, unstable=unstable), *clean_room.changes(
                base, run, elsewhere, room, files, accepted=accepted, unstable=unstable)], folder)
            changes += package_accounting.named_in_repo(accounting.new_only_skipped(base, run), folder)
        screened, flagged = await self._screened(worktree, against, diff, texts)
        self._diffs[(await self.repo.head(worktree), against, command)] = (diff, texts)
        diff = dataclasses.replace(diff, reads=read_in_repo)
        code = await self._code(worktree, against, diff)
        judged = accounting.accept([*changes, *screened, *code], accepted, diff.test_files_changed, diff.reads)
        return verdict.Accounted(tuple([*changes, *screened, *code]), tuple(diff.test_files_changed),
                                 (*flagged, *unverified), await self._case_diff(judged, against, diff, texts),
                                 _reads(diff))

    async def _code(self, worktree: Path, against: str, diff: accounting.TreeDiff) -> list[TestChange]:
        """The code screen's hits, and every file the gate reads that the task made too large to read
        (gate/spec/oversized.py)."""
        changed = {*diff.added, *diff.modified, *(new for new, _ in diff.renamed.values())}
        read = [path for path in changed if code_screen.read_by_gate(path) or path in diff.hosts]
        return [*code_screen.changes(await code_screen.hits(self.repo, worktree, against, diff)),
                *await asyncio.to_thread(oversized.changes, worktree, read)]

    async def _tree_diff(self, worktree: Path, command: str, against: str, base_files: Sequence[str],
                         hosts: frozenset[str] = frozenset()) -> tuple[accounting.TreeDiff, dict[str, str]]:
        """How the worktree's tree differs from `against`'s, and the tree's text of every test file it added or
        changed (read once, off the event loop); `hosts`: files the base's passing ids name (accounting.test_hosts)."""
        renamed, deleted, modified, added = accounting.parse_name_status(await self.repo.name_status(worktree, against))
        new_of = {old: new for old, (new, _) in renamed.items()}
        touched = sorted({*deleted, *modified, *added, *new_of.values()})
        texts = await asyncio.to_thread(read_texts, worktree, [p for p in touched
                                                               if test_files.is_test_file(p) or p in hosts])
        config = {}
        from_base = set(base_command.config_files(command)) - {"package.json"}  # what runs comes from the base
        for path in touched:
            if path in from_base:
                continue
            if test_files.is_runner_config(path) or path.endswith("_test.go"):
                manifest = path.endswith("package.json")
                before = await self.repo.show_file(against, path) if manifest else None
                after = (await asyncio.to_thread(read_texts, worktree, [path])).get(path) if manifest else None
                line = test_files.config_line(path, await self.repo.patch_of(worktree, against, path), before, after)
                if line is not None:
                    config[path] = line
        names = {old: texts[new_of.get(old, old)] for old in {*modified, *renamed} if new_of.get(old, old) in texts}
        inherited = {**await self._inherited(worktree, against, base_files, {*deleted, *modified, *renamed}),
                     **await self._go_homes(worktree, against, base_files, set(touched) | set(renamed))}
        return accounting.TreeDiff(renamed=renamed, deleted=frozenset(deleted), modified=frozenset(modified),
                                   added=frozenset(added), config_lines=config, names=names, hosts=hosts,
                                   inherited=inherited), texts

    async def _inherited(self, worktree: Path, against: str, base_files: Sequence[str], changed: set[str]
                         ) -> dict[str, str]:
        """The Python tests collected files inherit from a support module the tree changed (test_files.
        inherited_tests), read from the base (an unchanged file from the worktree, off the event loop)."""
        modules = sorted(path for path in changed if path.endswith(".py") and test_files.is_test_file(path)
                         and not test_files.is_collected_python(path))
        if not modules:
            return {}
        support = {path: await self.repo.show_file(against, path) or "" for path in modules}
        if not any(test_files.test_methods(text) for text in support.values()):  # a conftest.py's fixtures
            return {}
        collected = [path for path in base_files if test_files.is_collected_python(path)]
        return test_files.inherited_tests(support, await self._base_texts(worktree, against, collected, changed))

    async def _go_homes(self, worktree: Path, against: str, base_files: Sequence[str], changed: set[str]
                        ) -> dict[str, str]:
        """Which base `_test.go` file defines each Go test of a folder whose test files the tree changed
        (test_files.go_test_homes): a test is named, accepted and shown by its own file, not its package's first."""
        folders = {PurePosixPath(path).parent for path in changed if path.endswith("_test.go")}
        files = [path for path in base_files if path.endswith("_test.go") and PurePosixPath(path).parent in folders]
        if len(files) < 2:  # nothing is defined outside a folder's first test file
            return {}
        return test_files.go_test_homes(await self._base_texts(worktree, against, files, changed))

    async def _base_texts(self, worktree: Path, against: str, files: Sequence[str], changed: set[str]
                          ) -> dict[str, str]:
        """The base's text of `files`: those the tree `changed` from `against`, the others from the worktree (the
        same text, read off the event loop)."""
        texts = await asyncio.to_thread(read_texts, worktree, [path for path in files if path not in changed])
        for path in files:
            if path in changed:
                texts[path] = await self.repo.show_file(against, path) or ""
        return texts

    async def _screened(self, worktree: Path, against: str, diff: accounting.TreeDiff,
                        texts: Mapping[str, str]) -> tuple[list[TestChange], list[str]]:
        """The tamper screen's hits, and changes to tests inside code files (gate/spec/inline_tests.py)."""
        new_of = {old: new for old, (new, _) in diff.renamed.items()}
        screened, unverified = await self._screen(against, diff.renamed, texts)
        screened += await inline_tests.inline_changes(self.repo, worktree, against, [
            (old, new_of.get(old, old)) for old in {*diff.modified, *diff.renamed}
            if not test_files.is_test_file(old) and old not in diff.hosts])
        return screened, unverified

    async def _case_diff(self, changes: Sequence[TestChange], against: str, diff: accounting.TreeDiff,
                         texts: Mapping[str, str]) -> str:
        """The parametrize / table diff of the unaccepted base tests whose ids are positions (gate/spec/shifted.py),
        from the changed test files that define them (a Go id names its package, not its file); `changes` and
        `diff` in the repository's paths (a monorepo package's named back with its folder)."""
        names = {shifted.function_of(change["test"]) for change in changes
                 if change["accepted"] is None and change["file"] and shifted.shifting(change["test"])}
        folders = {str(Path(str(change["file"])).parent) for change in changes if change["file"]}
        found = []
        for path in diff.test_files_changed if names else []:
            if path.endswith(".go") and str(Path(path).parent) not in folders:
                continue
            now = diff.renamed[path][0] if path in diff.renamed else path
            if path not in diff.deleted and now not in texts:
                continue
            found.append(shifted.case_diff(path, await self.repo.show_file(against, path), texts.get(now), names))
        return "".join(found)

    async def _expectations(self, worktree: Path, command: str, base: GateResult, against: str, *,
                            diff: accounting.TreeDiff, base_files: list[str],
                            package: PackageGate | None = None, room: clean_room.Room | None = None
                            ) -> dict[str, str]:
        """The base tests whose base version fails on the tree's code (gate/spec/overlay.py; a monorepo package's in its
        folder), or, with a clean `room`, every base test that fails there; once per commit, base and command: the
        merge queue gating the tree the coach's turn gated doesn't overlay it again."""
        if not diff.test_files_changed and (room is None or room.empty):
            return {}
        folder = package["path"] if package is not None else "."
        key = (await self.repo.head(worktree), against, f"{folder}\0{command}")
        if key not in self._overlaid:

            def run_in(place: Path, extra: dict[str, str]) -> Awaitable[GateResult]:
                if package is None:
                    return self.run_in(command, place, extra)
                return self.run_package_in(package, place, extra)

            self._overlaid[key] = await overlay.expectations(
                self.repo, worktree, base, against, diff.test_files_changed, base_files=base_files,
                run_in=run_in, set_up=self.set_up, folder=folder, read=diff.reads, room=room)
        return self._overlaid[key]

    async def _screen(self, against: str, renamed: Mapping[str, tuple[str, int]],
                      texts: Mapping[str, str]) -> tuple[list[TestChange], list[str]]:
        """The tamper screen on the test files the task added or changed (`texts`, by their path in the tree): a
        hit on a base test is a test change (the coach must accept it), and so is a hit on a test the task added
        (it can't fail: refused unless the coach accepts it, then the approval is unverified)."""
        old_of = {new: old for old, (new, _) in renamed.items()}
        changes: list[TestChange] = []
        unverified: list[str] = []
        for path, text in sorted(texts.items()):
            base_path = old_of.get(path, path)
            base_text = await self.repo.show_file(against, base_path)
            for hit in screen.screen(path, base_text, text):
                on_base = base_text is not None and (hit.test is None or screen.defines(base_text, hit.test))
                if on_base and hit.test is not None and "marker" in hit.what and path.endswith(".py"):
                    continue  # a skip or xfail on a base test: the run itself shows it (skipped, xfailed)
                if on_base:
                    test = f"{base_path}::{hit.test}" if hit.test else base_path
                    changes.append(TestChange(test=test, fate="weakened", detail=hit.describe(), file=base_path,
                                              accepted=None))
                else:
                    changes.append(TestChange(test=f"{path}::{hit.test}" if hit.test else path,
                                              fate=accounting.NEW_CANT_FAIL, file=path, accepted=None,
                                              detail=f"a test the task added has {hit.describe()}"))
        return changes, unverified


def _reads(diff: accounting.TreeDiff) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The base tests each changed file fed (gate/observe/reads.py), as plain data for the verdict's evidence."""
    return tuple((path, tuple(sorted(tests))) for path, tests in sorted(diff.reads.items()))


def read_texts(worktree: Path, paths: Sequence[str]) -> dict[str, str]:
    """The text of each of `paths` that is a file in `worktree`, none larger than the gate reads (gate/spec/
    oversized.py: a finding of its own when the task made it so); blocking: callers run it in a thread."""
    found = {}
    for path in paths:
        if (text := oversized.bounded_text(worktree / path)) is not None:
            found[path] = text
    return found
