"""The gate checked before any money is spent: decided once per run, set up and run on the base in a
throwaway worktree (a monorepo's gate: each package in its folder). A command that can't gate at all stops the
run (exit 2, with its output); tests already red on the base are recorded, so tasks are judged only on failures
they add."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from orchestrator import sandbox
from orchestrator.errors import GateUnusableError
from orchestrator.facts import GateResult, GateSetup, PackageGate
from orchestrator.gate.choose.detect import NO_GATE, GateChoice, choose_gate
from orchestrator.gate.observe.judge import unusable_base
from orchestrator.gate.observe.observed import unusable
from orchestrator.gate.observe.per_package import combine, run_package
from orchestrator.gate.observe.result import run_gate
from orchestrator.gate.prepare.environment import default_setup, gate_env
from orchestrator.gate.prepare.generated import copy_generated
from orchestrator.gate.prepare.node_modules import own_node_modules
from orchestrator.gate.prepare.submodules import init_submodules
from orchestrator.gate.spec.no_baseline import no_baseline, refusal
from orchestrator.processes import run_shell
from orchestrator.repo.git import GitRepo


def choose_setup(root: Path, plan_setup: str | None, override: str | None, packages: Sequence[str] = ()) -> str | None:
    """`--setup` (or `--setup none`), else the plan's `setup`, else what the repo's layout needs."""
    if override is not None:
        return None if override.strip().lower() == NO_GATE else override
    return plan_setup or default_setup(root, packages)


async def check_gate(repo: GitRepo, feature_id: str, base_sha: str, *, plan_verify: str | None,
                     plan_setup: str | None, verify: str | None, setup: str | None, timeout_s: float,
                     judge_by_counts: bool = False, choice: GateChoice | None = None,
                     repairs_base: bool = False,
                     failed_again: Callable[[GateResult], Awaitable[None]] | None = None) -> GateSetup:
    """Decide the run's gate (unless the caller already did: `choice`) and run it once on `base_sha`; raise
    GateUnusableError when it can't gate, or when the base's tests never ran unless a task `repairs_base`.
    `failed_again` sees the base's second run when it failed (the gate cache counts a failure that repeats)."""
    if choice is None:  # reading the repo's files (and asking its python for pytest) must not block the loop
        choice = await asyncio.to_thread(choose_gate, repo.root, plan_verify, verify)
    setup_command = await asyncio.to_thread(choose_setup, repo.root, plan_setup, setup,
                                            [p["path"] for p in choice.packages])
    decided = GateSetup(command=choice.command, source=choice.source, setup=setup_command, base=None)
    if choice.command is None:
        return decided
    worktree = repo.worktrees_dir / feature_id / "_baseline"
    await repo.add_detached_worktree(worktree, base_sha)
    try:
        notes = await init_submodules(repo, worktree)  # named when the base can't run: a likely cause
        await own_node_modules(repo, worktree)
        await copy_generated(repo, worktree)  # a version file the install generated, named by the build config
        env = await asyncio.to_thread(gate_env, repo.root, worktree)
        if setup_command:
            done = await run_shell(setup_command, worktree, timeout_s, env, sandbox.for_worktree(worktree))
            if not done.ok:
                why = f"the worktree setup `{setup_command}` fails on the base (exit {done.returncode})"
                raise GateUnusableError(f"{why} ({base_sha[:10]}): fix it, or pass --setup CMD (or --setup none);"
                                        f" no agent was started{_noted(notes)}\n{done.tail(20)}", why)
        if choice.packages:
            decided["packages"] = await _package_bases(choice, repo.root, worktree, base_sha, timeout_s=timeout_s,
                                                       notes=notes, judge_by_counts=judge_by_counts,
                                                       repairs_base=repairs_base)
            base = combine([(p["path"], p["base"]) for p in decided["packages"] if p["base"]], choice.command)
        else:
            base = await run_gate(choice.command, worktree, timeout_s, env, sandbox.for_worktree(worktree))
            _refuse(choice.describe(), base, choice.detected, base_sha, notes, judge_by_counts=judge_by_counts,
                    repairs_base=repairs_base, worktree=worktree)
            if base.get("passing") is not None:  # a second run: tests that come and go are not held against tasks
                again = await run_gate(choice.command, worktree, timeout_s, env, sandbox.for_worktree(worktree))
                base["unstable"] = unstable(base, again)
                if failed_again is not None and not again["passed"]:
                    await failed_again(again)
    finally:
        await repo.remove_worktree(worktree)
    if notes:  # shown with the base's run wherever it is (the run's start, its reports)
        base["summary"] += "".join(f"; {note}" for note in notes)
    decided["base"] = base
    return decided


def unstable(first: GateResult, second: GateResult) -> list[str]:
    """Tests present in only one of two runs of the same tree (a generated id, a collection that varies)."""
    def ids(run: GateResult) -> set[str]:
        return {*(run.get("passing") or []), *(run["failing"] or []), *(run.get("skipped_ids") or [])}

    if second.get("passing") is None:
        return []
    return sorted(ids(first) ^ ids(second))


def _noted(notes: list[str]) -> str:
    return "".join(f"\nnote: {note}" for note in notes)


def _refuse(gate: str, base: GateResult, detected: bool, base_sha: str, notes: list[str], *,
            judge_by_counts: bool, repairs_base: bool, worktree: Path) -> None:
    reason = unusable(base)
    if reason is None and (cause := no_baseline(base, worktree)) is not None:
        if repairs_base:  # a task repairs it: no failure is waived as "already failing on the base"
            base["not_a_baseline"] = cause
            return
        raise GateUnusableError(f"the gate {gate} is no baseline on the base ({base_sha[:10]}): {refusal(cause)};"
                                f" no agent was started{_noted(notes)}\n{base['output']}", cause)
    reason = unusable_base(base, detected=detected, judge_by_counts=judge_by_counts)
    if reason is None and notes and not base["passed"] and not base["tests_passed"]:
        # A red base that passes nothing is a fact, but not when a submodule its tests need is missing here:
        # no task could make a test pass, and every session would be spent for nothing.
        reason = "it passes no test on the base, and a submodule is missing (see the note)"
    if reason:
        raise GateUnusableError(
            f"the gate {gate} can't run on the base ({base_sha[:10]}): {reason}. Fix it, or pass"
            f" --verify CMD (or --verify none to run unverified); no agent was started{_noted(notes)}"
            f"\n{base['output']}", reason)


async def _package_bases(choice: GateChoice, root: Path, worktree: Path, base_sha: str, *, timeout_s: float,
                         notes: list[str], judge_by_counts: bool, repairs_base: bool) -> list[PackageGate]:
    """Each package's command run on the base in its folder; one that can't gate stops the run, named."""
    packages = []
    for package in choice.packages:
        base = await run_package(package, root, worktree, timeout_s)
        _refuse(f"of package {package['path']}, `{package['command']}` ({package['source']}),", base,
                choice.detected, base_sha, notes, judge_by_counts=judge_by_counts, repairs_base=repairs_base,
                worktree=worktree / package["path"])
        packages.append(PackageGate(**{**package, "base": base}))
    return packages
