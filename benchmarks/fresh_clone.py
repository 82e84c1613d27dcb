"""A newcomer's wait: a fresh clone in a temp folder, empty pip and npm caches, `make install` then `make test`, with
the network's share measured apart (the same packages downloaded alone into an empty folder) and the time to the
first test result; and the README's other command, `make demo`, from a clone of its own (its install, then its run).
`python -m benchmarks.fresh_clone` prints the lines `make bench` puts in docs/benchmarks.md."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_PROGRESS = re.compile(r"^[.FEsxX]+(\s+\[\s*\d+%\])?$")
"""A line of pytest's progress (not make's echo of `.venv/bin/python -m pytest …`, which starts with a dot)."""
_TIERS = {"make test": "not heavy and not workers", "make test-heavy": "heavy and not workers", "make test-workers":
          "workers"}


def _env(scratch: Path) -> dict[str, str]:
    """The machine's environment with empty caches of the run's own (nothing downloaded before is reused)."""
    return {**os.environ, "PIP_CACHE_DIR": str(scratch / "pip-cache"), "npm_config_cache": str(scratch / "npm-cache"),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def _timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    started = time.monotonic()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return time.monotonic() - started, done.stdout


def _make_test(clone: Path, env: dict[str, str]) -> dict[str, Any]:
    """`make test`, streamed: when pytest printed its first result, when it ended, and its last line."""
    started, first, last = time.monotonic(), None, ""
    with subprocess.Popen(["make", "test"], cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            if first is None and _PROGRESS.match(line):
                first = time.monotonic() - started
            last = line.strip() or last
    return {"exit": proc.returncode, "first_result_s": first, "total_s": time.monotonic() - started, "last": last}


def tier_counts(checkout: Path = ROOT) -> dict[str, int]:
    """How many tests each make target runs (collected, not run)."""
    counts = {}
    for target, marks in _TIERS.items():
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider",
                               "-m", marks], cwd=checkout, capture_output=True, text=True, check=False)
        found = re.search(r"(\d+)(?:/\d+)? tests? (?:collected|selected)", done.stdout)
        counts[target] = int(found.group(1)) if found else 0
    return counts


def _demo(scratch: Path) -> dict[str, float]:
    """`make demo` from a clone of its own with empty caches: `make install-demo`, then the run itself."""
    clone = scratch / "autobuild-demo"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    env = {**_env(scratch), "PIP_CACHE_DIR": str(scratch / "pip-cache-demo")}
    install, _ = _timed(["make", "install-demo"], clone, env)
    run, _ = _timed(["make", "demo"], clone, env)
    return {"install_s": install, "run_s": run}


def measure() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="autobuild-fresh-") as folder:
        scratch = Path(folder)
        demo = _demo(scratch)
        clone = scratch / "autobuild"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        env = _env(scratch)
        network, _ = _timed([sys.executable, "-m", "pip", "download", "-q", "-d", str(scratch / "wheels"),
                             f"{clone}[dev]"], clone, env)
        env["PIP_CACHE_DIR"] = str(scratch / "pip-cache-install")  # the install downloads again, from nothing
        install, _ = _timed(["make", "install"], clone, env)
        tests = _make_test(clone, env)
        counts = tier_counts(clone)
    return {"network_s": network, "install_s": install, "test": tests, "tiers": counts, "demo": demo}


def lines(found: dict[str, Any]) -> list[str]:
    test, demo = found["test"], found["demo"]
    first = found["install_s"] + (test["first_result_s"] or test["total_s"])
    return [
        "## A newcomer's wait: a fresh clone, empty caches, `make install` then `make test` (issue 39; goals: under"
        " 10 minutes in all, the first test result within 8)",
        "",
        f"- `make install`: {found['install_s']:.0f} s, of which the network about {found['network_s']:.0f} s (the"
        " same Python packages downloaded alone into an empty folder; the machine's Debian packages were already"
        " installed, and the real-history releases are `make install-bench`'s, not `make test`'s)",
        f"- `make test`: {test['total_s']:.0f} s (exit {test['exit']}; `{test['last']}`), its first result"
        f" {test['first_result_s'] or 0:.0f} s in",
        f"- in all: {found['install_s'] + test['total_s']:.0f} s; the first test result {first:.0f} s after the clone",
        "- tests per tier: " + ", ".join(f"{target} {count}" for target, count in found["tiers"].items()),
        f"- `make demo` from a clone of its own (the README says ~2 min): {demo['install_s'] + demo['run_s']:.0f} s,"
        f" of which `make install-demo` {demo['install_s']:.0f} s and the run {demo['run_s']:.0f} s",
        "",
    ]


if __name__ == "__main__":
    print("\n".join(lines(measure())))
