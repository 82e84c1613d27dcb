"""A task's attempts set up once (issue 40): the first attempt to start from a commit runs the worktree setup; its
siblings starting from the same commit wait for it and take its products (gate's `share_setup`), or set up on
their own when they can't be shared (tied to its path, changed since, its setup failed or was cancelled)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class SetupOnce:
    """Per run: by (task, commit), the first attempt's worktree once setup made it ready (None: it did not)."""

    first: dict[tuple[str, str], asyncio.Future[Path | None]] = field(default_factory=dict)

    async def set_up(self, key: tuple[str, str], worktree: Path, set_up: Callable[[], Awaitable[None]],
                     share: Callable[[Path], Awaitable[bool]]) -> Path | None:
        """`worktree` made ready: by `set_up` for the first of `key`, else by `share` from the first's worktree when
        it can (else `set_up`). The sibling whose setup was shared, or None."""
        ready = self.first.get(key)
        if ready is None:
            self.first[key] = ready = asyncio.get_running_loop().create_future()
            try:
                await set_up()
            except BaseException:
                ready.set_result(None)  # its siblings set up on their own
                raise
            ready.set_result(worktree)
            return None
        sibling = await asyncio.shield(ready)
        if sibling is not None and sibling != worktree and await share(sibling):
            return sibling
        await set_up()
        return None
