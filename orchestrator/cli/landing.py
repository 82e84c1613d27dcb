"""The `review`, `land`, `discard` and `pick` commands: text or `--json` output and their exit codes.

Exit codes: 0 done (or nothing to do); 1 `land` tried and moved nothing (verify failed on the merged result,
a conflict, a hook of yours refused the commit, the base moved while landing); 2 refused before trying (bad
input or state: unknown feature, a dirty checkout, unapproved tasks without --partial, a run holding the repo).
Under `--json` every outcome, errors included, is one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import asyncio

from orchestrator.cli.messages import notice
from orchestrator.cli.output import print_document, print_json
from orchestrator.errors import EXIT_FAILED, EXIT_OK
from orchestrator.facts import accepted_summary
from orchestrator.jsonout import now_utc
from orchestrator.landing.discard import discard, discard_text
from orchestrator.landing.land import Landing, LandRequest, land
from orchestrator.landing.pick import pick, pick_text
from orchestrator.landing.review import review, review_text
from orchestrator.settings import Settings
from orchestrator.text import visible


def _land_text(result: Landing) -> str:
    mode = "one squashed commit" if result.mode == "squash" else "a merge commit"
    if result.outcome == "already_landed":
        return f"nothing to land: {result.detail}"
    if not result.landed:
        lines = [f"not landed ({result.outcome.replace('_', ' ')}): {result.detail}"]
        gate = result.gate or {}
        if gate and not gate["passed"]:
            lines += ["", *str(gate["output"]).splitlines()[-30:], ""]
        return "\n".join([*lines, f"{result.base} was not moved (still {result.old_sha[:10]})."])
    lines = []
    if result.gate:
        lines.append(f"verify passed on the merged result: {result.gate['summary']}")
    else:
        lines.append("landed without a check (--verify none)")
    lines.append(f"landed {result.branch} on {result.base} as {mode}: {result.old_sha[:10]} →"
                 f" {(result.new_sha or '')[:10]} ({', '.join(result.tasks_landed)})")
    if result.checkout:
        lines.append(f"your checkout {result.checkout} is now at {(result.new_sha or '')[:10]}")
    if result.tasks_left_out:
        lines.append(f"not landed: {', '.join(f'{t} ({s})' for t, s in result.tasks_left_out.items())}")
    if result.accepted_unverified:
        lines.append(f"landed on your word (--accept-unverified): {', '.join(result.accepted_unverified)}")
    if summary := accepted_summary(result.accepted_test_changes):
        lines.append(summary)
    lines += [f"warning: also changed meanwhile: {change}" for change in result.unexpected]
    lines.append(f"{result.branch} stays; `autobuild discard {result.feature}` removes it (keeping a backup ref)")
    return "\n".join(lines)


def land_command(args: argparse.Namespace, settings: Settings) -> int:
    def say(line: str) -> None:
        if not args.json:
            print(visible(line), flush=True)

    request = LandRequest(args.feature, squash=bool(args.squash), partial=bool(args.partial), verify=args.verify,
                          accept_unverified=bool(getattr(args, "accept_unverified", False)))
    result = asyncio.run(land(request, settings, say))
    if args.json:
        print_json({**result.to_dict(), "time": now_utc()})
    else:
        print(visible(_land_text(result)))  # a hook's or the gate's output: text, never terminal escapes
    return EXIT_OK if result.landed or result.outcome == "already_landed" else EXIT_FAILED


def review_command(args: argparse.Namespace, settings: Settings) -> int:
    return print_document(review(args.feature, settings, notice), args.json, review_text)


def discard_command(args: argparse.Namespace, settings: Settings) -> int:
    return print_document(asyncio.run(discard(args.feature, settings, notice)), args.json, discard_text)


def pick_command(args: argparse.Namespace, settings: Settings) -> int:
    """`pick FEAT TASK a3`: exit 0 picked, 1 tried and nothing moved (a conflict, the gate), 2 refused."""
    data = asyncio.run(pick(args.feature, args.task, args.attempt, settings))
    print_document(data, args.json, pick_text)
    return EXIT_OK if data["picked"] else EXIT_FAILED
