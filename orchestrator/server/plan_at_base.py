"""The plan a `file://` repository holds on its base branch, validated as `run` validates it, before `submit` queues
anything: a YAML bomb, a `file_path` that leads out of the repository, a task that depends on itself."""

from __future__ import annotations

import tempfile
from pathlib import Path

from orchestrator.plan.model import load_target
from orchestrator.repo.commands import git_sync


def check_plan_at_base(repository: Path, feature: str, base: str) -> None:
    """Load `feature` (a feature, or a task of one) from a shared clone of `base` in a scratch folder, as a worker
    loads it from its own clone: the same checks, the same one-line refusal (PlanError / InputError). A clone that
    fails here is left to the workers to report (they may see what this machine doesn't)."""
    with tempfile.TemporaryDirectory(prefix="autobuild-submit-") as scratch:
        clone = Path(scratch) / "repo"
        made = git_sync(Path(scratch), "clone", "--quiet", "--shared", "--no-tags", "--single-branch", "--branch",
                        base, "--", str(repository), str(clone))
        if made.ok:
            load_target(clone, feature)
