"""The `run`, `resume` and `answer` commands: the dry run (cli/dry_run.py), the run itself under the repository's
lock with drain-then-cancel signal handling, questions asked at the terminal, and what the user is told at the end.

Imported only by commands that run something: it loads LangGraph, the run machinery and rich.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langgraph.runtime import RunControl

from orchestrator import jsonout
from orchestrator.cli import next_steps, output
from orchestrator.cli.as_found import AsFound
from orchestrator.cli.ask import NO_ANSWER, QuestionDesk
from orchestrator.cli.disk_full import full_disk, full_disk_line
from orchestrator.cli.dry_run import dry_run, listed
from orchestrator.cli.messages import notice
from orchestrator.cli.preflight import attempt_models, require_credentials
from orchestrator.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_QUESTION,
    EXIT_USAGE_LIMIT,
    AutobuildError,
    InputError,
    RunLockedError,
)
from orchestrator.events import EventSink, event_dict
from orchestrator.facts import settled
from orchestrator.graph import rerun, runner
from orchestrator.landing import journal, unverified
from orchestrator.repo.git import GitRepo
from orchestrator.repo.lock import repo_lock
from orchestrator.settings import RunSettings, environment
from orchestrator.store import inspection, run_options
from orchestrator.store.locations import remember_db
from orchestrator.text import visible
from orchestrator.views.notify import Notifier
from orchestrator.views.progress import Progress, render_table


async def _run_with_signals(
    run_plan: runner.RunPlan, progress: EventSink, answer: tuple[str, str] | None = None,
    desk: QuestionDesk | None = None,
) -> runner.RunSummary:
    """Run the graph. The first SIGINT/SIGTERM drains at the next step boundary and, after the grace period,
    cancels what still runs (sessions kill their process trees); a second signal cancels at once.

    At a terminal (`desk`), a question is asked as it comes and its task awaits the answer in-process (the
    others keep running). A question still waiting when the pass ends (the input ended, a replan's question) is
    asked then, and the next pass resumes the task with its answer."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    passes = [RunControl()]  # the pass running now: a signal drains it, and so does an answer
    signalled: list[bool] = []
    grace = run_plan.settings.drain_grace

    def on_signal() -> None:
        if signalled:
            progress(event_dict("interrupt", forced=True))
            task.cancel()
            return
        signalled.append(True)
        if desk is not None:
            desk.stop_waiting()  # a task awaiting an answer stops as an interrupt: `resume` asks again
        progress(event_dict("interrupt", forced=False, grace_s=grace))
        passes[-1].request_drain("signal")
        loop.call_later(grace, task.cancel)

    def take_up_answer() -> None:
        if not passes[-1].drain_requested and desk is not None:
            desk.pass_drained = True
            passes[-1].request_drain("a question was answered")

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    prompting = desk is not None and desk.enabled
    if desk is not None:
        desk.on_answer = lambda: loop.call_soon_threadsafe(take_up_answer)  # called on the desk's thread
    try:
        summary = await runner.execute(run_plan, progress, passes[-1], answer)
        while prompting and desk is not None and not signalled and (summary.pending_questions
                                                                     or passes[-1].drain_requested):
            answer = None  # drained before the question's pause was recorded: the next pass records it
            if summary.pending_questions:
                answer = await _answer_one(desk, summary.pending_questions, lambda: loop.call_soon(take_up_answer))
                if answer is None:  # the input ended: the rest waits for `autobuild answer`
                    break
            passes.append(RunControl())
            desk.pass_drained = False
            summary = await runner.execute(run_plan, progress, passes[-1], answer)
        if prompting and not signalled:
            summary.interrupted = False  # drained for an answer, not by the person: not an interrupted run
        return summary
    finally:
        if desk is not None:
            desk.on_answer = lambda: None  # an answer typed after the run ended drains nothing
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


async def _answer_one(desk: QuestionDesk, pending: list[dict[str, Any]],
                      more_waiting: Callable[[], object]) -> tuple[str, str] | None:
    """The next question's id and answer (one answered already goes first); None when the input ended.
    With another answer waiting too, `more_waiting` makes the next pass stop at its first step boundary."""
    answered = [q for q in pending if desk.has_answer(q)]
    question = (answered or pending)[0]
    text = await asyncio.to_thread(desk.answer_for, question)
    if text == NO_ANSWER:
        return None
    answer = (question["question_id"], text)
    if len(answered) > 1:  # another answer waits too: this pass stops at its first step boundary
        more_waiting()
    return answer


def run_command(args: argparse.Namespace, settings: RunSettings) -> int:
    """`run`, `resume` or `answer`: prepare (exit 2 before anything is written), then the dry run or the run
    under the repository's lock, and what the user is told at the end."""
    command = str(args.command)
    answer = (args.question_id, args.text) if command == "answer" else None
    where = (args.repo if hasattr(args, "repo") else settings.repo) or environment().repo or "."
    run_plan = runner.prepare(settings.model_copy(update={"checkout": Path(where).expanduser().resolve()}))
    settings = run_plan.settings
    if settings.dry_run:
        return dry_run(run_plan, settings.json_output)
    again = rerun.planned_rerun(run_plan)
    if again and not settings.json_output:  # said before anything runs (`--json`: the `resume` event says it)
        print(f"{run_plan.thread_id}: running {listed(again)}; the other tasks keep their latest results", flush=True)
    summary = _run_or_stop(run_plan, command, answer, getattr(args, "given_options", {}))
    if isinstance(summary, int):
        return summary
    if summary.interrupted:
        return _interrupted(run_plan)
    waiting = bool(summary.pending_questions or summary.paused)  # a person's answer or `unpause` goes on
    exit_code = EXIT_QUESTION if waiting else summary.exit_code
    if summary.usage_limited and not waiting:
        exit_code = EXIT_USAGE_LIMIT
    if settings.json_output:
        output.print_json({"event": "summary", "time": jsonout.now_utc(), "feature": summary.feature_id,
                           "exit_code": exit_code, "results": inspection.results_json(summary.results),
                           "held": summary.held, "branch": summary.branch, "db": str(summary.store),
                           "pending_questions": summary.pending_questions, "paused": summary.paused})
        return exit_code
    if summary.pending_questions:
        return _paused(summary, run_plan)
    _say_held(summary)
    render_table(summary.results, summary.order, spent=summary.spent, paused=[p["task"] for p in summary.paused])
    print(f"branch:      {summary.branch}")
    print(f"checkpoints: {summary.store} (thread {summary.thread_id})")
    print(f"reports:     {summary.report}")
    _say_paused(summary)
    if summary.already_finished:
        output.say(_finished_hint(summary, run_plan))
    if summary.held:
        if summary.usage_limited:
            output.say(f"stopped: a usage limit outlasted --max-wait {settings.max_wait:.0f}s; finished work is kept",
                       sys.stderr)
        print(f"resume with: {_resume_command(run_plan)}")
    else:
        output.say("\n".join([*next_steps.after_run(run_plan.plan.id, summary.results, summary.order, settings.repo),
                              *unverified.last_line(summary.results, run_plan.plan.id)]))
    return exit_code


def _finished_hint(summary: runner.RunSummary, run_plan: runner.RunPlan) -> str:
    """A finished thread with nothing for this command to run: what it came to, and a command that works now."""
    feature, where = run_plan.plan.id, f" --repo {run_plan.settings.repo}"
    if summary.rerun:  # `run FEAT` on a finished feature: `resume` runs what it can again
        return (f"{summary.thread_id} already finished; `autobuild resume {feature}{where}` runs again:"
                f" {listed(summary.rerun)}")
    waiting = {t: str(r.get("status")) for t, r in summary.results.items()
               if not settled(dict(summary.results), t) and r.get("status") != "replaced"}
    if not waiting:
        done = run_plan.only_task or "every task"
        return (f"{summary.thread_id} already finished: {done} approved and merged. Next: `autobuild review {feature}"
                f"{where}`, then `autobuild land {feature}{where}`")
    person = [t for t in waiting if t in run_plan.plan.task_ids() and waiting[t] in ("blocked", "aborted")]
    if not person:  # only tasks a replan added: resume can't run them again (their specs are the replan's)
        return (f"{summary.thread_id} already finished; {listed(waiting)}, added by a replan, can't run again:"
                f" see `autobuild show {feature} {next(iter(waiting))}{where}`; `autobuild run {feature} --fresh"
                f"{where}` starts the feature over (the old branch is kept)")
    after = [t for t in waiting if t not in person]
    return (f"{summary.thread_id} already finished; {listed({t: waiting[t] for t in person})}"
            f" {'wait' if len(person) > 1 else 'waits'} for a person"
            f"{f' ({listed({t: waiting[t] for t in after})} after it)' if after else ''}: see `autobuild"
            f" show {feature} {person[0]}{where}`, then `autobuild resume {feature} {' '.join(person)}{where}` runs"
            f" {'them' if len(person) > 1 else 'it'} again, dependents too (`run {feature} --fresh` starts the whole"
            " feature over)")


def _run_or_stop(run_plan: runner.RunPlan, command: str, answer: tuple[str, str] | None,
                 given: dict[str, Any]) -> runner.RunSummary | int:
    """The run's summary, or the exit code it stopped with: interrupted, or a full disk (one line, exit 1)."""
    try:
        return _run_locked(run_plan, command, answer, given)
    except (KeyboardInterrupt, asyncio.CancelledError):
        return _interrupted(run_plan)
    except (OSError, AutobuildError) as exc:
        if (full := full_disk(exc)) is None:
            raise
        return _stopped(run_plan, full_disk_line(full, run_plan.settings.repo, _resume_command(run_plan)))


def _run_locked(run_plan: runner.RunPlan, command: str, answer: tuple[str, str] | None,
                given: dict[str, Any]) -> runner.RunSummary:
    """The run under the repository's lock, with the live view and notifications; refused once started (its gate
    can't run on the base…: exit 2), it leaves the repository and the store as it found them."""
    settings = run_plan.settings
    progress = Progress(json_mode=settings.json_output, live=sys.stdout.isatty())
    notifier = Notifier.from_settings(settings, progress)  # --notify / --on-event; drained on the way out
    desk = QuestionDesk(notifier, progress, enabled=_can_prompt(run_plan))  # asks each question as it comes
    if desk.enabled:  # the asking task awaits its answer in-process and goes on at once; the others keep running
        desk.in_process = True
        run_plan.settings = settings = settings.model_copy(update={"asker": desk.answer})
        if answer is not None:
            desk.give(*answer)
    found = AsFound(GitRepo(settings.repo), run_plan.plan.id, run_plan.thread_id, run_plan.store).note()
    try:
        with repo_lock(settings.repo, f"{command} {settings.target}", notice=notice):
            if settings.agents is None:  # Claude sessions: their credentials before any branch, worktree or session
                require_credentials(attempt_models(run_plan.plan))  # (before the live table: its one line alone)
            with progress, notifier:
                journal.finish_interrupted(GitRepo(settings.repo), notice)  # a landing a kill -9 cut short
                remember_db(settings.repo, run_plan.plan.id, run_plan.store.location)
                if not settings.json_output:
                    print(f"AutoBuild {run_plan.thread_id}: checkpoints in {run_plan.store}", flush=True)
                sink = _keeping_options(desk, settings.repo, run_plan.plan.id, given if command == "run" else None)
                return asyncio.run(_run_with_signals(run_plan, sink, answer, desk))
    except RunLockedError:  # another live run holds the repo or the thread: what changed is its, not ours
        raise
    except InputError:
        found.undo()
        raise


def _keeping_options(sink: EventSink, repo: Path, feature: str, given: dict[str, Any] | None) -> EventSink:
    """`sink`, which also keeps `run`'s flags for `resume` (store/run_options.py) once the run really started (its
    `feature_start`, after the base's gate: a run refused before leaves nothing)."""

    def on_event(event: dict[str, Any]) -> None:
        if given is not None and event.get("event") == "feature_start":
            run_options.record(repo, feature, given)
        sink(event)

    return on_event


def _can_prompt(run_plan: runner.RunPlan) -> bool:
    return run_plan.settings.interactive and sys.stdin.isatty() and not run_plan.settings.json_output


def _say_held(summary: runner.RunSummary) -> None:
    """The tasks that did not finish in this run, but the paused ones (said under the table), with why."""
    for task_id, why in summary.held.items():
        if task_id not in {paused["task"] for paused in summary.paused}:
            output.say(f"{task_id} did not finish: {visible(why)}", sys.stderr)


def _say_paused(summary: runner.RunSummary) -> None:
    """Under the table: each task a person paused, and how it goes on."""
    for paused in summary.paused:
        output.say(f"{paused['task']} is paused (since {paused.get('since')}): `autobuild unpause"
                   f" {summary.feature_id} {paused['task']}`, then `autobuild resume {summary.feature_id}`",
                   sys.stderr)


def _paused(summary: runner.RunSummary, run_plan: runner.RunPlan) -> int:
    settings = run_plan.settings
    for question in summary.pending_questions:
        options = [str(option) for option in question.get("options") or []]
        listed = f" [{' | '.join(f'{n}) {option}' for n, option in enumerate(options, 1))}]" if options else ""
        print(f"{question['task']} asks {question['question_id']}: {visible(question['question'] + listed)}")
        print(f"  answer with: autobuild answer {settings.target} {question['question_id']} \"…\""
              f" --repo {settings.repo}{'   (an option by its number, or your own words)' if options else ''}")
    return EXIT_QUESTION


def _interrupted(run_plan: runner.RunPlan) -> int:
    message = f"interrupted; progress is checkpointed. Resume with: {_resume_command(run_plan)}"
    if run_plan.settings.json_output:
        output.print_json({"error": message, "exit_code": EXIT_INTERRUPTED})
    print(f"\n{message}", file=sys.stderr)
    return EXIT_INTERRUPTED


def _stopped(run_plan: runner.RunPlan, message: str) -> int:
    """The run stopped on its machine's account (a full disk): one line, exit 1, `resume` named in it."""
    if run_plan.settings.json_output:
        output.print_json({"error": message, "exit_code": EXIT_FAILED})
    print(f"error: {message}", file=sys.stderr)
    return EXIT_FAILED


def _resume_command(run_plan: runner.RunPlan) -> str:
    settings = run_plan.settings
    return f"autobuild resume {settings.target} --repo {settings.repo}"
