"""Nodes of the task subgraph: initialize, player, coach, feedback, finalize_success/failure.

Every node catches its own errors and routes to failure: one branch raising would cancel its
siblings in the group (DESIGN §3). Agent nodes start from the worktree SHA checkpointed by the
previous node and end by committing, so a resumed node re-runs on exactly the state it started from.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from langgraph.types import interrupt

from agents import AgentResult, CoachInput, PlayerInput, format_feedback, run_coach, run_player, run_precheck
from orchestrator import reports
from orchestrator.context import RunContext
from orchestrator.gate import run_verify
from orchestrator.state import TaskResult, TaskState

FAILURE_REASONS = {
    "max_turns": "the agent session hit its max turns",
    "budget": "budget exhausted",
    "timeout": "session timeout",
    "idle_timeout": "idle timeout: no activity from the agent",
    "auth_error": "authentication failed (401/403): check ANTHROPIC_API_KEY or the Claude login",
    "api_error": "model API error after retries",
    "cli_error": "the Claude Code CLI failed",
    "cancelled": "cancelled",
}


def _failure_reason(role: str, result: AgentResult) -> str:
    base = FAILURE_REASONS.get(result.status, result.status)
    detail = result.errors[-1] if result.errors else ""
    return f"{role}: {base}" + (f" ({detail})" if detail else "")


def _session_summary(result: AgentResult) -> dict[str, Any]:
    """The small part of a session kept in graph state (transcripts go to files)."""
    return {
        "status": result.status,
        "report": result.report,
        "files_modified": result.files_modified,
        "final_text": result.final_text[-2000:],
        "cost_usd": result.cost_usd,
        "tokens": result.input_tokens + result.output_tokens,
        "turns": result.num_turns,
        "duration_s": result.duration_s,
        "session_id": result.session_id,
        "errors": result.errors[-5:],
        "permission_denials": result.permission_denials[-10:],
        "attempts": result.attempts,
    }


class TaskNodes:
    """The task subgraph's node functions, bound to one run's context."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx

    def _transcript(self, state: TaskState, role: str) -> Path:
        return self.ctx.runs_dir(state["task_id"]) / f"turn-{state['turn']}-{role}.jsonl"

    async def initialize(self, state: TaskState) -> dict[str, Any]:
        task_id = state["task_id"]
        update: dict[str, Any] = {
            "started": time.time(),
            "turn": 1,
            "cost_usd": 0.0,
            "feedback": [],
            "feedback_notes": [],
            "blocker_hashes": [],
            "outcome": None,
            "reason": "",
            "player": None,
            "coach": None,
        }
        try:
            start = self.ctx.repo.rev(self.ctx.feature_branch)
            worktree = self.ctx.worktree(task_id)
            sha = await self.ctx.repo.add_worktree(worktree, self.ctx.task_branch(task_id), start)
        except Exception as exc:  # noqa: BLE001 - routed to finalize_failure with the reason
            return update | {"outcome": "failed", "reason": f"could not create the task worktree: {exc}"}
        self.ctx.event(task_id, "initialize", worktree=str(worktree), base_sha=sha)
        return update | {
            "worktree": str(worktree),
            "branch": self.ctx.task_branch(task_id),
            "base_sha": sha,
            "head_sha": sha,
        }

    def _out_of_budget(self, state: TaskState) -> dict[str, Any] | None:
        """Checked before every session: an exhausted budget never starts one."""
        exhausted = self.ctx.budget_exhausted(state["task_id"], float(state.get("cost_usd", 0.0)))
        return {"outcome": "aborted", "reason": exhausted} if exhausted else None

    async def player(self, state: TaskState) -> dict[str, Any]:
        task_id, turn = state["task_id"], state["turn"]
        worktree = Path(state["worktree"])
        spent = float(state.get("cost_usd", 0.0))
        if stop := self._out_of_budget(state):
            return stop
        try:
            await self.ctx.repo.reset(worktree, state["head_sha"])
            self.ctx.event(task_id, "player_start", turn=turn)
            result = await run_player(
                PlayerInput(
                    brief=self.ctx.brief(task_id),
                    turn=turn,
                    max_turns=self.ctx.settings.max_turns,
                    worktree=worktree,
                    feedback=list(state.get("feedback", [])),
                    feedback_notes=list(state.get("feedback_notes", [])),
                    answers=dict(state.get("answers") or {}),
                    transcript_path=self._transcript(state, "player"),
                ),
                self.ctx.session_settings("player", task_id, spent),
            )
            self.ctx.spent_usd += result.cost_usd
            if result.question is not None:
                return self._question(state, result)
            sha = await self.ctx.repo.commit_all(worktree, f"autobuild({task_id}): player turn {turn}")
            changed = await self.ctx.repo.changed_files(worktree, state["base_sha"])
            tampered = [path for path in self.ctx.plan.task(task_id).acceptance_tests if path in changed]
            if tampered:
                sha = await self._restore(worktree, state["base_sha"], tampered, task_id, turn)
                changed = await self.ctx.repo.changed_files(worktree, state["base_sha"])
        except Exception as exc:  # noqa: BLE001 - the task fails, its siblings go on
            return {"outcome": "failed", "reason": f"player turn {turn}: {exc}"}
        summary = _session_summary(result)
        self.ctx.event(task_id, "player_report", turn=turn, status=result.status, session_id=result.session_id,
                       cost_usd=result.cost_usd, files=changed, report=result.report, sha=sha)
        update: dict[str, Any] = {
            "player": summary,
            "head_sha": sha,
            "cost_usd": spent + result.cost_usd,
            "history": [{"turn": turn, "role": "player", "status": result.status, "cost_usd": result.cost_usd,
                         "tokens": summary["tokens"], "sha": sha, "summary": f"{len(changed)} file(s) changed"}],
        }
        verdict = self._judge_player(state, result, changed, worktree)
        if tampered and not verdict.get("outcome"):
            note = (f"You edited or deleted frozen acceptance tests ({', '.join(tampered)}); they were restored."
                    " Make the code pass them instead.")
            self.ctx.event(task_id, "frozen_test_tampering", turn=turn, files=tampered)
            verdict |= {"skip_coach": True, "feedback": [],
                        "feedback_notes": [note, *[n for n in verdict.get("feedback_notes", [])
                                                   if "changed no files" not in n]]}
        return update | verdict

    def _question(self, state: TaskState, result: AgentResult) -> dict[str, Any]:
        """The player asked a human: pause for an answer (interactive) or abort cleanly (autonomous)."""
        task_id, turn = state["task_id"], state["turn"]
        question = dict(result.question or {})
        digest = hashlib.md5(question["question"].encode(), usedforsecurity=False).hexdigest()[:6]
        question |= {"question_id": f"{task_id}-{digest}", "task": task_id, "turn": turn}
        self.ctx.event(task_id, "question_asked", **question)
        cost = {"cost_usd": float(state.get("cost_usd", 0.0)) + result.cost_usd}
        if self.ctx.settings.interactive:
            # The worktree stays at head_sha: the same turn runs again, with the answer, once it arrives.
            return cost | {"pending_question": question}
        self.ctx.event(task_id, "question_aborted", question_id=question["question_id"])
        return cost | {"outcome": "aborted",
                       "reason": f"ambiguous decision point: the agent asked {question['question']!r}"
                                 " and no human is available (--autonomous)"}

    async def ask_human(self, state: TaskState) -> dict[str, Any]:
        """Wait for a human's answer. interrupt() re-runs this node from its first line on every resume, so
        nothing here may call an agent or write a trace before it."""
        question = dict(state.get("pending_question") or {})
        answer = interrupt(question)
        self.ctx.event(state["task_id"], "question_answered", question_id=question.get("question_id"),
                       answer=str(answer))
        answers = {**(state.get("answers") or {}), str(question.get("question")): str(answer)}
        return {"answers": answers, "pending_question": None}

    async def _restore(self, worktree: Path, base: str, paths: list[str], task_id: str, turn: int) -> str:
        """Put frozen acceptance tests back exactly as they are on the task's base commit."""
        for path in paths:
            exists = await self.ctx.repo.git("cat-file", "-e", f"{base}:{path}", cwd=worktree, check=False)
            if exists.ok:
                await self.ctx.repo.git("checkout", base, "--", path, cwd=worktree)
            else:
                await self.ctx.repo.git("rm", "-q", "-f", "--", path, cwd=worktree, check=False)
        return await self.ctx.repo.commit_all(worktree, f"autobuild({task_id}): restore frozen tests (turn {turn})")

    def _judge_player(
        self, state: TaskState, result: AgentResult, changed: list[str], worktree: Path
    ) -> dict[str, Any]:
        """Failure, blocker, or completion: the terminal signal AND artifacts on disk, never the exit code alone."""
        task_id, turn = state["task_id"], state["turn"]
        violations = [f"turn {turn} player: {call.error}" for call in result.tool_calls if not call.accepted]
        if result.status == "success" and result.report is None:
            violations.append(f"turn {turn} player: ended without calling report_progress")
        for violation in violations:
            self.ctx.event(task_id, "contract_violation", turn=turn, detail=violation)
        verdict: dict[str, Any] = {"violations": violations, "skip_coach": False}
        if result.status != "success":
            return verdict | {"outcome": "failed" if result.status != "budget" else "aborted",
                              "reason": _failure_reason("player", result)}
        if result.blocker:
            blocker = result.blocker
            previous = state.get("blocker_hashes", [])
            self.ctx.event(task_id, "blocker", turn=turn, **blocker)
            if previous and previous[-1] == blocker["hash"]:
                reason = f"blocker {blocker['hash']} (reported twice in a row): {blocker['description']}"
                return verdict | {"outcome": "blocked", "reason": f"{reason}; action: {blocker['action']}",
                                  "blocker_hashes": [*previous, blocker["hash"]]}
            note = (f"You reported a blocker ({blocker['description']}). If you can work around it, do so;"
                    " if it really blocks the task, report the same blocker again and the task stops for a human.")
            return verdict | {"skip_coach": True, "feedback": [], "feedback_notes": [note],
                              "blocker_hashes": [*previous, blocker["hash"]]}
        notes = []
        if result.report is None and not result.promise_complete:
            notes.append("Your previous turn ended without calling report_progress: implement, then report.")
        reported = [str(p) for p in (result.report or {}).get("files_modified", []) if p]
        missing = [p for p in reported if not (worktree / p).exists()]
        if missing:
            notes.append(f"Files you reported as modified do not exist: {', '.join(missing)}.")
        if not changed:
            notes.append("Your previous turn changed no files: the task's work is not on disk.")
        if notes:
            return verdict | {"skip_coach": True, "feedback": [], "feedback_notes": notes, "blocker_hashes": []}
        return verdict | {"blocker_hashes": []}

    async def coach(self, state: TaskState) -> dict[str, Any]:
        task_id, turn = state["task_id"], state["turn"]
        worktree = Path(state["worktree"])
        player = state.get("player") or {}
        violations: list[str] = []
        total_cost = 0.0
        spent = float(state.get("cost_usd", 0.0))
        if stop := self._out_of_budget(state):
            return stop
        try:
            await self.ctx.repo.reset(worktree, state["head_sha"])
            diff = await self.ctx.repo.diff(worktree, state["base_sha"])
            self.ctx.event(task_id, "coach_validate", turn=turn)
            coach_input = CoachInput(
                brief=self.ctx.brief(task_id),
                turn=turn,
                worktree=worktree,
                player_report=player.get("report"),
                diff=diff,
                transcript_path=self._transcript(state, "coach"),
            )
            result = await run_coach(coach_input, self.ctx.session_settings("coach", task_id, spent))
            total_cost += result.cost_usd
            self.ctx.spent_usd += result.cost_usd
            if result.status == "success" and result.report is None:
                violations.append(f"turn {turn} coach: ended without record_decision (retried once)")
                if self.ctx.budget_exhausted(task_id, spent + total_cost) is None:
                    retry_settings = self.ctx.session_settings("coach", task_id, spent + total_cost)
                    result = await run_coach(coach_input, retry_settings)
                    total_cost += result.cost_usd
                    self.ctx.spent_usd += result.cost_usd
            # The coach only reads and runs tests; whatever its commands left behind is discarded.
            await self.ctx.repo.reset(worktree, state["head_sha"])
        except Exception as exc:  # noqa: BLE001 - the task fails, its siblings go on
            return {"outcome": "failed", "reason": f"coach turn {turn}: {exc}"}
        violations += [f"turn {turn} coach: {call.error}" for call in result.tool_calls if not call.accepted]
        for violation in violations:
            self.ctx.event(task_id, "contract_violation", turn=turn, detail=violation)
        update: dict[str, Any] = {
            "cost_usd": state.get("cost_usd", 0.0) + total_cost,
            "violations": violations,
        }
        if result.status != "success":
            outcome = "aborted" if result.status == "budget" else "failed"
            return update | {"outcome": outcome, "reason": _failure_reason("coach", result)}
        decision = dict(result.report or {})
        if not decision:
            decision = {
                "decision": "feedback",
                "rationale": "the coach ended without recording a decision",
                "feedback_items": [],
            }
        items = list(decision.get("feedback_items") or [])
        gate: dict[str, Any] | None = None
        if decision.get("decision") == "approve":
            gate = await self._verify(state)
            self.ctx.event(task_id, "gate", turn=turn, **gate)
            if not gate["passed"]:
                update["false_approvals"] = int(state.get("false_approvals", 0)) + 1
                decision = {
                    **decision,
                    "decision": "feedback",
                    "false_approval": True,
                    "rationale": f"coach approved but verify failed: {gate['summary']}",
                }
                items = [{"file": "", "line": None, "issue": f"coach approved but verify failed:\n{gate['output']}"}]
        decision["feedback_items"] = items
        self.ctx.event(
            task_id,
            "coach_decision",
            turn=turn,
            decision=decision.get("decision"),
            rationale=decision.get("rationale"),
            feedback_items=items,
            session_id=result.session_id,
            cost_usd=total_cost,
        )
        summary = _session_summary(result) | {"decision": decision, "gate": gate, "cost_usd": total_cost}
        return update | {
            "coach": summary,
            "feedback": items if decision.get("decision") == "feedback" else [],
            "feedback_notes": [] if items or decision.get("decision") != "feedback" else [decision["rationale"]],
            "history": [
                {
                    "turn": turn,
                    "role": "coach",
                    "sha": state["head_sha"],
                    "status": decision.get("decision"),
                    "cost_usd": total_cost,
                    "tokens": summary["tokens"],
                    "summary": str(decision.get("rationale", ""))[:200],
                }
            ],
        }

    async def _verify(self, state: TaskState) -> dict[str, Any]:
        """The objective gate: the task's verify command, run by us in the worktree."""
        worktree = Path(state["worktree"])
        command = self.ctx.plan.verify_command(state["task_id"])
        gate = await run_verify(command, worktree, self.ctx.settings.verify_timeout_s, self.ctx.verify_env())
        await self.ctx.repo.reset(worktree, state["head_sha"])
        return gate

    async def precheck(self, state: TaskState) -> dict[str, Any]:
        """Optional cheap yes/no plausibility check on a fast model before spending a coach session."""
        task_id, turn = state["task_id"], state["turn"]
        worktree = Path(state["worktree"])
        spent = float(state.get("cost_usd", 0.0))
        if stop := self._out_of_budget(state):
            return stop
        try:
            await self.ctx.repo.reset(worktree, state["head_sha"])
            diff = await self.ctx.repo.diff(worktree, state["base_sha"])
            data = CoachInput(self.ctx.brief(task_id), turn, worktree, (state.get("player") or {}).get("report"),
                              diff, transcript_path=self._transcript(state, "precheck"))
            result, verdict = await run_precheck(data, self.ctx.session_settings("precheck", task_id, spent))
            self.ctx.spent_usd += result.cost_usd
        except Exception as exc:  # noqa: BLE001 - a broken pre-check must not block the coach
            self.ctx.event(task_id, "precheck", turn=turn, plausible=True, reason=f"pre-check skipped: {exc}")
            return {"skip_coach": False}
        self.ctx.event(task_id, "precheck", turn=turn, plausible=verdict.plausible, reason=verdict.reason,
                       cost_usd=result.cost_usd, session_id=result.session_id)
        update: dict[str, Any] = {
            "cost_usd": spent + result.cost_usd,
            "skip_coach": not verdict.plausible,
            "history": [{"turn": turn, "role": "precheck", "status": "yes" if verdict.plausible else "no",
                         "cost_usd": result.cost_usd, "tokens": result.input_tokens + result.output_tokens,
                         "summary": verdict.reason}],
        }
        if not verdict.plausible:
            update |= {"feedback": [], "feedback_notes": [f"Pre-check: {verdict.reason}"]}
        return update

    async def feedback(self, state: TaskState) -> dict[str, Any]:
        """Hand the feedback to the next turn; point out a stalled loop, and stop one stalled three times."""
        task_id, turn = state["task_id"], state["turn"]
        items, notes = list(state.get("feedback", [])), list(state.get("feedback_notes", []))
        signature = hashlib.md5(json.dumps([items, notes], sort_keys=True, default=str).encode(),
                                usedforsecurity=False).hexdigest()
        tree = (await self.ctx.repo.git("rev-parse", f"{state['head_sha']}^{{tree}}",
                                        cwd=Path(state["worktree"]))).stdout.strip()
        stalls = []
        if items and signature == state.get("last_feedback_sig"):
            stalls.append("the coach gave the same feedback as on the previous turn")
        if tree == state.get("last_tree"):
            stalls.append("the code did not change since the previous turn")
        stall_count = int(state.get("stall_count", 0)) + 1 if stalls else 0
        update: dict[str, Any] = {"turn": turn + 1, "stall_count": stall_count, "last_feedback_sig": signature,
                                  "last_tree": tree}
        if stalls:
            self.ctx.event(task_id, "stall", turn=turn, count=stall_count, reasons=stalls)
            if stall_count >= 3:
                return update | {"outcome": "failed",
                                 "reason": f"stalled: {'; '.join(stalls)} (three turns in a row)"}
            notes.append(f"Stall warning: {'; '.join(stalls)}. Try a different approach.")
            update["feedback_notes"] = notes
        text = format_feedback(items, notes)
        reports.write(self.ctx.runs_dir(task_id) / f"feedback-turn-{turn}.md", f"# Feedback, turn {turn}\n\n{text}\n")
        self.ctx.event(task_id, "feedback", turn=turn, items=len(items), notes=notes)
        return update

    async def finalize_success(self, state: TaskState) -> dict[str, Any]:
        worktree = Path(state["worktree"])
        artifacts = await self.ctx.repo.changed_files(worktree, state["base_sha"])
        return await self._finish(state, "approved", "approved by the coach and the verify gate", artifacts)

    async def finalize_failure(self, state: TaskState) -> dict[str, Any]:
        outcome = state.get("outcome") or "failed"
        reason = state.get("reason") or (
            f"max turns reached ({self.ctx.settings.max_turns}) without an approval"
        )
        if state.get("worktree") and state.get("base_sha"):
            # Partial work of an aborted task is discarded; the report says why.
            try:
                await self.ctx.repo.reset(Path(state["worktree"]), state["base_sha"])
            except Exception as exc:  # noqa: BLE001 - the report still gets written
                reason += f" (reset failed: {exc})"
        return await self._finish(state, outcome, reason, [])

    async def _finish(self, state: TaskState, status: str, reason: str, artifacts: list[str]) -> dict[str, Any]:
        task_id = state["task_id"]
        task = self.ctx.plan.task(task_id)
        text = reports.task_report(state, status, reason, artifacts, task.name)
        report_path = reports.write(self.ctx.runs_dir(task_id) / reports.REPORT_NAME, text)
        sha = state.get("head_sha", "")
        if state.get("worktree"):
            worktree = Path(state["worktree"])
            relative = report_path.relative_to(self.ctx.settings.repo)
            try:
                reports.write(worktree / relative, text)
                sha = await self.ctx.repo.commit_all(
                    worktree, f"autobuild({task_id}): {status} — AUTO-RUN.md", force=[relative]
                )
            except Exception as exc:  # noqa: BLE001 - the on-disk report is the record
                reason += f" (committing the report failed: {exc})"
        duration = time.time() - float(state.get("started") or time.time())
        result: TaskResult = {
            "status": status,  # type: ignore[typeddict-item]
            "reason": reason,
            "turns": int(state.get("turn", 0)),
            "cost_usd": round(float(state.get("cost_usd", 0.0)), 6),
            "duration_s": round(duration, 2),
            "sha": sha,
            "branch": state.get("branch", ""),
            "report": str(report_path),
            "merged": False,
            "false_approvals": int(state.get("false_approvals", 0)),
        }
        self.ctx.event(task_id, "finalize", status=status, reason=reason, cost_usd=result["cost_usd"])
        return {"outcome": status, "reason": reason, "results": {task_id: result}}
