"""Git LFS objects a commit needs that this repository doesn't have: git can't check such a commit out into a
worktree ("smudge filter lfs failed"), so a run would fail half-way; it is refused before anything starts."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from orchestrator.repo.commands import git_sync

_OID = re.compile(r"^([0-9a-f]{64}) [*-] (.+)$")


def missing_objects(root: Path, rev: str) -> list[str]:
    """Paths in `rev` whose LFS object is neither in the local store nor skipped (`GIT_LFS_SKIP_SMUDGE=1`);
    empty when the repo doesn't use LFS, git-lfs isn't installed, or its filter isn't set up to smudge."""
    if os.environ.get("GIT_LFS_SKIP_SMUDGE") == "1" or shutil.which("git-lfs") is None:
        return []
    uses = git_sync(root, "grep", "-q", "-e", "filter=lfs", rev, "--", ".gitattributes", "**/.gitattributes")
    if not uses.ok:  # no LFS attributes in that commit (and git-lfs itself would write .git/lfs/ to say so)
        return []
    smudges = git_sync(root, "config", "--get-regexp", r"^filter\.lfs\.(process|smudge)$")
    if not smudges.ok or not smudges.stdout.strip():
        return []
    listed = git_sync(root, "lfs", "ls-files", "--long", rev)
    if not listed.ok:
        return []
    env = git_sync(root, "lfs", "env").stdout
    media = next((line.split("=", 1)[1] for line in env.splitlines() if line.startswith("LocalMediaDir=")), "")
    store = Path(media) if media else None
    missing = []
    for line in listed.stdout.splitlines():
        found = _OID.match(line.strip())
        if found is None:
            continue
        oid, path = found.groups()
        if store is None or not (store / oid[:2] / oid[2:4] / oid).is_file():
            missing.append(path)
    return missing
