"""A resumed run keeps the flags its `run` was given, unless told otherwise (DESIGN: `resume FEAT-001` with run's
options): `--parallel 3` is not forgotten after a Ctrl+C."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.cli.main import _settings
from orchestrator.cli.parser import build_parser
from orchestrator.errors import InputError
from orchestrator.store import run_options
from tests.conftest import git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    return tmp_path


def _resumed(repo: Path, *flags: str) -> object:
    return _settings(build_parser().parse_args(["resume", "FEAT-001", "--repo", str(repo), *flags]))


def test_resume_keeps_the_runs_flags_and_its_own_flags_win(repo: Path) -> None:
    run_options.record(repo, "FEAT-001", {"parallel": 3, "model": "opus", "max_turns": None, "fresh": True})
    kept = json.loads((repo / ".autobuild/runs/FEAT-001/options.json").read_text())
    assert kept == {"model": "opus", "parallel": 3}  # given flags only, and only the options a run keeps
    settings = _resumed(repo)
    assert (settings.parallel, settings.model, settings.max_turns) == (3, "opus", 10)  # type: ignore[attr-defined]
    told = _resumed(repo, "--parallel", "2")
    assert (told.parallel, told.model) == (2, "opus")  # type: ignore[attr-defined]


def test_a_run_without_a_record_resumes_as_before(repo: Path) -> None:
    assert _resumed(repo).parallel == 1  # type: ignore[attr-defined]


def test_the_record_cannot_smuggle_what_the_repos_files_may_not_set(repo: Path) -> None:
    folder = repo / ".autobuild/runs/FEAT-001"
    folder.mkdir(parents=True)
    (folder / "options.json").write_text(json.dumps({"repo_hooks": True, "cli_path": "/tmp/evil", "on_event": "x",
                                                     "parallel": 2}))
    settings = _resumed(repo)
    assert (settings.parallel, settings.repo_hooks, settings.cli_path) == (2, False, None)  # type: ignore[attr-defined]
    (folder / "options.json").write_text("{not json")
    assert _resumed(repo).parallel == 1  # type: ignore[attr-defined]


def test_a_bad_kept_value_is_one_line_naming_it(repo: Path) -> None:
    folder = repo / ".autobuild/runs/FEAT-001"
    folder.mkdir(parents=True)
    (folder / "options.json").write_text(json.dumps({"parallel": 0}))
    with pytest.raises(InputError, match=r"--parallel must be between 1.*kept --parallel from .*options.json"):
        _resumed(repo)
