"""Which steering queue and task-control records a command or a running graph uses: those beside the feature's
checkpoints as `status` finds them (the SQLite file's, or the Postgres store's rows of this repository); a running
graph names the store it runs on (graph/context.py: its run's, or the workers' shared store when served)."""

from __future__ import annotations

from pathlib import Path

from orchestrator.store.locations import POSTGRES_SCHEMES, choose_db
from orchestrator.store.steering import SteeringQueue, repo_identity
from orchestrator.store.steering_pg import PostgresControls, PostgresNotes
from orchestrator.store.task_control import TaskControls


def notes_for(repo: Path, feature: str, chosen: str | None = None) -> SteeringQueue:
    """The notes beside the feature's checkpoints (`chosen`: the `--db` setting)."""
    location = choose_db(repo, chosen, feature)
    if location.startswith(POSTGRES_SCHEMES):
        return PostgresNotes(location, repo_identity(repo))
    return SteeringQueue(Path(location))


def controls_for(repo: Path, feature: str, chosen: str | None = None) -> TaskControls:
    """The pause, unpause and cancel records beside the feature's checkpoints."""
    location = choose_db(repo, chosen, feature)
    if location.startswith(POSTGRES_SCHEMES):
        return PostgresControls(location, repo_identity(repo))
    return TaskControls(Path(location))

