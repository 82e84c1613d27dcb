"""Nodes of the task subgraph: initialize, player (and its judgement), ask_human, feedback, finalize.

Nodes return facts (typed partial states); routers decide. A node never catches an infrastructure error:
it leaves the task's subgraph, the workflow marks the task `error`, and a resume re-runs exactly that node.
Agent nodes start from the worktree SHA checkpointed by the previous node and end by committing.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Sequence
from pathlib import Path

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from agents import AgentResult, PlayerInput, SessionSettings, format_feedback
from orchestrator.causes import StopCause, cause_of
from orchestrator.facts import GateResult, player_report, review_of
from orchestrator.gate import (
    BY_EXIT,
    describe_test_change,
    submodule_changes,
    submodule_refusal,
    tests_only_skipped,
    undo_submodule_changes,
)
from orchestrator.graph import control, pause_now, steering
from orchestrator.graph.context import RunContext
from orchestrator.graph.events import EventLog
from orchestrator.graph.given_answer import given_answer
from orchestrator.graph.nodes import bring_up
from orchestrator.graph.nodes.budget_question import at_cap
from orchestrator.graph.nodes.turns import AgentTurn, hung_command_note, session_failure
from orchestrator.graph.state import (
    Outcome,
    PlayerTurn,
    Question,
    Review,
    Reviewer,
    Stop,
    TaskResult,
    TaskState,
)
from orchestrator.settings import Asker
from orchestrator.store import receipts
from orchestrator.views import reports


async def initialize(state: TaskState, runtime: Runtime[RunContext]) -> TaskState:
    ctx, task_id = runtime.context, state["task_id"]
    update = TaskState(started=time.time(), turn=1, cost_usd=0.0, blocker_hashes=[], stop=None, review=None,
                       player=None, question=None, answers=dict(ctx.answers.get(task_id, {})), stall_count=0,
                       false_approvals=0, claims_contradicted=0, result=None, conflict=None, conflict_turns=0)
    if state.get("skip_reason"):
        ctx.events(runtime)("skipped", task_id, reason=state["skip_reason"])
        return update | TaskState(stop=Stop(outcome="skipped", reason=str(state["skip_reason"]), cause="dependency"),
                                  turn=0)
    start = await asyncio.to_thread(ctx.repo.rev, ctx.feature_branch)
    attempt = int(state.get("attempt") or 1)
    worktree, branch = ctx.worktree(task_id, attempt), ctx.task_branch(task_id, attempt)
    sha = await ctx.repo.add_worktree(worktree, branch, start)
    # One of several attempts: its siblings starting from this commit share one setup.
    shared = await ctx.setup_worktree(worktree, (task_id, sha) if state.get("hold_landing") else None)
    ctx.events(runtime)("initialize", task_id, worktree=str(worktree), base_sha=sha,
                        **({"setup_from": shared.name} if shared else {}))
    return update | TaskState(worktree=str(worktree), branch=branch, base_sha=sha, head_sha=sha)


def _review(turn: int, reviewer: Reviewer, notes: list[str]) -> Review:
    """The orchestrator's own feedback: its notes, the first one as the rationale."""
    return review_of(turn, reviewer, notes[0] if notes else "", notes=notes)


async def player(state: TaskState, runtime: Runtime[RunContext]) -> TaskState:
    ctx, task_id, turn = runtime.context, state["task_id"], state["turn"]
    agent = AgentTurn(state, runtime, "player")  # reads only: a pause below re-runs the node from its first line
    if stop := await control.at_boundary(ctx, state, agent.events, "player", lambda: runtime.drain_requested) \
            or await agent.budget_stop():
        return TaskState(stop=stop)
    previous = state.get("review")
    conflict = bring_up.pending(state)  # a conflict turn: the merge is re-created first, also on resume
    agent.events("player_start", task_id, turn=turn, conflict=bool(conflict))
    notes = await steering.deliver(ctx, state, turn, agent.events)  # at its start, then after each tool call

    async def session(settings: SessionSettings) -> AgentResult:
        if conflict is not None:
            await bring_up.recreate(ctx, agent.worktree, task_id, conflict)
        return await ctx.agents.player(PlayerInput(
            brief=ctx.brief(task_id, state.get("answers")), turn=turn, max_turns=ctx.options.max_turns,
            worktree=agent.worktree, feedback=[dict(item) for item in previous["items"]] if previous else [],
            feedback_notes=[*pause_now.told(state), *(previous["notes"] if previous else [])],
            answers=dict(state.get("answers") or {}), transcript_path=pause_now.transcript(agent.transcript(), state),
            supervisor_notes=notes.lines,
            attempt=int(state.get("attempt") or 1), approach=str(state.get("approach") or ""), pending_notes=notes,
        ), settings)

    result = await pause_now.watched(ctx, task_id, agent.run(session), cuttable=conflict is None)
    if result is None:  # `pause --now` cut the session: its work is kept, the turn runs again once unpaused
        ctx.spend.unsaved.pop(agent.spend_key, None)  # its cost so far goes into this node's checkpoint
        return await pause_now.kept(agent.events, state, ctx.repo.commit_all(
            agent.worktree, f"autobuild({task_id}): player turn {turn}, paused (its work so far)"), agent.spent)
    cost = TaskState(cost_usd=agent.spent, user_changes=agent.user_changes, notes_delivered=notes.ids,
                     paused_turn=None)
    if stop := agent.tampering():
        return cost | TaskState(stop=stop)
    if result.question is not None:
        return cost | _question(state, ctx.options.interactive, agent.events, result)
    base = state["base_sha"]
    if conflict is not None and result.status != "success":
        await ctx.repo.reset(agent.worktree, state["head_sha"])  # judged below; a re-run re-creates the merge
    elif conflict is not None:
        if stop := await bring_up.conclude(ctx, agent.worktree, task_id, turn, conflict,
                                                approved_sha=state["head_sha"]):
            return cost | TaskState(stop=stop)
        base = conflict["head"]  # the task's work is now relative to the feature head it merged
    sha, submodules, changed, tampered = await _committed(ctx, agent.worktree, task_id, turn, base)
    agent.events("player_report", task_id, turn=turn, status=result.status, session_id=result.session_id,
                 cost_usd=result.cost_usd, files=changed, report=result.report, sha=sha)
    update = cost | TaskState(
        player=PlayerTurn(status=result.status, report=result.report, files=changed,
                          final_text=result.final_text[-2000:], session_id=result.session_id),
        head_sha=sha, base_sha=base, review=None,
        history=[agent.sessions.history(result.status, sha, f"{len(changed)} file(s) changed")],
    )
    missing_report = result.status == "success" and result.report is None and not at_cap(result)
    update["violations"] = agent.record_violations(
        [f"turn {turn} player: ended without calling report_progress"] if missing_report else [])
    if tampered:
        agent.events("frozen_test_tampering", task_id, turn=turn, files=tampered)
    return update | judge_player(state, agent.events, result, changed, agent.worktree, tampered=tampered,
                                 submodules=submodules, hidden=ctx.plan.task(task_id).hidden_tests)


async def _committed(ctx: RunContext, worktree: Path, task_id: str, turn: int, base: str,
                     ) -> tuple[str, list[str], list[str], list[str]]:
    """The turn's work committed, its submodule changes undone and its frozen tests restored: the head, the
    submodules undone, the files changed since `base`, the frozen tests it touched."""
    sha = await ctx.repo.commit_all(worktree, f"autobuild({task_id}): player turn {turn}")
    submodules = await submodule_changes(ctx.repo, worktree, base)
    if submodules:  # never committed, merged nor gated: undone, and the turn is refused with the reason
        await undo_submodule_changes(ctx.repo, worktree, base, submodules)
        sha = await ctx.repo.commit_all(worktree, f"autobuild({task_id}): undo submodule changes (turn {turn})")
    changed = await ctx.repo.changed_files(worktree, base)
    tampered = [path for path in ctx.plan.task(task_id).acceptance_tests if path in changed]
    if tampered:
        sha = await _restore(ctx, worktree, base, tampered, task_id=task_id, turn=turn)
        changed = await ctx.repo.changed_files(worktree, base)
    return sha, submodules, changed, tampered


def judge_player(state: TaskState, events: EventLog, result: AgentResult, changed: list[str], worktree: Path, *,
                 tampered: list[str], submodules: Sequence[str] = (), hidden: bool = False) -> TaskState:
    """Failure, blocker, or completion: the terminal signal AND artifacts on disk, never the exit code alone."""
    task_id, turn = state["task_id"], state["turn"]
    hung = hung_command_note("player", result)
    if hung:
        events("command_hung", task_id, turn=turn, role="player", commands=result.stuck_commands)
    elif stop := session_failure("player", result):
        return TaskState(stop=stop)
    if result.blocker:
        return _blocked(state, events, result.blocker)
    if tampered or submodules:
        refused = [submodule_refusal(list(submodules))] if submodules else []
        if tampered and hidden:  # a file at a hidden test's path: the gate puts the hidden test there itself
            refused.append(f"You wrote files at the paths of hidden acceptance tests ({', '.join(tampered)}); they"
                           " were removed: the gate puts the hidden tests there itself. Meet the requirements.")
        elif tampered:
            refused.append(f"You edited or deleted frozen acceptance tests ({', '.join(tampered)}); they were"
                           " restored. Make the code pass them instead.")
        return TaskState(review=_review(turn, "tampering" if tampered else "incomplete", refused), blocker_hashes=[])
    notes = [hung] if hung else []
    if at_cap(result):  # the CLI stopped it at the run's budget, which a person was asked to raise
        notes.append("Your previous session was stopped at the run's budget before it finished; its work is kept:"
                     " finish the task, then report.")
    elif not hung and result.report is None and not result.promise_complete:
        notes.append("Your previous turn ended without calling report_progress: implement, then report.")
    report = result.report or {}
    reported = [str(p) for key in ("files_modified", "tests_written") for p in report.get(key) or [] if p]
    missing = [p for p in reported if not (worktree / p).exists() and p not in changed]  # deleting is a change
    if missing:
        notes.append(f"Files you reported (modified, or tests written) do not exist: {', '.join(missing)}.")
    if not changed:
        notes.append("Your previous turn changed no files: the task's work is not on disk.")
    if notes:
        return TaskState(review=_review(turn, "incomplete", notes), blocker_hashes=[])
    return TaskState(blocker_hashes=[])


def _blocked(state: TaskState, events: EventLog, blocker: dict[str, str]) -> TaskState:
    """A blocker stops the task when reported twice in a row, or at once for a spec-test conflict (a person decides
    which is right, never the player by bending either); else the player is asked to work around it once."""
    task_id, turn = state["task_id"], state["turn"]
    previous = state.get("blocker_hashes", [])
    events("blocker", task_id, turn=turn, **{("blocker_kind" if key == "kind" else key): value
                                             for key, value in blocker.items() if value})
    hashes = [*previous, blocker["hash"]]
    if blocker.get("kind") == "spec-test-conflict":
        reason = (f"spec-test conflict: the requirement {blocker.get('requirement') or '(not named)'!r}"
                  f" contradicts the test {blocker.get('test') or '(not named)'}: {blocker['description']}")
        return TaskState(stop=Stop(outcome="blocked", reason=f"{reason}; action: {blocker['action']}",
                                   cause="spec_test_conflict"), blocker_hashes=hashes)
    if previous and previous[-1] == blocker["hash"]:
        reason = f"blocker {blocker['hash']} (reported twice in a row): {blocker['description']}"
        return TaskState(stop=Stop(outcome="blocked", reason=f"{reason}; action: {blocker['action']}",
                                   cause="blocker"), blocker_hashes=hashes)
    note = (f"You reported a blocker ({blocker['description']}). If you can work around it, do so;"
            " if it really blocks the task, report the same blocker again and the task stops for a human.")
    return TaskState(review=_review(turn, "blocker", [note]), blocker_hashes=hashes)


def _question(state: TaskState, interactive: bool, events: EventLog, result: AgentResult) -> TaskState:
    """The player asked a human: pause for an answer (interactive) or abort cleanly (autonomous)."""
    task_id, turn = state["task_id"], state["turn"]
    asked = dict(result.question or {})
    text = str(asked.get("question", ""))
    digest = hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()[:6]
    question = Question(question_id=f"{task_id}-{digest}", question=text,
                        options=[str(o) for o in asked.get("options") or []], task=task_id, turn=turn)
    events("question_asked", task_id, **{key: value for key, value in question.items() if key != "task"})
    if interactive:
        # The worktree stays at head_sha: the same turn runs again, with the answer, once it arrives.
        return TaskState(question=question)
    events("question_aborted", task_id, question_id=question["question_id"])
    return TaskState(stop=Stop(outcome="aborted", reason=f"ambiguous decision point: the agent asked {text!r}"
                                                         " and no human is available (--autonomous)",
                               cause="question"))


async def ask_human(state: TaskState, runtime: Runtime[RunContext]) -> TaskState:
    """Wait for a human's answer: at a terminal in-process (the run's asker; this task goes on as soon as it is
    answered while the others keep running), else as an interrupt (served and non-interactive runs, or no one
    answering now). interrupt() re-runs this node from its first line on every resume, so nothing here may call an
    agent or write a trace before it (asking again is fine: the asker knows an answer already given)."""
    question = state.get("question") or Question()
    asker: Asker | None = runtime.context.options.asker
    # Only the CLI sets it (a served run's JSON context can't carry a function: anything else there is ignored).
    shared = runtime.context.answers.setdefault(state["task_id"], {}) if state.get("attempt") else {}
    answer = shared.get(str(question.get("question")))  # a sibling attempt's same question: answered once
    at_terminal = False  # else the resume's answer (its `answer_given` says whose)
    if answer is None and callable(asker):
        async with runtime.context.slot_given_up():  # another task runs while a person decides
            answer = await asker(dict(question))
        at_terminal = answer is not None
    said: dict[str, str] = {"source": "cli"} if at_terminal else {}
    if answer is None:
        answer, said = given_answer(interrupt(dict(question)))
    runtime.context.events(runtime)("question_answered", state["task_id"], question_id=question.get("question_id"),
                                    answer=str(answer), **said)
    answers = {**(state.get("answers") or {}), str(question.get("question")): str(answer)}
    shared[str(question.get("question"))] = str(answer)  # the sibling attempts' next briefs carry it too
    return TaskState(answers=answers, question=None)


async def _restore(ctx: RunContext, worktree: Path, base: str, paths: list[str], *, task_id: str, turn: int) -> str:
    """Put frozen acceptance tests back exactly as they are on the task's base commit."""
    await ctx.repo.restore_paths(worktree, base, paths)
    return await ctx.repo.commit_all(worktree, f"autobuild({task_id}): restore frozen tests (turn {turn})")


async def feedback(state: TaskState, runtime: Runtime[RunContext]) -> TaskState:
    """Hand the review to the next turn; point out a stalled loop, and stop one stalled three times."""
    ctx, task_id, turn = runtime.context, state["task_id"], state["turn"]
    if stop := await control.at_boundary(ctx, state, ctx.events(runtime), "feedback", lambda: runtime.drain_requested):
        return TaskState(stop=stop)
    review = state.get("review") or _review(turn, "incomplete", [])
    signature = hashlib.md5(json.dumps([review["items"], review["notes"]], sort_keys=True, default=str).encode(),
                            usedforsecurity=False).hexdigest()
    tree = await ctx.repo.tree_of(state["head_sha"])
    stalls = []
    if review["items"] and signature == state.get("last_feedback_sig"):
        stalls.append("the coach gave the same feedback as on the previous turn")
    if tree == state.get("last_tree"):
        stalls.append("the code did not change since the previous turn")
    stall_count = int(state.get("stall_count", 0)) + 1 if stalls else 0
    update = TaskState(turn=turn + 1, stall_count=stall_count, last_feedback_sig=signature, last_tree=tree)
    events = ctx.events(runtime)
    if stalls:
        events("stall", task_id, turn=turn, count=stall_count, reasons=stalls)
        if stall_count >= 3:
            return TaskState(stall_count=stall_count, stop=Stop(
                outcome="failed", reason=f"stalled: {'; '.join(stalls)} (three turns in a row)", cause="stalled"))
        warning = f"Stall warning: {'; '.join(stalls)}. Try a different approach."
        warned = review.copy()
        warned["notes"] = [*review["notes"], warning]
        update["review"] = warned
    handed = update.get("review") or review
    text = format_feedback([dict(i) for i in handed["items"]], list(handed["notes"]))
    await asyncio.to_thread(reports.write, ctx.runs_dir(task_id, int(state.get("attempt") or 1))
                            / f"feedback-turn-{turn}.md",
                            f"# Feedback, turn {turn}\n\n{text}\n")
    events("feedback", task_id, turn=turn, items=len(handed["items"]), notes=handed["notes"])
    return update


async def finalize_success(state: TaskState, runtime: Runtime[RunContext]) -> TaskState:
    finished = await _approved(state, runtime)
    review = state.get("review")
    if review and (result := finished.get("result")) is not None:
        # What the approval covers where it lands: the coach's acceptances and the base tests they accepted.
        result["test_changes_accepted"] = list(review.get("accepted_tests") or [])
        result["test_changes"] = list((review["gate"] or {}).get("test_changes") or []) if review["gate"] else []
    return finished


async def _approved(state: TaskState, runtime: Runtime[RunContext]) -> TaskState:
    ctx = runtime.context
    await ctx.ensure_worktree(Path(state["worktree"]), state["branch"], state["head_sha"])
    artifacts = await ctx.repo.changed_files(Path(state["worktree"]), state["base_sha"])
    review = state.get("review")
    gate = review["gate"] if review else None
    written = player_report(state)["tests_written"]
    if gate is not None and gate["command"] and (skipped := tests_only_skipped(written, gate)):
        return await _finish(state, runtime, "approved-unverified", "approved by the coach, but the gate only"
                             f" skipped the task's new tests: {'; '.join(skipped)}", artifacts=artifacts)
    if gate is not None and gate["command"] and (why := _unread(ctx, state["task_id"], gate)):
        return await _finish(state, runtime, "approved-unverified", f"approved by the coach, but {why}",
                             artifacts=artifacts)
    if gate is not None and gate["command"] and (unverified := gate.get("unverified")):
        return await _finish(state, runtime, "approved-unverified", "approved by the coach, but the gate could"
                             f" not verify all of it: {'; '.join(unverified[:10])}", artifacts=artifacts)
    if gate is not None and gate["command"]:
        changed = [change for change in gate.get("test_changes") or [] if change["accepted"]]
        accepted = (f"; {len(changed)} base test(s) changed, accepted by the coach: "
                    + "; ".join(describe_test_change(change) for change in changed[:20])) if changed else ""
        return await _finish(state, runtime, "approved", f"approved by the coach and the verify gate{accepted}",
                             artifacts=artifacts)
    return await _finish(state, runtime, "approved-unverified",
                         "approved by the coach; no verify command could check it", artifacts=artifacts)


def _unread(ctx: RunContext, task_id: str, gate: GateResult) -> str | None:
    """Why a gate run verified nothing test by test: no test runner we read ran in it (a build-only target, a test
    program that prints its failures and exits 0, a script the user named), so no runner reported on the gate's
    channel and only its exit status was judged."""
    if gate.get("runner") is not None or gate.get("judged_by") != BY_EXIT:
        return None
    named = ctx.options.verify is not None or ctx.plan.verify or ctx.plan.task(task_id).verify
    whose = "the verify command" if named else f"the repo's test command ({ctx.gate['source']})"
    return (f"{whose} `{gate['command']}` ran no test runner AutoBuild reads (pytest, unittest, node --test, jest,"
            " vitest, mocha, go test, cargo test): only its exit status was judged, with no per-test channel to"
            " verify it by")


async def finalize_failure(state: TaskState, runtime: Runtime[RunContext]) -> TaskState:
    ctx = runtime.context
    stop = state.get("stop") or Stop(outcome="failed", cause="max_turns",
                                     reason=f"max turns reached ({ctx.options.max_turns}) without an approval")
    if state.get("worktree") and state.get("base_sha"):
        # Partial work of a task that did not succeed is discarded; the report says why. A conflict keeps its
        # approved work on the branch, for a person to merge.
        keep = state["head_sha"] if stop["outcome"] == "conflict" else state["base_sha"]
        await ctx.ensure_worktree(Path(state["worktree"]), state["branch"], keep)
        await ctx.repo.reset(Path(state["worktree"]), keep)
    return await _finish(state, runtime, stop["outcome"], stop["reason"], artifacts=[], cause=cause_of(stop))


async def _finish(state: TaskState, runtime: Runtime[RunContext], status: Outcome, reason: str, *,
                  artifacts: list[str], cause: StopCause | None = None) -> TaskState:
    ctx, task_id = runtime.context, state["task_id"]
    await steering.consume_kept(ctx, state, ctx.events(runtime))  # the last turn's notes: its checkpoint holds them
    # Ended: a cancel or a pause sent meanwhile never stops a later run of the task.
    await control.cancel_applied(ctx, task_id, status, ctx.events(runtime))
    task = ctx.plan.task(task_id)
    text = reports.task_report(state, status, reason, artifacts, task.name, cause=cause,
                               supervision=await control.supervision(ctx, task_id, state.get("answers")))
    # The report stays in the run's folder only: a commit of it on the task branch would reach the feature branch,
    # the pushed branch and the pull request, and (as history) the user's branch on `land`.
    report_path = await asyncio.to_thread(reports.write, ctx.runs_dir(task_id, int(state.get("attempt") or 1))
                                          / reports.REPORT_NAME, text)
    sha = state.get("head_sha", "")
    duration = time.time() - float(state.get("started") or time.time())
    result = TaskResult(status=status, reason=reason, turns=int(state.get("turn", 0)),
                        cost_usd=round(float(state.get("cost_usd", 0.0)), 6), duration_s=round(duration, 2),
                        sha=sha, branch=state.get("branch", ""), report=str(report_path), merged=False,
                        false_approvals=int(state.get("false_approvals", 0)),
                        claims_contradicted=int(state.get("claims_contradicted", 0)),
                        conflict_turns=int(state.get("conflict_turns", 0)))
    if cause is not None:
        result["cause"] = cause
    if answers := state.get("answers"):  # a run of the task again starts with them (rerun.new_input)
        result["answers"] = dict(answers)
    result["receipt"] = receipts.task_receipt(state.get("history", []), status, result["turns"], result["cost_usd"])
    ctx.events(runtime)("finalize", task_id, status=status, reason=reason, cost_usd=result["cost_usd"],
                        receipt=result["receipt"], cause=cause)
    return TaskState(result=result, head_sha=sha)
