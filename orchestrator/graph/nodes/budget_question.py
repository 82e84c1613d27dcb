"""At a budget's cap, an interactive run asks whether to raise it, as an agent's question is asked: at a terminal
in-process (the run's asker; the task's `--parallel` slot is another's meanwhile), else as an interrupt (a served
run, or no one answering now: `autobuild answer FEAT TASK-001-budget-500 yes`). "yes" raises it to twice the cap
(an amount, "$12" or "12", raises it to that), kept for the rest of the run (graph/budgets.py); "no", and every
`--autonomous` run, stop the task as before (aborted, cause `budget`).

Asked only at the start of an agent node, before its session: interrupt() runs the node again from its first line
on resume, so nothing that came before it can be repeated. A session the CLI stopped at the run's cap (its
`max_budget_usd`) in an interactive run does not stop the task: its turn ends unfinished and the next session's
start asks (`unfinished_at_cap`)."""

from __future__ import annotations

import asyncio
import re

from langgraph.types import interrupt

from agents import AgentResult
from orchestrator.graph.budgets import FEATURE, FILE
from orchestrator.graph.context import RunContext
from orchestrator.graph.events import EventLog
from orchestrator.graph.given_answer import given_answer
from orchestrator.graph.state import Question, Stop

RAISE_FACTOR = 2.0
"""What "yes" raises a spent budget to: this many times its cap (at least past what was spent)."""
_AMOUNT = re.compile(r"\$?\s*(\d{1,7}(?:\.\d{1,4})?)")
CAP_NOTE = "stopped at the run's budget before it finished: a person is asked to raise it before the next session"


def _spent_budget(ctx: RunContext, task_id: str, spent: float) -> tuple[str, str, float, float]:
    """Which budget is spent: its key, its name, its cap and what was spent of it."""
    feature = ctx.feature_budget()
    if feature is not None and ctx.spend.usd >= feature:
        return FEATURE, "The feature's", feature, ctx.spend.usd
    return task_id, f"{task_id}'s", float(ctx.task_budget(task_id) or 0.0), spent


async def _committed(ctx: RunContext) -> bool:
    """The raises file is part of the repository (a repo can commit `.autobuild/runs/FEAT/budgets.json`): it is
    not a person's raise, and never read."""
    kept = (ctx.runs_dir() / FILE).relative_to(ctx.repo.root).as_posix()
    return bool((await ctx.repo.git("ls-files", "--", kept, check=False)).stdout.strip())


def question_of(ctx: RunContext, task_id: str, spent: float, turn: int) -> tuple[Question, str, float, float]:
    """The question for the spent budget, its key, cap and the raise "yes" means."""
    key, name, cap, used = _spent_budget(ctx, task_id, spent)
    proposed = round(max(cap * RAISE_FACTOR, used + cap), 2)
    question = Question(question_id=f"{task_id}-budget-{round(cap * 100)}", task=task_id, turn=turn,
                        question=f"{name} budget of ${cap:.2f} is spent (${used:.4f}). Raise it to ${proposed:.2f}?",
                        options=[f"yes: raise it to ${proposed:.2f}", "no: stop the task"])
    return question, key, cap, proposed


def raised_to(answer: str, proposed: float, used: float) -> float | None:
    """The budget an answer raises to (None: keep it, and stop): yes, or an amount above what was spent."""
    text = answer.strip().lower()
    if text.startswith("y"):  # "yes", "y", the first option's own text
        return proposed
    found = _AMOUNT.fullmatch(re.sub(r"^raise( it)? to\s*", "", text))
    return float(found[1]) if found and float(found[1]) > used else None


async def stop_or_raise(ctx: RunContext, events: EventLog, task_id: str, spent: float, turn: int) -> Stop | None:
    """None when a session may start (the budgets allow it, or a person raised the one spent); else why not."""
    if ctx.budget_exhausted(task_id, spent) is None:
        return None
    if not ctx.budgets.loaded and not await _committed(ctx):  # a raise an earlier pass of the run kept
        await asyncio.to_thread(ctx.budgets.load, ctx.runs_dir())
    ctx.budgets.loaded = True
    exhausted = ctx.budget_exhausted(task_id, spent)
    if exhausted is None:
        return None
    if not ctx.options.interactive:
        return Stop(outcome="aborted", reason=exhausted, cause="budget")
    question, key, cap, proposed = question_of(ctx, task_id, spent, turn)
    events("question_asked", task_id, **{name: value for name, value in question.items() if name != "task"})
    answer = None
    if callable(ctx.options.asker):
        async with ctx.slot_given_up():  # another task runs while a person decides
            answer = await ctx.options.asker(dict(question))
    said: dict[str, str] = {}
    if answer is None:
        answer, said = given_answer(interrupt(dict(question)))
    events("question_answered", task_id, question_id=question["question_id"], answer=str(answer), **said)
    used = _spent_budget(ctx, task_id, spent)[3]
    budget = raised_to(str(answer), proposed, used)
    if budget is None:
        return Stop(outcome="aborted", reason=f"{exhausted}; a person kept it (answered {str(answer)[:60]!r})",
                    cause="budget")
    await asyncio.to_thread(ctx.budgets.keep, ctx.runs_dir(), key, cap, budget)
    events("budget_raised", task_id, budget=key, from_usd=round(cap, 4), to_usd=round(budget, 4))
    # The other budget may be spent too (the task's, under the feature's just raised): asked next, the same way.
    return await stop_or_raise(ctx, events, task_id, spent, turn)


def unfinished_at_cap(ctx: RunContext, task_id: str, spent: float, result: AgentResult) -> bool:
    """A session the CLI stopped at the run's own budget in an interactive run: its turn ends unfinished (judged
    like a session that ended without its report) instead of stopping the task, and the next start asks."""
    if result.status != "budget" or not ctx.options.interactive or ctx.budget_exhausted(task_id, spent) is None:
        return False
    result.status = "success"
    result.errors.append(CAP_NOTE)
    return True


def at_cap(result: AgentResult) -> bool:
    """A session `unfinished_at_cap` let go on: not the agent's failure to report (no contract violation)."""
    return CAP_NOTE in result.errors
