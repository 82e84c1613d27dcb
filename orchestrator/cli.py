"""Command line: `autobuild …` (or `python -m orchestrator …`); a thin layer over runner/plan with DESIGN §5
exit codes."""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import os
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from orchestrator.errors import (
    EXIT_BROKEN_PIPE,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    AutobuildError,
    InputError,
)
from orchestrator.gate.detect import choose_gate
from orchestrator.plan import FeaturePlan, check_id, load_plan, plan_path, scope_overlaps, unknown_fields
from orchestrator.repo.git import GitRepo
from orchestrator.repo.lock import repo_lock
from orchestrator.settings import RunSettings, env_default
from orchestrator.tracing import traced


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
ORCHESTRATOR_DB_LOCK_TIMEOUT); flags win over them. `python -m orchestrator` is the same command.
LANGSMITH_TRACING=true (with LANGSMITH_API_KEY, LANGSMITH_PROJECT, LANGSMITH_ENDPOINT) traces the graph and
the agent sessions to LangSmith; nothing is sent without it."""


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
    warn(plan)
    return EXIT_OK


def warn(plan: FeaturePlan) -> None:
    """The plan's warnings (unknown fields, overlapping file scopes) on stderr."""
    for field_name in unknown_fields(plan):
        print(f"warning: unknown field {field_name} (kept, but check for a typo)", file=sys.stderr)
    for overlap in scope_overlaps(plan):
        print(f"warning: {overlap}: expect merge conflicts, or move one to a later group", file=sys.stderr)


def notice(message: str) -> None:
    print(f"note: {message}", file=sys.stderr, flush=True)


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
    with repo_lock(repo.root, "plan", notice=notice):
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
    from orchestrator.run_command import run_command

    return run_command(_settings(args), args.command,
                       (args.question_id, args.text) if args.command == "answer" else None)


_TRACED = frozenset({"run", "resume", "answer", "plan", "doctor"})
"""The commands that run the graph or agent sessions: with LANGSMITH_TRACING on, they trace and flush."""


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command in _TRACED:
            with traced():
                return _dispatch(args)
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
