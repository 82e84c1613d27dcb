"""A disk that fills up mid-run, on a real full filesystem (a small tmpfs holding the repository): the run ends in
one line (what filled, where, what to do, `resume` named), exit 1; the feature report is whole or absent, and no
temporary file is left behind. Skipped where this process may not mount a tmpfs (not root, no mount namespace)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agents.testing.repos import make_sample_repo
from agents.testing.scripted_model import ScriptedModel
from orchestrator.cli.disk_full import full_disk, full_disk_line
from orchestrator.errors import GitError
from tests.conftest import CliRun, coach_from_pytest, one_task_plan

_FILL = "dd if=/dev/zero of=filler bs=64k count=100000 2>/dev/null; echo filled"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "small"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(mount)], capture_output=True,
                          text=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"can't mount a small tmpfs here ({made.stderr.strip() or made.returncode}): needs root")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.cli
@pytest.mark.heavy
def test_a_disk_filled_mid_run_ends_the_run_in_one_line(small_disk: Path, tmp_path: Path,
                                                        model_factory: Callable[..., ScriptedModel],
                                                        run_cli: Callable[..., CliRun]) -> None:
    repo = make_sample_repo(small_disk / "repo", plan=one_task_plan())
    player = {"role": "player", "task": "TASK-001", "steps": [{"bash": _FILL}, {"text": "done"}]}
    model = model_factory({"sessions": [player, coach_from_pytest()]})
    done = run_cli("run", "FEAT-001", "--repo", str(repo), "--autonomous", "--db", str(tmp_path / "db.sqlite"),
                   model=model)
    assert (done.returncode, done.stderr.count("\n")) == (1, 1), done.stderr
    assert done.stderr.startswith("error: the disk is full") and "Traceback" not in done.stderr
    assert str(small_disk) in done.stderr and f"autobuild resume FEAT-001 --repo {repo}" in done.stderr
    runs = repo / ".autobuild" / "runs" / "FEAT-001"
    for report in (runs / "AUTO-RUN.md", runs / "TASK-001" / "AUTO-RUN.md"):
        assert not report.exists() or report.read_text().startswith("# "), report
    assert not list(runs.rglob("*.tmp")), "a temporary file was left behind"


def test_a_full_disk_is_found_however_it_was_said(tmp_path: Path) -> None:
    """The run meets it as an OSError, or as git's or SQLite's words inside one of our errors, or in a group."""
    said_by_git = GitError("git commit failed: fatal: unable to write new index file: No space left on device")
    grouped = BaseExceptionGroup("tasks", [ValueError("other"), OSError(28, "No space left on device", "x.md")])
    assert full_disk(said_by_git) is said_by_git and isinstance(full_disk(grouped), OSError)
    assert full_disk(GitError("fatal: not a git repository")) is None
    line = full_disk_line(OSError(28, "No space left on device", str(tmp_path / "a" / "AUTO-RUN.md")), tmp_path,
                          "autobuild resume FEAT-001")
    assert "\n" not in line and "AUTO-RUN.md" in line and "`autobuild resume FEAT-001`" in line
