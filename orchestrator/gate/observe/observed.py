"""What one run of the gate shows on its own, before any verdict: how it can be judged (by test ids, by counts,
by exit status), whether it ran a test at all, whether its command could run, and its last lines of output."""

from __future__ import annotations

import re

from orchestrator.facts import Observation

BY_IDS, BY_COUNTS, BY_EXIT = "test ids", "counts", "exit status"
TAIL_MARK = "… (the end of the output:)"
"""In a gate run's `output`, between the failing tests' own lines and the run's last lines."""

_PYTEST_UNUSABLE = {3: "pytest hit an internal error", 4: "pytest usage error"}
_USAGE = re.compile(r"^(?:usage: |error: unrecognized arguments|error: unexpected argument|.*: bad option: |"
                    r"flag provided but not defined)", re.IGNORECASE | re.MULTILINE)


def last_lines(run: Observation) -> str:
    """The run's last lines of output, without the failing tests' lines that lead it."""
    return run["output"].rsplit(TAIL_MARK, 1)[-1]


def ran_none(run: Observation) -> bool:
    """A recognised runner ran no test at all."""
    return run.get("runner") is not None and not run["tests_passed"] and not run["tests_failed"]


def green(run: Observation) -> bool:
    """The run is green on its own: exit 0, no failing test named, and, for a recognised runner, a test run."""
    return run["exit_code"] == 0 and not ran_none(run) and not run["failing"]


def unusable(run: Observation) -> str | None:
    """Why this run shows the command can't run at all (timed out, not found, not executable, a usage or an
    internal error), or None. A run of no test is a fact (a young repo), not a reason."""
    code = run["exit_code"]
    if code is None:
        return run["summary"]
    if code in (126, 127):
        return f"`{run['command']}` could not run (exit {code}: command not found or not executable)"
    if code in _PYTEST_UNUSABLE and (run.get("runner") == "pytest" or "pytest" in (run["command"] or "")) \
            and not run["tests_passed"] and not run["tests_failed"]:
        return f"`{run['command']}`: {_PYTEST_UNUSABLE[code]} (exit {code})"
    if code != 0 and not run["tests_passed"] and not run["tests_failed"] and _USAGE.search(last_lines(run)):
        return f"`{run['command']}`: usage error (exit {code})"
    return None


def failing_named(run: Observation, shown: int = 3) -> str:
    """"; failing: a, b, c and N more": the failing tests the run names, for a summary read without `show` (the
    run's summary line, AUTO-RUN.md); "" when it names none."""
    failing = run["failing"] or []
    if not failing:
        return ""
    more = f" and {len(failing) - shown} more" if len(failing) > shown else ""
    return f"; failing: {', '.join(failing[:shown])}{more}"
