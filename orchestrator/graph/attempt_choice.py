"""The selection among a task's attempts beyond the pure keys (issue 40): cross-testing, then the selector.

graph/attempts.py hands the finished attempts here once they all reached their verdict. Policy `first` with a
verified approval: that one, at once. Otherwise the deterministic keys (graph/selection.py); when they leave
several candidates tied, every tied candidate's new tests run on every other tied candidate's code in the gate's
clean room (gate/spec/cross_tests.py), and a candidate whose code passes more of its siblings' suites ranks higher
(dual agreement); still tied, a leader whose whole code change its tied siblings made too wins over leaders that
also changed code no sibling did (graph/attempt_consensus.py: a lone change is where a break no test covers hides;
a leader with lines of its own is not judged by their number, a smaller diff is not a righter one); still tied, a
selector session (agents/selector.py: a fresh read-only coach session) picks, through `record_selection`; a selector
that fails or does not decide leaves the first approved first, and says so. All run inside one `@task`
(`judge_tie`), so a resume replays their record and never runs them again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from langgraph.func import task
from langgraph.runtime import get_runtime

from agents import SelectorCandidate, SelectorInput
from orchestrator.facts import AttemptRecord, CrossCell, Receipt, SelectionRecord, TaskResult
from orchestrator.graph.active import ACTIVE
from orchestrator.graph.attempt_consensus import unshared
from orchestrator.graph.attempt_records import AttemptOutcome, approach
from orchestrator.graph.context import RunContext
from orchestrator.graph.events import EventLog
from orchestrator.graph.selection import Candidate, Selection, rank, tied, why_not


async def select(task_id: str, run_key: str, candidates: Sequence[Candidate], outcomes: Mapping[int, AttemptOutcome],
                 verified: int | None) -> tuple[Selection, SelectionRecord]:
    """The selection's order and how it was decided (`verified`: policy `first`'s winner, if any)."""
    if verified is not None:
        order = (verified, *(a for a in rank(candidates).order if a != verified))
        return Selection(order, f"attempt {verified} was the first the gate verified (policy first)"), \
            SelectionRecord(by="policy", tied=[])
    top = tied(candidates)
    if len(top) < 2:
        return rank(candidates), SelectionRecord(by="keys", tied=[c.attempt for c in top])
    record = cast("SelectionRecord", await judge_tie(task_id, run_key, [_facts(outcomes[c.attempt]) for c in top]))
    confirmed = {int(a): n for a, n in (record.get("confirmed") or {}).items()}
    lone = {int(a): n for a, n in (record.get("unshared") or {}).items()}
    ranked = [dataclasses.replace(c, confirmed_by=confirmed.get(c.attempt), unshared=lone.get(c.attempt))
              if c.attempt in confirmed else c for c in candidates]
    chosen = record.get("selector", {}).get("chosen")
    selection = rank(ranked, tiebreak=lambda still: chosen)
    return Selection(selection.order, _reason(selection, record, ranked)), record


def _reason(selection: Selection, record: SelectionRecord, ranked: Sequence[Candidate]) -> str:
    """Why the pick leads, by what decided it."""
    selector = record.get("selector") or {}
    by = record.get("by")
    if by == "selector":
        return f"attempt {selection.picked} picked by the selector among the tied {_listed(record.get('tied'))}" + (
            f": {selector['summary']}" if selector.get("summary") else "")
    if by == "fallback":
        return (f"the selector did not decide ({selector.get('note', '')}): attempt {selection.picked}, the first"
                f" approved of the tied {_listed(record.get('tied'))}, stands")
    return selection.reason


def _listed(attempts: Sequence[int] | None) -> str:
    return ", ".join(str(a) for a in attempts or [])


def _facts(outcome: AttemptOutcome) -> dict[str, Any]:
    """What the tie's judges need of one candidate (plain data: a task's argument)."""
    state = outcome["state"]
    review: dict[str, Any] = dict(state.get("review") or {})
    result: dict[str, Any] = dict(state.get("result") or {})
    gate: dict[str, Any] = dict(review.get("gate") or {})
    return {"attempt": outcome["attempt"], "sha": str(result.get("sha") or state.get("head_sha") or ""),
            "base_sha": str(state.get("base_sha") or ""), "branch": str(state.get("branch") or ""),
            "worktree": str(state.get("worktree") or ""), "coach": str(review.get("rationale") or ""),
            "gate": _gate_report(gate, result), "answers": dict(state.get("answers") or {})}


def _gate_report(gate: Mapping[str, Any], result: Mapping[str, Any]) -> str:
    """The gate's report on an approved tree, as the selector reads it (never a hidden test's source: redacted)."""
    lines = [f"verdict: {result.get('status')}; {gate.get('summary') or '(no gate run)'}"]
    if (shown := gate.get("new_tests_failing_on_base")) is not None:
        lines.append(f"new tests failing on the base's code: {shown}")
    lines += [f"accepted test change: {c.get('test')}: {c.get('fate')} ({c.get('accepted')})"
              for c in result.get("test_changes") or []]
    lines += [f"unverified: {entry}" for entry in gate.get("unverified") or []]
    return "\n".join(lines)


@task
async def judge_tie(task_id: str, run_key: str, facts: list[dict[str, Any]]) -> dict[str, Any]:
    """Cross-testing among the tied candidates, then the selector when still tied: the SelectionRecord."""
    ctx = ACTIVE[run_key].ctx
    events = ctx.events(get_runtime())
    began = time.monotonic()
    cells = await _cross_tests(ctx, task_id, facts)
    elapsed = round(time.monotonic() - began, 3)
    confirmed = {str(f["attempt"]): sum(1 for cell in cells if cell["code_of"] == f["attempt"]
                                        and cell["outcome"] == "passed") for f in facts}
    events("cross_tests", task_id, cells=[dict(cell) for cell in cells], confirmed=confirmed, duration_s=elapsed)
    record = SelectionRecord(tied=[int(f["attempt"]) for f in facts], cross_tests=cells, cross_tests_s=elapsed,
                             confirmed=confirmed, cost_usd=0.0)
    best = max(confirmed.values(), default=0)
    leaders = [f for f in facts if confirmed[str(f["attempt"])] == best]
    if len(leaders) < 2:
        return dict(record | SelectionRecord(by="cross-tests"))
    diffs = {int(f["attempt"]): (await ctx.repo.git("diff", f"{f['base_sha']}..{f['sha']}", check=False)).stdout
             for f in facts}
    lone = unshared(diffs)
    of_leaders = [lone[int(f["attempt"])] for f in leaders]
    if min(of_leaders) == 0 < max(of_leaders):  # some changed only what a sibling changed too, some more
        record["unshared"] = {str(f["attempt"]): lone[int(f["attempt"])] for f in leaders}
        leaders = [f for f in leaders if lone[int(f["attempt"])] == 0]
        if len(leaders) < 2:
            return dict(record | SelectionRecord(by="consensus"))
    selector = await _selector(ctx, task_id, leaders, cells, events)
    by = "selector" if selector.get("chosen") is not None else "fallback"
    return dict(record | SelectionRecord(by=by, selector=selector, cost_usd=float(selector.get("cost_usd", 0.0))))


async def _cross_tests(ctx: RunContext, task_id: str, facts: list[dict[str, Any]]) -> list[CrossCell]:
    """Every candidate's new tests on every other candidate's code, one run at a time (the machine's cores are
    the gate's)."""
    cells: list[CrossCell] = []
    command = ctx.gate_command(task_id)
    for tests_of in facts:
        for code_of in facts:
            if tests_of is code_of:
                continue
            run = await ctx.gates.cross_test(Path(str(tests_of["worktree"]) or ctx.worktree(task_id)), command,
                                             base=str(tests_of["base_sha"]), tests_from=str(tests_of["sha"]),
                                             code_from=str(code_of["sha"]))
            cells.append(CrossCell(tests_of=int(tests_of["attempt"]), code_of=int(code_of["attempt"]),
                                   outcome=run.outcome, failing=list(run.failing[:20]), detail=run.detail[:300]))
    return cells


def matrix_lines(cells: Sequence[Mapping[str, Any]]) -> list[str]:
    """The cross-test matrix, a line per cell: `attempt 1's tests on attempt 2's code: failed (t::x)`."""
    return [f"attempt {c['tests_of']}'s tests on attempt {c['code_of']}'s code: {c['outcome']}"
            + (f" ({', '.join(c['failing'][:3])})" if c.get("failing") else "") for c in cells]


async def _selector(ctx: RunContext, task_id: str, leaders: list[dict[str, Any]], cells: Sequence[CrossCell],
                    events: EventLog) -> dict[str, Any]:
    """The selector session's pick among `leaders`: chosen (None: failed or undecided, with a note), reasons by
    attempt, its status and cost."""
    spent = ctx.spend.by_task.get(task_id, 0.0) + sum(v for k, v in ctx.spend.by_task.items()
                                                      if k.startswith(f"{task_id}.a"))
    if exhausted := ctx.budget_exhausted(task_id, spent):
        return {"chosen": None, "reasons": {}, "status": "not run", "note": f"no selector: {exhausted}",
                "cost_usd": 0.0}
    candidates = [SelectorCandidate(
        attempt=int(f["attempt"]), branch=str(f["branch"]), gate=str(f["gate"]), coach=str(f["coach"]),
        approach=approach(int(f["attempt"])),
        diff=(await ctx.repo.git("diff", "--stat", "-p", f"{f['base_sha']}..{f['sha']}", check=False)).stdout)
        for f in leaders]
    answers = {q: a for f in leaders for q, a in dict(f.get("answers") or {}).items()}
    data = SelectorInput(brief=ctx.brief(task_id, answers), candidates=candidates, repo=ctx.repo.root,
                         keys="they tie on every deterministic key and on the cross-tests",
                         cross_tests="\n".join(matrix_lines(cells)),
                         transcript_path=ctx.runs_dir(task_id) / "selector.jsonl")
    events("selector_start", task_id, candidates=data.choices)
    settings = await asyncio.to_thread(ctx.session_settings, "coach", task_id, spent, events)
    result = await ctx.agents.select(data, settings)
    ctx.spend.record(f"{task_id}.select", result.cost_usd)
    decided = decision(result.report if result.status == "success" else None, data.choices)
    decided |= {"status": result.status, "cost_usd": round(result.cost_usd, 6)}
    if decided["chosen"] is None and result.status != "success":
        decided["note"] = f"the selector session ended {result.status}"
    events("selector", task_id, chosen=decided["chosen"], reasons=decided["reasons"], note=decided.get("note", ""),
           cost_usd=decided["cost_usd"])
    return decided


def decision(report: Mapping[str, Any] | None, choices: Sequence[int]) -> dict[str, Any]:
    """The selector's record_selection read against the candidates it was offered: a pick outside them, or a
    candidate left without a reason, is no decision (the first approved then stands)."""
    if report is None:
        return {"chosen": None, "reasons": {}, "note": "no record_selection"}
    try:
        chosen = int(str(report.get("chosen", "")).strip().removeprefix("a").removeprefix("attempt").strip())
    except ValueError:
        return {"chosen": None, "reasons": {}, "note": f"chosen {report.get('chosen')!r} is no attempt number"}
    reasons: dict[str, str] = {}
    for entry in report.get("reasons") or []:
        attempt = str(entry.get("attempt", "")).strip().removeprefix("a")
        if str(entry.get("why_not") or "").strip():
            reasons[attempt] = str(entry["why_not"]).strip()
    if chosen not in choices:
        return {"chosen": None, "reasons": reasons, "note": f"attempt {chosen} was not one of the candidates"}
    missing = [str(c) for c in choices if c != chosen and str(c) not in reasons]
    if missing:
        return {"chosen": None, "reasons": reasons, "note": f"no reason given for attempt(s) {', '.join(missing)}"}
    return {"chosen": chosen, "reasons": reasons, "summary": "; ".join(
        f"not {a}: {why}" for a, why in sorted(reasons.items()) if a != str(chosen))}


def with_selection(final: dict[str, Any], record: SelectionRecord, *, selection: Selection,
                   candidates: Sequence[Candidate], task_id: str, run_key: str) -> dict[str, Any]:
    """The task's final state with how the pick was decided: the record, each attempt's cross-test count and why
    it was not picked, and the selector's cost in the task's."""
    result = TaskResult(**(final.get("result") or {}))  # type: ignore[typeddict-item]
    by_attempt = {c.attempt: c for c in candidates}
    confirmed = record.get("confirmed") or {}
    reasons = (record.get("selector") or {}).get("reasons") or {}
    picked = by_attempt.get(selection.picked) if selection.picked is not None else None
    attempts: list[AttemptRecord] = []
    for entry in result.get("attempts") or []:
        attempt = int(entry.get("attempt") or 0)
        extra = AttemptRecord(confirmed_by=confirmed.get(str(attempt)))
        if attempt != selection.picked and attempt in by_attempt and picked is not None:
            extra["why_not"] = reasons.get(str(attempt)) or why_not(picked, by_attempt[attempt])
        attempts.append(AttemptRecord(**{**entry, **extra}))
    result["attempts"] = attempts
    result["selection"] = record
    cost = float(record.get("cost_usd") or 0.0)
    if cost:
        ACTIVE[run_key].ctx.spend.by_task.pop(f"{task_id}.select", None)
        result["cost_usd"] = round(float(result.get("cost_usd", 0.0)) + cost, 6)
        if (receipt := result.get("receipt")) is not None:
            result["receipt"] = Receipt(**{
                **receipt, "other": {**receipt["other"], "selector_usd": round(cost, 6)},
                "other_cost_usd": round(float(receipt["other_cost_usd"]) + cost, 6)})
    return {**final, "result": result}
