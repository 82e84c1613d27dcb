"""What a feature's run recorded and how its branch stands now against the base (read-only: `review`, `land`).

The run's own record comes from its checkpoints: the base branch and the commit the feature branch started at
(`prepare_feature`), the gate decided and run on the base (`gate_baseline`), every task's result (the feature
thread, and `run TASK` threads of the same feature). The standing comes from git: whether the base moved since
(commits the feature branch lacks), which approved work the feature branch holds and whether it holds anything
no approval covers, and the user's checkout of the base (clean, untracked files a landing would overwrite).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.errors import InputError
from orchestrator.facts import SUCCESS, GateSetup, TaskResult
from orchestrator.plan.model import FeaturePlan
from orchestrator.repo.git import GitRepo, feature_branch
from orchestrator.store import inspection, outcomes
from orchestrator.store.checkpoints import CheckpointStore

_RETURN = "__return__"  # the channel under which LangGraph keeps a functional-API @task's return value


@dataclass
class RunRecord:
    """The run's own facts, from its checkpoints."""

    base_branch: str
    start_sha: str | None
    """Where the feature branch started (the base's head when the run created it)."""
    gate: GateSetup | None
    results: dict[str, TaskResult]
    table: dict[str, Any]
    """`inspection.feature_status`: one row per task (status, turn, last decision, cost…)."""


def _task_returns(store: CheckpointStore, thread_id: str) -> list[dict[str, Any]]:
    with store.reader() as reader:
        return [value for item in reader.timeline(thread_id) for _, channel, value in item.pending_writes or []
                if channel == _RETURN and isinstance(value, dict)]


def read_record(store: CheckpointStore, plan: FeaturePlan) -> RunRecord:
    """The run of `plan` in `store`; InputError (exit 2) when there is none."""
    if not store.exists():
        raise InputError(f"no checkpoint DB at {store}: {plan.id} has not run here (or pass the --db it ran with)")
    with store.reader() as reader:
        threads = outcomes.feature_threads(reader, plan.id)  # the feature's own run first, then `run TASK` ones
    if not threads:
        raise InputError(f"{plan.id} has no run in {store}: run it first, or pass the --db it ran with")
    returns = [value for thread in reversed(threads) for value in _task_returns(store, thread)]
    started = next((v for v in reversed(returns) if {"base_branch", "feature_sha"} <= v.keys()), None)
    gate = next((v for v in reversed(returns) if {"command", "source", "setup", "base"} <= v.keys()), None)
    results = outcomes.truth(store, plan.id).outcomes()  # the latest attempt, `run TASK` threads included
    table = inspection.feature_status(store, plan)
    base = str(started["base_branch"]) if started else plan.base_branch
    if not base:
        raise InputError(f"the run of {plan.id} recorded no base branch: set base_branch in the plan")
    decided = GateSetup(command=gate["command"], source=gate["source"], setup=gate["setup"],
                        base=gate["base"]) if gate else None
    return RunRecord(base_branch=base, start_sha=str(started["feature_sha"]) if started else None, gate=decided,
                     results=results, table=table)


@dataclass
class Standing:
    """The feature branch against its base now, and what would keep `land` from landing it."""

    feature_branch: str
    feature_sha: str | None
    base_branch: str
    base_sha: str | None
    behind: int = 0
    """Commits on the base the feature branch lacks: the base moved since the run."""
    landed: bool = False
    """The base already contains the feature branch."""
    approved: list[str] = field(default_factory=list)
    not_approved: dict[str, str] = field(default_factory=dict)
    lost: list[str] = field(default_factory=list)
    """Approved tasks whose merged work the feature branch no longer holds."""
    unapproved_commits: list[str] = field(default_factory=list)
    checkout: str | None = None
    """The user's worktree that has the base branch checked out."""
    dirty: list[str] = field(default_factory=list)
    overwritten: list[str] = field(default_factory=list)
    """Untracked files in that checkout that landing would overwrite."""

    def refusals(self, partial: bool, *, checkout: bool = True) -> list[str]:
        """Why `land` must refuse before trying (exit 2), each with what to do; empty: it may try. Without
        `checkout`, the user's checkout of the base is left out (`pr` lands nothing on it)."""
        name, base = self.feature_branch, self.base_branch
        if self.feature_sha is None:
            return [f"{name} does not exist (discarded, or never created): nothing to land"]
        if self.base_sha is None:
            return [f"the base branch {base} does not exist: create it, or fix base_branch in the plan"]
        found = []
        if self.lost:
            found.append(f"{name} no longer holds the approved work of {', '.join(self.lost)}: restore it")
        if self.unapproved_commits:
            found.append(f"{name} holds commits no task's approval covers ({'; '.join(self.unapproved_commits[:3])}"
                         f"{'…' if len(self.unapproved_commits) > 3 else ''}): remove them from it, or merge it"
                         " yourself")
        if not self.approved:
            found.append("no task is approved and merged yet: nothing to land")
        elif self.not_approved and not partial:
            left = ", ".join(f"{task} {status}" for task, status in self.not_approved.items())
            found.append(f"not every task is approved ({left}): {self.way_on()}, or pass --partial to land the"
                         f" approved ones ({', '.join(self.approved)})")
        if not checkout:
            return found
        if self.dirty:
            found.append(f"your checkout {self.checkout} of {base} has uncommitted changes"
                         f" ({', '.join(line[3:] for line in self.dirty[:5])}): commit or stash them first")
        if self.overwritten:
            found.append(f"untracked files in {self.checkout} would be overwritten by landing"
                         f" ({', '.join(self.overwritten[:5])}): move them away first")
        return found

    def way_on(self) -> str:
        """The command that takes the tasks not approved yet further, from where they stand."""
        feature = self.feature_branch.removeprefix("autobuild/")
        person = [task for task, status in self.not_approved.items() if status.split()[0] in ("blocked", "aborted")]
        if person and len(person) == len(self.not_approved):
            return (f"once a person has acted (`autobuild show {feature} {person[0]}` says what blocks it),"
                    f" `autobuild resume {feature} {' '.join(person)}` runs them again")
        return f"`autobuild resume {feature}` runs the failed and skipped ones again" + (
            f" (name the blocked or aborted ones to run them too: `resume {feature} {' '.join(person)}`)"
            if person else "")


def standing(repo: GitRepo, plan: FeaturePlan, record: RunRecord) -> Standing:
    """Where the feature branch and the base stand now (git only; writes nothing)."""
    branch = feature_branch(plan.id)
    tip = repo.rev(branch) if repo.has_branch(branch) else None
    base = repo.rev(f"refs/heads/{record.base_branch}") if repo.has_branch(record.base_branch) else None
    found = Standing(branch, tip, record.base_branch, base)
    if tip is None or base is None:
        return found
    found.behind = int(repo.read("rev-list", "--count", f"{tip}..{base}").stdout.strip() or 0)
    found.landed = repo.read("merge-base", "--is-ancestor", tip, base).ok
    for row in record.table["tasks"]:
        result = record.results.get(row["task"], {})
        if result.get("status") == "replaced":
            continue  # the tasks that replaced it have rows of their own, and decide
        if result.get("status") in SUCCESS and result.get("merged"):
            if repo.read("merge-base", "--is-ancestor", str(result.get("sha")), tip).ok:
                found.approved.append(row["task"])
            else:
                found.lost.append(row["task"])
        else:
            unmerged = " (not merged yet)" if result.get("status") in SUCCESS else ""
            found.not_approved[row["task"]] = f"{row['status']}{unmerged}"
    planned = {row["task"] for row in record.table["tasks"]}
    for task_id, result in record.results.items():  # the run merged it, but the plan no longer names it
        if task_id not in planned and result.get("status") in SUCCESS and result.get("merged"):
            ancestor = repo.read("merge-base", "--is-ancestor", str(result.get("sha")), tip).ok
            (found.approved if ancestor else found.lost).append(task_id)
    covered = {str(r.get("sha")) for r in record.results.values() if r.get("status") in SUCCESS and r.get("merged")}
    # An approved task lands as a fast-forward: its own commits (and its bring-ups) are covered by its approval.
    landed = set(repo.read("rev-list", *sorted(covered), f"^{base}").stdout.split()) if covered else set()
    for line in repo.read("rev-list", "--first-parent", "--parents", tip, f"^{base}").stdout.splitlines():
        sha, *parents = line.split()
        # A merge of an approved task, or of the base (yours, resolving a conflict: land verifies the result).
        merges_approved = sha in landed or (len(parents) == 2 and (
            parents[1] in covered or repo.read("merge-base", "--is-ancestor", parents[1], base).ok))
        if not merges_approved:
            found.unapproved_commits.append(f"{sha[:10]} {repo.read('log', '-1', '--format=%s', sha).stdout.strip()}")
    _check_checkout(repo, found, f"{base}...{tip}")
    return found


def _check_checkout(repo: GitRepo, found: Standing, changes: str) -> None:
    """The user's worktree of the base, if it has one checked out: uncommitted changes, and untracked files at
    paths the feature adds (git would refuse to overwrite them; ignored files it replaces)."""
    ref = f"refs/heads/{found.base_branch}"
    found.checkout = next((row["path"] for row in repo.worktree_list()
                           if row["branch"] == ref and Path(row["path"]).is_dir()), None)
    if found.checkout is None:
        return
    where = Path(found.checkout)
    status = repo.read("status", "--porcelain", "--untracked-files=no", cwd=where).stdout
    found.dirty = [line for line in status.splitlines() if line]
    added = set(repo.read("diff", "--name-only", "-z", "--diff-filter=A", changes).stdout.split("\0")) - {""}
    untracked = set(repo.read("ls-files", "--others", "--exclude-standard", "-z", cwd=where).stdout.split("\0"))
    found.overwritten = sorted(added & untracked)


def predicted_conflicts(repo: GitRepo, base: str, tip: str) -> list[str] | None:
    """Files a merge of `tip` into `base` would conflict in (git merge-tree, no worktree); None: unknown."""
    done = repo.read("merge-tree", "--write-tree", "--name-only", "--no-messages", base, tip)
    if done.returncode not in (0, 1):
        return None  # git older than 2.38, or another failure: no prediction
    return [line for line in done.stdout.splitlines()[1:] if line.strip()] if done.returncode == 1 else []
