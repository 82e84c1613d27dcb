"""`autobuild pr FEAT [--partial]`: the feature branch pushed to the repository's remote and proposed for review.

Refused as `land` refuses (exit 2, nothing pushed): a run holding the repository, a task not approved (unless
`--partial`), approved work the branch lost, commits on it that no approval covers. The user's checkout plays no
part (nothing lands on it), so its uncommitted changes don't matter here. Then the feature branch (only it, never
the base) is pushed to the remote's URL (no remote-tracking ref of the user's moves) and `gh` opens the pull
request, as a served run's `--pr` does (repo/forge.py); without `gh`, the page to open it on is printed and the
body is in the run's folder. Approved tasks the gate could not verify make it a draft, listed first in its body
(landing/unverified.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from orchestrator.errors import GitError, InputError
from orchestrator.landing import unverified
from orchestrator.landing.record import read_record, standing
from orchestrator.plan.model import load_plan
from orchestrator.repo import forge, remote
from orchestrator.repo.git import GitRepo
from orchestrator.repo.lock import repo_lock
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.inspection import replanned
from orchestrator.views.pr_body import write_body


@dataclass
class Proposal:
    """What `pr` did (the `--json` document, less its schema version and time)."""

    feature: str
    branch: str
    base: str
    remote: str
    remote_url: str
    partial: bool
    tasks_proposed: list[str]
    tasks_left_out: dict[str, str]
    body_file: str
    sha: str
    pushed: bool = False
    opened: bool = False
    pull_request_url: str = ""
    compare_url: str | None = None
    detail: str = ""
    unverified: dict[str, str] | None = None
    """Approved tasks the gate could not verify -> why: the pull request is then a draft, listing them first."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


async def propose(root: Path, feature: str, db: str | None, *, partial: bool,
                  say: Callable[[str], None]) -> Proposal:
    """Check what `land` checks (InputError, exit 2, nothing pushed), then push and open under the repo's lock
    (the checks stay on the caller's loop, as `land`'s do)."""
    repo = GitRepo(root)
    repo.check(allow_unborn=True)
    plan = load_plan(root, feature)
    store = CheckpointStore.for_repo(root, db, plan.id)
    plan = replanned(store, plan)  # with the tasks replans added
    with repo_lock(root, f"pr {plan.id}"):
        record = read_record(store, plan)
        found = standing(repo, plan, record)
        if found.landed and found.base_sha and found.feature_sha:
            raise InputError(f"{found.base_branch} already contains {found.feature_branch}: nothing to propose")
        refusals = found.refusals(partial, checkout=False)
        if refusals or found.feature_sha is None:
            raise InputError("; ".join(refusals) + ". Nothing was pushed.")
        chosen = forge.choose_remote(root, found.base_branch)
        held = unverified.unverified(record.results, found.approved, gated=bool(record.gate and record.gate["command"]))
        for line in unverified.listing(held):
            say(line)
        body, report = write_body(root, plan.id, found.approved, found.not_approved, record.results, unverified=held)
        proposal = Proposal(plan.id, found.feature_branch, found.base_branch, chosen.name, chosen.url, partial,
                            list(found.approved), dict(found.not_approved), str(body), found.feature_sha,
                            compare_url=forge.compare_url(chosen.url, found.base_branch, found.feature_branch),
                            unverified=held)
        say(f"pushing {found.feature_branch} ({found.feature_sha[:10]}) to {chosen.name} ({chosen.url})")
        await _push_and_open(repo, proposal, forge.title_of(report, plan.id))
        return proposal


async def _push_and_open(repo: GitRepo, proposal: Proposal, title: str) -> None:
    """The push (fast-forward only: a branch the remote has moved on is refused by git, and said so), then `gh`."""
    try:
        await remote.push(repo, proposal.remote_url, proposal.base, branches=(proposal.branch,))
    except GitError as exc:
        raise GitError(f"pushing {proposal.branch} to {proposal.remote} failed ({exc}); nothing was proposed: if"
                       f" {proposal.remote} has a {proposal.branch} of an earlier run, delete it there or"
                       f" `autobuild discard {proposal.feature}` and run again") from exc
    proposal.pushed = True
    opened = await forge.open_pull_request(repo.root, proposal.branch, proposal.base, title, Path(proposal.body_file),
                                           draft=bool(proposal.unverified))
    proposal.opened, proposal.pull_request_url, proposal.detail = opened.opened, opened.url, opened.reason
