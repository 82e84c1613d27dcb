"""`run --dry-run` / `resume --dry-run`: the tasks this command would run, their expected turns and cost, the gate;
nothing is run or written. A re-run's estimate counts only the tasks it runs again."""

from __future__ import annotations

from typing import Any

from orchestrator.cli import output
from orchestrator.cli.messages import warn
from orchestrator.errors import EXIT_OK
from orchestrator.gate.report import gate_document, gate_lines
from orchestrator.graph import rerun, runner
from orchestrator.plan.model import scope_overlaps
from orchestrator.store import inspection


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
                   "hidden_tests": list(task.acceptance_tests) if task.hidden_tests else []}
            rows.append(row if again is None else {**row, "why": again[task_id]})
    return rows


def dry_run(run_plan: runner.RunPlan, as_json: bool) -> int:
    plan = run_plan.plan
    max_turns = run_plan.settings.max_turns
    rows = estimate_rows(run_plan)
    session_usd = run_plan.settings.est_session_usd
    expected = 2 * sum(r["expected_turns"] for r in rows)
    estimate = {"sessions_expected": expected, "sessions_max": 2 * max_turns * len(rows),
                "cost_usd_expected": round(expected * session_usd, 2), "cost_per_session_usd": session_usd}
    gate = gate_document(run_plan.settings.repo, run_plan.gate, plan.setup, run_plan.settings.setup)
    previous = _previous_run(run_plan)
    if as_json:
        output.print_json({"feature": plan.id, "base_branch": run_plan.base_branch, "tasks": rows, "gate": gate,
                           "groups": run_plan.groups, "estimate": estimate, "scope_overlaps": scope_overlaps(plan),
                           "previous_run": previous})
        return EXIT_OK
    print(f"{plan.id}: {plan.name} (base {run_plan.base_branch}, {len(run_plan.groups)} group(s))")
    if rows:
        task_width = max(len(row["task"]) for row in rows)
        deps_width = max(len(", ".join(row["dependencies"]) or "-") for row in rows)
        for row in rows:
            deps = ", ".join(row["dependencies"]) or "-"
            hidden = f"; {len(row['hidden_tests'])} hidden acceptance test(s)" if row["hidden_tests"] else ""
            again = f"  (again: {row['why']})" if "why" in row else ""
            print(f"  group {row['group']}  {row['task']:<{task_width}}  complexity {row['complexity']:>2}"
                  f"  deps {deps:<{deps_width}}  ~{row['expected_turns']} turn(s), at most {max_turns}{hidden}"
                  f"{again}")
        print(f"  sessions: ~{expected} expected, at most {estimate['sessions_max']};"
              f" cost ~${estimate['cost_usd_expected']:.2f} at ${session_usd:.2f}/session"
              f" (ORCHESTRATOR_EST_SESSION_USD); nothing was run or written")
    else:
        print("  nothing to run: no session, no cost; nothing was run or written")
    print("\n".join(gate_lines(gate, run_plan.gate.describe())))
    if previous:
        print(f"  note: {previous}")
    warn(plan)
    return EXIT_OK


def _previous_run(run_plan: runner.RunPlan) -> str | None:
    """What `run` would find in the checkpoint DB, so the estimate is not read as "will run everything"."""
    if run_plan.settings.fresh or not run_plan.store.exists():
        return None
    for row in inspection.list_features(run_plan.store):
        if row["thread"] == run_plan.thread_id:
            done = ", ".join(f"{count} {status}" for status, count in sorted(row["tasks"].items())) or "no task done"
            if row["finished"]:
                again = rerun.rerun_plan(run_plan)
                if again:
                    return f"{run_plan.thread_id} already finished ({done}); `resume` runs again: {listed(again)}"
                return f"{run_plan.thread_id} already finished ({done}); `run` reports it, --fresh starts over"
            return f"{run_plan.thread_id} has an unfinished run ({done}); `run` resumes it"
    return None


def listed(tasks: dict[str, str]) -> str:
    return ", ".join(f"{task_id} ({why})" for task_id, why in tasks.items())
