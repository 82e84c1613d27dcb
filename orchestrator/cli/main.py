"""Command line: `autobuild …` (or `python -m orchestrator …`): the dispatch only (cli/parser.py: the grammar),
with DESIGN §5 exit codes. Each command's module is imported when that command runs, so `--help` and usage errors
start fast."""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from orchestrator.cli.parser import build_parser, errors_as_json, fail
from orchestrator.errors import (
    EXIT_BROKEN_PIPE,
    EXIT_FAILED,
    EXIT_USAGE,
    AutobuildError,
    InputError,
    StoreUnavailableError,
)

_collector_held = False
"""Whether `entry` turned the garbage collector off while the command's modules load (`_modules_loaded` ends it)."""


# command -> "module:function"; the function takes (args, settings) and returns the exit code.
_COMMANDS: dict[str, str] = {
    "run": "orchestrator.cli.run:run_command",
    "resume": "orchestrator.cli.run:run_command",
    "answer": "orchestrator.cli.run:run_command",
    "plan": "orchestrator.cli.plan:plan",
    "validate": "orchestrator.cli.plan:validate",
    "doctor": "orchestrator.cli.doctor:run_doctor",
    "status": "orchestrator.cli.read:status",
    "history": "orchestrator.cli.read:history",
    "show": "orchestrator.cli.read:show",
    "logs": "orchestrator.cli.logs:logs_command",
    "steer": "orchestrator.cli.steer:steer_command",
    "pause": "orchestrator.cli.steer:control_command",
    "unpause": "orchestrator.cli.steer:control_command",
    "cancel": "orchestrator.cli.steer:control_command",
    "ui": "orchestrator.cli.ui:ui_command",
    "clean": "orchestrator.cli.clean:clean",
    "graph": "orchestrator.cli.graph:graph_command",
    "stats": "orchestrator.cli.stats:stats_command",
    "review": "orchestrator.cli.landing:review_command",
    "land": "orchestrator.cli.landing:land_command",
    "discard": "orchestrator.cli.landing:discard_command",
    "pick": "orchestrator.cli.landing:pick_command",
    "pr": "orchestrator.cli.pr:pr_command",
    "serve": "orchestrator.cli.workers:serve_command",
    "submit": "orchestrator.cli.workers:submit_command",
}
_RUN_COMMANDS = ("run", "resume", "answer")
_FLAG_NAMES = {"json": "json_output"}


def _settings(args: argparse.Namespace) -> Any:
    """The command's settings: its flags over ORCHESTRATOR_* over the repo's config file over defaults."""
    from orchestrator.settings import RunSettings, Settings, environment, load_settings
    from orchestrator.store.locations import find_repo

    start = args.repo or Path(environment().repo or ".")
    repo = find_repo(start)
    if getattr(args, "plan", None) is not None:
        args.plan = args.plan.expanduser().resolve()  # where the user is, not the repo (a subfolder, say)
    if args.command not in _RUN_COMMANDS:
        db = getattr(args, "db", None)
        return load_settings(Settings, repo, db=db or None, verify=getattr(args, "verify", None),
                             model=getattr(args, "model", None))
    if args.command != "run" and args.fresh:
        raise InputError(f"{args.command} continues a run; use `run --fresh` to start over")
    fields = set(RunSettings.model_fields) - {"repo", "interactive", "resume_only"}
    flags = {_FLAG_NAMES.get(name, name): value for name, value in vars(args).items()}
    args.given_options = {name: value for name, value in flags.items() if value is not None}
    kept = _kept_options(args, repo, flags)
    try:
        return load_settings(RunSettings, repo, **{name: value for name, value in flags.items() if name in fields},
                             interactive=bool(args.interactive or (not args.autonomous and sys.stdin.isatty())),
                             resume_only=args.command in ("resume", "answer"))
    except InputError as exc:
        if not kept:
            raise
        raise InputError(f"{exc}; {args.command} kept {', '.join(f'--{name.replace('_', '-')}' for name in kept)}"
                         f" from the run's flags in .autobuild/runs/{args.target}/options.json: give the flag"
                         " again to override it") from None


def _kept_options(args: argparse.Namespace, repo: Path, flags: dict[str, Any]) -> list[str]:
    """`resume` and `answer` keep the flags `run` was given, under their own (store/run_options.py): the names kept."""
    from orchestrator.plan.ids import is_id

    if args.command == "run" or not is_id(args.target or ""):
        return []
    from orchestrator.store import run_options

    recorded = run_options.recorded(repo, args.target)
    kept = [name for name in recorded if flags.get(name) is None]
    flags.update({name: recorded[name] for name in kept})
    return kept


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "completion":  # from any folder: no repo, no settings
        from orchestrator.cli.completion import completion_command

        return completion_command(args, build_parser())
    from orchestrator.cli.ids import check_id_arguments

    check_id_arguments(args)
    module_name, _, function_name = _COMMANDS[args.command].partition(":")
    if args.command in ("serve", "submit") or getattr(args, "server", None):  # the workers: no local repo or DB
        from orchestrator.cli import workers

        if getattr(args, "server", None) and args.command != "submit":
            _modules_loaded()
            return workers.remote_command(args)
        settings = workers.worker_settings(args) if args.command == "serve" else None
        _modules_loaded()
        return int(getattr(workers, function_name)(args, settings))
    settings = _settings(args)
    command: Callable[[argparse.Namespace, Any], int] = getattr(importlib.import_module(module_name), function_name)
    if args.command in _RUN_COMMANDS and not settings.dry_run:  # the SDK loads beside the start-up's waits
        from orchestrator.cli.prefetch import load_ahead

        load_ahead(then=_modules_loaded)  # the collector stays off until the SDK is in too
    else:
        _modules_loaded()
    if args.command not in _TRACED:
        return command(args, settings)
    from orchestrator.cli.tracing import traced

    with traced(settings.trace_flush_timeout):
        return command(args, settings)


_TRACED = frozenset({"run", "resume", "answer", "plan", "doctor"})
"""The commands that run the graph or agent sessions: with LANGSMITH_TRACING on, they trace and flush."""


def _modules_loaded() -> None:
    """The command's modules are in: what they built is kept for the process's life, so the collector stops
    walking it (`gc.freeze`), and collects what the command itself leaves behind from here on."""
    global _collector_held  # noqa: PLW0603
    if _collector_held:
        _collector_held = False
        gc.freeze()
        gc.enable()


def entry() -> int:
    """The process's entry (the `autobuild` script, `python -m orchestrator`): `main`, with the collector off while
    the command's modules load and out of the interpreter's teardown. Loading langgraph, the SDK and their
    pydantic models builds about a million objects, and the collector walked them all again and again: ~0.2 s of
    start-up; the teardown's last collections walked them once more: ~0.4 s between the last output and the
    exit."""
    global _collector_held  # noqa: PLW0603
    gc.disable()
    _collector_held = True
    try:
        return main()
    finally:
        if _collector_held:  # it ended before its modules were in (a usage error): collect all, freeze nothing first
            _collector_held = False
            gc.enable()
        _spare_the_teardown()


def _spare_the_teardown() -> None:
    """What the command left in reference cycles is collected and finalized as the teardown would have (~0.03 s,
    the modules being frozen); what lives on is frozen, so the teardown doesn't walk it again."""
    gc.collect()
    gc.freeze()


def main(argv: Sequence[str] | None = None) -> int:
    errors_as_json("--json" in (sys.argv[1:] if argv is None else list(argv)))  # before argparse can fail
    args = build_parser().parse_args(argv)
    as_json = bool(getattr(args, "json", False))
    try:
        return _dispatch(args)
    except InputError as exc:
        fail(str(exc), EXIT_USAGE, as_json)
        return EXIT_USAGE
    except StoreUnavailableError as exc:
        fail(str(exc), EXIT_USAGE, as_json)
        return EXIT_USAGE
    except AutobuildError as exc:
        fail(str(exc), EXIT_FAILED, as_json)
        return EXIT_FAILED
    except BrokenPipeError:
        # The reader went away (`status | head`): stop quietly, as `git log | head` does. Pointing stdout at
        # /dev/null keeps the interpreter's last flush from raising again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE

