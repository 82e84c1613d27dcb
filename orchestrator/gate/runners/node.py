"""node's test runner in TAP (the gate adds `--test-reporter=tap` on stdout through NODE_OPTIONS; node 20's own
default off a terminal): nested subtests by indentation, leaves by their path `suite > test`, SKIP/TODO
directives as skips. A failing test's id starts with its file's name, from the `location:` of its YAML block
(file names, not paths: the base's worktree and a task's lie in different folders), so tests of the same name
in two files stay apart."""

from __future__ import annotations

import re

from orchestrator.gate.runners import Observed

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
