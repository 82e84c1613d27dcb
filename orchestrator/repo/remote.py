"""Repos by URL: the URL checks (no credentials in it), the worker's clone cache, pushes to the URL itself.

A worker keeps one clone per URL under its workspace (`ORCHESTRATOR_WORKSPACE`): cloned once, fetched on every
run, never re-cloned. The clone is the worker's own: its main checkout is detached at the base (the plan is read
there), its `autobuild/` branches are the run's, and every push names the URL, never a remote, so no
remote-tracking ref of anyone's checkout moves. Credentials never appear in a URL we accept: git uses the
worker's own (credential helpers, ssh keys), and nothing we store or print can carry them.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from orchestrator.errors import GitError, InputError
from orchestrator.processes import run_async
from orchestrator.repo import confined
from orchestrator.repo.commands import NO_HOOKS, check_branch_name
from orchestrator.repo.git import AUTOBUILD_REFS, GitRepo

FETCHED = "refs/remotes/origin/autobuild/"
"""Where the URL's autobuild/ branches are fetched to in the clone (then made local branches if missing)."""
_SCP_LIKE = re.compile(r"^(?P<user>[^@/:]+(?::[^@/]*)?)@(?P<host>[^:/]+):")
_CLONE_LOCKS: dict[tuple[Path, int], asyncio.Lock] = {}
_PUSH_LOCKS: dict[tuple[Path, int], asyncio.Lock] = {}
_PUSHED: dict[tuple[Path, str, str], str] = {}


def check_url(url: str) -> str:
    """The URL as given, or an InputError (one line, the credential never in it) when it can't be used."""
    url = url.strip()
    if not url:
        raise InputError("repo_url is empty: pass the git URL of the repository (https://, ssh://, git@host:path,"
                         " file://)")
    if url.startswith("-") or any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise InputError(f"repo_url {redact(url)!r} is not a git URL")
    if "::" in url.split("/", 1)[0]:
        raise InputError(f"repo_url {redact(url)!r} names a git transport helper (`<helper>::`): not accepted")
    if "://" in url:
        parts = urlsplit(url)
        if parts.password is not None or (parts.username and parts.scheme in ("http", "https")):
            raise InputError(f"repo_url {redact(url)} carries a credential (user:token@): remove it; the worker"
                             " uses its own git credentials (a credential helper, an ssh key)")
        if parts.query or parts.fragment:
            raise InputError(f"repo_url {redact(url).split('?')[0].split('#')[0]} has a query or fragment (where"
                             " tokens hide): give the plain repository URL")
    elif (scp := _SCP_LIKE.match(url)) and ":" in scp.group("user"):
        raise InputError(f"repo_url {redact(url)} carries a credential (user:pass@): remove it; the worker uses"
                         " its own git credentials (an ssh key)")
    return url


def redact(url: str) -> str:
    """The URL with whatever sits before an `@` in its authority replaced: safe to print."""
    if "://" in url:
        scheme, _, rest = url.partition("://")
        authority, slash, path = rest.partition("/")
        if "@" in authority:
            authority = "***@" + authority.rsplit("@", 1)[1]
        return f"{scheme}://{authority}{slash}{path}"
    if scp := _SCP_LIKE.match(url):
        return "***@" + url[len(scp.group("user")) + 1:]
    return url


def clone_path(workspace: Path, url: str) -> Path:
    """One clone per URL: a readable name plus a digest of the whole URL."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git"))[:40]
    digest = hashlib.sha256(url.encode()).hexdigest()[:12]
    return workspace / "clones" / f"{stem.strip('-.') or 'repo'}-{digest}"


async def ensure_clone(workspace: Path, url: str) -> GitRepo:
    """The worker's clone of `url` (cloned once, into a temporary folder then renamed: a half clone is never
    used). No work tree is checked out yet: `refresh` detaches it at the base."""
    path = clone_path(workspace, url)
    lock = _CLONE_LOCKS.setdefault((path, id(asyncio.get_running_loop())), asyncio.Lock())
    async with lock:
        if not await asyncio.to_thread((path / ".git").is_dir):
            await asyncio.to_thread(path.parent.mkdir, parents=True, exist_ok=True)
            partial = path.with_name(path.name + ".partial")
            await asyncio.to_thread(shutil.rmtree, partial, True)
            cloned = await GitRepo(path.parent).git("clone", "-q", "--no-checkout", "--", url, str(partial),
                                                    cwd=path.parent, check=False)
            if not cloned.ok:
                raise InputError(f"can't clone {redact(url)}: {cloned.tail(2)}")
            await asyncio.to_thread(partial.rename, path)
    return GitRepo(path)


async def refresh(repo: GitRepo, url: str, base: str) -> None:
    """Fetch the base and every autobuild/ branch from the URL; the main checkout detached at the base (where
    the plan is read); the URL's autobuild/ branches this clone lacks become local ones (a takeover: a run
    resumed on this worker continues from what another pushed). Local branches that exist are this worker's
    own, pushed as they moved, and stay."""
    # A branch named `autobuild` on the URL refuses every push of autobuild/… there (a ref can't be a folder too):
    # refused now, in one line, not as the first push's git error after a task's work.
    heads = await repo.git("ls-remote", "--heads", "--", url, "refs/heads/autobuild", check=False)
    if any(line.split("\t")[-1] == "refs/heads/autobuild" for line in heads.stdout.splitlines()):
        raise InputError(f"{redact(url)} has a branch named `autobuild`: git can't also hold the run's autobuild/…"
                         " branches there; rename it first (git branch -m autobuild <new-name>, then push)")
    await repo.git("checkout", "-q", "--detach", check=False)  # a fresh clone: HEAD off every branch we fetch into
    await fetch_base(repo, url, base, f"+{AUTOBUILD_REFS}*:{FETCHED}*")
    await repo.git("checkout", "-q", "--detach", "-f", f"refs/heads/{base}")
    listed = await repo.git("for-each-ref", "--format=%(refname) %(objectname)", FETCHED)
    for line in listed.stdout.splitlines():
        ref, sha = line.split()
        name = "autobuild/" + ref.removeprefix(FETCHED)
        local = await repo.git("rev-parse", "--verify", "-q", f"refs/heads/{name}", check=False)
        if not local.ok:
            await repo.ensure_branch(name, sha)
        elif (old := local.stdout.strip()) != sha and await repo.is_ancestor(old, sha):
            await repo.advance_branch(name, sha, old)  # a worker that came back: what others pushed since goes on


async def fetch_base(repo: GitRepo, url: str, base: str, *more: str) -> None:
    """The URL's `base` as this clone's branch of that name (never checked out here: the main checkout stays
    detached), and any `more` refspecs in the same fetch."""
    await asyncio.to_thread(check_branch_name, base)  # the API needs no client of ours: a pattern fetches all
    fetched = await repo.git("fetch", "-q", "--prune", "--", url, f"+refs/heads/{base}:refs/heads/{base}", *more,
                             check=False)
    if not fetched.ok:
        raise InputError(f"can't fetch branch {base!r} from {redact(url)}: {fetched.tail(2)}")


MAX_SENT_FILE_BYTES = 1_000_000
"""A plan, or one file of `plan_files`, sent in a run's input (a plan's own limit; task markdown is checked again,
smaller, when the plan is loaded)."""
MAX_SENT_FILES = 1_000


async def write_plan(repo: GitRepo, plan_yaml: str | None, files: dict[str, str]) -> Path | None:
    """A plan sent in the input, and task markdown files (by path relative to the repo), written into the clone's
    checkout (each kept inside it: repo/confined.py); the plan file's path (named by its digest: runs of other
    plans never share it), None without one. Everything is checked before anything is written."""
    if not isinstance(files, dict) or len(files) > MAX_SENT_FILES:
        raise InputError(f"plan_files must map at most {MAX_SENT_FILES} paths to the files' text")
    if plan_yaml is not None and not isinstance(plan_yaml, str):
        raise InputError("plan_yaml must be the plan's YAML text")
    written: dict[str, str] = dict(files)
    plan = None
    if plan_yaml:
        digest = hashlib.sha256(plan_yaml.encode()).hexdigest()[:12]
        plan = repo.root / ".autobuild" / "submitted" / f"plan-{digest}.yaml"
        written[str(plan.relative_to(repo.root))] = plan_yaml
    targets: list[tuple[Path, str]] = []
    for relative, text in written.items():
        if not isinstance(relative, str) or not isinstance(text, str):
            raise InputError(f"plan_files: {relative!r} must map a path to the file's text")
        if len(text.encode("utf-8", errors="replace")) > MAX_SENT_FILE_BYTES:
            what = "plan_yaml" if plan and relative == str(plan.relative_to(repo.root)) else f"plan_files: {relative!r}"
            raise InputError(f"{what} is over the {MAX_SENT_FILE_BYTES}-byte limit: send the plan and its task"
                             " markdown only")
        resolved = await asyncio.to_thread(confined.resolve_under, repo.root, relative, "plan_files",
                                           named="the repository")
        targets.append((resolved, text))

    def write() -> None:
        for resolved, text in targets:
            confined.write_resolved(repo.root, resolved, text, "plan_files")

    await asyncio.to_thread(write)
    return plan


async def push(repo: GitRepo, url: str, base: str, *, branches: tuple[str, ...] = (),
               moved_back: tuple[str, ...] = ()) -> None:
    """Push `branches` (fast-forward only) and `moved_back` (task branches, which may move back: forced) from the
    clone to the URL, before the checkpoint that names their commits is written. Never the base."""
    for name in (*branches, *moved_back):
        if name == base or not name.startswith("autobuild/"):
            raise GitError(f"refusing to push {name}: only autobuild/ branches are pushed, never the base {base}")
    lock = _PUSH_LOCKS.setdefault((repo.root, id(asyncio.get_running_loop())), asyncio.Lock())
    async with lock:  # one push at a time: a branch's pushes reach the URL in the order it moved here
        listed = await repo.git("for-each-ref", "--format=%(refname:short) %(objectname)",
                                *(f"refs/heads/{name}" for name in (*branches, *moved_back)))
        heads = dict(line.split() for line in listed.stdout.splitlines())
        # What this process already pushed, unmoved since, is not pushed again (most nodes move no branch).
        moved = {name: sha for name, sha in heads.items() if _PUSHED.get((repo.root, url, name)) != sha}
        if not moved:
            return
        await repo.push_branches(url, [b for b in branches if b in moved], [b for b in moved_back if b in moved])
        _PUSHED.update({(repo.root, url, name): sha for name, sha in moved.items()})


def reports_branch(feature_id: str) -> str:
    """Where a run by URL keeps its AUTO-RUN.md reports on the URL: a branch of its own (task ids hold no `.`, so
    no task branch is named so), never the feature branch, whose history is what a pull request proposes."""
    return f"autobuild/{feature_id}.AUTO-RUN.md"


_REPORT_LOCKS: dict[tuple[Path, int], asyncio.Lock] = {}
_AUTHOR = {f"GIT_{who}_{what}": value for who in ("AUTHOR", "COMMITTER")
           for what, value in (("NAME", "AutoBuild"), ("EMAIL", "autobuild@localhost"))}


async def publish_reports(repo: GitRepo, url: str, base: str, feature_id: str) -> None:
    """The feature's reports as they are now in the clone's run folder, committed on `reports_branch` over what it
    held (a takeover's worker adds to what the first one published) and pushed (fast-forward) to the URL."""
    branch = reports_branch(feature_id)
    folder = PurePosixPath(".autobuild", "runs", feature_id)
    lock = _REPORT_LOCKS.setdefault((repo.root, id(asyncio.get_running_loop())), asyncio.Lock())
    async with lock:
        parent = (await repo.git("rev-parse", "--verify", "-q", f"refs/heads/{branch}", check=False)).stdout.strip()
        scratch = await asyncio.to_thread(tempfile.mkdtemp, prefix="autobuild-reports-")  # the loop never blocks
        try:
            env = {**os.environ, "GIT_INDEX_FILE": str(Path(scratch) / "index"), **_AUTHOR}

            async def git(*args: str) -> str:
                done = await run_async(["git", *NO_HOOKS, *args], repo.root, timeout=120, env=env)
                if not done.ok:
                    raise GitError(f"git {' '.join(args)} failed: {done.tail(5)}")
                return done.stdout.strip()

            if parent:
                await git("read-tree", parent)
            if await asyncio.to_thread(_has_reports, repo.root / str(folder)):  # else git refuses the pathspec
                await git("add", "-f", "--ignore-removal", "--", f":(glob){folder}/**/AUTO-RUN.md")  # keep the others'
            tree = await git("write-tree")
            if parent and tree == await git("rev-parse", f"{parent}^{{tree}}"):
                return
            commit = await git("commit-tree", tree, *(("-p", parent) if parent else ()), "-m",
                               f"autobuild: the reports of {feature_id}")
        finally:
            await asyncio.to_thread(shutil.rmtree, scratch, True)
        await repo.git("update-ref", f"refs/heads/{branch}", commit, parent or "")
    await push(repo, url, base, branches=(branch,))


def _has_reports(folder: Path) -> bool:
    return folder.is_dir() and any(folder.rglob("AUTO-RUN.md"))
