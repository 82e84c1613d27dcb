"""Workers on 127.0.0.1, started and stopped by the test: a throwaway Postgres, a Redis, and `autobuild serve`
processes (each its own process group, as a machine would be) with short leases."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agents.testing.scripted_model import ScriptedModel
from tests.conftest import cli_env
from tests.postgres import _free_port, postgres_server


@pytest.fixture
def database_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture
def redis_url() -> Iterator[str]:
    server = shutil.which("redis-server")
    if server is None:
        pytest.fail("redis-server is missing: run `make install` (it installs Debian's redis-server)")
    folder, port = Path(tempfile.mkdtemp(prefix="autobuild-redis-")), _free_port()
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class Worker:
    """One `autobuild serve` process group."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def kill(self) -> None:
        """kill -9 of the whole process group: the machine is gone."""
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


@pytest.fixture
def workers(tmp_path: Path, database_url: str, redis_url: str) -> Iterator[Callable[..., Worker]]:
    started: list[Worker] = []

    def start(model: ScriptedModel, **extra_env: str) -> Worker:
        port, n = _free_port(), len(started)
        env = cli_env(model, tmp_path) | {
            "DATABASE_URL": database_url, "REDIS_URL": redis_url, "PORT": str(port),
            "ORCHESTRATOR_LEASE_SECONDS": "6", "ORCHESTRATOR_WORKER_RUNS": "2",
            "ORCHESTRATOR_SERVE_DIR": str(tmp_path / f"serve-{n}"), "ORCHESTRATOR_WORKSPACE": str(tmp_path / "ws"),
            "LANGSMITH_TRACING": "false"} | extra_env
        log = tmp_path / f"worker-{n}.log"
        proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "serve"], cwd=tmp_path, env=env,
                                stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)
        worker = Worker(f"http://127.0.0.1:{port}", proc, log)
        started.append(worker)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{worker.url}/ok", timeout=1) as response:
                    if response.status == 200:
                        return worker
            except OSError:
                time.sleep(0.3)
            assert proc.poll() is None, log.read_text()
        raise AssertionError("the worker did not start: " + log.read_text())

    yield start
    for worker in started:
        if worker.proc.poll() is None:
            os.killpg(worker.proc.pid, signal.SIGTERM)
            try:
                worker.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                worker.kill()
