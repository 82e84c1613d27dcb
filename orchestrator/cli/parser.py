"""The command line's grammar: every command with its arguments and help, and usage errors as one line (exit 2)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from orchestrator.errors import EXIT_USAGE

_json_requested = False
"""Whether the command line asked for `--json`: argparse's own errors come before the parsed arguments do."""


def errors_as_json(requested: bool) -> None:
    """Usage errors from here on are a JSON document (`--json` is on the command line)."""
    global _json_requested  # noqa: PLW0603  # set once per command, before argparse can fail
    _json_requested = requested


def fail(message: str, exit_code: int, as_json: bool) -> None:
    """The command's error as one line on stderr (a JSON document on stdout under `--json`)."""
    if as_json:
        from orchestrator.cli.output import print_error

        print_error(message, exit_code)
    else:
        print(f"error: {message}", file=sys.stderr)


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are one line and exit 2 (a JSON document under `--json`)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        fail(f"{message} (see --help)", EXIT_USAGE, as_json=_json_requested)
        raise SystemExit(EXIT_USAGE)


def _add_run_options(parser: argparse.ArgumentParser) -> None:
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
    parser.add_argument("--keep-worktrees", action="store_true", default=None)
    parser.add_argument("--ignore-deps", action="store_true", default=None,
                        help="run TASK even if its dependencies are not done")
    parser.add_argument("--schedule", choices=["dag", "groups"], default=None,
                        help="dag: a task starts when its dependencies are merged (default);"
                             " groups: wait for the whole previous parallel group")
    _add_gate_options(parser)
    parser.add_argument("--judge-by-counts", action="store_true", default=None,
                        help="on a red base whose failing tests the runner doesn't name, judge tasks by the number"
                             " of failures (weaker: a fix plus a break looks unchanged; every report says so)")
    parser.add_argument("--repair-base", action="store_true", default=None,
                        help="the run repairs a base whose tests never ran (import, collection or build errors):"
                             " don't refuse it, and judge every task by all the gate's tests passing")
    parser.add_argument("--setup", default=None, metavar="CMD",
                        help="prepare each new worktree (e.g. 'npm ci'); 'none' for nothing (default: the plan's"
                             " setup, else reuse the main checkout's .venv / node_modules)")
    parser.add_argument("--repo-hooks", action="store_true", default=None,
                        help="run the repo's .claude/settings.json hooks in agent sessions (off by default)")
    parser.add_argument("--max-wait", type=float, default=None, metavar="S",
                        help="longest usage-limit pause before the run stops with exit 75 (default 21600 = 6 h)")
    parser.add_argument("--replan", type=int, default=None, metavar="N",
                        help="replans per task: one that ends at max turns or stalled is split by the planner into"
                             " smaller tasks that replace it (default 1; 0 switches it off)")
    parser.add_argument("--attempts", type=int, default=None, metavar="N",
                        help="independent player/coach attempts per task, 1-8, each in its own worktree and branch"
                             " (default: the plan's attempts, else 1); each running attempt takes a --parallel slot")
    parser.add_argument("--attempts-policy", choices=["first", "best"], default=None,
                        help="first: the first attempt the gate verified wins, the others are cancelled (default);"
                             " best: every attempt reaches its verdict, then the selection picks")
    parser.add_argument("--max-utilization", type=float, default=None, metavar="F",
                        help="start no session while a subscription quota window is at or over F until it resets"
                             " (default 0.9; 1 switches it off)")
    parser.add_argument("--drain-grace", type=float, default=None,
                        help="seconds a Ctrl+C waits for running steps before cancelling them (default 5)")
    parser.add_argument("--notify", action="store_true", default=None,
                        help="terminal bell (and a desktop notification where available) when the feature finishes,"
                             " a question waits, a task fails, a budget is reached or a usage limit pauses")
    parser.add_argument("--on-event", default=None, metavar="CMD",
                        help="run CMD (with sh) on those events, the event as JSON on stdin and AUTOBUILD_EVENT,"
                             " AUTOBUILD_FEATURE, AUTOBUILD_TASK, AUTOBUILD_MESSAGE in its environment; killed"
                             " after ORCHESTRATOR_ON_EVENT_TIMEOUT seconds (default 10), a failure only warns")


def _add_plan_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plan", type=Path, default=None, metavar="PATH",
                        help="a plan file where it lies (e.g. .guardkit/features/FEAT-X.yaml); the target, when"
                             " given, is its id or one of its tasks")


def _add_gate_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--verify", default=None, metavar="CMD",
                        help="the gate command (default: the plan's verify, else the repo's detected test command);"
                             " 'none' runs without a gate and reports every approval as unverified")


def _add_common(parser: argparse.ArgumentParser, db: bool = True) -> None:
    parser.add_argument("--repo", type=Path, default=None,
                        help="the target git repo, or any folder inside it (default: the current folder)")
    if db:
        parser.add_argument("--db", default=None,
                            help="checkpoint DB: a SQLite path or postgresql://… (default: the one the feature's"
                                 " run used, else one file per repo)")
    parser.add_argument("--json", action="store_true", help="one JSON document (schema_version 1) instead of text")


_EPILOG = """\
exit codes:
  0 every task approved   1 some task failed, aborted, blocked, conflicted or erred (resumable)
  2 bad input or usage (nothing written)   3 paused, waiting for an answer
  75 a usage-limit pause outlasted --max-wait (resumable)   130 interrupted (resumable)

settings: flags win over ORCHESTRATOR_<NAME> variables (ORCHESTRATOR_DB, ORCHESTRATOR_PARALLEL,
ORCHESTRATOR_MODEL, ORCHESTRATOR_MAX_WAIT, ORCHESTRATOR_VERIFY, ORCHESTRATOR_CLI_PATH, ORCHESTRATOR_REPO,
ORCHESTRATOR_EST_SESSION_USD, ORCHESTRATOR_DB_LOCK_TIMEOUT, …), which win over the repo's .autobuild/config.yaml
(the same names: `parallel: 2`, `model: …`, `db: …`). Commands work from any folder inside the repo and find
the checkpoint DB the feature's run used. `python -m orchestrator` is the same command.
LANGSMITH_TRACING=true (with LANGSMITH_API_KEY, LANGSMITH_PROJECT, LANGSMITH_ENDPOINT) traces the graph and
the agent sessions to LangSmith; nothing is sent without it."""


class _Version(argparse.Action):
    """`--version`, the installed version looked up only when asked: importlib.metadata costs every command ~20 ms."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(f"autobuild {_version()}")
        parser.exit()


def _version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("autobuild")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="autobuild", description="AutoBuild: build a feature with player/coach agents.",
                     epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = commands.add_parser("run", help="run a feature (FEAT-001) or one task of it (TASK-002)")
    run.add_argument("target", nargs="?", default="")
    resume = commands.add_parser("resume", help="resume an interrupted feature run; a finished one runs its failed,"
                                                " skipped, conflicted and errored tasks again (and the TASKs named)")
    resume.add_argument("target", nargs="?", default="")
    resume.add_argument("rerun", nargs="*", default=[], metavar="TASK",
                        help="tasks of a finished feature to run again whatever they came to (blocked, aborted)")
    answer = commands.add_parser("answer", help="answer an agent's pending question and continue the run")
    for name in ("target", "question_id", "text"):
        answer.add_argument(name)
    answer.add_argument("--from", dest="answered_from", choices=("cli", "page"), default=None,
                        help=argparse.SUPPRESS)  # the page's answers say so in the task's trace
    for sub in (run, resume, answer):
        _add_common(sub)
        _add_plan_option(sub)
        _add_run_options(sub)
    plan = commands.add_parser("plan", help="turn a description into a validated feature plan (planner agent)")
    plan.add_argument("description")
    plan.add_argument("--id", dest="feature_id", default=None, help="feature id (default: next free FEAT-NNN)")
    plan.add_argument("--model", default=None)
    _add_common(plan, db=False)
    doctor = commands.add_parser("doctor", help="check the CLI, credentials, git, the DB and the model endpoint")
    doctor.add_argument("--offline", action="store_true",
                        help="ask nothing over the network: no models listing, no tracing endpoint, no live model call")
    _add_common(doctor)
    validate = commands.add_parser("validate", help="validate a feature plan")
    validate.add_argument("feature", nargs="?", default="")
    _add_plan_option(validate)
    _add_gate_options(validate)
    _add_common(validate, db=False)
    status = commands.add_parser("status", help="features in the checkpoint DB, or one feature's task table")
    status.add_argument("feature", nargs="?")
    history = commands.add_parser("history", help="checkpoint timeline of a feature (or one task)")
    history.add_argument("feature")
    history.add_argument("--task", default=None)
    show = commands.add_parser("show", help="requirements, reports, feedback and gate results of a task")
    show.add_argument("feature")
    show.add_argument("task", nargs="?")
    for sub in (status, history, show, _logs_parser(commands)):
        _add_common(sub)
    clean = commands.add_parser("clean", help="remove leftover worktrees and task branches (never feature branches)")
    clean.add_argument("feature", nargs="?")
    clean.add_argument("--db", nargs="?", const="", default=None, metavar="PATH",
                       help="also prune finished threads from the checkpoint DB (this one, or the default)")
    clean.add_argument("--prune-db", dest="prune_db", action="store_true", help="same as --db without a PATH")
    _add_common(clean, db=False)
    graph = commands.add_parser("graph", help="the plan as a Mermaid flowchart (colored by outcome once it ran)")
    _add_graph_options(graph)
    stats = commands.add_parser("stats", help="the loop's scorecard over every feature in the checkpoint DB")
    stats.add_argument("--since", default=None, metavar="DATE", help="only tasks started on or after DATE")
    _add_common(stats)
    _add_landing_commands(commands)
    _add_worker_commands(commands, status, answer, history, show, stats, graph)
    _add_completion_command(commands)
    return parser


def _logs_parser(commands: argparse._SubParsersAction[_Parser]) -> _Parser:
    """`logs`, with `steer`, `pause`, `unpause`, `cancel` and `ui` beside it (issue 41): they read or steer a
    running task."""
    from orchestrator.cli.logs import add_logs_command
    from orchestrator.cli.steer import add_steer_command
    from orchestrator.cli.ui import add_ui_command

    for parser in add_steer_command(commands):
        _add_common(parser)
    _add_common(add_ui_command(commands))
    return add_logs_command(commands)


def _add_completion_command(commands: argparse._SubParsersAction[_Parser]) -> None:
    completion = commands.add_parser("completion", help="print the shell completion script (bash or zsh)")
    completion.add_argument("shell", choices=["bash", "zsh"])
    # Asked by the script at each Tab: `--ids KIND WORD…`, the feature or task ids for the line typed so far, its
    # options and all (cli/completion_ids.py).
    completion.add_argument("--ids", nargs=argparse.REMAINDER, default=None, help=argparse.SUPPRESS)


def _add_graph_options(graph: argparse.ArgumentParser) -> None:
    graph.add_argument("feature")
    graph.add_argument("--format", choices=("mermaid", "svg", "png", "html"), default="mermaid",
                       help="mermaid: the text (default); svg, png: the flowchart drawn by a headless Chromium on"
                            " PATH; html: the feature's report page (the plan, the timeline, the tasks, their turns"
                            " and gate runs; self-contained, opens offline)")
    graph.add_argument("--output", "-o", type=Path, default=None, metavar="PATH",
                       help="where --format svg|png|html writes (default: .autobuild/runs/FEAT/graph.svg|png,"
                            " report.html)")
    _add_common(graph)


def _add_worker_commands(commands: argparse._SubParsersAction[_Parser], *remote: argparse.ArgumentParser) -> None:
    from orchestrator.cli.workers import add_server_option, add_worker_commands

    add_worker_commands(commands)
    for sub in remote:
        add_server_option(sub)


def _add_landing_commands(commands: argparse._SubParsersAction[_Parser]) -> None:
    review = commands.add_parser("review", help="what a run produced: tasks, diff against the base, reports, and"
                                                " what `land` would do")
    land = commands.add_parser("land", help="merge the approved work into the base branch once verify passes on the"
                                            " merged result (exit 1: tried, nothing moved; 2: refused)")
    land.add_argument("--squash", action="store_true", help="one commit on the base instead of a merge commit")
    land.add_argument("--partial", action="store_true", help="land the approved tasks even if others are not")
    land.add_argument("--verify", default=None, metavar="CMD",
                      help="check the merged result with CMD instead of the run's gate; 'none' lands it unchecked")
    land.add_argument("--accept-unverified", action="store_true",
                      help="land approved tasks the gate could not verify too (listed first; refused without it)")
    discard = commands.add_parser("discard", help="remove the feature's worktrees and branches (a backup ref is kept)")
    pull_request = commands.add_parser("pr", help="push the feature branch to the repo's remote and open a pull"
                                                  " request with `gh` (else print where to open it); refused as"
                                                  " `land` refuses (exit 2)")
    pull_request.add_argument("--partial", action="store_true",
                              help="propose the approved tasks even if others are not")
    chosen = commands.add_parser("pick", help="replace the selection's pick among a task's attempts before landing:"
                                              " re-merged on the feature branch, gated (exit 1: nothing moved)")
    for sub in (review, land, discard, pull_request, chosen):
        sub.add_argument("feature")
        _add_common(sub, db=sub is not discard)
    chosen.add_argument("task", help="the task run as several attempts")
    chosen.add_argument("attempt", help="the attempt to land instead: a2, a3, …")
