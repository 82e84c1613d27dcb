"""A sample repo whose gate already ran on its base, built once per module and copied for each test to one place.

Tests that share a base tree and gate command would each run the command twice on that base (the base check's
second run finds unstable tests) before judging anything. Here the base check runs once, in the place every copy
lands in (the gate cache's key of a run holds the repository's path, through the venv on PATH), and every copy
carries the repository's gate cache: the workflow's base check finds the run there and reuses it, as a second
feature on the same base does. What the tests judge, the tasks' runs, still runs in every test."""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from agents.testing.repos import make_sample_repo
from orchestrator.gate import GateRequest, Gates
from orchestrator.repo.git import GitRepo


@dataclass(frozen=True)
class GatedBase:
    """The built repo (`template`) and the one place its copies are judged in."""

    template: Path
    place: Path

    def fresh(self, plan: dict[str, Any]) -> Path:
        """A copy of the repo in the place (the previous test's copy removed), with `plan` as its feature plan."""
        shutil.rmtree(self.place, ignore_errors=True)
        shutil.copytree(self.template, self.place, symlinks=True)
        features = self.place / ".autobuild" / "features"
        features.mkdir(parents=True, exist_ok=True)
        (features / f"{plan['id']}.yaml").write_text(yaml.safe_dump(plan, sort_keys=False))
        return self.place


def gated_base(folder: Path, files: dict[str, str], verify: str | None, *, venv: bool = True) -> GatedBase:
    """A sample repo of `files` in `folder` (`venv`: make_sample_repo's), its base checked with `verify` (None:
    the command the repo's layout gives) as FEAT-001's workflow checks it."""
    place = folder / "repo"
    make_sample_repo(place, files=files, venv=venv)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # as tests/conftest.py sets it for every test: the
        git = GitRepo(place)  # environment is part of the run's key
        asyncio.run(Gates(git, GateRequest(plan_verify=verify)).check_base("FEAT-001", git.rev("HEAD")))
    template = folder / "template"
    place.rename(template)
    return GatedBase(template, place)
