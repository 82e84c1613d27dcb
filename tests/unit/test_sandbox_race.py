"""A gate's sandbox that loses a race with a /tmp entry another process removes is set up again.

The sandbox binds every top-level /tmp entry read-only; bwrap checks each source, then mounts it, and an entry
removed in between (a concurrent agent session's `srt-mux-*.sock`, another test's folder) failed the gate before
its command ran (seen on CI: "can't run on the base"). The fake bwrap below fails the way the real one did, with
its message as captured, then hands over to the real bwrap."""

from __future__ import annotations

import asyncio
import shutil
import uuid
from pathlib import Path

import pytest

from orchestrator import sandbox
from orchestrator.processes import run_shell

pytestmark = pytest.mark.skipif(not sandbox.available(), reason="bwrap can't start a sandbox here")

CAPTURED = ("bwrap: Can't bind mount /oldroot/tmp/{name} on /newroot/tmp/{name}: Unable to mount source on"
            " destination: No such file or directory")


def _fake_bwrap(tmp_path: Path, failures: int, name: str) -> Path:
    """A bwrap that fails its first `failures` sandboxes (not the availability probe, which binds no /tmp entry)
    with the captured message about `name`, then runs the real one."""
    real = shutil.which("bwrap")
    assert real is not None
    folder = tmp_path / "bin"
    folder.mkdir()
    count = tmp_path / "count"
    count.write_text("")
    (folder / "bwrap").write_text(
        "#!/bin/sh\n"
        'case " $* " in *" --ro-bind-try "*)\n'
        f'  if [ "$(wc -c < {count})" -lt {failures} ]; then\n'
        f"    printf x >> {count}\n"
        f"    echo \"{CAPTURED.format(name=name)}\" >&2\n"
        "    exit 1\n"
        "  fi;;\n"
        "esac\n"
        f'exec {real} "$@"\n')
    (folder / "bwrap").chmod(0o755)
    return folder


def _sandbox(tmp_path: Path) -> sandbox.Sandbox:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return sandbox.Sandbox(writable=(work,), tmp=tmp_path / "private-tmp")


def test_a_tmp_entry_removed_during_set_up_is_set_up_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gone = f"srt-mux-{uuid.uuid4().hex[:8]}.sock"  # listed by the sandbox, removed before bwrap mounted it
    # One lost race, then the real bwrap: it has two tries left, should an entry of a concurrent test vanish too.
    monkeypatch.setenv("PATH", f"{_fake_bwrap(tmp_path, 1, gone)}:/usr/bin:/bin")
    done = asyncio.run(run_shell("echo ran", tmp_path, 60, None, _sandbox(tmp_path)))
    assert (done.returncode, done.stdout.strip()) == (0, "ran")
    assert (tmp_path / "count").read_text() == "x"


def test_it_is_set_up_at_most_three_times(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gone = f"srt-mux-{uuid.uuid4().hex[:8]}.sock"
    monkeypatch.setenv("PATH", f"{_fake_bwrap(tmp_path, 10, gone)}:/usr/bin:/bin")
    done = asyncio.run(run_shell("echo ran", tmp_path, 60, None, _sandbox(tmp_path)))
    assert done.returncode == 1 and "Can't bind mount" in done.stderr
    assert (tmp_path / "count").read_text() == "xxx"


def test_a_set_up_failure_on_an_entry_still_there_is_not_retried(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    here = Path("/tmp") / f"autobuild-test-{uuid.uuid4().hex[:8]}"
    here.mkdir()
    try:
        monkeypatch.setenv("PATH", f"{_fake_bwrap(tmp_path, 10, here.name)}:/usr/bin:/bin")
        done = asyncio.run(run_shell("echo ran", tmp_path, 60, None, _sandbox(tmp_path)))
    finally:
        here.rmdir()
    assert done.returncode == 1
    assert (tmp_path / "count").read_text() == "x"
