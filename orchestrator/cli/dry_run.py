"""`run --dry-run` / `resume --dry-run`: the tasks this command would run, their expected turns and cost, the gate;
nothing is run or written. The estimate is graph/estimate.py's; a re-run's counts only the tasks it runs again."""

from __future__ import annotations

from typing import Any

from orchestrator.cli import output
from orchestrator.cli.messages import warn
from orchestrator.errors import EXIT_OK
from orchestrator.gate import gate_document, gate_lines
from orchestrator.graph import rerun, runner
from orchestrator.graph.estimate import estimate
from orchestrator.plan.model import scope_overlaps
from orchestrator.store import inspection


def dry_run(run_plan: runner.RunPlan, as_json: bool) -> int:
    plan = run_plan.plan
    max_turns = run_plan.settings.max_turns
    expected = estimate(run_plan)
    rows, session_usd = expected.rows, expected.cost_per_session_usd
    gate = gate_document(run_plan.settings.repo, run_plan.gate, plan.setup, run_plan.settings.setup)
    previous = _previous_run(run_plan)
    if as_json:
        output.print_json({"feature": plan.id, "base_branch": run_plan.base_branch, "tasks": rows, "gate": gate,
                           "groups": run_plan.groups, "estimate": expected.document(),
                           "scope_overlaps": scope_overlaps(plan), "previous_run": previous})
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
                  f"{f' x {row['attempts']} attempts' if row.get('attempts', 1) > 1 else ''}"
                  f"{again}")
            print(f"    {_models(row)}, ~${row['cost_usd_expected']:.2f}")  # its own line: names are long
        priced = ", or models.session_usd" if run_plan.settings.models is not None else ""
        print(f"  sessions: ~{expected.sessions_expected} expected, at most {expected.sessions_max};"
              f" cost ~${expected.cost_usd_expected:.2f} at ${session_usd:.2f}/session"
              f" (ORCHESTRATOR_EST_SESSION_USD{priced}); at most {expected.peak_sessions} at once"
              f" (~{expected.document()['peak_memory_mb']} MB); nothing was run or written")
        if (most := max(row.get("attempts", 1) for row in rows)) > run_plan.settings.parallel:
            print(f"  note: {most} attempts per task but --parallel {run_plan.settings.parallel}: a task's attempts"
                  " queue for slots (the run says so at its start)")
    else:
        print("  nothing to run: no session, no cost; nothing was run or written")
    print("\n".join(gate_lines(gate, run_plan.gate.describe())))
    if previous:
        print(f"  note: {previous}")
    warn(plan)
    return EXIT_OK


def _models(row: dict[str, Any]) -> str:
    """"model claude-haiku-4-5" (the coach's too when it differs); "default model": the CLI's own."""
    player, coach = row["model"], row["coach_model"]
    shown = f"model {player}" if player else "default model"
    return shown if coach == player else f"{shown}, coach {coach or 'default'}"


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
