"""The per-feature advisory lock on a real Postgres: one holder; the refused run names it; it goes with the holder's
connection."""

from __future__ import annotations

import pytest

from orchestrator.errors import RunLockedError
from orchestrator.store.feature_lock import feature_lock

pytestmark = pytest.mark.workers


async def test_one_run_per_feature_the_second_names_the_holder(database_url: str) -> None:
    async with feature_lock("/repo", "FEAT-001", "thread-one", database_url):
        with pytest.raises(RunLockedError, match=r"FEAT-001 of /repo is already running: worker host=\S+ pid=\d+"
                                                 r" thread=thread-one"):
            async with feature_lock("/repo", "FEAT-001", "thread-two", database_url):
                pass
        async with feature_lock("/repo", "FEAT-002", "thread-three", database_url):  # another feature: free
            pass
    async with feature_lock("/repo", "FEAT-001", "thread-two", database_url):  # released with its connection
        pass


async def test_without_a_shared_store_there_is_no_lock() -> None:
    async with feature_lock("/repo", "FEAT-001", "a", ""), feature_lock("/repo", "FEAT-001", "b", ""):
        pass
