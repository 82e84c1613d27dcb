"""A sandboxed gate's temporary folder is its own even where the host's /tmp already holds the name a tool uses:
jest keeps its cache in `$TMPDIR/jest_<uid>`, and a host that ran jest once has /tmp/jest_0, which the sandbox
shows read-only above its private tmp (so a repo under /tmp stays visible): every jest gate failed with EROFS."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator import sandbox
from orchestrator.processes import run_shell

pytestmark = pytest.mark.skipif(not sandbox.available(), reason="bubblewrap is installed by make install")


@pytest.fixture
def host_tmp_entry() -> Iterator[str]:
    """A folder in the host's /tmp, as jest leaves /tmp/jest_0 behind; removed after the test."""
    name = f"jest_autobuild_{uuid.uuid4().hex[:8]}"
    (Path("/tmp") / name).mkdir()
    try:
        yield name
    finally:
        shutil.rmtree(Path("/tmp") / name)


async def test_a_tool_writes_its_cache_in_tmpdir_where_the_host_has_the_same_name(tmp_path: Path,
                                                                                   host_tmp_entry: str) -> None:
    worktree = tmp_path / "repo" / ".autobuild" / "worktrees" / "FEAT-001" / "TASK-001"
    worktree.mkdir(parents=True)
    done = await run_shell(f'mkdir -p "$TMPDIR/{host_tmp_entry}" && echo cached > "$TMPDIR/{host_tmp_entry}/map"'
                           ' && cat "$TMPDIR/' + host_tmp_entry + '/map"', worktree, 60,
                           sandbox=sandbox.for_worktree(worktree))
    assert done.ok and done.stdout.strip() == "cached", done.stderr
    assert not (Path("/tmp") / host_tmp_entry / "map").exists(), "the host's folder is never written"
