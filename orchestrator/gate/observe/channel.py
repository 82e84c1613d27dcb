"""The gate's own channel out of a run: an inherited pipe whose write end the runners' reporters take (its number
is in AUTOBUILD_GATE_CHANNEL, which each reporter removes from its environment and whose descriptor it keeps from
its children before project code loads), read by the gate while the command runs. Each line is one JSON record
of a session (one runner process): `open` when the reporter took the channel, `test` per outcome as it happens,
`end` when the runner finished (its own exit status). What arrived is never rewritten: a report file the run can
write or delete is no longer what the gate reads."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from dataclasses import dataclass, field
from typing import Any

CHANNEL = "AUTOBUILD_GATE_CHANNEL"
"""The write end's descriptor number, for the runners' reporters (shim/) to take and remove."""
_MAX_BYTES = 20_000_000
"""What the gate keeps of one run's channel (a run that floods it is cut there, and says so by its records)."""


@dataclass
class Session:
    """One runner process's account on the channel, in the order it arrived."""

    key: str
    runner: str
    tests: list[dict[str, Any]] = field(default_factory=list)
    ended: bool = False
    status: int | None = None
    """The runner's own exit status as it reported it at its end (None: it did not say)."""
    altered: list[tuple[str, str]] = field(default_factory=list)
    """The runner's own functions its process found replaced by code outside the runner, at its end: (`module.name`,
    where the replacement's code is)."""


@dataclass
class Received:
    """Everything one run sent on the channel: its sessions in the order they opened."""

    sessions: list[Session] = field(default_factory=list)
    malformed: int = 0
    """Lines that were not a record of ours (a process that wrote garbage into the channel)."""

    def of(self, runner: str) -> list[Session]:
        return [session for session in self.sessions if session.runner == runner]

    @property
    def runners(self) -> list[str]:
        return list(dict.fromkeys(session.runner for session in self.sessions))


def parse(data: bytes) -> Received:
    """The records of one run, grouped by session (a record of no open session opens one: it is still heard)."""
    received = Received()
    by_key: dict[str, Session] = {}
    for line in data.decode("utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            received.malformed += 1
            continue
        if not isinstance(record, dict) or not isinstance(record.get("s"), str):
            received.malformed += 1
            continue
        key = record["s"]
        if key not in by_key:
            by_key[key] = Session(key, str(record.get("runner") or "?"))
            received.sessions.append(by_key[key])
        session = by_key[key]
        event = record.get("event")
        if event == "test":
            session.tests.append(record)
        elif event == "altered" and isinstance(record.get("names"), list):
            session.altered += [(str(pair[0]), str(pair[1])) for pair in record["names"]
                                if isinstance(pair, list) and len(pair) == 2]
        elif event == "end":
            session.ended = True
            session.status = record["status"] if isinstance(record.get("status"), int) else None
    return received


class Channel:
    """One run's pipe: `env` names the write end for the command (pass `fds` to the process), `listen()` reads
    it on the event loop as records arrive, until `close()` after the command finished; `close` returns what
    arrived by then (what is still in the pipe is read; nothing written later counts)."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        self._data = bytearray()
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def fds(self) -> tuple[int, ...]:
        return (self._write,)

    @property
    def env(self) -> dict[str, str]:
        return {CHANNEL: str(self._write)}

    def listen(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self._read, self._drain)

    async def close(self) -> Received:
        with contextlib.suppress(OSError):
            os.close(self._write)
        if self._loop is not None:
            self._loop.remove_reader(self._read)
        self._drain(chunks=_MAX_BYTES // 65536)
        with contextlib.suppress(OSError):
            os.close(self._read)
        return await asyncio.to_thread(parse, bytes(self._data))

    def _drain(self, chunks: int = 16) -> None:
        """What the pipe holds now, at most `chunks` reads (a callback of the loop: never blocks, and a process
        that floods the channel can't hold the loop)."""
        for _ in range(chunks):
            try:
                chunk = os.read(self._read, 65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self._stop_reading()
                return
            if not chunk:  # every write end closed
                self._stop_reading()
                return
            if len(self._data) < _MAX_BYTES:
                self._data += chunk

    def _stop_reading(self) -> None:
        if self._loop is not None:
            self._loop.remove_reader(self._read)
