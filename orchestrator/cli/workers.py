"""`serve` (a worker), `submit` (queue a feature on the workers) and the `--server` forms of `status`/`answer`:
parsers and thin commands over orchestrator.server."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from orchestrator.errors import InputError


def _call(coroutine: Any) -> Any:
    """Run a client call; the server refusing or missing is one line (InputError: exit 2), never a traceback."""
    import httpx
    from langgraph_sdk.errors import APIStatusError

    try:
        return asyncio.run(coroutine)
    except APIStatusError as exc:
        hint = ": set ORCHESTRATOR_AUTH_TOKEN (the worker's token)" if exc.status_code == 401 else ""
        raise InputError(f"the server refused: HTTP {exc.status_code}{hint}") from None
    except httpx.HTTPError as exc:
        raise InputError(f"can't reach the server: {exc or type(exc).__name__}") from None


# Written out, not read from WorkerSettings: `--help` stays free of pydantic (tests/unit/test_worker_settings.py
# checks that every variable of WorkerSettings is here).
SERVE_VARIABLES = """variables (flags win):
  DATABASE_URL                     the Postgres every worker shares (runs, checkpoints, locks)
  REDIS_URL                        the queue every worker takes runs from
  PORT                             the port (default 2026)
  ORCHESTRATOR_HOST                the address (default 127.0.0.1)
  ORCHESTRATOR_AUTH_TOKEN          clients send it as a bearer token; needed off loopback
  ORCHESTRATOR_WORKSPACE           where clones of runs by URL live (default: a per-user data dir)
  ORCHESTRATOR_WORKER_RUNS         feature runs this worker holds at once (default 2)
  ORCHESTRATOR_RUN_TIMEOUT_HOURS   a run is stopped after this long (default 24)
  ORCHESTRATOR_LEASE_SECONDS       a dead worker's runs are taken over within about this (default 30)
  ORCHESTRATOR_YIELD_PAUSE_SECONDS a run paused longer than this frees its slot, re-queued after (default 300)
  ORCHESTRATOR_WAKE_SECONDS        how often paused runs are looked at for re-queueing (default 5)
  ORCHESTRATOR_SERVE_DIR           where the engine's generated config goes (default: a per-user state dir)
  LOG_LEVEL                        the engine's log level (default WARNING)"""


def add_worker_commands(commands: argparse._SubParsersAction[Any]) -> None:
    serve = commands.add_parser("serve", help="run a worker: the `autobuild` graph on Aegra over DATABASE_URL"
                                              " (Postgres) and REDIS_URL; GET /ok answers once ready",
                                epilog=SERVE_VARIABLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    serve.add_argument("--port", type=int, default=None, help="default: PORT, else 2026")
    serve.add_argument("--host", default=None,
                       help="default 127.0.0.1; another address needs ORCHESTRATOR_AUTH_TOKEN (clients send it)")
    submit = commands.add_parser("submit", help="queue a feature run on the workers; prints its thread id")
    submit.add_argument("feature")
    submit.add_argument("--repo-url", required=True, help="the repository (a git URL, or a folder the workers see)")
    submit.add_argument("--server", required=True, help="a worker's URL (any of them: they share the queue)")
    submit.add_argument("--base", default=None, help="the base branch (default: the plan's, else the repo's HEAD)")
    submit.add_argument("--plan", default=None, metavar="FILE",
                        help="a plan file where it lies (by URL it is sent with its task markdown; else the plan"
                             " comes from the repo at --base)")
    submit.add_argument("--pr", action="store_true",
                        help="by URL, with `gh` on the worker: open a pull request from the feature branch at the end")
    submit.add_argument("--json", action="store_true")


def add_server_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--server", default=None, metavar="URL",
                        help="read (or answer) the feature's thread on the workers instead of a local DB")
    parser.add_argument("--repo-url", default=None,
                        help="with --server: which repository's FEATURE (default: the newest thread of it)")


def serve_command(args: argparse.Namespace, settings: Any) -> int:
    from orchestrator.server.page import page_address
    from orchestrator.server.worker import serve

    if settings.auth_token:  # the page's door is the worker's token: its address is said, never the token
        print(f"the page on the served runs: {page_address(settings.host, settings.port)}", flush=True)
    return serve(settings)


def worker_settings(args: argparse.Namespace) -> Any:
    from orchestrator.settings import WorkerSettings

    flags = {name: value for name, value in (("port", args.port), ("host", args.host)) if value is not None}
    return WorkerSettings.load(**flags)


def submit_command(args: argparse.Namespace, settings: Any) -> int:
    from orchestrator.server.client import submit

    context = {"pr": True} if args.pr else None
    thread = _call(submit(args.server, args.feature, args.repo_url, args.base, plan=args.plan, context=context))
    print(json.dumps({"schema_version": 1, "thread_id": thread}) if args.json else thread)
    return 0


def remote_command(args: argparse.Namespace) -> int:
    """`status`/`answer` with `--server`: the feature's thread on the workers."""
    from orchestrator.server.client import answer, remote_status

    if args.command == "answer":
        thread = _call(answer(args.server, args.repo_url, args.target, args.question_id, args.text))
        print(f"answered {args.question_id} on thread {thread}: the run continues on a worker")
        return 0
    if args.command in ("history", "show", "stats"):
        return _remote_read(args)
    if args.command == "graph":
        return _remote_graph(args)
    found = _call(remote_status(args.server, args.repo_url, args.feature))
    if args.json:
        print(json.dumps({"schema_version": 1, **found.__dict__}))
    else:
        print(f"{args.feature}: thread {found.thread_id} ({found.paused() or found.status})")
        for task, status in found.results.items():
            print(f"  {task}: {status}")
        for question in found.questions:
            print(f"  question {question['question_id']}: {question['question']}")
        if found.error:
            print(f"  error: {found.error}")
    return 3 if found.questions else 1 if found.error else 0


def _remote_graph(args: argparse.Namespace) -> int:
    """`graph FEAT --server`: the plan (from this checkout: the one submitted, or the repo's at its base) as a
    Mermaid flowchart, colored by the results of the feature's thread on the workers."""
    from orchestrator.cli.graph import print_chart
    from orchestrator.plan.model import load_plan
    from orchestrator.server.client import remote_status

    plan = load_plan(Path(getattr(args, "repo", None) or ".").resolve(), args.feature)
    found = _call(remote_status(args.server, args.repo_url, plan.id))
    return print_chart(plan, found.results or None, as_json=args.json, picture=args.format, output=args.output)


def _remote_read(args: argparse.Namespace) -> int:
    """`history`, `show` and `stats` on the workers: what the LangGraph Server API holds (runs, the final results)."""
    from orchestrator.server.client import remote_history, remote_results, remote_stats

    document: Any
    if args.command == "history":
        document = _call(remote_history(args.server, args.repo_url, args.feature))
    elif args.command == "show":
        results = _call(remote_results(args.server, args.repo_url, args.feature))
        document = results.get(args.task, {}) if args.task else results
    else:
        document = _call(remote_stats(args.server))
    print(json.dumps({"schema_version": 1, args.command: document}, indent=None if args.json else 2, default=str))
    return 0
