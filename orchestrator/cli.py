"""Command line: `autobuild …` (or `python -m orchestrator …`); a thin layer over runner/plan with DESIGN §5
exit codes."""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import os
import signal
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from orchestrator.errors import AutobuildError, InputError
from orchestrator.gate.detect import choose_gate
from orchestrator.plan import FeaturePlan, check_id, load_plan, plan_path, scope_overlaps, unknown_fields
from orchestrator.repo.git import GitRepo
from orchestrator.repo.lock import repo_lock
from orchestrator.settings import RunSettings, env_default

if TYPE_CHECKING:  # the run machinery (LangGraph, the SDK, rich) loads only for commands that run something
    from orchestrator import runner
    from orchestrator.progress import Progress

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_QUESTION, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_USAGE_LIMIT = 75  # EX_TEMPFAIL: a usage-limit pause outlasted --max-wait; `resume` later
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader closed the pipe


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are one line and exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"error: {message} (see --help)", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _env_float(name: str, default: float | None) -> float | None:
    raw = env_default(name)
    try:
        return float(raw) if raw is not None else default
    except ValueError:
        raise InputError(f"ORCHESTRATOR_{name.upper()}={raw!r} is not a number") from None


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", type=Path, default=None, help="target git repo (default: current directory)")
    parser.add_argument("--db", default=None, help="checkpoint SQLite path (default: checkpoints/)")
    parser.add_argument("--parallel", type=int, default=None, help="max tasks running at once")
    parser.add_argument("--max-turns", type=int, default=None, help="player/coach turns per task (default 10)")
    parser.add_argument("--session-timeout", type=float, default=None, help="seconds per agent session")
    parser.add_argument("--idle-timeout", type=float, default=None, help="seconds without agent activity")
    parser.add_argument("--budget-usd", type=float, default=None, help="spending cap for the whole feature (USD)")
    parser.add_argument("--task-budget-usd", type=float, default=None, help="spending cap per task (USD)")
    parser.add_argument("--session-budget-usd", type=float, default=None, help="spending cap per agent session")
    parser.add_argument("--model", default=None, help="model for the player (and coach unless --coach-model)")
    parser.add_argument("--coach-model", default=None)
    parser.add_argument("--precheck-model", default=None,
                        help="fast model for a yes/no plausibility check before each coach review (off by default)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--autonomous", action="store_true", help="never wait for a human")
    mode.add_argument("--interactive", action="store_true", help="pause on agent questions")
    parser.add_argument("--dry-run", action="store_true", help="show groups and estimates; touch nothing")
    parser.add_argument("--fresh", action="store_true", help="start over (the old feature branch is kept)")
    parser.add_argument("--keep-worktrees", action="store_true")
    parser.add_argument("--ignore-deps", action="store_true", help="run TASK even if its dependencies are not done")
    parser.add_argument("--json", action="store_true", help="JSON lines instead of text")
    parser.add_argument("--schedule", choices=["dag", "groups"], default=None,
                        help="dag: a task starts when its dependencies are merged (default);"
                             " groups: wait for the whole previous parallel group")
    _add_gate_options(parser)
    parser.add_argument("--setup", default=None, metavar="CMD",
                        help="prepare each new worktree (e.g. 'npm ci'); 'none' for nothing (default: the plan's"
                             " setup, else reuse the main checkout's .venv / node_modules)")
    parser.add_argument("--repo-hooks", action="store_true",
                        help="run the repo's .claude/settings.json hooks in agent sessions (off by default)")
    parser.add_argument("--max-wait", type=float, default=None, metavar="S",
                        help="longest usage-limit pause before the run stops with exit 75 (default 21600 = 6 h)")
    parser.add_argument("--drain-grace", type=float, default=None,
                        help="seconds a Ctrl+C waits for running steps before cancelling them (default 5)")


def _add_gate_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--verify", default=None, metavar="CMD",
                        help="the gate command (default: the plan's verify, else the repo's detected test command);"
                             " 'none' runs without a gate and reports every approval as unverified")


_EPILOG = """\
exit codes:
  0 every task approved   1 some task failed, aborted, blocked, conflicted or erred (resumable)
  2 bad input or usage (nothing written)   3 paused, waiting for an answer
  75 a usage-limit pause outlasted --max-wait (resumable)   130 interrupted (resumable)

environment: every run option may come from ORCHESTRATOR_<NAME> (e.g. ORCHESTRATOR_DB, ORCHESTRATOR_PARALLEL,
ORCHESTRATOR_MODEL, ORCHESTRATOR_MAX_WAIT, ORCHESTRATOR_VERIFY, ORCHESTRATOR_CLI_PATH,
ORCHESTRATOR_DB_LOCK_TIMEOUT); flags win over them. `python -m orchestrator` is the same command."""


def _version() -> str:
    try:
        return importlib.metadata.version("autobuild")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="autobuild", description="AutoBuild: build a feature with player/coach agents.",
                     epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"autobuild {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = commands.add_parser("run", help="run a feature (FEAT-001) or one task of it (TASK-002)")
    run.add_argument("target")
    _add_run_options(run)
    resume = commands.add_parser("resume", help="resume an interrupted feature run")
    resume.add_argument("target")
    _add_run_options(resume)
    answer = commands.add_parser("answer", help="answer an agent's pending question and continue the run")
    answer.add_argument("target")
    answer.add_argument("question_id")
    answer.add_argument("text")
    _add_run_options(answer)
    plan = commands.add_parser("plan", help="turn a description into a validated feature plan (planner agent)")
    plan.add_argument("description")
    plan.add_argument("--id", dest="feature_id", default=None, help="feature id (default: next free FEAT-NNN)")
    plan.add_argument("--repo", type=Path, default=None)
    plan.add_argument("--model", default=None)
    plan.add_argument("--json", action="store_true")
    doctor = commands.add_parser("doctor", help="check the CLI, credentials, git, the DB and the model endpoint")
    doctor.add_argument("--repo", type=Path, default=None)
    doctor.add_argument("--db", default=None)
    doctor.add_argument("--json", action="store_true")
    doctor.add_argument("--offline", action="store_true",
                        help="skip the live model call that checks the credentials really work")
    validate = commands.add_parser("validate", help="validate a feature plan")
    validate.add_argument("feature")
    validate.add_argument("--repo", type=Path, default=None)
    validate.add_argument("--json", action="store_true")
    _add_gate_options(validate)
    status = commands.add_parser("status", help="features in the checkpoint DB, or one feature's task table")
    status.add_argument("feature", nargs="?")
    history = commands.add_parser("history", help="checkpoint timeline of a feature (or one task)")
    history.add_argument("feature")
    history.add_argument("--task", default=None)
    show = commands.add_parser("show", help="requirements, reports, feedback and gate results of a task")
    show.add_argument("feature")
    show.add_argument("task", nargs="?")
    clean = commands.add_parser("clean", help="remove leftover worktrees and task branches (never feature branches)")
    clean.add_argument("feature", nargs="?")
    clean.add_argument("--db", nargs="?", const="", default=None, metavar="PATH",
                       help="also prune finished threads from the checkpoint DB (this one, or the default)")
    clean.add_argument("--prune-db", dest="prune_db", action="store_true", help="same as --db without a PATH")
    for sub in (status, history, show, clean):
        sub.add_argument("--repo", type=Path, default=None)
        if sub is not clean:
            sub.add_argument("--db", default=None)
        sub.add_argument("--json", action="store_true")
    return parser


def _settings(args: argparse.Namespace) -> RunSettings:
    def pick(value: object, name: str, default: object) -> object:
        if value is not None:
            return value
        raw = env_default(name)
        return default if raw is None else raw

    try:
        return RunSettings(
            repo=(args.repo or Path(str(env_default("repo", ".")))).resolve(),
            target=args.target,
            db=args.db or env_default("db"),
            parallel=int(str(pick(args.parallel, "parallel", 1))),
            max_turns=int(str(pick(args.max_turns, "max_turns", 10))),
            session_timeout=float(str(pick(args.session_timeout, "session_timeout", 1800.0))),
            idle_timeout=float(str(pick(args.idle_timeout, "idle_timeout", 600.0))),
            budget_usd=args.budget_usd if args.budget_usd is not None else _env_float("budget_usd", None),
            task_budget_usd=(
                args.task_budget_usd if args.task_budget_usd is not None else _env_float("task_budget_usd", None)
            ),
            session_budget_usd=(
                args.session_budget_usd
                if args.session_budget_usd is not None
                else _env_float("session_budget_usd", None)
            ),
            model=args.model or env_default("model"),
            coach_model=args.coach_model or env_default("coach_model"),
            precheck_model=args.precheck_model or env_default("precheck_model"),
            interactive=bool(args.interactive or (not args.autonomous and sys.stdin.isatty())),
            dry_run=args.dry_run,
            fresh=args.fresh,
            keep_worktrees=args.keep_worktrees,
            json_output=args.json,
            ignore_deps=args.ignore_deps,
            cli_path=env_default("cli_path"),
            resume_only=args.command in ("resume", "answer"),
            drain_grace=float(str(pick(args.drain_grace, "drain_grace", 5.0))),
            max_wait=float(str(pick(args.max_wait, "max_wait", 6 * 3600.0))),
            repo_hooks=bool(args.repo_hooks or env_default("repo_hooks") in ("1", "true", "yes")),
            limit_probe=float(str(pick(None, "limit_probe", 60.0))),
            verify=pick(args.verify, "verify", None),  # type: ignore[arg-type]  # pydantic checks it
            setup=pick(args.setup, "setup", None),  # type: ignore[arg-type]
            schedule=pick(args.schedule, "schedule", "dag"),  # type: ignore[arg-type]  # pydantic checks it
        )
    except ValidationError as exc:
        problem = exc.errors()[0]
        name = "--" + str(problem["loc"][0]).replace("_", "-") if problem.get("loc") else "an option"
        raise InputError(f"bad value for {name} (or its ORCHESTRATOR_* variable): {problem['msg']}") from None
    except ValueError as exc:
        raise InputError(f"bad number in an option or ORCHESTRATOR_* variable: {exc}") from None


def _validate(args: argparse.Namespace) -> int:
    repo = (args.repo or Path(".")).resolve()
    plan = load_plan(repo, args.feature)
    groups = plan.groups()
    if args.verify is not None and not args.verify.strip():
        raise InputError("--verify must be a command, or none")
    gate = choose_gate(repo, plan.verify, args.verify)
    if args.json:
        print(json.dumps({"valid": True, "id": plan.id, "tasks": plan.task_ids(), "groups": groups,
                          "gate": {"command": gate.command, "source": gate.source}}))
    else:
        print(f"{plan.id} is valid: {len(plan.tasks)} task(s) in {len(groups)} group(s)")
        for index, group in enumerate(groups, 1):
            print(f"  group {index}: {', '.join(group)}")
        print(f"  gate: {gate.describe()}")
    _warn(plan)
    return EXIT_OK


def _warn(plan: FeaturePlan) -> None:
    for field_name in unknown_fields(plan):
        print(f"warning: unknown field {field_name} (kept, but check for a typo)", file=sys.stderr)
    for overlap in scope_overlaps(plan):
        print(f"warning: {overlap}: expect merge conflicts, or move one to a later group", file=sys.stderr)


def _dry_run(run_plan: runner.RunPlan, as_json: bool) -> int:
    plan = run_plan.plan
    max_turns = run_plan.settings.max_turns
    rows: list[dict[str, Any]] = []
    for index, group in enumerate(run_plan.groups, 1):
        for task_id in group:
            task = plan.task(task_id)
            # Rough expectation: complexity drives turns (1..max), each turn is a player and a coach session.
            turns = max(1, min(max_turns, round(task.complexity / 3)))
            rows.append({"group": index, "task": task_id, "dependencies": task.dependencies,
                         "complexity": task.complexity, "expected_turns": turns, "max_turns": max_turns})
    session_usd = float(str(env_default("est_session_usd", "0.25")))
    expected = 2 * sum(r["expected_turns"] for r in rows)
    estimate = {"sessions_expected": expected, "sessions_max": 2 * max_turns * len(rows),
                "cost_usd_expected": round(expected * session_usd, 2), "cost_per_session_usd": session_usd}
    if as_json:
        print(json.dumps({"feature": plan.id, "base_branch": run_plan.base_branch, "tasks": rows,
                          "gate": {"command": run_plan.gate.command, "source": run_plan.gate.source},
                          "groups": run_plan.groups, "estimate": estimate, "scope_overlaps": scope_overlaps(plan),
                          "previous_run": _previous_run(run_plan)}))
        return EXIT_OK
    print(f"{plan.id}: {plan.name} (base {run_plan.base_branch}, {len(run_plan.groups)} group(s))")
    task_width = max(len(row["task"]) for row in rows)
    deps_width = max(len(", ".join(row["dependencies"]) or "-") for row in rows)
    for row in rows:
        deps = ", ".join(row["dependencies"]) or "-"
        print(f"  group {row['group']}  {row['task']:<{task_width}}  complexity {row['complexity']:>2}"
              f"  deps {deps:<{deps_width}}  ~{row['expected_turns']} turn(s), at most {max_turns}")
    print(f"  sessions: ~{expected} expected, at most {estimate['sessions_max']};"
          f" cost ~${estimate['cost_usd_expected']:.2f} at ${session_usd:.2f}/session"
          f" (ORCHESTRATOR_EST_SESSION_USD); nothing was run or written")
    print(f"  gate: {run_plan.gate.describe()}")
    previous = _previous_run(run_plan)
    if previous:
        print(f"  note: {previous}")
    _warn(plan)
    return EXIT_OK


def _previous_run(run_plan: runner.RunPlan) -> str | None:
    """What `run` would find in the checkpoint DB, so the estimate is not read as "will run everything"."""
    from orchestrator import inspection

    if run_plan.settings.fresh or not run_plan.store.exists():
        return None
    for row in inspection.list_features(run_plan.store):
        if row["thread"] == run_plan.thread_id:
            done = ", ".join(f"{count} {status}" for status, count in sorted(row["tasks"].items())) or "no task done"
            if row["finished"]:
                return f"{run_plan.thread_id} already finished ({done}); `run` reports it, --fresh starts over"
            return f"{run_plan.thread_id} has an unfinished run ({done}); `run` resumes it"
    return None


async def _run_with_signals(
    run_plan: runner.RunPlan, progress: Progress, answer: tuple[str, str] | None = None
) -> runner.RunSummary:
    """Run the graph. The first SIGINT/SIGTERM drains at the next step boundary and, after the grace period,
    cancels what still runs (sessions kill their process trees); a second signal cancels at once."""
    from langgraph.runtime import RunControl

    from orchestrator import runner

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    control = RunControl()
    grace = run_plan.settings.drain_grace

    def on_signal() -> None:
        if control.drain_requested:
            progress({"event": "interrupt", "forced": True})
            task.cancel()
            return
        progress({"event": "interrupt", "forced": False, "grace_s": grace})
        control.request_drain("signal")
        loop.call_later(grace, task.cancel)

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    try:
        summary = await runner.execute(run_plan, progress, control, answer)
        # Interactive and at a terminal: ask here, one question at a time, and go on in-process.
        while summary.pending_questions and not summary.interrupted and _can_prompt(run_plan):
            question = summary.pending_questions[0]
            text = await asyncio.to_thread(_prompt, question)
            summary = await runner.execute(run_plan, progress, RunControl(), (question["question_id"], text))
        return summary
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def _run(args: argparse.Namespace, answer: tuple[str, str] | None = None) -> int:
    from orchestrator import runner
    from orchestrator.progress import Progress, render_table

    settings = _settings(args)
    run_plan = runner.prepare(settings)
    if settings.dry_run:
        return _dry_run(run_plan, settings.json_output)
    progress = Progress(json_mode=settings.json_output, live=sys.stdout.isatty())
    try:
        with repo_lock(settings.repo, f"{args.command} {settings.target}", notice=_notice), progress:
            if not settings.json_output:
                print(f"AutoBuild {run_plan.thread_id}: checkpoints in {run_plan.store}", flush=True)
            summary = asyncio.run(_run_with_signals(run_plan, progress, answer))
    except (KeyboardInterrupt, asyncio.CancelledError):
        return _interrupted(run_plan)
    if summary.interrupted:
        return _interrupted(run_plan)
    exit_code = EXIT_QUESTION if summary.pending_questions else summary.exit_code
    if summary.usage_limited and not summary.pending_questions:
        exit_code = EXIT_USAGE_LIMIT
    if settings.json_output:
        print(json.dumps({"event": "summary", "feature": summary.feature_id, "exit_code": exit_code,
                          "results": summary.results, "held": summary.held, "branch": summary.branch,
                          "db": str(summary.store),
                          "pending_questions": summary.pending_questions}, default=str))
        return exit_code
    if summary.pending_questions:
        return _paused(summary, run_plan)
    for task_id, why in summary.held.items():
        print(f"{task_id} did not finish: {why}", file=sys.stderr)
    if summary.already_finished:
        print(f"{summary.thread_id} already finished (use --fresh to run it again).")
    render_table(summary.results, summary.order)
    print(f"branch:      {summary.branch}")
    print(f"checkpoints: {summary.store} (thread {summary.thread_id})")
    print(f"reports:     {summary.report}")
    if summary.held:
        db = f" --db {run_plan.store}" if settings.db else ""
        if summary.usage_limited:
            print(f"stopped: a usage limit outlasted --max-wait {settings.max_wait:.0f}s; finished work is kept",
                  file=sys.stderr)
        print(f"resume with: autobuild resume {settings.target} --repo {settings.repo}{db}")
    return exit_code


def _notice(message: str) -> None:
    print(f"note: {message}", file=sys.stderr, flush=True)


def _can_prompt(run_plan: runner.RunPlan) -> bool:
    return run_plan.settings.interactive and sys.stdin.isatty() and not run_plan.settings.json_output


def _prompt(question: dict[str, Any]) -> str:
    options = question.get("options") or []
    print(f"\n{question['task']} asks ({question['question_id']}): {question['question']}", flush=True)
    if options:
        print("  options: " + " | ".join(options), flush=True)
    return input("  your answer: ").strip()


def _paused(summary: runner.RunSummary, run_plan: runner.RunPlan) -> int:
    settings = run_plan.settings
    db = f" --db {run_plan.store}" if settings.db else ""
    for question in summary.pending_questions:
        options = f" [{' | '.join(question['options'])}]" if question.get("options") else ""
        print(f"{question['task']} asks {question['question_id']}: {question['question']}{options}")
        print(f"  answer with: autobuild answer {settings.target} {question['question_id']}"
              f' "…" --repo {settings.repo}{db}')
    return EXIT_QUESTION


def _interrupted(run_plan: runner.RunPlan) -> int:
    settings = run_plan.settings
    db = f" --db {run_plan.store}" if settings.db else ""
    resume = f"autobuild resume {settings.target} --repo {settings.repo}{db}"
    print(f"\ninterrupted; progress is checkpointed. Resume with: {resume}", file=sys.stderr)
    return EXIT_INTERRUPTED


def _plan(args: argparse.Namespace) -> int:
    repo = GitRepo((args.repo or Path(".")).resolve())
    repo.check()
    if args.feature_id:
        check_id("feature", args.feature_id)
        if plan_path(repo.root, args.feature_id).exists():
            raise InputError(f"{args.feature_id} already exists: pick another --id or omit it")
    if not args.description.strip():
        raise InputError("the description is empty: say what the feature should do")
    from orchestrator import planning
    from orchestrator.progress import Progress

    progress = Progress(json_mode=args.json)
    with repo_lock(repo.root, "plan", notice=_notice):
        outcome = asyncio.run(planning.make_plan(repo.root, args.description, feature_id=args.feature_id,
                                                 model=args.model or env_default("model"),
                                                 cli_path=env_default("cli_path"), emit=progress))
    if outcome.plan is None:
        print(f"error: no valid plan after {outcome.attempts} attempt(s): {'; '.join(outcome.errors)}."
              " Nothing was written.", file=sys.stderr)
        return EXIT_FAILED
    if args.json:
        print(json.dumps({"feature": outcome.plan.id, "path": str(outcome.path), "groups": outcome.plan.groups(),
                          "cost_usd": outcome.cost_usd, "plan": outcome.plan.model_dump(mode="json")}))
        return EXIT_OK
    print(f"wrote {outcome.path} (${outcome.cost_usd:.4f}, {outcome.attempts} attempt(s))")
    print(outcome.path.read_text() if outcome.path else "")
    return EXIT_OK


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "validate":
        return _validate(args)
    if args.command == "plan":
        return _plan(args)
    if args.command == "doctor":
        from orchestrator import doctor

        return doctor.run_doctor(args)
    from orchestrator.commands import READ_COMMANDS

    if args.command in READ_COMMANDS:
        return READ_COMMANDS[args.command](args)
    if args.command != "run" and args.fresh:
        raise InputError(f"{args.command} continues a run; use `run --fresh` to start over")
    return _run(args, (args.question_id, args.text) if args.command == "answer" else None)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _dispatch(args)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except AutobuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except sqlite3.Error as exc:
        print(f"error: checkpoint DB: {exc}: another process may hold it locked; try again when it is done",
              file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (`status | head`): stop quietly, as `git log | head` does. Pointing stdout at
        # /dev/null keeps the interpreter's last flush from raising again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
