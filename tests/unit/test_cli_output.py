"""The CLI's output stream: a reader that goes away early (`status | head`) ends the command quietly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import cli_env


def test_a_closed_pipe_ends_the_command_without_a_traceback(sample_repo: Path, tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line is written: every write gets EPIPE
    try:
        proc = subprocess.run([sys.executable, "-m", "orchestrator", "validate", "FEAT-001", "--repo",
                               str(sample_repo)], stdout=write_end, stderr=subprocess.PIPE, text=True,
                              env=cli_env(None, tmp_path), timeout=60, check=False)
    finally:
        os.close(write_end)
    assert proc.stderr == ""
    assert proc.returncode == 141
