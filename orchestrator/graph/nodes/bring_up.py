"""Conflict turns: when bringing an approved task up to the feature head conflicts, the player gets a turn in its
worktree with the merge in progress (markers in place, both sides described), then the coach and the gate as for
any turn. The merge is re-created from checkpointed facts (the task's head and the feature head being merged) at
the start of the turn, so a resumed turn sees exactly the same conflict."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from agents.bounded import read_text_bounded
from orchestrator.graph.context import RunContext
from orchestrator.graph.state import ConflictTurn, Stop, TaskState

_TASK_OF = re.compile(r"^autobuild\(([^)]+)\)")
_MARKERS = ("<<<<<<< ", ">>>>>>> ")
_MAX_DIFF = 3000


async def tasks_on(ctx: RunContext, head: str) -> set[str]:
    """The plan's tasks whose commits the feature branch's `head` holds (merged since it left the base), read
    from the commit subjects our own commits carry, so a resumed run knows them too."""
    log = (await ctx.repo.git("log", "--no-merges", "--format=%s", head, f"^refs/heads/{ctx.base_branch}", "--",
                              check=False)).stdout
    return {m.group(1) for line in log.splitlines() if (m := _TASK_OF.match(line))} & set(ctx.plan.task_ids())


def bring_up_message(task_id: str, feature_branch: str, head: str) -> str:
    return f"autobuild({task_id}): bring up to {feature_branch} ({head[:10]})"


def pending(state: TaskState) -> ConflictTurn | None:
    """The conflict this turn resolves, or None for an ordinary turn."""
    conflict = state.get("conflict")
    return conflict if conflict and conflict.get("turn") == state.get("turn") else None


async def describe(ctx: RunContext, worktree: Path, task_id: str, head: str, files: list[str]) -> str:
    """Both sides of each conflicted file: the task's own change, and the tasks that changed the file on the
    feature branch since the task started."""
    repo = ctx.repo
    fork = (await repo.git("merge-base", "HEAD", head, cwd=worktree)).stdout.strip()
    lines = [f"This turn resolves a merge conflict: the feature branch {ctx.feature_branch} moved on"
             f" ({head[:10]}) while your approved work waited to land, and merging it into your branch conflicts."
             " The merge is in progress in your worktree with conflict markers (<<<<<<< / ======= / >>>>>>>)"
             " in place. Edit the conflicted files so both sides' changes survive, remove every marker, run the"
             " tests, and report; never commit, abort or redo the merge yourself."]
    for path in files:
        log = (await repo.git("log", "--no-merges", "--format=%s", f"{fork}..{head}", "--", path, cwd=worktree,
                              check=False)).stdout
        others = sorted({m.group(1) for line in log.splitlines() if (m := _TASK_OF.match(line))} - {task_id})
        mine = (await repo.git("diff", f"{fork}..HEAD", "--", path, cwd=worktree, check=False)).stdout
        theirs = (await repo.git("diff", f"{fork}..{head}", "--", path, cwd=worktree, check=False)).stdout
        lines.append(f"\n{path}: changed on the feature branch by {', '.join(others) or 'an earlier merge'}.")
        lines.append(f"Your change to it:\n{_cut(mine)}\nTheir change to it:\n{_cut(theirs)}")
    return "\n".join(lines)


def _cut(diff: str) -> str:
    return diff if len(diff) <= _MAX_DIFF else diff[:_MAX_DIFF] + "\n… (diff truncated)"


async def recreate(ctx: RunContext, worktree: Path, task_id: str, conflict: ConflictTurn) -> None:
    """Put the merge back in progress, markers and all (the worktree is already at the task's checkpointed head)."""
    await ctx.repo.merge(worktree, conflict["head"], bring_up_message(task_id, ctx.feature_branch, conflict["head"]),
                         keep_conflicts=True)


CONFLICTED_FILE = 20_000_000
"""The most read of a conflicted file to look for markers: a larger one counts as one still holding them."""


def markers_left(worktree: Path, files: list[str]) -> list[str]:
    """The conflicted files that still hold conflict markers; one that can't be read (not a regular file, a link to
    /dev/zero, too large to read) counts as one that does: only a deleted file is a resolution without reading."""
    left = []
    for path in files:
        file = worktree / path
        if not file.exists() and not file.is_symlink():
            continue  # deleted: a resolution too
        try:
            text = read_text_bounded(file, CONFLICTED_FILE)
        except OSError:
            left.append(path)
            continue
        if any(line.startswith(_MARKERS) for line in text.splitlines()):
            left.append(path)
    return left


async def conclude(ctx: RunContext, worktree: Path, task_id: str, turn: int, conflict: ConflictTurn, *,
                   approved_sha: str) -> Stop | None:
    """After the player's conflict turn: commit the resolution as the merge it concludes, or, when markers are
    left, put the branch back at the approved work and stop the task as `conflict` (its branch kept)."""
    left = await asyncio.to_thread(markers_left, worktree, conflict["files"])
    if left:
        await ctx.repo.reset(worktree, approved_sha)
        return Stop(outcome="conflict", reason=f"merge conflict with {ctx.feature_branch} still unresolved after"
                                               f" conflict turn {turn}: markers left in {', '.join(left)}",
                    cause="merge_conflict")
    await ctx.repo.commit_merge(worktree, f"autobuild({task_id}): resolve conflicts with {ctx.feature_branch}"
                                          f" (turn {turn})")
    return None


def coach_note(state: TaskState) -> str:
    """What the coach is told about the turn it reviews."""
    conflict = pending(state)
    if conflict is None:
        return "No: an ordinary turn."
    return (f"Yes: this turn resolved a merge conflict with the feature branch ({conflict['head'][:10]}) in"
            f" {', '.join(conflict['files'])}. The diff is against that feature head: check that the other tasks'"
            " changes to those files survive alongside this task's, and that no conflict marker is left.")
