"""A passing gate command for the benches that reports each of its runs (start and end, epoch seconds) as a UDP
datagram to 127.0.0.1: the gate runs sandboxed (nothing outside its worktree is writable, so a log file beside the
repo would fail the gate), but it shares the network."""

from __future__ import annotations

import socket
import sys
from pathlib import Path


class GateLog:
    """The gate's command (`command`) and the runs it reported so far (`runs()`)."""

    def __init__(self, workdir: Path) -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.socket.bind(("127.0.0.1", 0))
        self.socket.setblocking(False)
        port = self.socket.getsockname()[1]
        workdir.mkdir(parents=True, exist_ok=True)
        script = workdir / "gate.py"
        script.write_text("import socket, time\nstart = time.time()\nprint('1 passed')\n"
                          "socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto("
                          f"f'{{start}} {{time.time()}}'.encode(), ('127.0.0.1', {port}))\n")
        self.command = f"{sys.executable} {script}"
        self._seen: list[tuple[float, float]] = []

    def runs(self) -> list[tuple[float, float]]:
        """Every run reported so far, in arrival order."""
        while True:
            try:
                start, end = self.socket.recv(200).decode().split()
            except BlockingIOError:
                return list(self._seen)
            self._seen.append((float(start), float(end)))
