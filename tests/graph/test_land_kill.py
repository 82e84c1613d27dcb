"""kill -9 of `land` at several points (its gate running, git half-way through updating the user's checkout, the
base already moved): its gate dies with it, the next command finishes or undoes the landing from the journal,
nothing stray is left in the user's checkout, and the next `land` lands. `land` runs as a real process; a fake
`git` on PATH stalls it at the chosen step (and, for the checkout's update, leaves what a killed git leaves)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.graph.harness import unsandboxed
from tests.graph.test_landing import VERIFY, Repo, done, templates

pytestmark = pytest.mark.heavy

__all__ = ["done", "templates"]  # fixtures used here

REAL_GIT = shutil.which("git") or "git"

# Stalls `git merge --ff-only NEW` (land updating the user's checkout) after doing part of its work the way git
# does it (index.lock taken, some of the landed files written, the last one cut off mid-write), or
# `git worktree remove` once the journal says the base is moving; records its pid in $STALL_MARK and sleeps
# until killed. Anything else is real git.
FAKE_GIT = """#!/bin/sh
real={real}
case "$*" in
  *"merge --ff-only"*)
    if [ "$STALL_AT" = ff ]; then
      for new in "$@"; do :; done
      gitdir=$("$real" rev-parse --absolute-git-dir)
      : > "$gitdir/index.lock"
      for path in $("$real" diff --name-only --diff-filter=A HEAD "$new" | head -n 3); do
        mkdir -p "$(dirname "$path")"; "$real" show "$new:$path" > "$path"
      done
      printf 'cut off mid-wri' > "$path"
      echo $$ > "$STALL_MARK"; exec sleep 600
    fi ;;
  *"worktree remove"*_land*)
    if [ "$STALL_AT" = moved ] && grep -q '"moving"' "$JOURNAL"; then echo $$ > "$STALL_MARK"; exec sleep 600; fi ;;
esac
exec "$real" "$@"
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _wait_for(predicate: object, what: str, limit: float = 120.0) -> None:
    """Polls until `predicate()` holds; the limit only keeps a broken run from hanging the suite."""
    deadline = time.monotonic() + limit
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)


def _land_killed_at(repo: Repo, tmp_path: Path, stall: str, *extra: str) -> int:
    """Start `land` as a process, wait until it reaches `stall`, kill -9 it; the stalled process's pid (nothing
    else is killed: what `land` started must die with it, or be ended by the next command's recovery)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(FAKE_GIT.format(real=REAL_GIT))
    (bin_dir / "git").chmod(0o755)
    mark = tmp_path / "stalled.pid"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "STALL_AT": stall,
           "STALL_MARK": str(mark), "JOURNAL": str(repo.root / ".git" / "autobuild-land.json"),
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    land = subprocess.Popen([sys.executable, "-m", "orchestrator", "land", "FEAT-001", "--repo", str(repo.root),
                             "--db", str(repo.db), *extra], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        _wait_for(lambda: mark.is_file() and mark.read_text().strip(), f"land reaching {stall}")
        assert (repo.root / ".git" / "autobuild-land.json").is_file(), "the journal is written before the step"
    finally:
        land.kill()
        land.wait()
    return int(mark.read_text())


def _clean(repo: Repo, status: str) -> None:
    assert repo.git("status", "--porcelain", "--untracked-files=all") == status, "nothing stray in the checkout"
    assert not (repo.root / ".git" / "index.lock").exists() and repo.land_worktree_gone()
    assert not (repo.root / ".git" / "autobuild-land.json").exists()


def test_a_killed_land_takes_its_gate_with_it_and_the_next_land_lands(done: Repo, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    unsandboxed(tmp_path, monkeypatch)  # the gate writes its pid outside the run, for the test to find it
    old, status = done.sha("main"), done.git("status", "--porcelain", "--untracked-files=all")
    mark = tmp_path / "stalled.pid"
    gate = f"echo $$ > {mark}; exec python -c 'import time; time.sleep(600)'"
    stalled = _land_killed_at(done, tmp_path, "gate", "--verify", gate)
    _wait_for(lambda: not _alive(stalled), "the gate ending with land (the leash)")
    assert done.sha("main") == old
    code, out, err = done.cli(capsys, "land", "FEAT-001")
    assert "a landing of FEAT-001 on main was interrupted" in out and "was not moved" in out, out
    assert code == 0 and done.sha("main") != old and (done.root / "calc/mul.py").is_file(), out + err
    _clean(done, status)


def test_a_land_killed_while_updating_the_checkout_is_undone_then_lands(done: Repo, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    old, status = done.sha("main"), done.git("status", "--porcelain", "--untracked-files=all")
    stalled = _land_killed_at(done, tmp_path, "ff", "--verify", VERIFY)
    _wait_for(lambda: not _alive(stalled), "the checkout's git ending with land (the leash)", limit=10)
    stray = done.git("status", "--porcelain", "--untracked-files=all")
    assert stray.count("??") == status.count("??") + 3, "the files a killed git wrote"
    assert (done.root / ".git" / "index.lock").exists(), "and its lock"
    code, out, err = done.cli(capsys, "review", "FEAT-001")
    assert code == 0 and "undid the half-done update" in err and "3 added file(s) removed" in err, err
    assert done.sha("main") == old
    _clean(done, status)
    code, out, _ = done.cli(capsys, "land", "FEAT-001")
    assert code == 0 and "landed autobuild/FEAT-001 on main" in out, out
    _clean(done, status)


def test_a_land_killed_after_moving_the_base_is_finished(done: Repo, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    old, status = done.sha("main"), done.git("status", "--porcelain", "--untracked-files=all")
    stalled = _land_killed_at(done, tmp_path, "moved", "--verify", VERIFY)
    new = done.sha("main")
    assert new != old and done.git("status", "--porcelain", "--untracked-files=all") == status
    assert _alive(stalled), "a git of ours (no user code in it) outlives land: the recovery must end it"
    code, out, _ = done.cli(capsys, "land", "FEAT-001")
    assert code == 0 and "the landing finished" in out and "nothing to land" in out, out
    assert "stopped 1 process(es) of the landing" in out and not _alive(stalled), out
    assert done.sha("main") == new
    _clean(done, status)


def test_an_index_lock_a_live_process_holds_is_never_removed(done: Repo, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The recovery of a land killed mid-update finds git's index.lock held by a live process (a git of the
    user's, say): it takes nothing from it, touches nothing, keeps the journal; once it ends, the next command
    undoes the update as usual."""
    old, status = done.sha("main"), done.git("status", "--porcelain", "--untracked-files=all")
    stalled = _land_killed_at(done, tmp_path, "ff", "--verify", VERIFY)
    _wait_for(lambda: not _alive(stalled), "the checkout's git ending with land (the leash)", limit=10)
    lock = done.root / ".git" / "index.lock"
    stray = done.git("status", "--porcelain", "--untracked-files=all")
    holder = subprocess.Popen([sys.executable, "-c", f"f = open({str(lock)!r}, 'a'); print(flush=True);"
                               " import time; time.sleep(600)"], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline()  # it holds the lock now
        code, _, err = done.cli(capsys, "review", "FEAT-001")
        assert "is held by a live process" in err and f"pid {holder.pid}" in err, err
        assert lock.exists() and (done.root / ".git" / "autobuild-land.json").exists()
        assert done.git("status", "--porcelain", "--untracked-files=all") == stray, "nothing touched"
    finally:
        holder.kill()
        holder.wait()
    code, _, err = done.cli(capsys, "review", "FEAT-001")
    assert code == 0 and "undid the half-done update" in err, err
    assert done.sha("main") == old
    _clean(done, status)


def test_the_users_hook_dies_with_a_killed_land(done: Repo, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The user's pre-commit hook, which `land` runs over the landed change, is leashed as the gate is: a kill -9
    of `land` while it runs takes it (and what it started) along; the next `land` lands."""
    old = done.sha("main")
    hook = done.root / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text('#!/bin/sh\n[ -n "$STALL_MARK" ] || exit 0\necho $$ > "$STALL_MARK"; exec sleep 600\n')
    hook.chmod(0o755)
    stalled = _land_killed_at(done, tmp_path, "hook", "--verify", VERIFY)
    _wait_for(lambda: not _alive(stalled), "the user's hook ending with land (the leash)", limit=10)
    assert done.sha("main") == old
    code, out, _ = done.cli(capsys, "land", "FEAT-001")
    assert code == 0 and "was interrupted" in out and "landed autobuild/FEAT-001 on main" in out, out
