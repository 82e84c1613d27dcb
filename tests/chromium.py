"""Headless Chromium (Debian's `chromium`, installed by `make install`) as a test oracle: load a file as a person's
browser would and read back the DOM after its scripts ran. A fresh profile per call, network features off."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync")


def binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def dump_dom(page: Path) -> str:
    """The DOM of `page` once its scripts are done (virtual time: Chromium waits for the page's own work, not a
    clock), serialized as HTML."""
    found = binary()
    assert found, "Chromium is missing: `make install` installs Debian's chromium"
    with tempfile.TemporaryDirectory(prefix="chromium-test-") as profile:
        done = subprocess.run([found, *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=30000",
                               "--dump-dom", page.resolve().as_uri()], capture_output=True, text=True, timeout=120,
                              check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
