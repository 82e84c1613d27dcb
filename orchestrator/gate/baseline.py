"""The gate checked before any money is spent: decided once per run, set up and run on the base in a
throwaway worktree. A command that can't gate at all stops the run (exit 2, with its output); tests already
red on the base are recorded, so tasks are judged only on failures they add."""

from __future__ import annotations

from pathlib import Path

from orchestrator import sandbox
from orchestrator.errors import GateUnusableError
from orchestrator.facts import GateSetup
from orchestrator.gate.detect import NO_GATE, choose_gate
from orchestrator.gate.environment import default_setup, gate_env
from orchestrator.gate.result import run_gate, unusable_base
from orchestrator.processes import run_shell
from orchestrator.repo.git import GitRepo


def choose_setup(root: Path, plan_setup: str | None, override: str | None) -> str | None:
    if override is not None:
        return None if override.strip().lower() == NO_GATE else override
    return plan_setup or default_setup(root)


async def check_gate(repo: GitRepo, feature_id: str, base_sha: str, *, plan_verify: str | None,
                     plan_setup: str | None, verify: str | None, setup: str | None, timeout_s: float) -> GateSetup:
    """Decide the run's gate and run it once on `base_sha`; raise GateUnusableError when it can't gate."""
    choice = choose_gate(repo.root, plan_verify, verify)
    setup_command = choose_setup(repo.root, plan_setup, setup)
    decided = GateSetup(command=choice.command, source=choice.source, setup=setup_command, base=None)
    if choice.command is None:
        return decided
    worktree = repo.worktrees_dir / feature_id / "_baseline"
    await repo.add_detached_worktree(worktree, base_sha)
    try:
        env = gate_env(repo.root, worktree)
        if setup_command:
            done = await run_shell(setup_command, worktree, timeout_s, env, sandbox.for_worktree(worktree))
            if not done.ok:
                why = f"the worktree setup `{setup_command}` fails on the base (exit {done.returncode})"
                raise GateUnusableError(f"{why} ({base_sha[:10]}): fix it, or pass --setup CMD (or --setup none);"
                                        f" no agent was started\n{done.tail(20)}", why)
        base = await run_gate(choice.command, worktree, timeout_s, env, sandbox.for_worktree(worktree))
        reason = unusable_base(base, detected=choice.detected)
        if reason:
            raise GateUnusableError(
                f"the gate {choice.describe()} can't run on the base ({base_sha[:10]}): {reason}. Fix it, or pass"
                f" --verify CMD (or --verify none to run unverified); no agent was started\n{base['output']}", reason)
    finally:
        await repo.remove_worktree(worktree)
    decided["base"] = base
    return decided
