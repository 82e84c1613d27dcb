"""The CLI's parent-death wrapper: one file per CLI path, shared by every process; safe to write from threads."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agents import session

pytestmark = pytest.mark.skipif(shutil.which("setpriv") is None, reason="the wrapper needs setpriv")


def test_sessions_starting_together_on_threads_all_get_the_wrapper(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    for attempt in range(20):  # the race needs no wrapper yet: start each round from none
        for old in tmp_path.glob("autobuild-*/*"):
            old.unlink()
        with ThreadPoolExecutor(8) as pool:
            wrappers = set(pool.map(session._cli_wrapper, [f"/opt/claude-{attempt}"] * 8))
        assert len(wrappers) == 1
        assert Path(wrappers.pop()).read_text().endswith(f'"/opt/claude-{attempt}" "$@"\n')
    assert not list(tmp_path.glob("autobuild-*/*.tmp"))


def test_every_process_uses_the_same_wrapper(tmp_path: Path) -> None:
    probe = "import sys; from agents import session; print(session._cli_wrapper('/opt/claude'))"
    env = {"TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    paths = {subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True,
                            timeout=60).stdout.strip() for _ in range(3)}
    assert len(paths) == 1
    assert len(list(tmp_path.glob("autobuild-*/claude-*.sh"))) == 1
