"""The question desk: asks at once, numbers the options, holds the progress lines while a person types."""

from __future__ import annotations

import asyncio
import io
import threading
from collections.abc import Iterator

from orchestrator.cli.ask import NO_ANSWER, QuestionDesk
from orchestrator.text import chosen_option
from orchestrator.views.progress import Progress

QUESTION = {"event": "question_asked", "task": "T1", "question_id": "T1-abc", "question": "Which DB?",
            "options": ["Postgres", "SQLite"]}


def typed(*lines: str) -> Iterator[str]:
    yield from lines
    raise EOFError


def test_a_number_stands_for_its_option() -> None:
    assert chosen_option(" 2 ", ["Postgres", "SQLite"]) == "SQLite"
    assert chosen_option("3", ["Postgres", "SQLite"]) == "3" and chosen_option("MySQL", ["Postgres"]) == "MySQL"


def test_the_question_is_asked_as_its_event_passes_and_lines_wait_until_answered() -> None:
    out, shown, passed = io.StringIO(), [], []
    progress = Progress(stream=out)
    answers = typed("", "1")
    desk = QuestionDesk(passed.append, progress, enabled=True, read=lambda prompt: shown.append(prompt) or
                        next(answers), write=shown.append)
    desk(QUESTION)
    assert passed == [QUESTION], "every event passes on"
    assert desk.answer_for(QUESTION) == "Postgres"
    assert "  1) Postgres" in shown and "  2) SQLite" in shown
    assert any("your answer (1-2, or your own words)" in line for line in shown)
    assert any("an empty answer can't be sent" in line for line in shown), "asked again"
    progress({"event": "skipped", "task": "T2", "reason": "x"})
    assert "T2 skipped" in out.getvalue(), "released after the answer"


def test_held_lines_are_shown_on_release_in_order() -> None:
    out = io.StringIO()
    progress = Progress(stream=out)
    progress.hold()
    progress({"event": "skipped", "task": "T2", "reason": "x"})
    progress({"event": "skipped", "task": "T3", "reason": "y"})
    assert out.getvalue() == ""
    progress.release()
    assert out.getvalue().index("T2 skipped") < out.getvalue().index("T3 skipped")


def test_an_input_that_ended_leaves_the_question_to_autobuild_answer() -> None:
    desk = QuestionDesk(lambda event: None, Progress(stream=io.StringIO()), enabled=True,
                        read=lambda prompt: next(typed()), write=lambda line: None)
    assert desk.answer_for(QUESTION) == NO_ANSWER


def test_a_disabled_desk_only_passes_events_on() -> None:
    passed: list[dict[str, object]] = []
    desk = QuestionDesk(passed.append, Progress(stream=io.StringIO()), enabled=False,
                        read=lambda prompt: (_ for _ in ()).throw(AssertionError("asked")), write=lambda line: None)
    desk(QUESTION)
    assert passed == [QUESTION]


def test_lines_held_when_the_run_ends_are_shown_all_the_same() -> None:
    out = io.StringIO()
    with Progress(stream=out) as progress:
        progress.hold()
        progress({"event": "interrupt", "forced": False, "grace_s": 5})
    assert "interrupt: finishing running steps" in out.getvalue()


def test_the_end_of_a_pass_stopped_for_an_answer_is_not_shown_or_notified() -> None:
    passed: list[dict[str, object]] = []
    desk = QuestionDesk(passed.append, Progress(stream=io.StringIO()), enabled=True, read=lambda prompt: "x",
                        write=lambda line: None)
    desk.pass_drained = True
    desk({"event": "feature_end", "report": "r"})
    desk({"event": "resume", "next": []})
    desk.pass_drained = False
    desk({"event": "feature_end", "report": "r"})
    assert [event["event"] for event in passed] == ["resume", "feature_end"]


async def test_a_task_awaits_its_answer_in_process_and_a_stopping_run_leaves_it_to_an_interrupt() -> None:
    typed_in = threading.Event()
    shown: list[str] = []

    def read(prompt: str) -> str:
        typed_in.wait(30)  # the person types only when the test says so (bounded: a broken desk fails, not hangs)
        return "2"

    desk = QuestionDesk(lambda event: None, Progress(stream=io.StringIO()), enabled=True, read=read,
                        write=shown.append)
    desk.in_process = True
    drained: list[bool] = []
    desk.on_answer = lambda: drained.append(True)
    waiting = asyncio.ensure_future(desk.answer(QUESTION))
    await asyncio.sleep(0)
    assert not waiting.done(), "the task waits for the person"
    typed_in.set()
    assert await waiting == "SQLite", "answered by number"
    assert drained == [], "an answer taken in-process stops no pass"
    assert any("goes on with it now" in line for line in shown)
    assert await desk.answer(QUESTION) == "SQLite", "asked again (a resumed node): the same answer, no prompt"

    other = {**QUESTION, "question_id": "T1-def"}
    desk.give("T1-given", "1")
    assert await desk.answer({**QUESTION, "question_id": "T1-given"}) == "Postgres", "`answer`'s text, no prompt"
    typed_in.clear()
    pending = asyncio.ensure_future(desk.answer(other))
    await asyncio.sleep(0)
    desk.stop_waiting()  # Ctrl+C: the task stops as an interrupt, `resume` asks again
    assert await pending is None
    assert await desk.answer({**QUESTION, "question_id": "T1-late"}) is None
    typed_in.set()
