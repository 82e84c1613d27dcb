"""Policy `first` (issue 40): a sibling attempt whose gate started while another attempt's gate runs starts its
commands at the lowest CPU priority (its session's too, where Linux shares CPU out by session); the first in, a
command behind the gate cache's lock, and one started after the siblings ahead left run as any other. Real
processes: each command reports its own niceness and its session's."""

from __future__ import annotations

import asyncio
from pathlib import Path

from orchestrator.graph.attempt_gates import LINE, GateLine, in_line
from orchestrator.processes import full_priority, run_shell

SAYS = ("echo nice $(nice) session $(if [ -e /proc/self/autogroup ]; then awk '{print $NF}' /proc/self/autogroup;"
        " else echo none; fi)")


async def _priority(cwd: Path) -> tuple[str, str]:
    words = (await run_shell(SAYS, cwd, 30)).stdout.split()
    return words[1], words[3]


async def test_a_gate_behind_a_siblings_yields_the_cpu_until_the_sibling_left(tmp_path: Path) -> None:
    line = GateLine()
    first_in, second_ran, first_out = asyncio.Event(), asyncio.Event(), asyncio.Event()
    seen: dict[str, tuple[str, str]] = {}

    async def attempt(number: int) -> None:
        LINE.set((line, number))
        if number == 2:
            await first_in.wait()
        with in_line():
            if number == 1:
                first_in.set()
                await second_ran.wait()
                seen["first"] = await _priority(tmp_path)
                return
            seen["behind"] = await _priority(tmp_path)
            with full_priority():
                seen["behind, a cached tree's run"] = await _priority(tmp_path)
            second_ran.set()
            await first_out.wait()
            seen["after the first left"] = await _priority(tmp_path)

    async def first() -> None:
        await attempt(1)
        first_out.set()

    await asyncio.gather(first(), attempt(2))
    assert seen["behind"] in (("19", "19"), ("19", "none")), seen
    assert "19" not in seen["first"] and "19" not in seen["after the first left"], seen
    assert "19" not in seen["behind, a cached tree's run"], seen
    assert line.entered == []


async def test_outside_attempts_nothing_yields(tmp_path: Path) -> None:
    with in_line():
        assert "19" not in await _priority(tmp_path)
