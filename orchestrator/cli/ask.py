"""Questions at the terminal, asked as soon as an agent asks them: one at a time, on a thread of their own, while
the run goes on (the live table refreshing above the prompt while the person types); options are numbered and
answerable by number. The asking task waits for its answer in-process (`answer`, the graph's asker) and goes on
as soon as it comes."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sys
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

from orchestrator.events import EventSink
from orchestrator.text import chosen_option, visible
from orchestrator.views.live_prompt import read_line
from orchestrator.views.progress import Progress

NO_ANSWER = ""
"""What the desk gives back when the terminal has no more input (Ctrl+D): answer later with `autobuild answer`."""


class QuestionDesk:
    """An event sink in front of another: it passes every event on, and a `question_asked` is put to the person at
    once (when `enabled`), in the order asked. `answer_for` waits for a question's answer, asking it first if no
    event brought it (a replan's question)."""

    def __init__(self, sink: EventSink, progress: Progress, enabled: bool,
                 read: Callable[[str], str] = input, write: Callable[[str], None] = print) -> None:
        self.sink, self.progress, self.enabled = sink, progress, enabled
        self._read, self._write = read, write
        self._waiting: queue.Queue[dict[str, Any]] = queue.Queue()
        self._answers: dict[str, str] = {}
        self._asked: set[str] = set()
        self._answered = threading.Condition()
        self._thread: threading.Thread | None = None
        self.on_answer: Callable[[], object] = lambda: None
        """Called on the desk's thread as each answer comes in: the run stops its pass to take it up."""
        self.pass_drained = False
        """The pass running now was stopped to take an answer up (set and cleared by the run)."""
        self._waiters: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Future[str]]]] = {}
        self._given: dict[str, str] = {}
        self._closed = False
        self.in_process = False
        """The run's tasks await their answers here (`answer`): an answer never stops the pass to be taken up."""

    def __call__(self, event: dict[str, Any]) -> None:
        if self.pass_drained and event.get("event") == "feature_end":
            return  # a pass stopped to take an answer up: the run goes on, no "feature stopped" to show or notify
        self.sink(event)
        if self.enabled and event.get("event") == "question_asked":
            self.ask(event)

    def ask(self, question: dict[str, Any]) -> None:
        """Queue the question for the person (once per id); never blocks: the graph's events call it."""
        question_id = str(question.get("question_id"))
        with self._answered:
            if question_id in self._asked:
                return
            self._asked.add(question_id)
            if self._thread is None:
                # A daemon: a run that ends (Ctrl+C, an error) while a person has not answered doesn't wait for them.
                self._thread = threading.Thread(target=self._work, name="questions", daemon=True)
                self._thread.start()
        self._waiting.put(question)

    def has_answer(self, question: dict[str, Any]) -> bool:
        with self._answered:
            return str(question.get("question_id")) in self._answers

    def answer_for(self, question: dict[str, Any]) -> str:
        """The person's answer to `question` (blocking: run it in a thread); NO_ANSWER when the input ended."""
        self.ask(question)
        question_id = str(question.get("question_id"))
        with self._answered:
            self._answered.wait_for(lambda: question_id in self._answers)
            return self._answers[question_id]

    async def answer(self, question: dict[str, Any]) -> str | None:
        """The person's answer to a task's question, awaited in-process (the graph's ask_human node, on the run's
        event loop, which never blocks); None when no one answers now (the input ended, the run is stopping): the
        question then waits as an interrupt for `autobuild answer`."""
        question_id = str(question.get("question_id"))
        options = [str(option) for option in question.get("options") or []]
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        with self._answered:
            if question_id in self._given:  # `autobuild answer FEAT Q text`: the answer came with the command
                return chosen_option(self._given[question_id], options)
            if question_id in self._answers or self._closed:
                return self._answers.get(question_id, NO_ANSWER) or None
            self._waiters.setdefault(question_id, []).append((asyncio.get_running_loop(), future))
        self.ask(question)
        return await future or None

    def give(self, question_id: str, text: str) -> None:
        """An answer that came with the command (`answer`): its task takes it without asking the person."""
        with self._answered:
            self._given[question_id] = text

    def stop_waiting(self) -> None:
        """The run is stopping (a signal): every task awaiting an answer gets none and waits as an interrupt."""
        with self._answered:
            self._closed = True
            waiting = [entry for entries in self._waiters.values() for entry in entries]
            self._waiters.clear()
        for loop, future in waiting:
            _settle(loop, future, NO_ANSWER)

    def _work(self) -> None:
        while True:
            question = self._waiting.get()
            answer = self._prompt(question)
            with self._answered:
                self._answers[str(question.get("question_id"))] = answer
                self._answered.notify_all()
                waiting = self._waiters.pop(str(question.get("question_id")), [])
            for loop, future in waiting:  # the asking task goes on at once; the other tasks never stopped
                _settle(loop, future, answer)
            if answer != NO_ANSWER and not self.in_process:
                with contextlib.suppress(RuntimeError):  # the run ended (its event loop closed) meanwhile
                    self.on_answer()

    def _prompt_live(self, question: dict[str, Any]) -> str:
        """The question under the live table, which keeps refreshing while the person types (views/live_prompt.py);
        once answered, the question and its answer stay above the table with the run's lines."""
        options = [str(option) for option in question.get("options") or []]
        asked = _lines(question)
        hint = f" (1-{len(options)}, or your own words)" if options else ""
        ask = f"  your answer{hint}: "
        shown = [*asked, ask]
        while True:
            try:
                text = read_line(sys.stdin.fileno(), partial(_typed, self.progress, shown))
            except EOFError:
                self.progress.asked(["", *asked, "  no answer: the question waits for `autobuild answer` (see below)"])
                return NO_ANSWER
            if text.strip():
                answer = chosen_option(text, options)
                when = "now" if self.in_process else "once the steps running now end"
                self.progress.asked(["", *asked, ask + text,
                                     f"  answered: {answer}; {question.get('task')} goes on with it {when}"])
                return answer
            shown = [*asked, "  an empty answer can't be sent: type one, or Ctrl+D to answer later", ask]

    def _prompt(self, question: dict[str, Any]) -> str:
        if self.progress.prompts_live and self._read is input:
            return self._prompt_live(question)
        options = [str(option) for option in question.get("options") or []]
        self.progress.hold()
        try:
            self._write(f"\n{question.get('task')} asks ({question.get('question_id')}):"
                        f" {visible(str(question.get('question', '')))}")
            for number, option in enumerate(options, 1):
                self._write(f"  {number}) {visible(option)}")
            hint = f" (1-{len(options)}, or your own words)" if options else ""
            while True:
                try:
                    text = self._read(f"  your answer{hint}: ")
                except EOFError:
                    self._write("  no answer: the question waits for `autobuild answer` (see below)")
                    return NO_ANSWER
                if text.strip():
                    answer = chosen_option(text, options)
                    when = "now" if self.in_process else "once the steps running now end"
                    self._write(f"  answered: {visible(answer)}; {question.get('task')} goes on with it {when}")
                    return answer
                self._write("  an empty answer can't be sent: type one, or Ctrl+D to answer later")
        finally:
            self.progress.release()


def _typed(progress: Progress, shown: list[str], text: str) -> None:
    """What the person typed so far, after the prompt (the last line)."""
    progress.prompt([*shown[:-1], shown[-1] + text])


def _lines(question: dict[str, Any]) -> list[str]:
    options = [str(option) for option in question.get("options") or []]
    return [f"{question.get('task')} asks ({question.get('question_id')}): {question.get('question', '')}",
            *(f"  {number}) {option}" for number, option in enumerate(options, 1))]


def _settle(loop: asyncio.AbstractEventLoop, future: asyncio.Future[str], answer: str) -> None:
    """Hand an answer to a task awaiting it on `loop` (from any thread); a task cancelled meanwhile takes none."""
    def settle() -> None:
        if not future.done():
            future.set_result(answer)

    with contextlib.suppress(RuntimeError):  # the run's event loop closed meanwhile
        loop.call_soon_threadsafe(settle)
