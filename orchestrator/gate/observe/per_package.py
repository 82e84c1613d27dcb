"""A monorepo's gate, run per package: each touched package's command in its own folder and environment, judged
against that package's run on the base, combined into one GateResult whose test ids carry the package's path
(`backend::tests.test_api::test_get`) so two packages' tests never collide."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from orchestrator import sandbox
from orchestrator.facts import GateResult, GateSetup, Observation, PackageGate
from orchestrator.gate.choose.monorepo import affected
from orchestrator.gate.observe.judge import judged_run
from orchestrator.gate.observe.observed import BY_COUNTS, BY_EXIT, BY_IDS
from orchestrator.gate.observe.result import run_gate
from orchestrator.gate.prepare.environment import gate_env
from orchestrator.gate.verdict import Evidence, record
from orchestrator.repo.git import GitRepo


async def run_package(package: PackageGate, root: Path, worktree: Path, timeout_s: float,
                      extra: Mapping[str, str] | None = None) -> GateResult:
    """One package's command in its folder of `worktree` (not yet judged); `extra` variables are added to the
    environment's own (appended to a variable it has)."""
    env = await asyncio.to_thread(gate_env, root, worktree, package=package["path"])  # reads the venvs' files
    for name, value in (extra or {}).items():
        env[name] = f"{env[name]} {value}" if env.get(name) else value
    return await run_gate(package["command"], worktree / package["path"], timeout_s, env,
                          sandbox.for_worktree(worktree))


def _ids(path: str, ids: list[str]) -> list[str]:
    return ids if path == "." else [f"{path}::{test_id}" for test_id in ids]


def combine(runs: list[tuple[str, GateResult]], command: str, skipped: list[str] | None = None) -> GateResult:
    """Several packages' runs as one record: passed if every one passed (gate/verdict.py)."""
    return record(combined(runs, command, skipped))


def combined(runs: list[tuple[str, GateResult]], command: str, skipped: list[str] | None = None) -> Evidence:
    """Several packages' runs as the evidence of one: their runs combined (ids prefixed by package; counts added,
    None if any package gave none; each package's summary and output under its name), and each package's
    verdict."""
    first = runs[0][1]
    together: Observation = first.copy()  # keeps whatever else a run records
    together.pop("reads", None)  # relative to one package's folder: each package's own base keeps its
    failing: list[str] | None = [] if all(r["failing"] is not None for _, r in runs) else None
    ran: list[str] | None = [] if all(r["ran_classes"] is not None for _, r in runs) else None
    new: list[str] = []
    for path, result in runs:
        new += _ids(path, result["new_failures"])
        if failing is not None:
            failing += _ids(path, result["failing"] or [])
        if ran is not None:  # module names, as a player's reported test file maps to them
            prefix = "" if path == "." else path.replace("/", ".") + "."
            ran += [prefix + name for name in result["ran_classes"] or []]
    counts = [(r["tests_passed"], r["tests_failed"]) for _, r in runs]
    exits = [r["exit_code"] for _, r in runs]
    summary = "; ".join(f"{path}: {result['summary']}" for path, result in runs)
    if skipped:
        summary += f"; not touched by the change: {', '.join(skipped)}"
    together["command"], together["summary"] = command, summary
    together["output"] = "\n".join(f"== {path} ==\n{result['output']}" for path, result in runs)
    together["exit_code"] = None if None in exits else next((code for code in exits if code), 0)
    together["tests_passed"] = None if any(p is None for p, _ in counts) else sum(p or 0 for p, _ in counts)
    together["tests_failed"] = None if any(f is None for _, f in counts) else sum(f or 0 for _, f in counts)
    together["failing"], together["new_failures"], together["ran_classes"] = failing, new, ran
    skips = [r.get("tests_skipped") for _, r in runs]
    together["tests_skipped"] = None if None in skips else sum(n or 0 for n in skips)
    together["skipped"] = [test for path, r in runs for test in _ids(path, r.get("skipped") or [])]
    runners = sorted({str(r.get("runner")) for _, r in runs if r.get("runner")})
    together["runner"] = ", ".join(runners) or None
    judged = {r.get("judged_by") for _, r in runs}
    # The weakest judgement of any package is the run's: one package judged by exit status makes it so.
    together["judged_by"] = next((how for how in (BY_EXIT, BY_COUNTS, BY_IDS) if how in judged),
                                 first.get("judged_by") or BY_EXIT)
    return Evidence(run=together, packages=tuple(result for _, result in runs))


async def changed_since(repo: GitRepo, worktree: Path, base: str) -> list[str] | None:
    """Files the worktree's commits changed since they left `base` (None when git can't say: gate them all)."""
    done = await repo.git("diff", "--name-only", f"{base}...HEAD", cwd=worktree, check=False)
    return [line for line in done.stdout.splitlines() if line] if done.ok else None


async def gate_packages(gate: GateSetup, root: Path, worktree: Path, changed: list[str] | None,
                        timeout_s: float, *, each: list[tuple[PackageGate, GateResult]] | None = None,
                        run: Callable[[PackageGate, Path], Awaitable[GateResult]] | None = None) -> Evidence:
    """The packages a change touches (all of them when `changed` is None or touches none), each run in its
    folder (by `run` when given: the gate service's run, with the command as the base defines it) and judged
    against its own run on the base, combined (the evidence of the combined verdict); each package's own run is
    added to `each`."""
    packages = gate.get("packages") or []
    touched = affected(packages, changed) or [p["path"] for p in packages]
    runs = []
    for package in packages:
        if package["path"] in touched:
            env = await asyncio.to_thread(gate_env, root, worktree, package=package["path"])
            once = None if run is None else functools.partial(run, package, worktree)
            runs.append((package["path"], await judged_run(package["command"], worktree / package["path"], timeout_s,
                                                           env, package["base"], run=once,
                                                           sandbox=sandbox.for_worktree(worktree))))
            if each is not None:
                each.append((package, runs[-1][1]))
    skipped = [p["path"] for p in packages if p["path"] not in touched]
    return combined(runs, str(gate["command"]), skipped)
