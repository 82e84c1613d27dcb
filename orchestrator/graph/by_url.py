"""Runs by URL in the graph: the worker's clone as "the repo", pushes at every node's end, the pull request.

The reports (AUTO-RUN.md) reach the URL on a branch of their own (remote.py `reports_branch`), never on the task or
feature branches, so the feature branch a pull request proposes holds the work alone.

Input `{"repo_url", "base", "target"}` (plus `plan_yaml`/`plan_files` for a plan sent along) runs exactly as a
local run, on the worker's clone (repo/remote.py). Every task node's commits reach the URL before the node
returns, so before the checkpoint that names them is written: another worker resuming the thread (with no clone,
or a stale one) fetches them and finds each unfinished task's checkpointed commit. Worktree paths in the
checkpoint are the first worker's: each node sees its task's worktree where this worker keeps it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import update_wrapper
from pathlib import Path
from typing import Any, TypeVar, cast

from langgraph.runtime import Runtime

from orchestrator.errors import InputError
from orchestrator.graph.context import RunContext
from orchestrator.graph.events import EventLog
from orchestrator.graph.state import FeatureInput, FeatureOutput, TaskState
from orchestrator.plan.ids import check_id
from orchestrator.plan.model import load_target
from orchestrator.repo import confined, forge, remote
from orchestrator.repo.commands import check_branch_name
from orchestrator.repo.git import GitRepo, feature_branch
from orchestrator.repo.lock import repo_lock_async
from orchestrator.settings import SERVED_REPOS_VARIABLE, RunOptions, served_repo_root, worker_workspace
from orchestrator.views.pr_body import write_body

N = TypeVar("N", bound=Callable[..., Awaitable[Any]])
Body = Callable[[FeatureInput, GitRepo], Awaitable[FeatureOutput]]
DEFAULT_BASE = "main"


def pushing(node: N) -> N:
    """A task node that, in a run by URL, works in this worker's worktree of its task and pushes the task's branch
    (and the feature branch, which only a merge moves) to the URL before it returns."""

    async def wrapped(state: TaskState, runtime: Runtime[RunContext]) -> TaskState:
        ctx = runtime.context
        if ctx.remote_url is None:
            local: TaskState = await node(state, runtime)
            return local
        if state.get("worktree"):  # checkpointed by whichever worker ran the task before: ours is here
            state = TaskState(**{**state, "worktree": str(ctx.worktree(state["task_id"]))})
        update: TaskState = await node(state, runtime)
        await remote.push(ctx.repo, ctx.remote_url, ctx.base_branch, branches=(ctx.feature_branch,),
                          moved_back=(ctx.task_branch(state["task_id"]),))
        if update.get("result"):  # the task's report is written: on the URL too, on the reports' own branch
            await remote.publish_reports(ctx.repo, ctx.remote_url, ctx.base_branch, ctx.plan.id)
        return update

    return cast("N", update_wrapper(wrapped, node))


async def run(inputs: FeatureInput, options: RunOptions, body: Body, events: Callable[[Path, str], EventLog]) -> (
        FeatureOutput):
    """A run by URL: refused up front when the URL can't be used; the clone fetched (or made) and locked; the
    feature run on it; the pull request opened at the end when asked for."""
    if inputs.get("repo"):
        raise InputError("the input names both repo and repo_url: give one (a local path, or a git URL)")
    url = remote.check_url(inputs.get("repo_url", ""))
    base = inputs.get("base") or DEFAULT_BASE
    target = inputs.get("target", "")
    await asyncio.to_thread(check_input, inputs, base)  # as `submit` checked it, before anything is written
    repo = await remote.ensure_clone(await asyncio.to_thread(worker_workspace), url)
    async with repo_lock_async(repo.root, f"run {target} of {url}"):
        await remote.refresh(repo, url, base)
        local = FeatureInput(**{**inputs, "repo": str(repo.root), "repo_url": url, "base_branch": base})
        await asyncio.to_thread(confined.check_own_folders, repo.root)  # the clone's `.autobuild` may be a link
        sent = await remote.write_plan(repo, inputs.get("plan_yaml"), inputs.get("plan_files") or {})
        if sent is not None:
            local["plan"] = str(sent)
        elif local.get("plan"):  # a plan file in the clone: it may not lead out of it
            local["plan"] = str(await asyncio.to_thread(confined.resolve_under, repo.root, local["plan"], "plan"))
        given = Path(local["plan"]) if local.get("plan") else None  # sent, or a plan file in the repo at the base
        plan, _ = await asyncio.to_thread(load_target, repo.root, target, given)
        if plan.base_branch and plan.base_branch != base:  # the plan names its own base, as in a local run
            await remote.fetch_base(repo, url, plan.base_branch)
        output = await body(local, repo)
        await remote.push(repo, url, base, branches=(feature_branch(output["feature_id"]),))
        await remote.publish_reports(repo, url, base, output["feature_id"])
        if options.pr:
            await open_pull_request(repo, output, plan.base_branch or base, events(repo.root, output["feature_id"]))
    return output


def check_input(inputs: FeatureInput, base: str) -> None:
    """What `submit` checks, again (the API can be called without it): the target an id, the base a plain branch,
    a sent plan text and its files text (their paths are checked as they are written)."""
    if not isinstance(inputs.get("target", ""), str) or not isinstance(base, str):
        raise InputError("target and base must be strings: the feature (FEAT-001) and its base branch (main)")
    if target := inputs.get("target"):
        check_id("target", target)
    check_branch_name(base)


_TEXT_KEYS = ("repo", "target", "plan", "repo_url", "base", "plan_yaml", "base_branch")


def check_served(inputs: Any, options: RunOptions) -> None:
    """A served run's input and context, checked as the CLI checks its own (blocking: run in a thread): keys and
    types, the options' ranges, a local `repo` that is a repository's top folder, a plan file inside it."""
    if not isinstance(inputs, dict):
        raise InputError("the input must be an object: {\"repo_url\": URL, \"target\": \"FEAT-001\"}")
    unknown = sorted(set(inputs) - set(FeatureInput.__annotations__))
    if unknown:
        raise InputError(f"unknown input key(s) {', '.join(map(repr, unknown[:5]))[:200]}: the input takes"
                         f" {', '.join(FeatureInput.__annotations__)}")
    for key in _TEXT_KEYS:
        if key in inputs and not isinstance(inputs[key], str):
            raise InputError(f"{key} must be a string, not {type(inputs[key]).__name__}")
    files = inputs.get("plan_files")
    if files is not None and not (isinstance(files, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in files.items())):
        raise InputError("plan_files must map paths (strings) to the files' text (strings)")
    options.validate_options()
    if not inputs.get("repo_url"):  # by URL, `run` checks the rest before it clones
        _check_local_repo(inputs)


def _check_local_repo(inputs: dict[str, Any]) -> None:
    """A served run on a folder of the worker's: under its serve dir (when it has one), the repository's top
    folder, our folders in it no links, the plan file inside it."""
    if not inputs.get("repo"):
        raise InputError("the input names no repository: give repo (a folder on the worker) or repo_url")
    if target := inputs.get("target"):
        check_id("target", target)
    root = Path(inputs["repo"])
    if not root.is_absolute():
        raise InputError(f"repo {inputs['repo']!r} must be an absolute path (the worker's folders)")
    repo = GitRepo(_inside_serve_dir(root))
    repo.check(allow_unborn=True)  # an unborn branch: only the plan's base_branch can name the base, as for `run`
    top = repo.read("rev-parse", "--show-toplevel").stdout.strip()
    if Path(top).resolve() != repo.root:
        raise InputError(f"repo {inputs['repo']} is not a repository's top folder ({top} is): give that")
    confined.check_own_folders(repo.root)
    if inputs.get("plan"):  # an API caller's plan path may not lead the read out of the repo
        confined.resolve_under(repo.root, inputs["plan"], "plan")


def _inside_serve_dir(root: Path) -> Path:
    """`root` with its symlinks followed, refused unless it lies below the folder the server names for repositories
    worked in place (a worker beyond loopback: its serve dir): a caller from elsewhere may only have the worker work
    on the repositories its operator put there; others are sent by `repo_url` and cloned. Checked before any git
    runs in it."""
    resolved = root.resolve()
    allowed = served_repo_root()
    if allowed is not None and (resolved == allowed or not resolved.is_relative_to(allowed)):
        raise InputError(f"repo {root} is outside {allowed}, the only folder this server works on in place"
                         f" ({SERVED_REPOS_VARIABLE}): send repo_url (a git URL, cloned) instead")
    return resolved


def refused(inputs: Any, error: InputError) -> FeatureOutput:
    """A served run's final value when it refused its input: the thread's state says why."""
    target = inputs.get("target") if isinstance(inputs, dict) else None
    return FeatureOutput(feature_id=target if isinstance(target, str) else "", results={}, refused=str(error))


async def feature_started(inputs: FeatureInput, repo: GitRepo, feature_id: str, sha: str) -> None:
    """The feature branch, on the URL too: recreated here at its recorded start when a takeover's clone lacks it."""
    if (url := inputs.get("repo_url")) is None:
        return
    await repo.ensure_branch(feature_branch(feature_id), sha)
    await remote.push(repo, url, inputs.get("base_branch") or DEFAULT_BASE, branches=(feature_branch(feature_id),))


async def open_pull_request(repo: GitRepo, output: FeatureOutput, base: str, events: EventLog) -> None:
    """The pull request from the feature branch into the base, as `autobuild pr` opens it (repo/forge.py), its body
    the run's report with the tests changed; a failure (no `gh`, no merged task, the PR already open) is an event,
    never the run's failure."""
    feature_id = output["feature_id"]
    branch = feature_branch(feature_id)
    results = output["results"]
    merged = [task for task, result in results.items() if result.get("merged")]
    if not merged:
        events("pull_request", opened=False, reason="no task merged: nothing to propose")
        return
    left_out = {task: str(result.get("status", "")) for task, result in results.items() if not result.get("merged")}
    body, report = await asyncio.to_thread(write_body, repo.root, feature_id, merged, left_out, results)
    opened = await forge.open_pull_request(repo.root, branch, base, forge.title_of(report, feature_id), body)
    if opened.opened:
        events("pull_request", opened=True, url=opened.url)
    elif opened.url:  # already open from this branch: it shows what this run pushed
        events("pull_request", opened=False, url=opened.url, reason=opened.reason)
    else:
        events("pull_request", opened=False, reason=f"{opened.reason}: open it by hand from {branch}")
