"""The CPU a run's start-up spends importing, less sensitive to load than its wall time: the modules `autobuild run`
imports before its first step and those its first session adds (the Agent SDK, loaded on a thread meanwhile), each
timed in a fresh process with the collector off as the process entry keeps it, best of a few. The start-up is
CPU-bound (benchmarks/where_the_time_goes.md), so these seconds are most of it on a quiet machine.

`python -m benchmarks.startup_cpu` prints them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

STAGES = {
    "run": ("orchestrator.cli.main", "orchestrator.settings", "orchestrator.cli.run", "orchestrator.graph.feature_run"),
    "sdk": ("agents.session",),
}
"""What the main thread imports before the run's first step, and what the load-ahead thread adds."""

_TIMED = """
import gc, importlib, json, sys, time
gc.disable()
found = {}
for stage, names in json.loads(sys.argv[1]).items():
    before, count = time.process_time(), len(sys.modules)
    for name in names:
        importlib.import_module(name)
    found[stage] = [time.process_time() - before, len(sys.modules) - count]
print(json.dumps(found))
"""


def measure(repeats: int = 5) -> dict[str, Any]:
    """Per stage, its best CPU-s over `repeats` fresh processes and the modules it loads."""
    root = Path(__file__).resolve().parent.parent
    runs = [json.loads(subprocess.run([sys.executable, "-c", _TIMED, json.dumps(STAGES)], capture_output=True,
                                      text=True, check=True, cwd=root, timeout=300).stdout) for _ in range(repeats)]
    return {stage: {"cpu": min(run[stage][0] for run in runs), "modules": runs[0][stage][1]} for stage in STAGES}


def report_line(found: dict[str, Any]) -> str:
    run, sdk = found["run"], found["sdk"]
    return (f"- The start-up's imports (best of a few fresh processes, collector off): {run['cpu']:.2f} CPU-s for the"
            f" {run['modules']} modules before the run's first step, {sdk['cpu']:.2f} CPU-s for the Agent SDK's"
            f" {sdk['modules']} (on a thread beside them); {run['cpu'] + sdk['cpu']:.2f} CPU-s in all before the first"
            " session")


if __name__ == "__main__":
    print(report_line(measure()))
