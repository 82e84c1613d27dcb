"""`autobuild land FEAT [--squash] [--partial]`: the one command that moves a user's branch, only when asked.

In a throwaway detached worktree at the base's head (never the user's checkout): merge the feature branch (a
merge commit, or one squashed commit) with plain git, so the user's identity, hooks and signing apply; run the
run's gate on the result, judged like the run judged it (tests already red on the base don't block, new
failures do; a base that moved since the run is merged in by that same merge and its own red tests are
measured again); then move the base by compare-and-swap (repo/guard.py `land_ref`). Any failure moves nothing.
The run's reports stay out of the landed result (they stay in `.autobuild/runs/`, never committed since).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agents import reaper
from orchestrator.errors import InputError
from orchestrator.facts import Acceptance, AcceptedChange, GateResult, GateSetup, accepted_changes
from orchestrator.gate import NO_GATE, GateRequest, Gates, HiddenTests
from orchestrator.landing import hooks, journal, unverified
from orchestrator.landing.record import RunRecord, Standing, predicted_conflicts, read_record, standing
from orchestrator.plan.model import FeaturePlan, load_plan
from orchestrator.repo.git import GitRepo
from orchestrator.repo.guard import LandPermit, land_ref
from orchestrator.repo.lock import repo_lock
from orchestrator.settings import Settings
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.inspection import replanned

REPORTS = ".autobuild/runs"
"""The run's reports stay out of the user's branch: later runs rewrite them in the user's checkout, where they must
never be tracked files. Runs since `pr` commit none; feature branches of older runs still carry them."""


@dataclass
class Gate:
    """What checks the merged result: the command (None: `--verify none`) and where it came from."""

    command: str | None
    source: str
    setup: str | None
    base: GateResult | None
    """The run's own gate run on the base, when it still applies (same command, base not moved)."""


@dataclass
class Landing:
    """What `land` did (the `--json` document, less its schema version and time)."""

    feature: str
    branch: str
    base: str
    mode: str
    partial: bool
    old_sha: str
    base_moved_commits: int
    tasks_landed: list[str]
    tasks_left_out: dict[str, str]
    outcome: str = "landed"
    landed: bool = False
    new_sha: str | None = None
    gate: dict[str, Any] | None = None
    conflicts: list[str] = field(default_factory=list)
    detail: str = ""
    checkout: str | None = None
    unexpected: list[str] = field(default_factory=list)
    accepted_test_changes: list[AcceptedChange] = field(default_factory=list)
    """The base tests the landed tasks changed, each accepted by its coach."""
    accepted_unverified: list[str] = field(default_factory=list)
    """Approved-unverified tasks landed on the person's word (`--accept-unverified`)."""

    def fail(self, outcome: str, detail: str) -> Landing:
        self.outcome, self.detail = outcome, detail
        return self

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def choose_gate(record: RunRecord, verify: str | None, base_sha: str) -> Gate:
    """`--verify` (or `--verify none`), else the run's own gate; InputError when the run had none."""
    run_gate_setup = record.gate
    setup = run_gate_setup["setup"] if run_gate_setup else None
    if verify is not None and run_gate_setup is not None and verify == run_gate_setup["command"]:
        verify = None  # the run's own gate, named again: its run on the base still applies
    if verify is not None:
        if not verify.strip():
            raise InputError("--verify must be a command, or none")
        if verify.strip().lower() == NO_GATE:
            return Gate(None, "--verify none", setup, None)
        return Gate(verify, "--verify", setup, None)
    if run_gate_setup is None or run_gate_setup["command"] is None:
        raise InputError("the run had no gate (its approvals are unverified): pass --verify CMD to check the merged"
                         " result before landing, or --verify none to land it unchecked")
    same_base = base_sha == record.start_sha
    return Gate(run_gate_setup["command"], run_gate_setup["source"], setup,
                run_gate_setup["base"] if same_base else None)


def conflict_detail(found: Standing, files: list[str]) -> str:
    return (f"{found.feature_branch} conflicts with {found.base_branch} in {', '.join(files)}: merge"
            f" {found.base_branch} into it and resolve them, then land again")


def _message(plan: FeaturePlan, found: Standing, squash: bool) -> str:
    title = (f"{plan.name} ({plan.id}, squashed from {found.feature_branch})" if squash
             else f"Merge {found.feature_branch} into {found.base_branch}: {plan.name}")
    names = {task.id: task.name for task in plan.tasks}
    lines = [title, "", "Tasks:", *[f"- {task}: {names.get(task, '(no longer in the plan)')}"
                                    for task in found.approved]]
    if found.not_approved:
        lines += ["", "Not landed (not approved):", *[f"- {task}: {status}" for task, status in
                                                      found.not_approved.items()]]
    return "\n".join(lines) + "\n"


def _gate_doc(gate: Gate, result: GateResult | None) -> dict[str, Any] | None:
    if result is None:
        return None
    return {"command": gate.command, "source": gate.source, "passed": result["passed"], "summary": result["summary"],
            "new_failures": result["new_failures"], "failing": result["failing"], "output": result["output"]}


def leashed(command: str) -> str:
    """`command` run so that it dies with `land` (landing/leash.py), with the same shell and exit code."""
    leash = Path(__file__).with_name("leash.py")
    return f"exec {shlex.quote(sys.executable)} -I {shlex.quote(str(leash))} {shlex.quote(command)}"


@dataclass
class Attempt:
    """One try at landing `tip` on the base, in a throwaway worktree that is always removed: merge, verify,
    move; each step either goes on or ends the landing with nothing moved."""

    repo: GitRepo
    plan: FeaturePlan
    found: Standing
    tip: str
    gate: Gate
    landing: Landing
    say: Callable[[str], None]
    verify_timeout: float
    """Seconds the setup and the gate may each take (the `verify_timeout` setting)."""
    accepted: list[Acceptance] = field(default_factory=list)
    """Every approving coach's acceptances of base test changes (what the landed result may change)."""

    def __post_init__(self) -> None:
        self.journal = journal.Journal(self.plan.id, f"refs/heads/{self.found.base_branch}", self.landing.old_sha,
                                       str(self.repo.worktrees_dir / self.plan.id / "_land"), reaper.new_tag())
        # The run's gate as the run judged it; its setup and runs die with `land` (the leash) and carry the
        # landing's tag, so the next command finds whatever escaped a kill -9.
        decided = GateSetup(command=self.gate.command, source=self.gate.source, setup=self.gate.setup,
                            base=self.gate.base)
        # The hidden acceptance tests of every approved task run on the landed result too (never in its tree).
        self.hidden = HiddenTests.of_plan(self.repo.root, self.plan)
        self.gates = Gates(self.repo, GateRequest(timeout_s=self.verify_timeout), decided=decided,
                           env_extra={reaper.SESSION_TAG_ENV: self.journal.tag}, launcher=leashed,
                           hidden=self.hidden if self.hidden.by_task else None)

    async def run(self, squash: bool) -> Landing:
        worktree = Path(self.journal.worktree)
        journal.write(self.repo, self.journal)  # before anything exists that a kill would leave behind
        try:
            landing = await self._steps(worktree, squash)
        finally:
            await self.repo.remove_worktree(worktree)
        journal.clear(self.repo)  # not after an exception or Ctrl+C: the next command finishes or undoes it
        return landing

    async def _steps(self, worktree: Path, squash: bool) -> Landing:
        await self.repo.add_detached_worktree(worktree, self.landing.old_sha)
        await hooks.bring_generated_hooks(self.repo, worktree)
        base = await self._prepare(worktree)
        if self.landing.outcome != "landed":  # the setup failed
            return self.landing
        if not squash:  # a merge commit: the pre-commit framework would check only its conflicted files
            refused = await hooks.pre_commit_on_everything(self.repo, worktree, self.tip, REPORTS)
            if refused:
                return self.landing.fail("commit_refused", refused)
        new = await self._merge(worktree, squash)
        if new is None or not await self._verify(worktree, base):
            return self.landing
        return await self._move(new)

    async def _prepare(self, worktree: Path) -> GateResult | None:
        """The run's setup, and the gate's run on the base unless the run's own still applies."""
        gate = self.gate
        done = await self.gates.set_up(worktree, submodules=False)
        if done is not None and not done.ok:
            self.landing.fail("setup_failed", f"setup `{gate.setup}` failed (exit {done.returncode}):"
                                              f" {done.tail(10)}")
            return None
        if gate.command and gate.base is None:
            command = gate.command

            def on_base() -> None:
                self.say(f"running `{command}` on {self.found.base_branch} ({self.landing.old_sha[:10]}) to know"
                         " what is already red there")

            # Remembered by tree with the run's gate runs: a base tree gated before (an earlier `land`) isn't again.
            base: GateResult | None = (await self.gates.observe(worktree, command, before=on_base)).result
        else:
            base = gate.base
        self.gates.setup["base"], self.gates.setup["base_sha"] = base, self.landing.old_sha
        return base

    async def _merge(self, worktree: Path, squash: bool) -> str | None:
        found, landing = self.found, self.landing
        merged = await self.repo.merge_as_user(worktree, self.tip, _message(self.plan, found, squash), squash,
                                               leave_out=[REPORTS])
        changed = merged.merged and merged.sha != landing.old_sha
        if changed and await self.repo.tree_of(merged.sha) != await self.repo.tree_of(landing.old_sha):
            return merged.sha
        if merged.merged:
            landing.fail("already_landed", f"{found.base_branch} already has every change of {found.feature_branch}")
        elif merged.conflicts:
            landing.conflicts = merged.conflicts
            landing.fail("conflict", conflict_detail(found, merged.conflicts))
        else:
            landing.fail("commit_refused", f"git refused the commit (a hook of yours, signing or identity):"
                                           f" {merged.detail}")
        return None

    async def _verify(self, worktree: Path, base: GateResult | None) -> bool:
        gate = self.gate
        if not gate.command:
            return True
        self.say(f"verifying the merged result with `{gate.command}` ({gate.source})")
        # Every test that passed on the base must pass on the landed result, or be a change a task's approving
        # coach accepted.
        result = (await self.gates.run(worktree, gate.command, base=base, against=self.landing.old_sha,
                                       accepted=self.accepted,
                                       hidden_tests=self.hidden.of(self.found.approved))).result
        self.landing.gate = _gate_doc(gate, result)
        if not result["passed"]:
            failing = result["new_failures"] or result["failing"] or []
            named = f": {', '.join(failing[:10])}" if failing else ""
            self.landing.fail("verify_failed", f"verify failed on the merged result ({result['summary']}){named}")
        return result["passed"]

    async def _move(self, new: str) -> Landing:
        landing = self.landing
        permit = LandPermit(self.plan.id, f"refs/heads/{self.found.base_branch}", landing.old_sha)
        self.journal.step, self.journal.new, self.journal.checkout = "moving", new, self.found.checkout
        if self.found.checkout:
            self.journal.present_before = journal.present_in(Path(self.found.checkout), landing.old_sha, new)
        journal.write(self.repo, self.journal)
        move = await land_ref(self.repo, permit, new)
        landing.checkout, landing.unexpected = move.checkout, move.unexpected
        if not move.moved:
            return landing.fail("not_moved", f"{move.reason}; run `land` again to land on what it has now")
        landing.landed, landing.new_sha = True, new
        return landing


@dataclass(frozen=True)
class LandRequest:
    """What `land` is asked to do: the feature, and the command line's `--squash`, `--partial` and `--verify`."""

    feature: str
    squash: bool = False
    partial: bool = False
    verify: str | None = None
    """A command that checks the merged result, `none`, or None: the run's own gate."""
    accept_unverified: bool = False
    """`--accept-unverified`: the person's word that approved-unverified tasks may land."""


async def land(request: LandRequest, settings: Settings, say: Callable[[str], None]) -> Landing:
    """Check everything that can be checked before trying (InputError, exit 2), then try under the lock.

    The checks before the attempt stay synchronous on the caller's loop: nothing else runs on it yet, and the
    lock (a context variable the journal's recovery reads) stays in this one context."""
    root = settings.repo
    repo = GitRepo(root)
    repo.check(allow_unborn=True)  # an orphan checkout of yours: the base is the plan's branch
    plan = load_plan(root, request.feature)
    store = CheckpointStore.for_repo(root, settings.db, plan.id)
    plan = replanned(store, plan)  # with the tasks replans added
    with repo_lock(root, f"land {plan.id}"):
        for line in journal.recover(repo):
            say(line)
        record = read_record(store, plan)
        found = standing(repo, plan, record)
        landing = Landing(plan.id, found.feature_branch, found.base_branch, "squash" if request.squash else "merge",
                          request.partial, found.base_sha or "", found.behind, list(found.approved),
                          dict(found.not_approved),
                          accepted_test_changes=accepted_changes(record.results, found.approved))
        if found.landed and found.base_sha:
            return landing.fail("already_landed", f"{found.base_branch} already contains {found.feature_branch}")
        refusals = found.refusals(request.partial)
        if refusals or found.feature_sha is None:
            raise InputError("; ".join(refusals) + ". Nothing was moved.")
        held = unverified.unverified(record.results, found.approved, gated=bool(record.gate and record.gate["command"]))
        for line in unverified.listing(held):
            say(line)
        unverified.refuse(held, request.accept_unverified)
        landing.accepted_unverified = list(held)
        gate = choose_gate(record, request.verify, landing.old_sha)
        conflicts = predicted_conflicts(repo, landing.old_sha, found.feature_sha)
        if conflicts:  # known without a worktree (git 2.38+); else the merge itself finds them
            landing.conflicts = conflicts
            return landing.fail("conflict", conflict_detail(found, conflicts))
        if found.behind:
            say(f"{found.base_branch} moved {found.behind} commit(s) since the run: merging them in and verifying"
                " the result")
        accepted = [entry for result in record.results.values() for entry in result.get("test_changes_accepted") or []]
        return await Attempt(repo, plan, found, found.feature_sha, gate, landing, say, settings.verify_timeout,
                             accepted).run(request.squash)
