"""The one module that starts subprocesses (git, verify commands): own session, killpg on timeout/cancel."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from orchestrator import sandbox as sandboxing
from orchestrator.sandbox import Sandbox

_GRACE_S = 3.0

YIELDS_CPU: ContextVar[Callable[[], bool] | None] = ContextVar("autobuild_yields_cpu", default=None)
"""Asked as each command line (`run_shell`: a gate's, a setup's) starts in this context: True starts it at the
lowest CPU priority, as a sibling attempt's gate runs while another attempt's gate is ahead of it
(graph/attempt_gates.py). Never git's: a starved git command could hold a lock the leader waits for."""
_NICE = shutil.which("nice")


@contextlib.contextmanager
def full_priority() -> Iterator[None]:
    """The commands started inside run as any other, whatever `YIELDS_CPU` says: one whose result another run waits
    for (behind the gate cache's lock on a tree) must not be the one starved."""
    token = YIELDS_CPU.set(None)
    try:
        yield
    finally:
        YIELDS_CPU.reset(token)


_LOWERED = '{ echo 19 > /proc/self/autogroup; } 2>/dev/null; nice=$1; shift; exec "$nice" -n 19 "$@"'
"""The command's session (it leads one) at the lowest priority before the command starts, then the command itself:
set from outside, after the start, the command's first moments ran at the session's old priority."""


def _session_nice(pid: int, nice: int) -> None:
    """Where the kernel shares CPU time out by session (Linux's autogroup: every command here has a session of its
    own), a process's nice value weighs only inside its session: the session's own is set (blocking). Any value
    from 0 up may be set again, unlike a process's own."""
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/autogroup").write_text(str(nice))


@dataclass(frozen=True)
class Completed:
    """Outcome of a finished (or timed-out) command."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def tail(self, lines: int = 40) -> str:
        """The last lines of combined output, for reports and feedback."""
        text = (self.stdout + ("\n" + self.stderr if self.stderr.strip() else "")).strip()
        return "\n".join(text.splitlines()[-lines:])


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGTERM)


def _force_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def run(
    args: Sequence[str], cwd: Path, timeout: float = 120.0, env: Mapping[str, str] | None = None,
    stdin_text: str | None = None,
) -> Completed:
    """Run a command to completion (blocking); its whole process group dies on timeout. `stdin_text` is
    written to its stdin (else stdin is /dev/null)."""
    with subprocess.Popen(
        list(args),
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL if stdin_text is None else subprocess.PIPE,
        env=dict(env) if env is not None else None,
        text=True,
        errors="replace",
        start_new_session=True,
    ) as proc:
        try:
            out, err = proc.communicate(stdin_text, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            try:
                out, err = proc.communicate(timeout=_GRACE_S)
            except subprocess.TimeoutExpired:
                _force_group(proc.pid)
                out, err = proc.communicate()
            return Completed(tuple(args), proc.returncode or -1, out, err, timed_out=True)
        return Completed(tuple(args), proc.returncode, out, err)


Detached = subprocess.Popen[bytes]
"""A process `start_detached` started: poll it, read its pid."""


def start_detached(args: Sequence[str], cwd: Path, output: Path) -> Detached:
    """Start a command that outlives its starter (a run the page started: closing the page stops nothing): a
    session of its own, no stdin, stdout and stderr appended to `output`."""
    with output.open("ab") as sink:
        return subprocess.Popen(list(args), cwd=cwd, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink,
                                start_new_session=True)


async def run_async(
    args: Sequence[str], cwd: Path, timeout: float = 600.0, env: Mapping[str, str] | None = None, *,
    pass_fds: Sequence[int] = (), lowest_priority: bool = False,
) -> Completed:
    """Run a command without blocking the event loop; timeout or cancellation kills its process group.
    `pass_fds` are inherited by the command (the gate's channel); `lowest_priority` runs it last on the CPU."""
    lowered = ["sh", "-c", _LOWERED, "sh", _NICE] if _NICE and lowest_priority else []
    proc = await asyncio.create_subprocess_exec(
        *lowered, *args,
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
        env=dict(env) if env is not None else None,
        start_new_session=True,
        pass_fds=tuple(pass_fds),
    )
    reading = asyncio.ensure_future(proc.communicate())
    try:
        out, err = await asyncio.wait_for(asyncio.shield(reading), timeout=timeout)
    except TimeoutError:
        # What it printed before it was stopped is kept (which test hung, the results so far): the group gets
        # SIGTERM first, so a runner can write its report (the gate's pytest plugin turns it into an interrupt).
        await _terminate(proc)
        try:
            out, err = await asyncio.wait_for(reading, timeout=_GRACE_S)
        except TimeoutError:  # a process that left the group holds the pipes open
            out, err = b"", b""
        note = f"timed out after {timeout:.0f}s"
        return Completed(tuple(args), -1, out.decode(errors="replace"),
                         (err.decode(errors="replace") + "\n" + note).lstrip("\n"), timed_out=True)
    except asyncio.CancelledError:
        reading.cancel()
        if lowered:  # starved, even its end would wait: its priority back, and no report wanted from it
            await asyncio.shield(asyncio.to_thread(_session_nice, proc.pid, 0))
            _force_group(proc.pid)
        await asyncio.shield(_terminate(proc))
        raise
    return Completed(tuple(args), proc.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace"))


async def _terminate(proc: asyncio.subprocess.Process) -> None:
    _kill_group(proc.pid)
    try:
        await asyncio.wait_for(proc.wait(), timeout=_GRACE_S)
    except TimeoutError:
        _force_group(proc.pid)
        await proc.wait()


_SANDBOX_ATTEMPTS = 3
"""A sandbox whose set-up lost a race with a /tmp entry another process removed (the command never started) is
set up again, at most this many times in all: the entries of concurrent agent sessions come and go."""


async def run_shell(command: str, cwd: Path, timeout: float, env: Mapping[str, str] | None = None,
                    sandbox: Sandbox | None = None, *, pass_fds: Sequence[int] = ()) -> Completed:
    """A user-supplied command line (a plan's `verify`, a `setup`), run by bash; under `sandbox` (when bwrap
    runs here) it can only write there, and what the sandbox refused is named at the end of its output.
    `pass_fds` are inherited by the command (bwrap passes them on)."""
    yields = YIELDS_CPU.get()
    lowest = yields is not None and yields()
    if sandbox is None or not await asyncio.to_thread(sandboxing.available):  # probes bwrap once: off the loop
        return await run_async(["bash", "-c", command], cwd, timeout, env, pass_fds=pass_fds,
                               lowest_priority=lowest)
    base = dict(os.environ) if env is None else dict(env)
    full = base | dict(sandbox.env)
    if "GOMODCACHE" in sandbox.env:  # go's module cache is read-only by default: `clean` could not remove it
        full["GOFLAGS"] = f"{base.get('GOFLAGS', '')} -modcacherw".strip()
    if target := sandbox.env.get("PIP_TARGET"):  # what pip installed there is importable after the run's code
        full["PYTHONPATH"] = os.pathsep.join(filter(None, [full.get("PYTHONPATH", ""), target]))
    for _attempt in range(_SANDBOX_ATTEMPTS):
        wrapped = await asyncio.to_thread(sandboxing.wrap, ["bash", "-c", command], cwd, sandbox, full)  # mkdirs
        done = await run_async(wrapped, cwd, timeout, full, pass_fds=pass_fds, lowest_priority=lowest)
        if not await asyncio.to_thread(sandboxing.lost_tmp_entry, done.returncode, done.stdout, done.stderr):
            break
    refused = sandboxing.refusals(done.stdout + "\n" + done.stderr)
    if not refused:
        return done
    note = "\n" + sandboxing.NOTE + " | ".join(refused)
    return Completed(("bash", "-c", command), done.returncode, done.stdout, done.stderr + note, done.timed_out)
