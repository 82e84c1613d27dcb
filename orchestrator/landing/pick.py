"""`autobuild pick FEAT TASK a3`: a person replaces the selection's pick among a task's attempts before landing.

The feature branch holds the landed attempt's work; the new pick takes its place as the merge queue lands work: in
a throwaway worktree at the feature head, the landed attempt's own change (its approved tree against the commit it
started from) is taken back and the picked one's put in (three-way, as `git revert` and `git cherry-pick` do), the
run's gate must pass on the result, and the feature branch moves to it by compare-and-swap. Nothing is written
before that: bad input, a conflict or a failing gate leave everything as it was. The person's pick is recorded
beside the run's reports (`picks.json`), and `status` and `show` say it over the selection's.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestrator.errors import InputError
from orchestrator.facts import SUCCESS, GateSetup
from orchestrator.gate import GateRequest, Gates
from orchestrator.jsonout import now_utc
from orchestrator.landing.record import read_record, standing
from orchestrator.plan.ids import check_id
from orchestrator.plan.model import load_plan
from orchestrator.repo import run_files
from orchestrator.repo.git import GitRepo, feature_branch
from orchestrator.repo.lock import repo_lock
from orchestrator.settings import Settings
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.inspection import replanned

_IDENTITY = ("-c", "user.name=AutoBuild", "-c", "user.email=autobuild@localhost", "-c", "commit.gpgsign=false")


def picks_file(root: Path, feature_id: str) -> Path:
    return root / ".autobuild" / "runs" / feature_id / "picks.json"


def read_picks(root: Path, feature_id: str) -> dict[str, dict[str, Any]]:
    """The person's picks of a feature's tasks, by task (empty: none)."""
    text = run_files.read(picks_file(root, feature_id), "the person's picks")
    found = json.loads(text) if text else {}
    return found if isinstance(found, dict) else {}


def overlaid(row: Mapping[str, Any], picks: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """A task's `status`/`show` row with the person's pick over the selection's (each attempt's `landed` too)."""
    chosen = picks.get(str(row.get("task")))
    if not chosen or not row.get("attempt_verdicts"):
        return dict(row)
    if not _of_this_run(chosen, {int(v.get("attempt") or 0): v for v in row["attempt_verdicts"]}):
        return dict(row)  # a pick of an earlier run of the feature (run again since): not this run's
    attempt = int(chosen["attempt"])
    verdicts = [{**v, "landed": v.get("attempt") == attempt, "picked": v.get("attempt") == attempt}
                for v in row["attempt_verdicts"]]
    return {**row, "attempt_verdicts": verdicts, "picked": attempt,
            "pick": f"attempt {attempt} picked by a person (was {chosen['replaced']}, {chosen['at']})"}


def _of_this_run(chosen: Mapping[str, Any], attempts: Mapping[int, Mapping[str, Any]]) -> bool:
    """Whether a recorded pick replaced this run's landed attempt (its commit as recorded), not an earlier run's."""
    replaced = attempts.get(int(chosen.get("replaced") or 0))
    return replaced is not None and str(replaced.get("sha") or "") == str(chosen.get("replaced_sha") or "")


def attempt_number(text: str, count: int) -> int:
    """`a3` (or `3`) -> 3; InputError naming the form and the attempts there are."""
    found = re.fullmatch(r"a?(\d+)", text.strip())
    if found is None:
        raise InputError(f"{text!r} is no attempt: give it as a1 … a{count}. Nothing was changed.")
    return int(found.group(1))


async def pick(feature: str, task: str, attempt_text: str, settings: Settings) -> dict[str, Any]:
    """Check the pick (InputError, exit 2, nothing written), then re-merge it; the outcome as a document."""
    root = settings.repo
    repo = GitRepo(root)
    task = check_id("task", task)
    plan = load_plan(root, check_id("feature", feature))
    store = CheckpointStore.for_repo(root, settings.db, plan.id)
    plan = replanned(store, plan)
    if task not in plan.task_ids():
        raise InputError(f"{plan.id} has no task {task}: its tasks are {', '.join(plan.task_ids())}")
    with repo_lock(root, f"pick {plan.id} {task}"):
        record = read_record(store, plan)
        result = record.results.get(task) or {}
        attempts = {int(r.get("attempt") or 0): r for r in result.get("attempts") or []}
        if not attempts:
            raise InputError(f"{task} was not run as several attempts: there is no pick to replace")
        chosen = attempt_number(attempt_text, len(attempts))
        if chosen not in attempts:
            raise InputError(f"{task} has no attempt {chosen}: its attempts are 1-{len(attempts)}."
                             " Nothing was changed.")
        if attempts[chosen].get("status") not in SUCCESS:
            raise InputError(f"attempt {chosen} is not a candidate ({attempts[chosen].get('status')}): only an attempt"
                             " the gate confirmed can be picked. Nothing was changed.")
        previous = read_picks(root, plan.id).get(task)
        if previous and not _of_this_run(previous, attempts):
            previous = None  # an earlier run's pick: this run's landing stands
        landed = int(previous["attempt"]) if previous else next(
            (a for a, r in attempts.items() if r.get("landed")), None)
        if landed == chosen:
            raise InputError(f"attempt {chosen} is already the pick on {feature_branch(plan.id)}. Nothing was changed.")
        found = standing(repo, plan, record)
        if found.landed and found.base_sha:
            raise InputError(f"{plan.id} already landed on {found.base_branch}: a pick can only change before `land`."
                             " Nothing was changed.")
        if found.feature_sha is None or record.gate is None:
            raise InputError(f"{feature_branch(plan.id)} is gone (discarded?): nothing to re-merge")
        outcome = await _remerge(repo, record.gate, found.feature_sha, feature_id=plan.id, task=task,
                                 timeout=settings.verify_timeout, old=attempts.get(landed) if landed else None,
                                 new=attempts[chosen])
        if outcome["picked"]:
            first = attempts.get(previous["replaced"]) if previous else attempts.get(landed) if landed else None
            await asyncio.to_thread(lambda: _record(root, plan.id, task, chosen=chosen, replaced=first,
                                                    sha=str(outcome["sha"])))
        return outcome | {"feature": plan.id, "task": task, "attempt": chosen, "replaced": landed}


async def _squashed(repo: GitRepo, attempt: Mapping[str, Any]) -> str:
    """One commit holding an attempt's whole change: its approved tree on the commit it started from."""
    sha, base = str(attempt.get("sha") or ""), str(attempt.get("base_sha") or "")
    if not sha or not base:
        raise InputError(f"attempt {attempt.get('attempt')} has no recorded commit (a run before `pick` existed):"
                         " it can't be re-merged")
    tree = (await repo.git("rev-parse", f"{sha}^{{tree}}")).stdout.strip()
    return (await repo.git(*_IDENTITY, "commit-tree", tree, "-p", base, "-m",
                           f"attempt {attempt.get('attempt')}")).stdout.strip()


async def _remerge(repo: GitRepo, gate: GateSetup, head: str, *, feature_id: str, task: str, timeout: float,
                   old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> dict[str, Any]:
    """The feature head with `old`'s change taken back and `new`'s put in, gated, and the branch moved to it."""
    place = repo.worktrees_dir / feature_id / "_pick"
    await repo.add_detached_worktree(place, head)
    try:
        steps = [("revert", await _squashed(repo, old))] if old else []
        steps.append(("cherry-pick", await _squashed(repo, new)))
        for verb, commit in steps:
            done = await repo.git(*_IDENTITY, verb, "--no-commit", commit, cwd=place, check=False)
            if not done.ok:
                return {"picked": False, "outcome": "conflict",
                        "detail": f"attempt {new.get('attempt')} does not apply on the feature head: {done.tail(3)}"}
        await repo.git(*_IDENTITY, "commit", "-q", "--no-verify", "-m",
                       f"{task}: attempt {new.get('attempt')} picked by a person"
                       + (f" (replacing attempt {old.get('attempt')})" if old else ""), cwd=place)
        gates = Gates(repo, GateRequest(timeout_s=timeout), decided=gate)
        await gates.set_up(place)
        run = (await gates.run(place)).result
        if not run["passed"]:
            return {"picked": False, "outcome": "gate", "detail": f"the gate failed on the result: {run['summary']}"}
        sha = await repo.head(place)
        if not await repo.advance_branch(feature_branch(feature_id), sha, head):
            return {"picked": False, "outcome": "moved", "detail": "the feature branch moved meanwhile: try again"}
        return {"picked": True, "outcome": "picked", "sha": sha, "detail": run["summary"]}
    finally:
        await repo.remove_worktree(place)


def _record(root: Path, feature_id: str, task: str, *, chosen: int, replaced: Mapping[str, Any] | None,
            sha: str) -> None:
    """The person's pick, beside the run's reports, and said in the feature's AUTO-RUN.md. `replaced`: the
    attempt the run itself landed (its record names this run: a later run of the feature is not overlaid)."""
    picks = read_picks(root, feature_id)
    was = int(replaced["attempt"]) if replaced else None
    picks[task] = {"attempt": chosen, "replaced": was, "replaced_sha": str(replaced.get("sha") or "") if replaced
                   else "", "sha": sha, "at": now_utc()}
    run_files.write(picks_file(root, feature_id), json.dumps(picks, indent=2) + "\n", "the person's picks")
    report = root / ".autobuild" / "runs" / feature_id / "AUTO-RUN.md"
    if (text := run_files.read(report)) is not None:
        run_files.write(report, text.rstrip("\n") + f"\n\n- {task}: attempt {chosen} picked by a person"
                        f" (replacing attempt {was}), now {feature_branch(feature_id)} at {sha[:10]}\n")


def pick_text(data: Mapping[str, Any]) -> str:
    if data["picked"]:
        return (f"{data['task']}: attempt {data['attempt']} now on {feature_branch(data['feature'])}"
                f" ({str(data['sha'])[:10]}), replacing attempt {data['replaced']}; the gate passed: {data['detail']}")
    return f"{data['task']}: attempt {data['attempt']} not picked ({data['outcome']}): {data['detail']}. Nothing moved."


def on_rows(rows: list[dict[str, Any]], root: Path, feature_id: str) -> list[dict[str, Any]]:
    """`status` rows with the person's picks over the selection's."""
    picks = read_picks(root, feature_id)
    return [overlaid(row, picks) for row in rows] if picks else rows

