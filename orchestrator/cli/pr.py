"""`autobuild pr FEAT [--partial]`: text or `--json` output and exit codes over landing/pull_request.py.

Exit codes: 0 pushed (and opened, or the page to open it printed); 1 the push failed; 2 refused before pushing
(as `land` refuses: unapproved tasks without --partial, commits no approval covers, a run holding the repo, no
remote). Under `--json` every outcome, errors included, is one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import asyncio

from orchestrator.cli.output import print_json
from orchestrator.errors import EXIT_OK
from orchestrator.jsonout import now_utc
from orchestrator.landing.pull_request import Proposal, propose
from orchestrator.settings import Settings
from orchestrator.text import visible


def pr_text(result: Proposal) -> str:
    lines = [f"pushed {result.branch} ({result.sha[:10]}) to {result.remote}: {', '.join(result.tasks_proposed)}"]
    if result.unverified:
        lines.append(f"a draft: {len(result.unverified)} approved task(s) the gate could not verify"
                     f" ({', '.join(result.unverified)}) are listed first in its body")
    if result.tasks_left_out:
        lines.append(f"left out (not approved): {', '.join(f'{t} ({s})' for t, s in result.tasks_left_out.items())}")
    if result.opened:
        lines.append(f"pull request: {result.pull_request_url or '(gh printed no address)'}")
    elif result.pull_request_url:
        lines.append(f"pull request: {result.pull_request_url} ({result.detail}: it now shows the pushed commits)")
    else:
        where = f"open it at {result.compare_url}" if result.compare_url else (
            f"open a pull request from {result.branch} into {result.base} on your forge")
        lines += [f"no pull request opened ({result.detail}): {where}",
                  f"its body (the report, the receipts, the tests changed) is in {result.body_file}"]
    lines.append(f"when it is merged there, `autobuild discard {result.feature}` removes the local branches")
    return "\n".join(lines)


def pr_command(args: argparse.Namespace, settings: Settings) -> int:
    def say(line: str) -> None:
        if not args.json:
            print(visible(line), flush=True)

    result = asyncio.run(propose(settings.repo, args.feature, settings.db, partial=bool(args.partial), say=say))
    if args.json:
        print_json({**result.to_dict(), "time": now_utc()})
    else:
        print(visible(pr_text(result)))
    return EXIT_OK
