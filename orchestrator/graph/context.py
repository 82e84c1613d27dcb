"""The task graph's run context (`context_schema`): the non-serialized services every node needs.

Built once per run by the feature workflow from its input and options, shared by every task subgraph
(so budgets and the merge lock are run-wide), and handed to each task with `ainvoke(..., context=…)`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime
from langgraph.types import StreamWriter

from agents import Agents, SessionLimits, SessionSettings, TaskBrief
from agents.limits import UsageLimitGate
from orchestrator import sandbox
from orchestrator.errors import InfrastructureError
from orchestrator.facts import Acceptance
from orchestrator.gate import HIDDEN_FOLDER, GateRequest, Gates, GateSetup, HiddenTests, session_env
from orchestrator.graph.budgets import FEATURE, RaisedBudgets
from orchestrator.graph.events import EventLog
from orchestrator.graph.live_pause import LivePauses
from orchestrator.graph.setup_once import SetupOnce
from orchestrator.graph.state import TaskResult
from orchestrator.plan.model import FeaturePlan
from orchestrator.repo import watch
from orchestrator.repo.git import GitRepo, feature_branch, task_branch
from orchestrator.settings import RunOptions, RunStore, session_model
from orchestrator.store import traces as trace
from orchestrator.store.steering import SteeringQueue, served_store
from orchestrator.store.steering_stores import controls_for, notes_for
from orchestrator.store.task_control import TaskControls

T = TypeVar("T")


def attempt_suffix(attempt: int) -> str:
    """What names attempt k of a task beside the task's own worktree and branch: nothing for the first."""
    return f".a{attempt}" if attempt > 1 else ""


def _stream_writer() -> StreamWriter | None:
    """The running node's stream writer (None outside a graph node)."""
    try:
        return get_stream_writer()
    except RuntimeError:
        return None


@dataclass
class Spend:
    """What the feature's sessions have spent so far, per task, from facts: each task's checkpointed cost
    (a resumed task reports its own on its first node, a finished one through its replayed result)."""

    by_task: dict[str, float] = field(default_factory=dict)
    unsaved: dict[str, float] = field(default_factory=dict)
    """What a cancelled loop's sessions spent after its last checkpoint, by spend key: no checkpoint of the loop
    holds it (graph/attempts.py hands it to the task's landing, whose checkpoint counts it)."""

    def record(self, task_id: str, usd: float) -> None:
        self.by_task[task_id] = max(usd, self.by_task.get(task_id, 0.0))

    @property
    def usd(self) -> float:
        return sum(self.by_task.values())


@dataclass
class RunContext:
    """Shared by every node of one run."""

    options: RunOptions
    plan: FeaturePlan
    repo: GitRepo
    base_branch: str
    agents: Agents
    gate: GateSetup
    limit_gate: UsageLimitGate | None = None
    """The run-wide usage-limit pause every session waits on (None: sessions retry on their own)."""
    spend: Spend = field(default_factory=Spend)
    budgets: RaisedBudgets = field(default_factory=RaisedBudgets)
    """The budgets a person raised at their cap (graph/budgets.py): they hold over the options' own."""
    merge_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    setups: SetupOnce = field(default_factory=SetupOnce)
    """A task's attempts set up once (graph/setup_once.py)."""
    landing_queue: dict[str, str] = field(default_factory=dict)
    """Approved tasks waiting to land, by id: the commit each would land (a landing may take them along)."""
    accepted_tests: dict[str, list[Acceptance]] = field(default_factory=dict)
    """The approving coach's test-change acceptances of each task waiting to land (they cover its landing)."""
    remote_url: str | None = None
    """A run by URL: where every node-end commit is pushed (graph/by_url.py); None for a local repo."""
    slots: asyncio.Semaphore | None = None
    """The run's `--parallel` slots, one held by each running task (None: a task run alone)."""
    pauses: LivePauses | None = None
    """The run's tasks paused in place (graph/live_pause.py); None: a paused task's node ends as an interrupt."""
    landed: Callable[[str, TaskResult], Awaitable[None]] | None = None
    """Told the moment a task's work is on the feature branch (the scheduler's `finish`): its dependents start
    then, not after its worktree's removal and the checkpoints that end its subgraph."""
    answers: dict[str, dict[str, str]] = field(default_factory=dict)
    """A person's answers given before a task starts, by task id: its own in earlier runs (`resume`), or the task's
    it replaces (`--replan`). Each start of the task begins with them: they are part of its brief."""
    gates: Gates = field(init=False)
    """The run's gate (`gate`), run on trees: remembered by tree, sandboxed, what the user owns watched."""
    hidden: HiddenTests = field(init=False)
    """The plan's hidden acceptance tests: only the gate reads them (gate/spec/hidden.py)."""

    def __post_init__(self) -> None:
        request = GateRequest(plan_verify=self.plan.verify, plan_setup=self.plan.setup, verify=self.options.verify,
                              setup=self.options.setup, timeout_s=self.options.verify_timeout,
                              judge_by_counts=self.options.judge_by_counts,
                              repairs_base=self.options.repair_base or self.plan.repairs_base())
        self.hidden = HiddenTests.of_plan(self.repo.root, self.plan)
        self.gates = Gates(self.repo, request, decided=self.gate, watch=self._watched,
                           hidden=self.hidden if self.hidden.by_task else None)

    @contextlib.asynccontextmanager
    async def slot_given_up(self) -> AsyncIterator[None]:
        """While a task waits for a person (an answer at the terminal), its slot is another task's: taken back
        before it goes on. A cancel while taking it back leaves the taking shielded, so the task's own release on
        the way out is matched and the run's count of slots stays `--parallel`."""
        if self.slots is None:
            yield
            return
        self.slots.release()
        try:
            yield
        finally:
            await asyncio.shield(self.slots.acquire())

    def steering(self) -> SteeringQueue:
        """The notes of the run's own store (the CLI names it, password kept; a served run: the workers')."""
        return notes_for(self.repo.root, self.feature_id, self._store())

    def controls(self) -> TaskControls:
        """A person's pauses and cancels, in the run's own store."""
        return controls_for(self.repo.root, self.feature_id, self._store())

    def _store(self) -> str | None:
        given = self.options.notes_store
        return served_store() or (given.location if isinstance(given, RunStore) else None)

    @property
    def feature_id(self) -> str:
        return self.plan.id

    @property
    def feature_branch(self) -> str:
        return feature_branch(self.plan.id)

    def task_branch(self, task_id: str, attempt: int = 1) -> str:
        """The task's branch; attempt k > 1 of it has its own beside it (`….TASK-002.a2`: ids have no dot)."""
        return task_branch(self.plan.id, task_id) + attempt_suffix(attempt)

    def worktree(self, task_id: str, attempt: int = 1) -> Path:
        return self.repo.worktrees_dir / self.plan.id / f"{task_id}{attempt_suffix(attempt)}"

    @property
    def integration_worktree(self) -> Path:
        return self.repo.worktrees_dir / self.plan.id / "_integration"

    def runs_dir(self, task_id: str | None = None, attempt: int = 1) -> Path:
        """The run's folder, a task's, or an attempt k > 1's inside its task's (`TASK-002/a2/`)."""
        folder = trace.runs_dir(self.repo.root, self.plan.id, task_id)
        return folder / f"a{attempt}" if task_id and attempt > 1 else folder

    def attempt_model(self, task_id: str, attempt: int) -> str | None:
        """The player's model of attempt k: the task's `attempt_models` (else the feature's) taken in turn."""
        models = self.plan.task(task_id).attempt_models or self.plan.attempt_models
        return models[(attempt - 1) % len(models)] if models else None

    def brief(self, task_id: str, answers: Mapping[str, str] | None = None) -> TaskBrief:
        """What every role is told of the task; `answers`: the ones its state holds (this run's, and those it
        started with)."""
        task = self.plan.task(task_id)
        requirements = list(task.requirements)
        if task.description:
            requirements.append(task.description)
        return TaskBrief(
            feature_name=self.plan.name,
            task_id=task.id,
            task_name=task.name,
            requirements=requirements,
            acceptance_criteria=list(task.acceptance_criteria),
            verify=self.gate_command(task_id),
            file_scope=list(task.files),
            frozen_tests=[] if task.hidden_tests else list(task.acceptance_tests),
            hidden_tests=list(task.acceptance_tests) if task.hidden_tests else [],
            answers={**self.answers.get(task_id, {}), **(answers or {})},
        )

    def hidden_of(self, task_ids: list[str]) -> tuple[str, ...]:
        """The hidden tests a gate run of these tasks' work runs: theirs and their dependencies' (merged before
        them: their hidden tests are never in the tree, so the base's accounting can't keep them green)."""
        wanted: set[str] = set()
        todo = list(task_ids)
        while todo:
            task = todo.pop()
            if task not in wanted:
                wanted.add(task)
                todo.extend(self.plan.task(task).dependencies)
        return self.hidden.of(wanted)

    def unreadable(self) -> tuple[Path, ...]:
        """What no agent session may read: the hidden tests in the checkout and the gate's folder of their runs."""
        if not self.hidden.by_task:
            return ()
        folder = self.repo.worktrees_dir / self.plan.id / HIDDEN_FOLDER
        folder.mkdir(parents=True, exist_ok=True)  # the sandbox can only deny reading a path that exists
        return (*self.hidden.sources(), folder)

    def remaining_budget(self, task_id: str, task_spent: float) -> float | None:
        """What the next session of this task may still spend: the tightest of feature and task budgets."""
        limits = []
        if (feature_budget := self.feature_budget()) is not None:
            limits.append(feature_budget - self.spend.usd)
        if (task_budget := self.task_budget(task_id)) is not None:
            limits.append(task_budget - task_spent)
        return min(limits) if limits else None

    def feature_budget(self) -> float | None:
        return self.budgets.budget(FEATURE, self.options.budget_usd)

    def task_budget(self, task_id: str) -> float | None:
        return self.budgets.budget(task_id, self.plan.task(task_id).budget_usd or self.options.task_budget_usd)

    def budget_exhausted(self, task_id: str, task_spent: float) -> str | None:
        """Why no new session may start, or None. Checked before every session."""
        remaining = self.remaining_budget(task_id, task_spent)
        if remaining is None or remaining > 0:
            return None
        if (feature_budget := self.feature_budget()) is not None and self.spend.usd >= feature_budget:
            return f"budget exhausted: the feature spent ${self.spend.usd:.4f} of ${feature_budget:.4f}"
        return f"budget exhausted: the task spent ${task_spent:.4f} of its budget"

    def session_settings(self, role: str, task_id: str, task_spent: float, events: EventLog, *,
                         attempt: int = 0) -> SessionSettings:
        """A session's settings; `attempt` k > 0: one of a task's attempts (its worktree, its player's model)."""
        model = session_model(role, self.plan.task(task_id).complexity, model=self.options.model,
                              coach_model=self.options.coach_model, precheck_model=self.options.precheck_model,
                              routing=self.options.models)
        if role == "player" and attempt > 0 and (of_attempt := self.attempt_model(task_id, attempt)):
            model = of_attempt
        worktree = self.worktree(task_id, max(attempt, 1))
        caps = [c for c in (self.options.session_budget_usd, self.remaining_budget(task_id, task_spent)) if c]
        return SessionSettings(
            model=model,
            limits=SessionLimits(
                session_timeout_s=self.options.session_timeout,
                idle_timeout_s=self.options.idle_timeout,
                max_budget_usd=min(caps) if caps else None,
            ),
            cli_path=self.options.cli_path,
            on_event=events.session_event,
            limit_gate=self.limit_gate,
            project_root=self.repo.root,
            repo_hooks=self.options.repo_hooks,
            trace_metadata={"feature_id": self.feature_id},
            sandbox_writable=self.agent_writable(task_id) if sandbox.agents_available() else None,
            unreadable=self.unreadable(),
            # The agent's own test runs see what the gate sees (the run's venv, the worktree's sources first).
            env={**session_env(self.repo.root, worktree),
                 **(sandbox.agent_env(worktree) if sandbox.agents_available() else {})},
        )

    def agent_writable(self, task_id: str) -> tuple[Path, ...]:
        """What an agent's sandboxed Bash may write beyond its worktree: the run's environment and caches."""
        folder = self.worktree(task_id).parent
        return (folder / sandbox.ENV_FOLDER, folder / sandbox.SANDBOX_FOLDER)

    def events(self, runtime: Runtime[Any]) -> EventLog:
        return EventLog(self.repo.root, self.plan.id, runtime.stream_writer)

    def gate_command(self, task_id: str) -> str | None:
        """What gates this task: its own `verify`, else the run's gate (`--verify` wins over both)."""
        if self.options.verify is not None:
            return self.gate["command"]
        return self.plan.task(task_id).verify or self.gate["command"]

    async def setup_worktree(self, worktree: Path, once: tuple[str, str] | None = None) -> Path | None:
        """Make a new worktree able to run the repo's tests (the run's `setup`); a failure stops the task as
        an infrastructure error, with the command's output. `once`: (task, commit) of one of a task's attempts,
        whose siblings from that commit share one setup: the sibling whose products it took, if any."""
        async def set_up() -> None:
            done = await self.gates.set_up(worktree)
            if done is not None and not done.ok:
                raise InfrastructureError(f"setup `{self.gate['setup']}` failed in {worktree} (exit"
                                          f" {done.returncode}): {done.tail(10)}")

        if once is None or not self.gate["setup"]:  # no setup command: nothing to share, none waits for a sibling
            await set_up()
            return None
        return await self.setups.set_up(once, worktree, set_up, lambda like: self.gates.share_setup(worktree, like))

    async def ensure_worktree(self, worktree: Path, branch: str, sha: str) -> None:
        """The task's worktree at `sha`, recreated (and set up again) if it went missing."""
        if await self.repo.ensure_worktree(worktree, branch, sha):
            await self.setup_worktree(worktree)

    async def _watched(self, what: str, worktree: Path, running: Awaitable[T], output: Callable[[T], str]) -> T:
        """A setup or gate run with what the user owns watched around it: a change is noted (event
        `user_state_changed`), never reverted; what the sandbox refused is named in the command's output and
        an event `sandbox_refused`."""
        before = await watch.take(self.repo)
        result: T | None = None
        try:
            result = await running
            return result
        finally:
            events = EventLog(self.repo.root, self.plan.id, _stream_writer())
            task = worktree.name if worktree.name in self.plan.task_ids() else None
            if changes := await watch.since(self.repo, before):
                events("user_state_changed", task, changes=changes, during=what, reverted=False,
                       sandboxed=await asyncio.to_thread(sandbox.available))
            if result is not None and (refused := sandbox.refusals(output(result))):
                events("sandbox_refused", task, refused=refused, during=what)
