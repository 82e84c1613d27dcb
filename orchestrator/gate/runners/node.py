"""node's test runner in TAP (the gate adds `--test-reporter=tap` on stdout through NODE_OPTIONS; node 20's own
default off a terminal): nested subtests by indentation, leaves by their path `suite > test`, SKIP/TODO
directives as skips."""

from __future__ import annotations

import re

from orchestrator.gate.runners import Observed

_SUBTEST = re.compile(r"^( *)# Subtest: (.*)$")
_RESULT = re.compile(r"^( *)(ok|not ok) \d+(?: - ([^#]*?))?\s*(?:# (SKIP|TODO)\b ?(.*))?$", re.IGNORECASE)
_TAP = re.compile(r"^TAP version \d+$", re.MULTILINE)
_INDENT = 4


def node_tap(output: str) -> Observed | None:
    if not _TAP.search(output):
        return None
    observed = Observed("node --test")
    names: dict[int, str] = {}
    children: dict[int, int] = {}
    for line in output.splitlines():
        if subtest := _SUBTEST.match(line):
            names[len(subtest.group(1)) // _INDENT] = subtest.group(2).strip()
            continue
        result = _RESULT.match(line)
        if not result:
            continue
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
        else:
            observed.fail(test_id)
    return observed
