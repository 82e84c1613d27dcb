"""node's test runner: the gate's own reporter's lines (every test by its file and suite path, passes included),
else TAP (the gate adds `--test-reporter=tap` on stdout through NODE_OPTIONS; node 20's own
default off a terminal): nested subtests by indentation, leaves by their path `suite > test`, SKIP/TODO
directives as skips. A failing test's id starts with its file's name, from the `location:` of its YAML block
(file names, not paths: the base's worktree and a task's lie in different folders), so tests of the same name
in two files stay apart."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from orchestrator.gate.observe.bounded import report_text
from orchestrator.gate.observe.runners import Observed

_SUBTEST = re.compile(r"^( *)# Subtest: (.*)$")
_RESULT = re.compile(r"^( *)(ok|not ok) \d+(?: - ([^#]*?))?\s*(?:# (SKIP|TODO)\b ?(.*))?$", re.IGNORECASE)
_TAP = re.compile(r"^TAP version \d+$", re.MULTILINE)
_LOCATION = re.compile(r"^\s+location: '(?:.*/)?([^/]+?):\d+:\d+'\s*$")
_INDENT = 4


def node_tap(output: str) -> Observed | None:
    if not _TAP.search(output):
        return None
    observed = Observed("node --test")
    names: dict[int, str] = {}
    children: dict[int, int] = {}
    failing: list[str] = []
    located = True  # the last failure already has its file (or there is none yet)
    for line in output.splitlines():
        if not located and (location := _LOCATION.match(line)):
            named = f"{location.group(1)} > {failing[-1]}"
            failing[-1], observed.ran[-1], located = named, named, True
            continue
        if subtest := _SUBTEST.match(line):
            located = True
            names[len(subtest.group(1)) // _INDENT] = subtest.group(2).strip()
            continue
        result = _RESULT.match(line)
        if not result:
            continue
        located = True
        level = len(result.group(1)) // _INDENT
        has_children = children.get(level + 1, 0) > 0
        for deeper in [key for key in children if key > level]:
            children[deeper] = 0
        children[level] = children.get(level, 0) + 1
        if has_children:
            continue  # a suite or a test with subtests: its leaves are counted
        name = (result.group(3) or names.get(level, "")).strip()
        test_id = " > ".join([*(names.get(index, "") for index in range(level)), name])
        directive = (result.group(4) or "").upper()
        if directive:
            observed.skip(test_id, (result.group(5) or "").strip() or directive.lower())
        elif result.group(2) == "ok":
            observed.ok(test_id)
        else:  # appended as is (a test of the same name may fail in another file) and named by its location
            failing.append(test_id)
            observed.ran.append(test_id)
            located = False
    observed.failing = sorted(set(failing))
    observed.failed = len(observed.failing)
    return observed


def node_report(path: Path) -> Observed | None:
    """The gate's reporter (shim/autobuild_node_reporter.mjs): ids `file > suite > test`; a test or suite with
    subtests counts through its leaves, unless it failed with no failing subtest (a hook's failure)."""
    try:
        lines = report_text(path).splitlines()
    except OSError:
        return None
    events = []
    for line in lines:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return node_events(events)


def node_events(records: list[dict[str, Any]]) -> Observed | None:
    """The reporter's records (from its file or the gate's channel), children before their parent."""
    events = [event for event in records if isinstance(event.get("path"), list)]
    if not events:
        return None
    observed = Observed("node --test")
    failed_under: set[str] = set()
    for event in events:  # children end before their parent
        test_id = " > ".join([str(event.get("file") or ""), *map(str, event["path"])]).lstrip(" >")
        outcome = event.get("outcome")
        if event.get("parent") and not (outcome == "fail" and test_id not in failed_under):
            continue
        if outcome == "fail":
            observed.fail(test_id)
            parts = test_id.split(" > ")
            failed_under.update(" > ".join(parts[:depth]) for depth in range(1, len(parts)))
        elif outcome == "pass":
            observed.ok(test_id)
        else:
            observed.skip(test_id, str(event.get("reason") or outcome))
    if observed.failing is not None:
        observed.failing.sort()
    return observed
