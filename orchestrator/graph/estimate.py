"""What a run (or a re-run) is expected to take before it starts: each task's turns, the sessions and their cost."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from orchestrator.graph import rerun, runner
from orchestrator.graph.attempts import attempts_of
from orchestrator.settings import Settings, session_model

SESSION_MB = 220
"""What one running agent session holds in memory (DESIGN §4: ~220 MB RSS per Claude Code process)."""


@dataclass(frozen=True)
class Estimate:
    """The `--dry-run` estimate: one row per task the command runs, and what they are expected to cost."""

    rows: list[dict[str, Any]]
    sessions_expected: int
    sessions_max: int
    cost_usd_expected: float
    cost_per_session_usd: float
    peak_sessions: int = 1
    """Agent sessions running at once at most: one per running task or attempt, up to `--parallel`."""

    def document(self) -> dict[str, Any]:
        """The `estimate` object of `--dry-run --json` (the rows are its `tasks`)."""
        return {"sessions_expected": self.sessions_expected, "sessions_max": self.sessions_max,
                "cost_usd_expected": self.cost_usd_expected, "cost_per_session_usd": self.cost_per_session_usd,
                "peak_sessions": self.peak_sessions, "peak_memory_mb": self.peak_sessions * SESSION_MB}


def estimate_rows(run_plan: runner.RunPlan) -> list[dict[str, Any]]:
    """One row per task this command runs, in group order: every task of a plain run; of a re-run only the ones
    `rerun.planned_rerun` picks, each with why (a finished feature's `run` runs none, it only reports)."""
    plan, max_turns = run_plan.plan, run_plan.settings.max_turns
    again = rerun.planned_rerun(run_plan)
    rows: list[dict[str, Any]] = []
    for index, group in enumerate(run_plan.groups, 1):
        for task_id in group:
            if again is not None and task_id not in again:
                continue
            task = plan.task(task_id)
            # Rough expectation: complexity drives turns (1..max), each turn is a player and a coach session.
            turns = max(1, min(max_turns, round(task.complexity / 3)))
            row = {"group": index, "task": task_id, "dependencies": task.dependencies,
                   "complexity": task.complexity, "expected_turns": turns, "max_turns": max_turns,
                   "hidden_tests": list(task.acceptance_tests) if task.hidden_tests else [],
                   **_models(run_plan.settings, task.complexity, turns),
                   "attempts": attempts_of(run_plan.settings, plan, task_id)}
            rows.append(row if again is None else {**row, "why": again[task_id]})
    return rows


def estimate(run_plan: runner.RunPlan) -> Estimate:
    """The tasks this command runs and their sessions: two per expected turn (player and coach), priced at the
    `est_session_usd` setting (ORCHESTRATOR_EST_SESSION_USD), or at the routed model's `models.session_usd`."""
    rows = estimate_rows(run_plan)
    session_usd = run_plan.settings.est_session_usd
    # Every attempt of a task is a loop of its own: at most all of them run to their verdict (policy best).
    expected = 2 * sum(r["expected_turns"] * r["attempts"] for r in rows)
    peak = min(run_plan.settings.parallel, max((sum(r["attempts"] for r in rows if r["group"] == group)
                                                for group in {r["group"] for r in rows}), default=1))
    return Estimate(rows, expected, 2 * run_plan.settings.max_turns * sum(r["attempts"] for r in rows),
                    round(sum(r["cost_usd_expected"] * r["attempts"] for r in rows), 2), session_usd,
                    peak_sessions=max(1, peak))


def _models(settings: Settings, complexity: int, turns: int) -> dict[str, Any]:
    """A task's player and coach models (None: the CLI's default) and its expected cost: a player and a coach
    session per expected turn, each at its model's `models.session_usd`, else at `est_session_usd`."""
    chosen = {role: session_model(role, complexity, model=settings.model, coach_model=settings.coach_model,
                                  precheck_model=None, routing=settings.models) for role in ("player", "coach")}
    prices = settings.models.session_usd if settings.models is not None else {}
    cost = sum(turns * prices.get(model or "", settings.est_session_usd) for model in chosen.values())
    return {"model": chosen["player"], "coach_model": chosen["coach"], "cost_usd_expected": round(cost, 4)}
