"""A typed client of the workers (langgraph-sdk over HTTP): queue a feature run, find its thread by `{repo_url,
feature}`, read its state, answer its questions. The CLI's `submit` and `--server` are thin over it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.errors import InputError, RunLockedError
from orchestrator.graph.given_answer import with_source
from orchestrator.plan.files import MAX_TASK_MARKDOWN_BYTES
from orchestrator.plan.ids import check_id
from orchestrator.plan.model import load_plan_file, load_target
from orchestrator.repo import confined
from orchestrator.repo.commands import check_branch_name, git_sync
from orchestrator.repo.git import GitRepo
from orchestrator.repo.remote import check_url
from orchestrator.server.plan_at_base import check_plan_at_base
from orchestrator.server.worker import GRAPH_ID
from orchestrator.settings import environment
from orchestrator.store.paused_threads import is_pause


@dataclass(frozen=True)
class RemoteStatus:
    """One feature's thread on the workers, as `status --server` shows it."""

    thread_id: str
    """The LangGraph thread (also what every `--server` command accepts instead of a feature id)."""
    status: str
    """The thread's status: idle (finished or not started), busy (a worker runs it), interrupted (a question
    waits), error."""
    results: dict[str, str] = field(default_factory=dict)
    """Task id → result status, once the run returned."""
    questions: list[dict[str, str]] = field(default_factory=list)
    """Pending questions: `question_id`, `question`, and the engine's `interrupt_id`."""
    error: str = ""
    """The last run's error (a refused second run names the holder here)."""
    paused_until: float | None = None
    """The run gave its worker slot back for a usage-limit or quota pause until then (epoch seconds): the workers
    re-queue it when the pause is over."""
    pause_reason: str = ""
    pause_unrecorded: str = ""
    """Why the workers' store could not record the pause ("" when it did): then nothing re-queues the thread."""

    def paused(self) -> str:
        """"paused until 14:05 (five_hour quota at 95%, …), re-queued automatically", or "" when not paused."""
        if self.paused_until is None:
            return ""
        at = time.strftime("%H:%M", time.localtime(self.paused_until))
        why = f" ({self.pause_reason})" if self.pause_reason else ""
        if self.pause_unrecorded:
            return (f"paused until {at}{why}; NOT re-queued (the workers' store could not record it:"
                    f" {self.pause_unrecorded}): submit it again after {at}")
        return f"paused until {at}{why}, re-queued automatically"


def api_client(server: str) -> Any:
    from langgraph_sdk import get_client  # noqa: PLC0415  # the `worker`/`serve` extras: only --server needs it

    token = environment().auth_token
    headers = {"Authorization": f"Bearer {token}"} if token else None
    return get_client(url=server.rstrip("/"), headers=headers)


def repo_identity(repo_url: str) -> str:
    """A local path stands for itself resolved (the workers share this machine's folders); a URL is kept as given."""
    if not repo_url.strip():
        raise InputError("--repo-url is empty: pass the repository's git URL (or a folder the workers see)")
    if "://" in repo_url or "@" in repo_url.split("/", 1)[0]:
        return repo_url
    path = Path(repo_url).expanduser().resolve()
    if not path.is_dir():
        raise InputError(f"--repo-url {repo_url}: neither a URL nor an existing folder")
    return str(path)


def feature_input(repo_url: str, feature: str, base: str | None, plan: str | None = None) -> dict[str, Any]:
    """The served graph's input: a local path as `repo`, a URL as `repo_url` (the worker clones it). Checked as
    `run` checks its own (InputError, one line) before anything is queued: the feature id, the base, the URL, and
    for a folder the workers share with us, the plan there."""
    check_id("feature", feature)
    if base is not None:
        check_branch_name(base, "--base")
    identity = repo_identity(repo_url)
    inputs: dict[str, Any] = {"target": feature}
    remote = "://" in identity or "@" in identity
    inputs |= {"repo_url": check_url(identity)} if remote else {"repo": identity}
    if plan is None and not remote:  # the workers read it where we can see it: a missing or bad plan fails here
        GitRepo(Path(identity)).check()
        load_target(Path(identity), feature)
    if plan is None and remote and identity.startswith("file://"):
        _check_plan_at_base(Path(identity.removeprefix("file://")), feature, base or "main")
    if plan is not None:
        if not Path(plan).expanduser().is_file():
            raise InputError(f"--plan {plan}: no such file")
        if remote:  # the worker has no copy of this file: the plan and its task markdown travel in the input
            inputs |= sent_plan(Path(plan).expanduser().resolve())
        else:  # the worker refuses a plan path that leads out of the repository: refused here first
            inputs["plan"] = str(confined.resolve_under(Path(identity), str(Path(plan).expanduser().resolve()),
                                                        "--plan"))
    if base:
        inputs |= {"base": base, "base_branch": base}
    return inputs


def _check_plan_at_base(repository: Path, feature: str, base: str) -> None:
    """A `file://` repository this machine sees: its base branch, and the feature's plan on it (or a plan naming
    `feature` as one of its tasks), or InputError before anything is queued."""
    if not repository.is_dir():
        return  # the workers may see a folder we don't: they say
    if not git_sync(repository, "rev-parse", "--verify", "-q", f"refs/heads/{base}^{{commit}}").ok:
        raise InputError(f"{repository} has no branch {base!r}: pass --base, the branch the feature starts from")
    if not git_sync(repository, "cat-file", "-e", f"refs/heads/{base}:.autobuild/features/{feature}.yaml").ok:
        listed = git_sync(repository, "grep", "-q", "-E", f"id: *['\"]?{feature}['\"]?$", f"refs/heads/{base}",
                          "--", ".autobuild/features/")
        if not listed.ok:
            raise InputError(f"no plan of {feature} on {base} of {repository} (.autobuild/features/{feature}.yaml):"
                             " commit it there, or pass --plan FILE to send one")
    check_plan_at_base(repository, feature, base)  # what it holds, checked as `run` checks it


def sent_plan(plan: Path) -> dict[str, Any]:
    """A local plan file for a run by URL: its text (checked here first, so a bad plan is refused before anything
    is queued) and the task markdown it names (`file_path`, `.autobuild/tasks/<ID>.md`), by path in the repo."""
    root = next((folder for folder in plan.parents if (folder / ".git").exists()), Path.cwd())
    parsed = load_plan_file(root, plan)
    files: dict[str, str] = {}
    for task in parsed.tasks:
        for relative in [name for name in (task.file_path, f".autobuild/tasks/{task.id}.md") if name]:
            try:  # through the resolver: a file the plan names is read only from inside the repo
                data = confined.read_under(root, relative, "task markdown", limit=MAX_TASK_MARKDOWN_BYTES)
            except (InputError, OSError):
                continue  # missing (GuardKit moves finished tasks' files), or refused above by load_plan_file
            files[relative] = data.decode("utf-8", errors="replace")
    return {"plan_yaml": plan.read_text(encoding="utf-8"), "plan_files": files}


async def find_thread(server: str, repo_url: str | None, feature: str) -> dict[str, Any] | None:
    """The newest thread of `feature` (by `{repo_url, feature}` metadata), or the thread whose id `feature` is."""
    client = api_client(server)
    if repo_url is None:
        # By id with GET /threads/{id}: Aegra 0.11's search ignores `ids` (it answered the newest thread of all).
        threads = [found] if _looks_like_id(feature) and (found := await _thread(client, feature)) else []
        threads = threads or await client.threads.search(metadata={"feature": feature}, limit=1,
                                                         sort_by="created_at", sort_order="desc")
    else:
        threads = await client.threads.search(metadata={"repo_url": repo_identity(repo_url), "feature": feature},
                                              limit=20, sort_by="created_at", sort_order="desc")
        # A run refused by the feature lock leaves an errored thread behind: the one that ran is the answer.
        threads = sorted(threads, key=lambda thread: thread.get("status") == "error")
    return dict(threads[0]) if threads else None


async def _thread(client: Any, thread_id: str) -> dict[str, Any] | None:
    from langgraph_sdk.errors import NotFoundError  # noqa: PLC0415  # as api_client

    try:
        return dict(await client.threads.get(thread_id))
    except NotFoundError:
        return None


def _looks_like_id(text: str) -> bool:
    return len(text) == 36 and text.count("-") == 4


async def submit(server: str, feature: str, repo_url: str, base: str | None = None, *,
                 context: dict[str, Any] | None = None, plan: str | None = None) -> str:
    """Queue a run of `feature` on a new thread with `{repo_url, feature}` metadata; its thread id.

    Raises RunLockedError when that feature's thread is running now (the workers' advisory lock refuses a second
    run of one feature even when two submissions race past this check)."""
    client = api_client(server)
    identity = repo_identity(repo_url)
    inputs = feature_input(repo_url, feature, base, plan)  # bad input: refused before anything is queued
    existing = await find_thread(server, repo_url, feature)
    if existing is not None and existing.get("status") == "busy":
        raise RunLockedError(f"{feature} of {identity} is already running on thread {existing['thread_id']}")
    if existing is not None and existing.get("status") == "interrupted":
        found = await remote_status(server, repo_url, feature)
        if found.paused_until is not None and not found.pause_unrecorded:  # a second thread would race it then
            raise RunLockedError(f"{feature} of {identity} is {found.paused()} (thread {found.thread_id}):"
                                 f" `autobuild status {feature} --server {server}` shows it")
    thread = await client.threads.create(metadata={"repo_url": identity, "feature": feature}, graph_id=GRAPH_ID)
    await client.runs.create(thread["thread_id"], GRAPH_ID, input=inputs,
                             context=context)
    return str(thread["thread_id"])


async def remote_status(server: str, repo_url: str | None, feature: str) -> RemoteStatus:
    """The feature's thread, its task results and pending questions (InputError when there is none)."""
    thread = await find_thread(server, repo_url, feature)
    if thread is None:
        raise InputError(f"no thread for {feature} on {server}: `autobuild submit {feature} --repo-url URL"
                         f" --server {server}` queues one")
    return await thread_status(server, thread)


async def thread_status(server: str, thread: dict[str, Any]) -> RemoteStatus:
    """A served thread's task results and pending questions."""
    from langgraph_sdk.errors import APIStatusError  # noqa: PLC0415  # as _client

    client = api_client(server)
    try:
        state: Any = await client.threads.get_state(thread["thread_id"], subgraphs=True)
    except APIStatusError:  # Aegra 0.11 answers 500 while the feature has no return value yet (a question waits,
        state = {}           # or a run failed before its first checkpoint): the worker's own route has the questions
    values = state.get("values") if isinstance(state.get("values"), dict) else {}
    results = {task: str(result.get("status", "")) for task, result in (values.get("results") or {}).items()}
    pending = [i for t in state.get("tasks") or [] for i in t.get("interrupts") or []
               if isinstance(i.get("value"), dict)]
    questions = [{"question_id": str(i["value"].get("question_id", "")),
                  "question": str(i["value"].get("question", "")), "interrupt_id": str(i.get("id", ""))}
                 for i in pending if not is_pause(i["value"])]
    pause = next((i["value"] for i in pending if is_pause(i["value"])), None)
    if not state and thread.get("status") == "interrupted":
        found = await client.http.get(f"/autobuild/threads/{thread['thread_id']}/questions")
        questions, pause = list(found["questions"]), found.get("pause")
    runs = await client.runs.list(thread["thread_id"], limit=1)
    error = ""
    if runs and runs[0].get("status") == "error":  # Aegra's run carries `error_message`
        error = str(dict(runs[0]).get("error_message") or "") or _error(state)
    if values.get("refused"):  # the served graph refused its input: its final value says why
        error = f"refused: {values['refused']}"
    return RemoteStatus(str(thread["thread_id"]), str(thread.get("status", "")), results, questions, error,
                        *_pause_fields(pause))


def _pause_fields(pause: Any) -> tuple[float | None, str, str]:
    """The usage pause's end, reason and why it was not recorded from its interrupt value, (None, "", "") when the
    thread isn't paused."""
    if not is_pause(pause):
        return None, "", ""
    return float(pause["until"]), str(pause.get("reason", "")), str(pause.get("unrecorded") or "")


def _error(state: Any) -> str:
    return next((str(t.get("error")) for t in state.get("tasks") or [] if t.get("error")), "")


async def answer(server: str, repo_url: str | None, feature: str, question_id: str, text: str) -> str:
    """Resume the feature's run with the answer to one pending question (on whichever worker takes it)."""
    return await answer_found(server, await remote_status(server, repo_url, feature), feature, question_id, text)


async def answer_thread(server: str, thread_id: str, feature: str, question_id: str, text: str, *,
                        source: str = "cli") -> str:
    """`answer` for a thread known by its id (the worker's page: it shows one thread's run)."""
    thread = dict(await api_client(server).threads.get(thread_id))
    return await answer_found(server, await thread_status(server, thread), feature, question_id, text, source=source)


async def answer_found(server: str, found: RemoteStatus, feature: str, question_id: str, text: str, *,
                       source: str = "cli") -> str:
    match = [q for q in found.questions if q["question_id"] == question_id]
    if not match:
        pending = ", ".join(q["question_id"] for q in found.questions) or "none"
        raise InputError(f"no pending question {question_id} on {feature} (pending: {pending})")
    # By id when anything else waits too (another question, the usage pause's own interrupt).
    alone = len(found.questions) == 1 and found.paused_until is None
    given = with_source(text, source)  # the task's trace says where it was given (`question_answered`)
    resume: Any = given if alone else {match[0]["interrupt_id"]: given}
    client = api_client(server)
    # The answered run goes on with the asked run's options (`--pr`, attempts, budgets): a run started with none
    # gets the defaults, as the engine carries nothing over from the thread's last run (the waker does the same).
    runs = await client.runs.list(found.thread_id, limit=1)
    context = dict(runs[0]).get("context") if runs else None
    await client.runs.create(found.thread_id, GRAPH_ID, command={"resume": resume}, context=context or None)
    return found.thread_id


async def remote_history(server: str, repo_url: str | None, feature: str) -> list[dict[str, str]]:
    """The feature thread's runs, oldest first (a takeover continues the same run; an answer starts the next)."""
    thread = await find_thread(server, repo_url, feature)
    if thread is None:
        raise InputError(f"no thread for {feature} on {server}")
    runs = await api_client(server).runs.list(thread["thread_id"], limit=100)
    return [{"run_id": str(r["run_id"]), "status": str(r["status"]), "created_at": str(r["created_at"]),
             "error": str(dict(r).get("error_message") or "")} for r in reversed(runs)]


async def remote_results(server: str, repo_url: str | None, feature: str) -> dict[str, Any]:
    """Task id → the task's full result (what `show` prints), once the run returned."""
    thread = await find_thread(server, repo_url, feature)
    if thread is None:
        raise InputError(f"no thread for {feature} on {server}")
    from langgraph_sdk.errors import APIStatusError  # noqa: PLC0415  # as _client

    try:
        state: Any = await api_client(server).threads.get_state(thread["thread_id"])
    except APIStatusError:  # no return value yet (see remote_status)
        return {}
    return dict((state.get("values") or {}).get("results") or {})


async def remote_stats(server: str) -> dict[str, Any]:
    """Over every feature thread on the workers: threads by status and tasks by result status."""
    client = api_client(server)
    threads = await client.threads.search(limit=1000)
    by_status: dict[str, int] = {}
    tasks: dict[str, int] = {}
    for thread in threads:
        if "feature" not in (thread.get("metadata") or {}):
            continue
        by_status[str(thread["status"])] = by_status.get(str(thread["status"]), 0) + 1
        for result in (thread.get("values") or {}).get("results", {}).values() if isinstance(
                thread.get("values"), dict) else ():
            tasks[str(result.get("status"))] = tasks.get(str(result.get("status")), 0) + 1
    return {"threads": by_status, "tasks": tasks}
