"""A quota pause found on one machine holds on every machine sharing the workers' Postgres (issue 25 across
workers): two machines' pause records (each its own checkpoint folder) over one real Postgres."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.limits import Pause
from orchestrator.store import traces as trace
from orchestrator.store.pause import PauseRecords, pause_path, quota_path
from orchestrator.store.quota_store import StoreQuota
from tests.postgres import postgres_server

pytestmark = pytest.mark.workers

KEY = "0123456789abcdef0123456789abcdef"


@pytest.fixture(scope="module")
def database_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


def machine(tmp_path: Path, name: str, database_url: str) -> PauseRecords:
    """One machine's records of the test's credential (a key per test: the store is shared by the module)."""
    key = f"{KEY}-{tmp_path.name}"
    (tmp_path / name).mkdir(exist_ok=True)  # the machine's repository: its run's record is in its runs folder
    return PauseRecords(pause_path(tmp_path / name, "FEAT-001"), quota_path(key, tmp_path / name),
                        store=StoreQuota(database_url, key))


def quota(until: float) -> Pause:
    return Pause(until=until, reason="five_hour quota at 95%", since=time.time(), kind="quota")


def test_a_quota_pause_found_on_one_machine_holds_on_the_other_and_the_later_reset_wins(
        tmp_path: Path, database_url: str) -> None:
    a, b = machine(tmp_path, "a", database_url), machine(tmp_path, "b", database_url)
    assert b.read_shared() is None
    later = time.time() + 600
    a.write(quota(later))
    assert not b.shared.exists(), "machine b's own record never saw it"
    b.store.refresh()  # type: ignore[union-attr]
    found = b.read_shared()
    assert found is not None and found.until == pytest.approx(later) and found.kind == "quota"
    b.write(quota(time.time() + 60))  # an earlier reset found later elsewhere does not shorten the pause
    a.store.refresh()  # type: ignore[union-attr]
    assert a.read_shared().until == pytest.approx(later)  # type: ignore[union-attr]


def test_a_pause_whose_window_is_over_is_removed_and_one_still_running_is_kept(tmp_path: Path,
                                                                              database_url: str) -> None:
    a = machine(tmp_path, "a", database_url)
    a.write(quota(time.time() + 0.5))
    time.sleep(0.6)
    a.write(None)
    a.store.refresh()  # type: ignore[union-attr]
    assert a.read_shared() is None
    a.write(quota(time.time() + 600))
    a.write(None)  # this run's limit is over, but the credential's window is not: the record stays
    a.store.refresh()  # type: ignore[union-attr]
    assert a.read_shared() is not None


async def test_inside_the_event_loop_a_read_answers_from_its_cache_and_refreshes_on_the_writer_thread(
        tmp_path: Path, database_url: str) -> None:
    other = StoreQuota(database_url, KEY + "-loop")
    reader = PauseRecords(pause_path(tmp_path / "r", "FEAT-001"), quota_path(KEY + "-loop", tmp_path / "r"),
                          store=other)
    assert reader.read_shared() is None  # the first read queues a refresh and answers at once
    await trace.flushed()
    StoreQuota(database_url, KEY + "-loop").write(quota(time.time() + 600))
    other._read_at = float("-inf")  # the cache has aged past REFRESH_S
    assert reader.read_shared() is None, "answered from the cache, not by waiting on Postgres"
    await trace.flushed()
    await asyncio.sleep(0)
    assert reader.read_shared() is not None
