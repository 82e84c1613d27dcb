"""Review nodes of the task subgraph: the optional pre-check and the coach, with the objective verify gate."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from agents import CoachInput
from orchestrator.facts import Acceptance, player_report, review_of
from orchestrator.gate import (
    SHIFTED_IDS_NOTE,
    GateResult,
    case_diff,
    code_screen_hits,
    describe_test_change,
    is_test_data,
    is_test_file,
    parse_name_status,
    read_by_gate,
    tests_not_run,
    tests_only_skipped,
    too_large_files,
    unaccepted_test_changes,
)
from orchestrator.graph import attempt_gates, control, steering
from orchestrator.graph.context import RunContext
from orchestrator.graph.nodes import bring_up
from orchestrator.graph.nodes.turns import AgentTurn, hung_command_note, session_failure
from orchestrator.graph.state import FeedbackItem, Review, TaskState


def _items(raw: Any) -> list[FeedbackItem]:
    items = []
    for item in raw or []:
        if not isinstance(item, dict):
            continue
        line = item.get("line")
        items.append(FeedbackItem(file=str(item.get("file") or ""), line=line if isinstance(line, int) else None,
                                  issue=str(item.get("issue") or "")))
    return items


async def _review_input(agent: AgentTurn) -> CoachInput:
    """What a reviewer sees: the committed turn and its diff from the task base (the session itself starts on the
    worktree reset to that turn: AgentTurn.run)."""
    ctx, state = agent.ctx, agent.state
    return CoachInput(
        brief=ctx.brief(agent.task_id, state.get("answers")), turn=state["turn"], worktree=agent.worktree,
        player_report=player["report"] if (player := state.get("player")) else None,
        diff=await ctx.repo.diff(agent.worktree, state["base_sha"]), transcript_path=agent.transcript(),
        conflict=bring_up.coach_note(state),
        test_changes=await _test_changes(ctx, agent.worktree, state["base_sha"], state["head_sha"]),
        attempt=max(agent.attempt, 1), supervisor_notes=await steering.for_coach(ctx, state, agent.events),
    )


async def _screened_code(ctx: RunContext, worktree: Path, base: str, written: list[str]) -> str:
    """The screen's hits on the code the turn wrote (gate/spec/code_screen.py), and the files it wrote too large
    for the gate to read (gate/spec/oversized.py), for the coach to accept or send back."""
    hits = await code_screen_hits(ctx.repo, worktree, base)
    large = await asyncio.to_thread(too_large_files, worktree, [path for path in written if read_by_gate(path)])
    demand = (" The gate refuses your approval unless you name each file in test_changes_accepted with the"
              " requirement that demands it; an accepted one leaves the approval unverified:")
    listing = "\n".join(f"- {hit.describe()}" for hit in hits[:50])
    knowing = (f"\n\nCode this task wrote that knows it is tested (it reads whether a runner runs it, touches the"
               f" runner or its output, or answers a comparison without reading it).{demand}\n{listing}"
               if hits else "")
    listed = "\n".join(f"- {change['test']}: {change['detail']}" for change in large[:50])
    return knowing + (f"\n\nFiles this task wrote that are too large for the gate to read, so nothing in them was"
                      f" screened.{demand}\n{listed}" if large else "")


async def _test_changes(ctx: RunContext, worktree: Path, base: str, head: str) -> str:
    """The base's test files the turn changed or deleted (renames named), with their diff, then the cases of
    parametrized and table tests that changed (their ids are positions that shift: gate/spec/shifted.py)."""
    renamed, deleted, modified, added = parse_name_status(await ctx.repo.name_status(worktree, base))
    # Test code first, then its data (golden files, snapshots, fixtures): a large data diff must not crowd the
    # code's out of the shown part.
    files = sorted((path for path in {*deleted, *modified, *renamed} if is_test_file(path)),
                   key=lambda path: (is_test_data(path), path))
    screened = await _screened_code(ctx, worktree, base, [*added, *modified, *(new for new, _ in renamed.values())])
    if not files:
        return f"None: no test file of the base was changed or deleted.{screened}" if screened else ""
    lines = [f"- {path}: " + ("deleted" if path in deleted else f"renamed to {renamed[path][0]}"
                              f" ({renamed[path][1]}% similar)" if path in renamed else "changed") for path in files]
    patches = "".join([await ctx.repo.patch_of(worktree, base, path) for path in files])[:30_000]
    cases = "".join([case_diff(path, await ctx.repo.show_file(base, path), await ctx.repo.show_file(
        head, renamed[path][0] if path in renamed else path)) for path in files if path not in deleted])[:20_000]
    shifting = f"\n\nParametrized cases and test tables the turn changed. {SHIFTED_IDS_NOTE}\n```diff\n{cases}```"
    return "\n".join(lines) + f"\n\n```diff\n{patches}```" + (shifting if cases else "") + screened


async def coach(state: TaskState, runtime: Runtime[RunContext]) -> TaskState:
    ctx, task_id, turn = runtime.context, state["task_id"], state["turn"]
    if stop := await control.at_boundary(ctx, state, ctx.events(runtime), "coach",  # first: a pause re-runs it
                                         lambda: runtime.drain_requested):
        return TaskState(stop=stop)
    agent = AgentTurn(state, runtime, "coach")
    if stop := await agent.budget_stop():
        return TaskState(stop=stop)
    data = await _review_input(agent)
    agent.events("coach_validate", task_id, turn=turn)
    result = await agent.run(lambda settings: ctx.agents.coach(data, settings))
    extra: list[str] = []
    if result.status == "success" and result.report is None:
        extra.append(f"turn {turn} coach: ended without record_decision (retried once)")
        if agent.out_of_budget() is None:
            data.transcript_path = agent.transcript()
            result = await agent.run(lambda settings: ctx.agents.coach(data, settings))
    # The coach only reads and runs tests; whatever its commands left behind is discarded.
    await ctx.repo.reset(agent.worktree, state["head_sha"])
    update = TaskState(cost_usd=agent.spent, violations=agent.record_violations(extra),
                       user_changes=agent.user_changes)
    if (note := hung_command_note("coach", result)) and not agent.tampering():
        agent.events("command_hung", task_id, turn=turn, role="coach", commands=result.stuck_commands)
        review = review_of(turn, "coach", note, notes=[note])
        history = agent.sessions.history("timeout", state["head_sha"], note[:200])
        return update | TaskState(review=review, history=[history])
    if stop := agent.tampering() or session_failure("coach", result):
        return update | TaskState(stop=stop)
    decision = dict(result.report or {})
    approved = decision.get("decision") == "approve"
    review = review_of(turn, "coach", str(decision.get("rationale") or "the coach ended without recording a decision"),
                       verdict="approve" if approved else "feedback", items=_items(decision.get("feedback_items")))
    if approved:
        review, judged = await _judge_approval(agent, decision, review)
        update |= judged | TaskState(violations=[*update["violations"], *judged["violations"]])
    if review["verdict"] == "feedback" and not review["items"]:
        review["notes"] = [review["rationale"]]
    agent.events("coach_decision", task_id, turn=turn, decision=review["verdict"], rationale=review["rationale"],
                 feedback_items=review["items"], session_id=result.session_id, cost_usd=agent.sessions.cost_usd,
                 false_approval=review["false_approval"])
    history = agent.sessions.history(review["verdict"], state["head_sha"], review["rationale"][:200])
    return update | TaskState(review=review, history=[history])


async def _judge_approval(agent: AgentTurn, decision: dict[str, Any], review: Review) -> tuple[Review, TaskState]:
    """An approval against our own gate: the coach's claims, the player's reported tests and the base tests the
    task changed (each one the coach did not accept refuses it); a gate that fails sends the approval back."""
    ctx, state, task_id, turn = agent.ctx, agent.state, agent.task_id, int(agent.state["turn"])
    accepted = _acceptances(decision.get("test_changes_accepted"))
    gate = await _verify(state, ctx, accepted)
    review = review.copy()
    review["gate"], review["accepted_tests"] = gate, accepted
    if gate["command"]:
        agent.events("gate", task_id, turn=turn, **gate)
    contradictions = contradicted_claims(decision.get("tests_verified"), gate)
    written = player_report(state)["tests_written"]
    skipped = tests_only_skipped(written, gate)
    unrun = [path for path in tests_not_run(written, gate) if not any(s.startswith(path + ":") for s in skipped)]
    details = [f"player claims contradicted: reported tests the gate did not run: {', '.join(unrun)}"] * bool(unrun)
    details += [f"player claims contradicted: reported tests the gate only skipped: {entry}" for entry in skipped]
    open_changes = [change for change in unaccepted_test_changes(gate.get("test_changes") or [])
                    if change["fate"] != "failing"]
    if open_changes:
        details.append("coach approved with base tests changed and not accepted: "
                       + "; ".join(describe_test_change(change) for change in open_changes[:5]))
    update = TaskState(violations=[*details, *contradictions])
    for detail in [*details, *contradictions]:
        agent.events("contract_violation", task_id, turn=turn, detail=detail)
    if contradictions:
        update["claims_contradicted"] = int(state.get("claims_contradicted", 0)) + len(contradictions)
    if not gate["passed"]:
        update["false_approvals"] = int(state.get("false_approvals", 0)) + 1
        review["verdict"], review["false_approval"] = "feedback", True
        review["rationale"] = f"coach approved but verify failed: {gate['summary']}"
        review["items"] = [FeedbackItem(file="", line=None,
                                        issue=f"coach approved but verify failed:\n{gate['output']}")]
    return review, update


def contradicted_claims(claimed: Any, gate: GateResult) -> list[str]:
    """The coach's reported test numbers against what our own gate run observed. Running a subset of the
    tests is not a contradiction; approving red work, claiming no failures the gate saw (also tests already
    failing on the base: the gate passes them, but they fail), or passes where the gate ran nothing, is."""
    if not gate["command"]:
        return []
    numbers = claimed if isinstance(claimed, dict) else {}
    said_passed, said_failed = numbers.get("passed"), numbers.get("failed")
    found = []
    if not gate["passed"]:
        found.append(f"coach claims contradicted: approved while the gate failed ({gate['summary']})")
    if said_failed == 0 and (gate["tests_failed"] or gate["new_failures"]):
        seen = gate["tests_failed"] or len(gate["new_failures"])
        on_base = "" if gate["new_failures"] or not gate["passed"] else ", all of them already failing on the base"
        found.append(f"coach claims contradicted: reported failed: 0, the gate saw {seen} failing{on_base}")
    ran = (gate["tests_passed"] or 0) + (gate["tests_failed"] or 0)
    if isinstance(said_passed, int) and said_passed > 0 and gate["tests_passed"] is not None and ran == 0:
        found.append(f"coach claims contradicted: reported {said_passed} passed, the gate ran no tests")
    return found


def _acceptances(raw: Any) -> list[Acceptance]:
    return [Acceptance(test=str(entry.get("test") or ""), reason=str(entry.get("reason") or ""))
            for entry in raw or [] if isinstance(entry, dict) and entry.get("test")]


async def _verify(state: TaskState, ctx: RunContext, accepted: list[Acceptance]) -> GateResult:
    """The objective gate, run by us in the worktree (whatever it leaves behind is discarded): every test that
    passed where the task started must pass, or be a change the coach accepted."""
    worktree = Path(state["worktree"])
    with attempt_gates.in_line():  # under `first`, a sibling attempt's gate that came first goes first on the CPU
        run = await ctx.gates.run(worktree, ctx.gate_command(state["task_id"]), changed_since=ctx.feature_branch,
                                  against=state["base_sha"], accepted=accepted, hidden_tests=ctx.hidden_of(
                                      [state["task_id"]]), kind=ctx.plan.task(state["task_id"]).kind)
    await ctx.repo.reset(worktree, state["head_sha"])
    return run.result


async def precheck(state: TaskState, runtime: Runtime[RunContext]) -> TaskState:
    """Optional cheap yes/no plausibility check on a fast model before spending a coach session."""
    ctx, task_id, turn = runtime.context, state["task_id"], state["turn"]
    agent = AgentTurn(state, runtime, "precheck")
    if stop := await agent.budget_stop():
        return TaskState(stop=stop)
    data = await _review_input(agent)
    verdicts = []

    async def call(settings: Any) -> Any:
        result, verdict = await ctx.agents.precheck(data, settings)
        verdicts.append(verdict)
        return result

    result = await agent.run(call)
    verdict = verdicts[-1]
    agent.events("precheck", task_id, turn=turn, plausible=verdict.plausible, reason=verdict.reason,
                 cost_usd=result.cost_usd, session_id=result.session_id)
    update = TaskState(cost_usd=agent.spent, history=[agent.sessions.history(
        "yes" if verdict.plausible else "no", state["head_sha"], verdict.reason)])
    if result.status != "success" or verdict.plausible:
        return update  # a broken pre-check must not block the coach
    note = f"Pre-check: {verdict.reason}"
    return update | TaskState(review=review_of(turn, "precheck", note, notes=[note]))
