"""A question is asked when it is asked (issue 33, item 4): at a terminal the asking task waits in-process for the
person's answer and goes on as soon as it is answered, while the other tasks keep running; a run without a
terminal keeps the interrupt (`autobuild answer`)."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_agents import ScriptedAgents, approve, writes
from orchestrator.cli.ask import QuestionDesk
from orchestrator.graph import runner
from orchestrator.settings import RunSettings
from orchestrator.views.live_view import TaskBoard
from orchestrator.views.progress import Progress
from tests.graph.harness import CALC_FILES, plan, task

QUESTION = "Which database should sessions use?"


class LongSecondTask(ScriptedAgents):
    """TASK-2's player step lasts until TASK-1's coach is called (bounded, so a broken run fails, not hangs):
    TASK-1 can only get there while TASK-2's step still runs if its answer is taken up at once."""

    def __init__(self) -> None:
        super().__init__({("player", "TASK-1"): writes({"calc/a.py": "A = 1\n"}, question=QUESTION,
                                                       options=["Postgres", "SQLite"]),
                          ("player", "TASK-2"): writes({"calc/b.py": "B = 1\n"}), "coach": approve()})
        self.first_reviewed = asyncio.Event()
        self.order: list[str] = []

    async def player(self, data: Any, settings: Any) -> Any:
        if data.brief.task_id == "TASK-2":
            self.order.append("TASK-2 step starts")
            try:
                await asyncio.wait_for(self.first_reviewed.wait(), timeout=30)
            except TimeoutError:
                self.order.append("TASK-2 gave up waiting")
            result = await super().player(data, settings)
            self.order.append("TASK-2 step ends")
            return result
        self.order.append(f"TASK-1 player, answers {dict(data.answers)}")
        return await super().player(data, settings)

    async def coach(self, data: Any, settings: Any) -> Any:
        if data.brief.task_id == "TASK-1":
            self.order.append("TASK-1 reviewed")
            self.first_reviewed.set()
        return await super().coach(data, settings)


async def test_the_asking_task_takes_its_answer_while_another_task_s_step_still_runs(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-1"), task("TASK-2"),
                                                                           verify=None))
    agents, prompts, events = LongSecondTask(), [], []
    desk = QuestionDesk(events.append, Progress(stream=io.StringIO()), enabled=True,
                        read=lambda prompt: prompts.append(prompt) or "1", write=prompts.append)
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(tmp_path / "db.sqlite"), agents=agents,
                           interactive=True, parallel=2, replan=0, asker=desk.answer)
    summary = await runner.execute(runner.prepare(settings), desk)
    assert summary.pending_questions == [] and summary.exit_code == 0, summary.results
    assert any("1) Postgres" in line for line in prompts), "asked at once, options numbered"
    assert agents.order.index("TASK-1 reviewed") < agents.order.index("TASK-2 step ends"), agents.order
    assert f"TASK-1 player, answers {{{QUESTION!r}: 'Postgres'}}" in agents.order, "answered by number"
    assert "TASK-2 gave up waiting" not in agents.order
    assert [e["event"] for e in events].count("question_answered") == 1


async def test_without_an_asker_the_question_is_an_interrupt_as_before(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-1"), verify=None))
    agents = ScriptedAgents({"player": writes({"calc/a.py": "A = 1\n"}, question=QUESTION), "coach": approve()})
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(tmp_path / "db.sqlite"), agents=agents,
                           interactive=True, replan=0)
    paused = await runner.execute(runner.prepare(settings), lambda event: None)
    assert [q["question"] for q in paused.pending_questions] == [QUESTION]


async def test_a_task_waiting_for_an_answer_gives_its_slot_to_another(tmp_path: Path) -> None:
    """At `--parallel 1` (the default) a question at the terminal no longer stops every other task: the person
    answers only once TASK-2 finished (bounded: a held slot fails the test, it doesn't hang it)."""
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-1"), task("TASK-2"),
                                                                           verify=None))
    agents = ScriptedAgents({("player", "TASK-1"): writes({"calc/a.py": "A = 1\n"}, question=QUESTION),
                             ("player", "TASK-2"): writes({"calc/b.py": "B = 1\n"}), "coach": approve()})
    finished: list[str] = []

    def on_event(event: dict[str, Any]) -> None:
        if event.get("event") == "finalize":
            finished.append(str(event.get("task")))

    async def person(question: dict[str, Any]) -> str:
        for _ in range(300):  # 30 s at most
            if "TASK-2" in finished:
                return "Postgres"
            await asyncio.sleep(0.1)
        return "gave up: TASK-2 never ran while TASK-1 waited"

    settings = RunSettings(repo=repo, target="FEAT-001", db=str(tmp_path / "db.sqlite"), agents=agents,
                           interactive=True, parallel=1, replan=0, asker=person)
    summary = await runner.execute(runner.prepare(settings), on_event)
    assert summary.exit_code == 0, summary.results
    assert finished == ["TASK-2", "TASK-1"]


async def test_after_resume_the_live_table_shows_finished_tasks_as_they_ended(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path / "repo", files=CALC_FILES, plan=plan(task("TASK-1"), task("TASK-2"),
                                                                           verify=None))
    agents = ScriptedAgents({("player", "TASK-1"): writes({"calc/a.py": "A = 1\n"}),
                             ("player", "TASK-2"): writes({"calc/b.py": "B = 1\n"}, question=QUESTION),
                             "coach": approve()})
    settings = RunSettings(repo=repo, target="FEAT-001", db=str(tmp_path / "db.sqlite"), agents=agents,
                           interactive=True, replan=0)
    paused = await runner.execute(runner.prepare(settings), lambda event: None)
    assert [q["task"] for q in paused.pending_questions] == ["TASK-2"], paused.results
    board = TaskBoard()
    resumed = settings.model_copy(update={"resume_only": True})
    question_id = paused.pending_questions[0]["question_id"]
    done = await runner.execute(runner.prepare(resumed), lambda event: board.update(event, 0.0),
                                answer=(question_id, "Postgres"))
    assert done.exit_code == 0, done.results
    resume = board.rows["TASK-1"]
    assert resume.state == "approved-unverified", "an earlier run's task is not shown queued (no gate here)"
