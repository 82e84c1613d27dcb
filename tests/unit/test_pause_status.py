"""What `status` says of a run's usage-limit pause (store/pause.py `of_run`): the pause in force, the run probing
once its time is past (the record stays until a probe gets through), and nothing once the run's process is gone."""

from __future__ import annotations

import time
from pathlib import Path

from agents.limits import Pause
from orchestrator.store.checkpoints import CheckpointStore
from orchestrator.store.pause import of_run, pause_path, write_pause

THREAD = "FEAT-001"


def recorded(repo: Path, until_in_s: float, kind: str = "limit") -> None:
    now = time.time()
    (repo / ".autobuild/runs/FEAT-001").mkdir(parents=True, exist_ok=True)
    write_pause(pause_path(repo, "FEAT-001"), Pause(until=now + until_in_s, reason="rate limited (429)",
                                                    since=now - 30, kind=kind), in_run=True)


def test_a_pause_in_force_says_until_when_and_one_past_its_time_says_the_run_probes(tmp_path: Path) -> None:
    store = CheckpointStore(str(tmp_path / "db.sqlite"))
    with store.lock(THREAD):
        assert of_run(tmp_path, "FEAT-001", store, THREAD) is None, "no record: not paused"
        recorded(tmp_path, 60)
        said = of_run(tmp_path, "FEAT-001", store, THREAD)
        assert said is not None and said.startswith("paused until ") and "usage limit (rate limited (429))" in said
        recorded(tmp_path, -2)  # the time is past, a probe session is asking: the other sessions still wait
        said = of_run(tmp_path, "FEAT-001", store, THREAD)
        assert said is not None and said.startswith("paused since ") and said.endswith("probing whether it is over")
        recorded(tmp_path, -2, kind="quota")  # a quota past its reset: the session that read it runs on, no probe
        assert of_run(tmp_path, "FEAT-001", store, THREAD) is None


def test_a_pause_of_a_run_whose_process_is_gone_is_not_shown_as_going_on(tmp_path: Path) -> None:
    store = CheckpointStore(str(tmp_path / "db.sqlite"))
    with store.lock(THREAD):
        pass  # the run took its lock, then its process ended (a kill -9 during the pause)
    for until_in_s in (60, -2):
        recorded(tmp_path, until_in_s)
        assert of_run(tmp_path, "FEAT-001", store, THREAD) is None
