"""The CLI's parent-death wrapper: one file per CLI path, shared by every process; safe to write from threads."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agents import cli_binary
from agents.errors import AgentSetupError

CHECKOUT = Path(__file__).resolve().parents[2]
"""The child processes import `agents` from this checkout (their cwd), not from wherever the venv points."""

pytestmark = pytest.mark.skipif(shutil.which("setpriv") is None, reason="the wrapper needs setpriv")


def test_sessions_starting_together_on_threads_all_get_the_wrapper(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    for attempt in range(20):  # the race needs no wrapper yet: start each round from none
        for old in tmp_path.glob("autobuild-*/*"):
            old.unlink()
        with ThreadPoolExecutor(8) as pool:
            wrappers = set(pool.map(cli_binary.cli_wrapper, [f"/opt/claude-{attempt}"] * 8))
        assert len(wrappers) == 1
        assert Path(wrappers.pop()).read_text().endswith(f' /opt/claude-{attempt} "$@"\n')
    assert not list(tmp_path.glob("autobuild-*/*.tmp"))


def test_every_process_uses_the_same_wrapper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process and another one (each with its own hash salt: hash() named a wrapper per process)."""
    probe = "import sys; from agents import cli_binary; print(cli_binary.cli_wrapper('/opt/claude'))"
    env = {"TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    other = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True,
                           timeout=60, cwd=CHECKOUT).stdout.strip()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("PATH", env["PATH"])
    paths = {other, cli_binary.cli_wrapper("/opt/claude")}
    assert len(paths) == 1
    assert len(list(tmp_path.glob("autobuild-*/claude-*.sh"))) == 1


@pytest.mark.parametrize("made_by_someone_else", ["open to others", "a link"])
def test_a_wrapper_folder_that_is_not_ours_alone_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            made_by_someone_else: str) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    folder = tmp_path / f"autobuild-{os.getuid()}"
    if made_by_someone_else == "a link":
        elsewhere = tmp_path / "theirs"
        elsewhere.mkdir(mode=0o700)
        folder.symlink_to(elsewhere)
    else:
        folder.mkdir()
        folder.chmod(0o777)
    with pytest.raises(AgentSetupError, match="not a private folder of yours"):
        cli_binary.cli_wrapper("/opt/claude")
    assert not list(folder.glob("claude-*"))
