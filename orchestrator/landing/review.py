"""`autobuild review FEAT`: what a run produced before you land it: each task's outcome, the diff against the
base, where the reports are, and what `land` would do (or why it would refuse)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.facts import accepted_changes, accepted_summary
from orchestrator.jsonout import iso_utc, usd
from orchestrator.landing import journal
from orchestrator.landing.land import REPORTS
from orchestrator.landing.pick import on_rows
from orchestrator.landing.record import Standing, predicted_conflicts, read_record, standing
from orchestrator.plan.model import load_plan
from orchestrator.repo.commands import git_sync
from orchestrator.repo.git import GitRepo
from orchestrator.settings import Settings
from orchestrator.store import traces as trace
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.inspection import replanned
from orchestrator.text import one_line
from orchestrator.views import attempt_report
from orchestrator.views.html_report import REPORT_HTML
from orchestrator.views.reports import REPORT_NAME


def _reports(root: Path, feature_id: str, task_ids: list[str]) -> dict[str, Any]:
    feature = trace.runs_dir(root, feature_id) / REPORT_NAME
    per_task = {}
    for task_id in task_ids:
        folder = trace.runs_dir(root, feature_id, task_id)
        per_task[task_id] = [str(folder / name) for name in (REPORT_NAME, "trace.jsonl") if (folder / name).is_file()]
    page = trace.runs_dir(root, feature_id) / REPORT_HTML
    return {"feature": str(feature) if feature.is_file() else None, "tasks": per_task,
            "page": str(page) if page.is_file() else None}


def _diff(root: Path, found: Standing) -> dict[str, Any]:
    """What landing would bring: `git diff base...feature`, less the run's reports (they are not landed)."""
    if not (found.feature_sha and found.base_sha):
        return {"range": None, "stat": "", "files_changed": 0, "insertions": 0, "deletions": 0}
    changes = [f"{found.base_sha}...{found.feature_sha}", "--", ".", f":(exclude){REPORTS}"]
    numbers = git_sync(root, "diff", "--numstat", *changes).stdout.splitlines()
    counted = [line.split("\t", 2) for line in numbers if line.count("\t") >= 2]
    return {"range": f"{found.base_branch}...{found.feature_branch}",
            "stat": git_sync(root, "diff", "--stat=100", *changes).stdout,
            "files_changed": len(counted),
            "insertions": sum(int(a) for a, _, _ in counted if a.isdigit()),
            "deletions": sum(int(d) for _, d, _ in counted if d.isdigit())}


def review(feature: str, settings: Settings, note: Callable[[str], None]) -> dict[str, Any]:
    """The review document (also the `--json` output, less its schema version); `note` hears what finishing an
    interrupted landing did."""
    root = settings.repo
    repo = GitRepo(root)
    repo.check(allow_unborn=True)  # an orphan checkout of yours: the base is the plan's branch
    journal.finish_interrupted(repo, note)
    plan = load_plan(root, feature)
    store = CheckpointStore.for_repo(root, settings.db, plan.id)
    plan = replanned(store, plan)  # with the tasks replans added
    record = read_record(store, plan)
    found = standing(repo, plan, record)
    reports = _reports(root, plan.id, plan.task_ids())
    tasks = [{"task": row["task"], "name": plan.task(row["task"]).name, "status": row["status"],
              "turns": row["turn"], "cost_usd": usd(row["cost_usd"]), "last_decision": row["last_decision"],
              "reason": (row["reason"] or "").splitlines()[0] if row["reason"] else "",
              "report": next(iter(reports["tasks"][row["task"]]), None)} | attempt_report.of_row(row)
             for row in on_rows(record.table["tasks"], root, plan.id)]  # a person's `pick` over the selection's
    conflicts = (predicted_conflicts(repo, found.base_sha, found.feature_sha)
                 if found.base_sha and found.feature_sha and not found.landed else [])
    gate = record.gate
    refusals, partial_refusals = found.refusals(False), found.refusals(True)
    return {
        "feature": plan.id,
        "name": plan.name,
        "finished": bool(record.table["finished"]),
        "updated": iso_utc(record.table["updated"]),
        "branch": found.feature_branch,
        "branch_sha": found.feature_sha,
        "base": {"branch": found.base_branch, "sha": found.base_sha, "moved_commits": found.behind},
        "cost_usd": usd(sum(float(row["cost_usd"]) for row in record.table["tasks"])),
        "tasks": tasks,
        "accepted_test_changes": accepted_changes(record.results, [row["task"] for row in record.table["tasks"]]),
        "diff": _diff(root, found),
        "reports": reports,
        "land": {
            "already_landed": found.landed,
            "ready": not refusals and not found.landed,
            "ready_with_partial": not partial_refusals and not found.landed,
            "refusals": refusals,
            "approved": found.approved,
            "not_approved": found.not_approved,
            "unapproved_commits": found.unapproved_commits,
            "base_moved_commits": found.behind,
            "predicted_conflicts": conflicts,
            "gate": {"command": gate["command"], "source": gate["source"]} if gate else None,
            "checkout": found.checkout,
        },
    }


def _would(data: dict[str, Any]) -> list[str]:
    land, base = data["land"], data["base"]["branch"]
    if land["already_landed"]:
        return [f"land: nothing to do, {base} already contains {data['branch']}"]
    lines = []
    if land["base_moved_commits"]:
        lines.append(f"land: {base} moved {land['base_moved_commits']} commit(s) since the run; land merges them in"
                     " and verifies the result again")
    if land["predicted_conflicts"]:
        lines.append(f"land: the merge would conflict in {', '.join(land['predicted_conflicts'])}")
    gate = land["gate"]
    check = f"after `{gate['command']}` passes on the merged result" if gate and gate["command"] else \
        "only with --verify CMD (or --verify none): the run had no gate"
    count = f"{len(land['approved'])} of {len(data['tasks'])} task(s)"
    if land["ready"]:
        lines.append(f"land: would merge {count} into {base} (a merge commit; --squash for one commit), {check}")
        return lines
    lines += [f"land refuses: {why}" for why in land["refusals"]]
    if land["ready_with_partial"]:
        lines.append(f"land --partial: would merge {count} ({', '.join(land['approved'])}) into {base}, {check}")
    return lines


def review_text(data: dict[str, Any]) -> str:
    base = data["base"]
    state = "finished" if data["finished"] else "not finished"
    lines = [f"{data['feature']}: {data['name']} ({state}; updated {data['updated']}; ${data['cost_usd']:.4f})",
             f"branch {data['branch']} ({(data['branch_sha'] or 'missing')[:10]}) on {base['branch']}"
             f" ({(base['sha'] or 'missing')[:10]})", "",
             f"{'task':<12} {'status':<22} {'turns':>5}  {'decision':<9} {'cost':>9}  reason"]
    for row in data["tasks"]:
        lines.append(f"{row['task']:<12} {row['status']:<22} {row['turns']:>5}  {row['last_decision'] or '-':<9}"
                     f" ${row['cost_usd']:>8.4f}  {one_line(row['reason'], 100)}")
    for row in data["tasks"]:
        if attempt_lines := attempt_report.text_lines(row):
            lines += ["", f"{row['task']} {attempt_lines[0]}", *attempt_lines[1:]]
    if summary := accepted_summary(data["accepted_test_changes"]):
        lines += ["", summary, "(where a false approval could hide: read each reason)"]
    diff = data["diff"]
    lines += ["", f"diff {diff['range']}: {diff['files_changed']} file(s), +{diff['insertions']} -{diff['deletions']}"
              if diff["range"] else "diff: no feature branch", *diff["stat"].rstrip().splitlines()[:60], ""]
    reports = data["reports"]
    lines.append("reports:")
    lines += [f"  {reports['feature']}"] if reports["feature"] else []
    lines += [f"  {reports['page']} (the pictures: open it in a browser)"] if reports.get("page") else []
    lines += [f"  {path}" for paths in reports["tasks"].values() for path in paths]
    return "\n".join([*lines, "", *_would(data)])
