"""Hidden acceptance tests: checked before a run, copied by the gate into a throwaway tree of its own, and redacted
from everything a run sends back.

A task whose plan says `hidden_tests: true` has acceptance tests the agents can't read. They are never in a task's
worktree nor in git's object store (a file in any branch's history could be read with `git show`): they stay
untracked files of the user's checkout, which the agents' sandbox can't read, and the gate copies them into a
detached worktree under `<feature>/_hidden/` (as unreadable to the agents), runs its command there in a sandbox
whose only writable places are that tree and a private tmp beside it, and removes both. The code under test can
print a file it reads: every line of a hidden file is redacted from the run's output and summary.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Protocol

from orchestrator.errors import InputError
from orchestrator.facts import GateResult, Observation
from orchestrator.gate.spec.accounting import file_of
from orchestrator.repo import confined
from orchestrator.repo.git import GitRepo

FOLDER = "_hidden"
"""Per feature, beside its worktrees: where the gate puts hidden tests in place (agents can't read it)."""
MAX_BYTES = 1_000_000
"""A hidden test file larger than this is refused (it is read whole, and every line of it is redacted)."""
REDACTED = "[redacted: a line of a hidden acceptance test]"
_SHORTEST_PART = 6
"""A hidden line at least this long is redacted wherever it appears in a line; a shorter one only as a whole
line (else `)` or `pass` would blank out the run)."""


class _Task(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def hidden_tests(self) -> bool: ...
    @property
    def acceptance_tests(self) -> list[str]: ...


class _Plan(Protocol):
    """A feature plan as far as hidden tests go (the plan package sits above the gate's)."""

    @property
    def tasks(self) -> Sequence[_Task]: ...


@dataclass(frozen=True)
class HiddenTests:
    """The hidden acceptance tests of a plan's tasks (paths relative to the repo), read from `root`."""

    root: Path
    by_task: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def of_plan(cls, root: Path, plan: _Plan) -> HiddenTests:
        return cls(root, {task.id: tuple(task.acceptance_tests) for task in plan.tasks if task.hidden_tests})

    def of(self, tasks: Iterable[str]) -> tuple[str, ...]:
        """The hidden tests of these tasks, each once, in plan order."""
        wanted = set(tasks)
        return tuple(dict.fromkeys(path for task, paths in self.by_task.items() if task in wanted for path in paths))

    @property
    def all(self) -> tuple[str, ...]:
        return self.of(self.by_task)

    def sources(self) -> tuple[Path, ...]:
        """Where each hidden test lives in the user's checkout (what no agent and no other gate run may read)."""
        return tuple(self.root / path for path in self.all)

    def read(self, paths: Sequence[str]) -> dict[str, bytes]:
        """Each file's bytes, read through the resolver (a link may not lead the copy out of the checkout);
        blocking: callers run it in a thread."""
        found = {}
        for path in paths:
            data = confined.read_under(self.root, path, "hidden acceptance test", limit=MAX_BYTES)
            if len(data) > MAX_BYTES:
                raise InputError(f"hidden acceptance test {path} is larger than {MAX_BYTES} bytes: keep it smaller")
            found[path] = data
        return found


def check(repo: GitRepo, plan: _Plan, *, sandboxed: bool) -> HiddenTests:
    """The plan's hidden tests, or InputError (one line, nothing written) when one can't stay hidden: missing
    from the checkout, a link out of it, in the history of any ref (`git show` would read it), or no sandbox to
    keep the agents' commands off it."""
    hidden = HiddenTests.of_plan(repo.root, plan)
    if not hidden.by_task:
        return hidden
    if not sandboxed:
        raise InputError("hidden acceptance tests need the agents' Bash sandbox (bubblewrap and socat), or an"
                         " agent's command could read them: install them (`autobuild doctor` says what is"
                         " missing), or set hidden_tests: false")
    for task, paths in hidden.by_task.items():
        for path in paths:
            what = f"task {task}: hidden acceptance test"
            resolved = confined.resolve_under(repo.root, path, what)
            if not resolved.is_file():
                raise InputError(f"{what} {path} is not a file in {repo.root}: write it there (untracked), or fix"
                                 " acceptance_tests")
            relative = PurePosixPath(resolved.relative_to(repo.root.resolve()).as_posix())
            if repo.read("rev-list", "-n", "1", "--all", "--", str(relative)).stdout.strip():
                raise InputError(f"{what} {path} is in the repository's history, where an agent could read it"
                                 " (git show): keep hidden tests untracked (list them in .git/info/exclude), or"
                                 " set hidden_tests: false to run them frozen")
    return hidden


def digest(contents: Mapping[str, bytes]) -> str:
    """What the hidden files add to a run's cache key: their paths and content, as a digest (never the text)."""
    hashed = hashlib.sha256()
    for path in sorted(contents):
        hashed.update(path.encode() + b"\0" + hashlib.sha256(contents[path]).digest())
    return hashed.hexdigest()


def secret_lines(contents: Iterable[bytes]) -> frozenset[str]:
    """The non-blank lines of the hidden files, stripped: what a run's output may not carry back."""
    return frozenset(line.strip() for data in contents
                     for line in data.decode("utf-8", errors="replace").splitlines() if line.strip())


def redact(text: str, secrets: frozenset[str]) -> str:
    """`text` with every line that is, or holds, a line of a hidden file replaced by REDACTED."""
    if not secrets or not text:
        return text
    long = [secret for secret in secrets if len(secret) >= _SHORTEST_PART]
    out = []
    for line in text.splitlines():
        stripped = line.strip()
        hit = stripped in secrets or any(secret in line for secret in long)
        out.append(REDACTED if hit else line)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def redact_result(result: GateResult, secrets: frozenset[str]) -> GateResult:
    """A gate result with its texts redacted (output, summary, what became of tests, skip reasons)."""
    if not secrets:
        return result
    redacted = result.copy()
    redacted["output"] = redact(result["output"], secrets)
    redacted["summary"] = redact(result["summary"], secrets)
    if result.get("skipped"):
        redacted["skipped"] = [redact(entry, secrets) for entry in result.get("skipped") or []]
    if result.get("test_changes"):
        redacted["test_changes"] = [change | {"detail": redact(change["detail"], secrets)}
                                    for change in result.get("test_changes") or []]
    if result.get("unverified"):
        redacted["unverified"] = [redact(entry, secrets) for entry in result.get("unverified") or []]
    if result.get("tampering"):
        redacted["tampering"] = [redact(entry, secrets) for entry in result.get("tampering") or []]
    return redacted


def failing_hidden(run: Observation, paths: Sequence[str]) -> list[str]:
    """What fails the gate in a run with the hidden tests in place: each failing test that lives in a hidden file;
    else, when the runner names passing tests and none of them is hidden, the hidden files themselves (they did not
    run: a collection error, or a command that doesn't collect them); a runner that names no passing test is judged
    by its exit status. Tests of other files are not judged here (the tree's own run judges them against the base)."""
    failing = [test for test in run["failing"] or [] if file_of(test, paths) is not None]
    if failing:
        return failing
    passing = run.get("passing")
    if passing is not None:
        return [] if any(file_of(test, paths) is not None for test in passing) else list(paths)
    return [] if run["exit_code"] == 0 else list(paths)


def place(tree: Path, contents: Mapping[str, bytes]) -> str | None:
    """Put each hidden file in `tree` (a throwaway worktree of the gate's own) through the resolver; why not, when
    the task's tree has a link leading out or a folder where one goes (never written through: blocking, callers
    run it in a thread)."""
    for path, data in contents.items():
        try:
            target = confined.resolve_under(tree, path, "hidden acceptance test")
            if target.is_dir():
                raise InputError(f"hidden acceptance test {path}: the task's tree has a folder there")
            confined.write_resolved(tree, target, data, "hidden acceptance test")
        except InputError as exc:
            return str(exc)
    return None
