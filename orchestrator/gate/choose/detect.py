"""Which command gates a run: `--verify`, else the plan's `verify`, else the repo's own test command, found
from its files with the maintainers' own command first and a guess last (gate/choose/candidates.py), per package in a
monorepo (gate/choose/monorepo.py). Says what it chose, why, and what else it found."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from orchestrator.gate.choose.candidates import GateChoice, candidates
from orchestrator.gate.choose.monorepo import monorepo_gate

NO_GATE = "none"
__all__ = ["NO_GATE", "GateChoice", "choose_gate", "detect_test_command"]


def choose_gate(root: Path, plan_verify: str | None, override: str | None) -> GateChoice:
    """`--verify` (or `--verify none`), else the plan's `verify`, else the repo's detected test command."""
    if override is not None:
        if override.strip().lower() == NO_GATE:
            return GateChoice(None, "--verify none")
        return GateChoice(override, "--verify")
    if plan_verify:
        return GateChoice(plan_verify, "the plan's verify")
    return detect_test_command(root)


def detect_test_command(root: Path) -> GateChoice:
    """The repo's own test command, from its files; per package in a monorepo; GateChoice(None, why) when
    there is none."""
    found = candidates(root)
    split = monorepo_gate(root, found)
    if split is not None:
        return split
    if found:
        also = tuple(f"`{other.command}` ({other.source})" for other in found[1:])
        return replace(found[0], detected=True, also=also)
    return GateChoice(None, "no verify in the plan and no test command found in the repo (a Makefile test"
                            " target, tox or nox, a package.json test script, a CI test step, pytest or unittest"
                            " tests, Cargo.toml, go.mod)")
