"""AUTO-RUN.md reports: one per task (success or abort) and one for the feature."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from orchestrator.facts import SUCCESS, GateSetup, TaskResult, TaskState
from orchestrator.gate import GateChoice, describe_base
from orchestrator.repo import run_files
from orchestrator.store import receipts

REPORT_NAME = "AUTO-RUN.md"


def _stamp(epoch: float | None) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch)) if epoch else "unknown"


def task_report(state: TaskState, status: str, reason: str, artifacts: list[str], task_name: str, *,
                cause: str | None = None, supervision: Sequence[str] = ()) -> str:
    """The task's AUTO-RUN.md: what happened, what it cost, what it produced, why it stopped."""
    started = state.get("started") or time.time()
    player: dict[str, Any] = dict(state.get("player") or {})
    review: dict[str, Any] = dict(state.get("review") or {})
    last_text = str(review.get("rationale") if review.get("reviewer") == "coach" else player.get("final_text") or "")
    last_text = last_text.strip()
    tail = "\n".join(last_text.splitlines()[-20:]) or "(no agent output)"
    receipt = receipts.task_receipt(state.get("history", []), status, int(state.get("turn", 0)),
                                    float(state.get("cost_usd", 0.0)))
    lines = [
        f"# AUTO-RUN: {state['task_id']} — {task_name}",
        "",
        f"- **Status:** {status}",
        f"- **Reason:** {reason or '-'}",
        *([f"- **Cause:** `{cause}`"] if cause else []),
        f"- **Feature:** {state.get('feature_id')}",
        f"- **Started:** {_stamp(started)}",
        f"- **Duration:** {time.time() - started:.1f} s",
        f"- **Turns:** {state.get('turn', 0)}",
        f"- **Cost:** ${state.get('cost_usd', 0.0):.4f}",
        f"- **Receipt:** {receipts.describe(receipt)}",
        f"- **Tokens:** {sum(int(h.get('tokens', 0)) for h in state.get('history', []))}",
        f"- **False approvals caught by the verify gate:** {state.get('false_approvals', 0)}",
        f"- **Coach claims contradicted:** {state.get('claims_contradicted', 0)}",
        *_gate_lines(review.get("gate")),
        f"- **Conflict turns:** {state.get('conflict_turns', 0)} (merge conflicts with the feature branch the player"
        " resolved)",
        f"- **Task branch:** {state.get('branch', '-')} (deleted once merged into autobuild/{state.get('feature_id')})",
        "",
        "## Artifacts",
        *([f"- {path}" for path in artifacts] or ["- (none kept)"]),
        "",
        "## Turns",
    ]
    for entry in state.get("history", []):
        summary = entry.get("summary", "")
        lines.append(f"- turn {entry.get('turn')} {entry.get('role')}: {entry.get('status')} {summary}".rstrip())
    violations = state.get("violations", [])
    if violations:
        lines += ["", "## Contract violations", *[f"- {v}" for v in violations]]
    if changes := state.get("user_changes", []):
        lines += ["", "## Your repository changed during the run (yours: kept, not reverted)",
                  *[f"- {change}" for change in changes]]
    if supervision:  # what the person supervising the run sent: notes, pauses, cancels, answers (issue 41)
        lines += ["", "## Steering (notes, pauses, cancels and answers from a person)",
                  *[f"- {line}" for line in supervision]]
    lines += ["", "## Tail of the last agent output", "", "```", tail, "```", ""]
    return "\n".join(lines)


def _gate_lines(gate: dict[str, Any] | None) -> list[str]:
    """The last gate run's summary (counts, skips, how it was judged) and the tests it skipped."""
    if not gate or not gate.get("command"):
        return []
    judged = f"; judged by {gate['judged_by']}" if gate.get("judged_by") else ""
    return [f"- **Gate:** {gate.get('summary')}{judged}",
            *[f"  - skipped: {entry}" for entry in (gate.get("skipped") or [])[:20]]]


def _accepted_lines(results: dict[str, TaskResult], order: list[str]) -> list[str]:
    """The base tests approved work changed, each accepted by its coach: where a false approval could hide."""
    changed = [(task, change) for task in order for change in (results.get(task) or {}).get("test_changes") or []]
    if not changed:
        return []
    return [f"- **Base tests changed, accepted by the coach:** {len(changed)}",
            *[f"  - {task}: {change['test']}: {change['fate']} ({change['accepted']})"
              for task, change in changed[:50]]]


def feature_report(feature_id: str, name: str, results: dict[str, TaskResult], order: list[str], branch: str,
                   *, held: dict[str, str] | None = None, gate: GateSetup | None = None) -> str:
    """The feature-level AUTO-RUN.md: the gate, then one row per task."""
    total = sum(float(r.get("cost_usd", 0.0)) for r in results.values())
    approved = sum(1 for r in results.values() if r.get("status") in SUCCESS)
    unverified = sum(1 for r in results.values() if r.get("status") == "approved-unverified")
    contradicted = sum(int(r.get("claims_contradicted", 0)) for r in results.values())
    held = held or {}
    lines = [
        f"# AUTO-RUN: {feature_id} — {name}",
        "",
        f"- **Branch:** {branch}",
        f"- **Tasks approved:** {approved} of {len(order)}"
        + (f" ({unverified} unverified: no gate checked them)" if unverified else ""),
        f"- **Coach claims contradicted:** {contradicted}",
        *_accepted_lines(results, order),
        f"- **Conflict turns:** {sum(int(r.get('conflict_turns', 0)) for r in results.values())}",
        f"- **Total cost:** ${total:.4f}",
        f"- **Receipt:** {receipts.describe(receipts.total(receipts.of_result(r) for r in results.values()))}",
        f"- **Finished:** {_stamp(time.time())}",
        "",
    ]
    if gate is not None:
        choice = GateChoice(gate["command"], gate["source"], packages=tuple(gate.get("packages") or ()))
        lines += [f"- **Gate:** {choice.describe()}", f"- **Worktree setup:** {gate['setup'] or '-'}"]
        lines += [f"- **Base:** {line}" if not line.startswith(" ") else line
                  for line in (describe_base(gate["base"]) if gate["base"] else [])]
        lines.append("")
    lines += [
        "| Task | Status | Turns | Cost | Approved attempt | Everything else | Duration | Reason |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for task_id in order:
        result = results.get(task_id, {})
        lines.append(
            f"| {task_id} | {result.get('status', 'not finished' if task_id in held else 'not run')} |"
            f" {result.get('turns', 0)} |"
            f" ${float(result.get('cost_usd', 0.0)):.4f} | {_attempt(result, approved=True)} |"
            f" {_attempt(result, approved=False)} | {float(result.get('duration_s', 0.0)):.1f} s |"
            f" {str(result.get('reason', held.get(task_id, ''))).replace('|', '/')} |"
        )
    return "\n".join(lines + _attempts_section(results, order)) + "\n"


def _attempts_section(results: dict[str, TaskResult], order: list[str]) -> list[str]:
    """Tasks run as several attempts: the pick and why, and each attempt's verdict."""
    lines: list[str] = []
    for task_id in order:
        result = results.get(task_id, {})
        if not result.get("attempts"):
            continue
        lines += ["", f"### {task_id}: {len(result['attempts'])} attempts ({result.get('attempts_policy')}),"
                      f" picked {result.get('picked') or 'none'}: {result.get('pick', '')}", ""]
        lines += [f"- attempt {record.get('attempt')} ({record.get('approach') or '-'}): {record.get('status')},"
                  f" {record.get('turns', 0)} turn(s), ${float(record.get('cost_usd') or 0.0):.4f}"
                  + (", landed" if record.get("landed") else "")
                  + (f", refused at the merge: {record['refused']}" if record.get("refused") else "")
                  + (f"; not picked: {record['why_not']}" if record.get("why_not") else "")
                  for record in result["attempts"]]
        lines += selection_lines(dict(result.get("selection") or {}), indent="- ")
    return (["", "## Attempts", *lines] if lines else [])


def selection_lines(selection: dict[str, Any], indent: str = "  ") -> list[str]:
    """How the pick was decided: by what, the cross-test matrix, the selector's note and cost."""
    if not selection:
        return []
    selector = selection.get("selector") or {}
    lines = [f"{indent}decided by: {selection.get('by')}" + (
        f" (tied: {', '.join(str(a) for a in selection['tied'])})" if selection.get("tied") else "")]
    lines += [f"{indent}cross-test: attempt {c['tests_of']}'s tests on attempt {c['code_of']}'s code: {c['outcome']}"
              + (f" ({', '.join(c['failing'][:3])})" if c.get("failing") else "")
              for c in selection.get("cross_tests") or []]
    if selector:
        lines.append(f"{indent}selector: {selector.get('status', '-')}, chose {selector.get('chosen') or 'none'}"
                     f"{'; ' + selector['note'] if selector.get('note') else ''},"
                     f" ${float(selection.get('cost_usd') or 0.0):.4f}")
    return lines


def note_replacement(path: Path, new_ids: list[str], cost_usd: float) -> None:
    """A replaced task's AUTO-RUN.md says what replaced it (once, also when a resume gets here again)."""
    text = run_files.read(path)
    if text is None or "## Replaced" in text:
        return
    run_files.write(path, text + f"\n## Replaced\n\nThe planner split this task into {', '.join(new_ids)}"
                                 f" (replan cost ${cost_usd:.4f}); their own reports say how they ended.\n")


def _attempt(result: TaskResult, *, approved: bool) -> str:
    """A report cell: the approved attempt's (or everything else's) cost and turns; "-" for a task not run."""
    if not result:
        return "-"
    receipt = receipts.of_result(result)
    if approved:
        return f"${receipt['approved_cost_usd']:.4f} ({receipt['approved_turns']})"
    return f"${receipt['other_cost_usd']:.4f} ({receipt['other_turns']})"


def write(path: Path, text: str) -> Path:
    """A report into the run's folder, no symlink followed (repo/run_files.py)."""
    return run_files.write(path, text)
