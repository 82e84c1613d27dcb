"""A run killed -9 at each step of an answer's life (issue 41): the `answer` command starting (nothing accepted
yet: the person answers again), right after it accepted the answer (`answer_given`), once the run resumed with it
stored (`question_answered`), once the resumed player's session had it (consumed). Then the person's way on (the
answer again if it was never accepted, else `resume`): the answer reaches a kept player session, is taken once,
and the question is never asked again. The run is the answers bench's child (benchmarks/steering_answers.py): the
real graph, git and SQLite checkpoints, `autobuild answer`'s own path, scripted agents."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks import steering_answers
from orchestrator.store import event_log

pytestmark = [pytest.mark.heavy]


def _logged(repo: Path, kind: str) -> bool:
    return any(e.kind == kind for e in event_log.task_events(repo, "FEAT-001", "TASK-001"))


def _consumed(repo: Path) -> bool:
    """A player session started with the answer in its prompt (its 0.4 s of steps still ahead: the kill lands in
    it, not after the run, which ends a moment after the session's last step)."""
    log = repo.parent / "started.jsonl"
    return log.is_file() and steering_answers.ANSWER in log.read_text()


STEPS: dict[str, Callable[[Path], bool]] = {
    "starting": lambda repo: True,
    "accepted": lambda repo: _logged(repo, "answer_given"),
    "stored": lambda repo: _logged(repo, "question_answered"),
    "consumed": _consumed,
}


@pytest.mark.parametrize("step", list(STEPS))
def test_a_run_killed_at_any_step_of_an_answers_life_takes_it_once_and_never_asks_again(
        tmp_path: Path, step: str) -> None:
    def wait(answering: subprocess.Popen[bytes], repo: Path) -> None:
        deadline = time.monotonic() + 120
        while answering.poll() is None and not STEPS[step](repo):
            assert time.monotonic() < deadline, "the answer never reached the step"
            time.sleep(0.005)

    result = steering_answers.trial(tmp_path, wait)
    assert result["killed"] == 1, f"the answer command ended before the kill at {step}"
    assert (result["lost"], result["duplicated"], result["asked_again"]) == (0, 0, 0), result
