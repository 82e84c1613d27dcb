"""Questions at the terminal, asked as soon as an agent asks them: one at a time, on a thread of their own, while
the run goes on; the live table waits while the person types; options are numbered and answerable by number."""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any

from orchestrator.events import EventSink
from orchestrator.text import chosen_option, visible
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
        self.on_answer: Callable[[], None] = lambda: None
        """Called on the desk's thread as each answer comes in: the run stops its pass to take it up."""
        self.pass_drained = False
        """The pass running now was stopped to take an answer up (set and cleared by the run)."""

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

    def _work(self) -> None:
        while True:
            question = self._waiting.get()
            answer = self._prompt(question)
            with self._answered:
                self._answers[str(question.get("question_id"))] = answer
                self._answered.notify_all()
            if answer != NO_ANSWER:
                with contextlib.suppress(RuntimeError):  # the run ended (its event loop closed) meanwhile
                    self.on_answer()

    def _prompt(self, question: dict[str, Any]) -> str:
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
                    self._write(f"  answered: {visible(answer)}; {question.get('task')} goes on with it once the"
                                " steps running now end")
                    return answer
                self._write("  an empty answer can't be sent: type one, or Ctrl+D to answer later")
        finally:
            self.progress.release()
