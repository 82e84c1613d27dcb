"""The `validate` and `plan` commands: check a feature plan, or have the planner agent write one."""

from __future__ import annotations

import argparse
import asyncio
import sys

from orchestrator import jsonout, sandbox
from orchestrator.cli import output
from orchestrator.cli.messages import notice, warn
from orchestrator.cli.next_steps import after_plan
from orchestrator.cli.preflight import require_credentials
from orchestrator.errors import EXIT_FAILED, EXIT_OK, InputError
from orchestrator.gate import check_hidden_tests, choose_gate, gate_document, gate_lines
from orchestrator.plan.ids import check_id
from orchestrator.plan.model import load_named_plan, plan_path
from orchestrator.repo.git import GitRepo
from orchestrator.repo.lock import repo_lock
from orchestrator.settings import Settings


def validate(args: argparse.Namespace, settings: Settings) -> int:
    plan = load_named_plan(settings.repo, args.feature, args.plan)
    groups = plan.groups()
    settings.validate_options()
    gate = choose_gate(settings.repo, plan.verify, settings.verify)
    shown = gate_document(settings.repo, gate, plan.setup, settings.setup)
    hidden = check_hidden_tests(GitRepo(settings.repo), plan, sandboxed=sandbox.agents_available())
    if args.json:
        hidden_shown = {task: list(paths) for task, paths in hidden.by_task.items()}
        output.print_json({"valid": True, "id": plan.id, "tasks": plan.task_ids(), "groups": groups,
                           "gate": shown, "hidden_tests": hidden_shown})
    else:
        print(f"{plan.id} is valid: {len(plan.tasks)} task(s) in {len(groups)} group(s)")
        for index, group in enumerate(groups, 1):
            print(f"  group {index}: {', '.join(group)}")
        print("\n".join(gate_lines(shown, gate.describe())))
        for task, paths in hidden.by_task.items():
            print(f"  {task}: hidden acceptance tests, run only by the gate: {', '.join(paths)}")
    warn(plan)
    return EXIT_OK


def plan(args: argparse.Namespace, settings: Settings) -> int:
    repo = GitRepo(settings.repo)
    repo.check()
    if args.feature_id:
        check_id("feature", args.feature_id)
        if plan_path(repo.root, args.feature_id).exists():
            raise InputError(f"{args.feature_id} already exists: pick another --id or omit it")
    if not args.description.strip():
        raise InputError("the description is empty: say what the feature should do")
    from orchestrator.plan import planner as planning
    from orchestrator.views.progress import Progress

    progress = Progress(json_mode=args.json)
    with repo_lock(repo.root, "plan", notice=notice):
        require_credentials()  # before the planner's session: no key or login is one line, not six retries
        outcome = asyncio.run(planning.make_plan(repo.root, args.description, feature_id=args.feature_id,
                                                 model=settings.model, cli_path=settings.cli_path, emit=progress))
    if outcome.plan is None:
        message = (f"no valid plan after {outcome.attempts} attempt(s): {'; '.join(outcome.errors)}."
                   " Nothing was written.")
        if args.json:
            output.print_error(message, EXIT_FAILED)
        else:
            print(f"error: {message}", file=sys.stderr)
        return EXIT_FAILED
    if args.json:
        output.print_json({"feature": outcome.plan.id, "path": str(outcome.path), "groups": outcome.plan.groups(),
                           "cost_usd": jsonout.usd(outcome.cost_usd), "plan": outcome.plan.model_dump(mode="json")})
        return EXIT_OK
    print(f"wrote {outcome.path} (${outcome.cost_usd:.4f}, {outcome.attempts} attempt(s))")
    print(outcome.path.read_text() if outcome.path else "")
    print("\n".join(after_plan(outcome.plan.id, repo.root)))
    return EXIT_OK
