"""Nodes of the task subgraph: initialize, player, ask_human, feedback, finalize (coach: review_nodes.py).

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

from agents import AgentResult, PlayerInput, format_feedback, run_player
from orchestrator import reports
from orchestrator.node_support import failure_reason, session_summary
from orchestrator.review_nodes import ReviewNodes
from orchestrator.state import TaskResult, TaskState


class TaskNodes(ReviewNodes):
    """The task subgraph's node functions, bound to one run's context."""

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
        summary = session_summary(result)
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
                              "reason": failure_reason("player", result)}
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
