"""The forge side of a pull request: which remote, the page to open one by hand, and `gh pr create`.

One path for both callers: `autobuild pr FEAT` (a local run) and a served run by URL with `--pr`. The branch gets
to the forge by a plain push to the remote's URL (repo/remote.py `push`: never the base, never a remote-tracking
ref of the user's); opening the pull request is `gh`'s job when it is installed, else the person's, from the URL
we print and the body we wrote to a file.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from orchestrator.errors import InputError
from orchestrator.processes import run, run_async

GH_TIMEOUT_S = 120.0
"""`gh pr create` talks to the forge once; a hung network ends it here."""

# git@github.com:owner/repo.git, ssh://git@host/owner/repo.git, https://host:port/owner/repo(.git)
_SCP = re.compile(r"^[\w.-]+@(?P<host>[\w.-]+):(?P<path>[^\\]+?)(?:\.git)?/?$")
_URL = re.compile(r"^(?P<scheme>https?|ssh|git)://(?:[^@/]+@)?(?P<host>[\w.-]+)(?P<port>:\d+)?/(?P<path>.+?)"
                  r"(?:\.git)?/?$")

_URL_IN_TEXT = re.compile(r"https?://\S+")


@dataclass(frozen=True)
class Remote:
    """The remote a pull request goes to: its name in the repository's config and the URL pushes go to."""

    name: str
    url: str


@dataclass(frozen=True)
class Opened:
    """What came of asking `gh` to open the pull request."""

    opened: bool
    url: str = ""
    """The pull request's page (`gh` prints it last; for one already open, `gh` names it)."""
    reason: str = ""
    """Why it was not opened: no `gh`, or `gh`'s own words."""


def choose_remote(root: Path, base: str) -> Remote:
    """The base branch's upstream remote, else `origin`, else the only remote; InputError naming what to do when
    there is none to choose (read-only: `git config`/`git remote`)."""
    names = run(["git", "remote"], root).stdout.split()
    upstream = run(["git", "config", "--get", f"branch.{base}.remote"], root).stdout.strip()
    if upstream in names:
        name = upstream
    elif "origin" in names:
        name = "origin"
    elif len(names) == 1:
        name = names[0]
    elif not names:
        raise InputError("the repository has no remote to push to: add one (`git remote add origin URL`), then run"
                         " `autobuild pr` again")
    else:
        raise InputError(f"the repository has several remotes ({', '.join(names)}) and {base} tracks none of them:"
                         f" set one (`git branch --set-upstream-to=REMOTE/{base} {base}`), then run `autobuild pr`"
                         " again")
    found = run(["git", "remote", "get-url", "--push", name], root)
    if not found.ok or not found.stdout.strip():
        raise InputError(f"the remote {name} has no URL: set one (`git remote set-url {name} URL`)")
    return Remote(name, found.stdout.strip())


def compare_url(remote_url: str, base: str, branch: str) -> str | None:
    """The page where a person opens the pull request by hand: GitHub's compare view (GitLab's new merge request
    on a gitlab host); None for a remote that is a path, or a forge we can't name a page of."""
    match = _URL.match(remote_url) or _SCP.match(remote_url)
    if match is None:
        return None
    found = match.groupdict()
    # The web pages are where an http(s) remote is (its port too); an ssh remote's host serves them over https.
    site = (f"{found['scheme']}://{found['host']}{found['port'] or ''}" if found.get("scheme") in ("http", "https")
            else f"https://{found['host']}")
    path = found["path"].strip("/")
    if "gitlab" in found["host"]:
        return (f"{site}/{path}/-/merge_requests/new?merge_request%5Bsource_branch%5D={quote(branch, '')}"
                f"&merge_request%5Btarget_branch%5D={quote(base, '')}")
    return f"{site}/{path}/compare/{quote(base, '/')}...{quote(branch, '/')}?expand=1"


def title_of(report: str, feature_id: str) -> str:
    """The pull request's title: the feature report's heading without its `AUTO-RUN:` prefix."""
    first = next((line.lstrip("# ").strip() for line in report.splitlines() if line.strip()), "")
    return first.removeprefix("AUTO-RUN:").strip() or f"AutoBuild {feature_id}"


async def open_pull_request(root: Path, branch: str, base: str, title: str, body_file: Path, *,
                            draft: bool = False) -> Opened:
    """`gh pr create` from `branch` (already pushed) into `base`, in the repository (so `gh` finds the forge from
    its remotes), a draft when asked; not opened, with the reason, when `gh` is missing or refuses (already open,
    not logged in)."""
    if await asyncio.to_thread(shutil.which, "gh") is None:
        return Opened(False, reason="`gh` is not on PATH")
    done = await run_async(["gh", "pr", "create", "--head", branch, "--base", base, "--title", title,
                            "--body-file", str(body_file), *(["--draft"] if draft else [])], root, timeout=GH_TIMEOUT_S)
    if not done.ok:
        said = f"{done.stdout}\n{done.stderr}"
        if "already exists" in said and (open_one := _URL_IN_TEXT.search(said)):  # it now shows what was pushed
            return Opened(False, url=open_one.group(0), reason="a pull request from this branch is already open")
        return Opened(False, reason=f"`gh pr create` failed: {done.tail(3) or f'exit {done.returncode}'}")
    lines = done.stdout.strip().splitlines()
    return Opened(True, url=lines[-1].strip() if lines else "")
