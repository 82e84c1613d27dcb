"""Review nodes of the task subgraph: the optional pre-check and the coach, with the objective verify gate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents import CoachInput, run_coach, run_precheck
from orchestrator.gate import run_verify
from orchestrator.node_support import NodeBase, failure_reason, session_summary
from orchestrator.state import TaskState


class ReviewNodes(NodeBase):
    """coach (read-only review + verify gate) and precheck (cheap yes/no before a coach session)."""

    async def coach(self, state: TaskState) -> dict[str, Any]:
        task_id, turn = state["task_id"], state["turn"]
        worktree = Path(state["worktree"])
        violations: list[str] = []
        total_cost = 0.0
        spent = float(state.get("cost_usd", 0.0))
        if stop := self._out_of_budget(state):
            return stop
        try:
            coach_input = await self._review_input(state, "coach")
            self.ctx.event(task_id, "coach_validate", turn=turn)
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
            return update | {"outcome": outcome, "reason": failure_reason("coach", result)}
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
        summary = session_summary(result) | {"decision": decision, "gate": gate, "cost_usd": total_cost}
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

    async def _review_input(self, state: TaskState, role: str) -> CoachInput:
        """What a reviewer sees: the committed turn (worktree reset to it) and its diff from the task base."""
        worktree = Path(state["worktree"])
        await self.ctx.repo.reset(worktree, state["head_sha"])
        return CoachInput(
            brief=self.ctx.brief(state["task_id"]),
            turn=state["turn"],
            worktree=worktree,
            player_report=(state.get("player") or {}).get("report"),
            diff=await self.ctx.repo.diff(worktree, state["base_sha"]),
            transcript_path=self._transcript(state, role),
        )

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
        spent = float(state.get("cost_usd", 0.0))
        if stop := self._out_of_budget(state):
            return stop
        try:
            data = await self._review_input(state, "precheck")
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
