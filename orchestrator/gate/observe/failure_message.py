"""Why one failing test failed, in a line, from the runner's own failure report: pytest's failing statement (its
`>` line) with its `E` line, jest's and vitest's expectation, go's `file_test.go:N:` line, node's TAP `error:`. Read
in the test's own section of the output (from its failure header to the next test's), never in a source listing
shown for another test: the first assertion-looking line of a listing is often one that passed."""

from __future__ import annotations

import itertools
import re

from orchestrator.text import uncoloured

_REPORT = re.compile(r"^(?:E\s+(.+)|\s*(AssertionError.*)|.*\berror: (.+)|\s+(\S+_test\.go:\d+: .+)"
                     r"|\s+(Expected: .+))$", re.MULTILINE)  # jest: Expected: 6
_LISTED = re.compile(r"^\s*(assert .+)$", re.MULTILINE)  # a source line: only when the runner reported nothing else
_STATEMENT = re.compile(r"^>\s+(\S.*)$", re.MULTILINE)  # pytest marks the failing line of its listing
_RECEIVED = re.compile(r"\s*(Received: .+)")
_FRAME = re.compile(r"^[ \t]*>[ \t]*\d+[ \t]*\|(.+)$", re.MULTILINE)  # jest marks the failing line of its code frame
_HEADERS = (r"^_{2,} (?:.*\W)?{leaf}\W.*_{2,}$|^_{2,} {leaf} _{2,}$", r"^[ \t]*● .*{leaf}",
            r"^[ \t]*FAIL[ \t]+.*{leaf}", r"^=== RUN[ \t]+\S*{leaf}$", r"^[ \t]*not ok \d+ - .*{leaf}",
            r"^(?:FAIL|ERROR): {leaf}\b")
"""A test's failure header: pytest's, jest's, vitest's, go -v's, node's TAP, unittest's."""
_ANY_HEADER = re.compile(r"^(?:_{2,} \S.* _{2,}|={3,} .+ ={3,}|[ \t]*● |[ \t]*FAIL[ \t]+\S|=== RUN|[ \t]*not ok \d+|"
                         r"(?:FAIL|ERROR): \S|Test Suites: )", re.MULTILINE)
_YAML_BLOCK = ("|", "|-", "|+", ">", ">-", ">+")


def failure_message(output: str, test: str) -> str:
    """The line that says why `test` failed in the run's `output` (colours off: vitest colours its diff even off a
    terminal); "it fails" when the output says nothing we can quote."""
    output = uncoloured(output)
    leaf = re.split(r" > |::|\.", test)[-1]
    start, end = _section(output, leaf)
    found = _REPORT.search(output, start, end) or _LISTED.search(output, start, end)
    if found is None:  # no section of its own: the first report after the test's name, as before
        near = output.find(leaf)
        found = _REPORT.search(output, max(near, 0)) or _LISTED.search(output, max(near, 0)) or _REPORT.search(output)
    if found is None:
        return "it fails"
    message = next(group for group in found.groups() if group).strip()
    if message in _YAML_BLOCK:  # node's TAP: `error: |-` and the message indented below it
        key = found.group(0)
        deeper = " " * (len(key) - len(key.lstrip()) + 1)
        block = itertools.takewhile(lambda line: not line.strip() or line.startswith(deeper),
                                    output[found.end():].splitlines()[1:])
        message = " ".join(line.strip() for line in block if line.strip()) or message
    elif found.group(0).startswith("E"):
        statements = list(_STATEMENT.finditer(output, start, found.start()))
        if statements and (statement := statements[-1].group(1).strip()) != message:
            message = f"{statement}: {message}"
    elif message.startswith("Expected: "):
        message = _jest(output, found.end(), end or len(output), message)
    return message[:300]


def _jest(output: str, after: int, end: int, expected: str) -> str:
    """jest's `Expected:` with its `Received:` line, led by the failing line of its code frame."""
    received = _RECEIVED.match(output, after)
    message = f"{expected}; {received.group(1).strip()}" if received else expected
    frame = _FRAME.search(output, after, max(end, after))
    return f"{frame.group(1).strip()}: {message}" if frame else message


def _section(output: str, leaf: str) -> tuple[int, int]:
    """Where the test's own failure report is: from its header to the next header (0, 0: no header found)."""
    if not leaf:
        return 0, 0
    name = re.escape(leaf)
    starts = [found.start() for pattern in _HEADERS
              if (found := re.search(pattern.replace("{leaf}", name), output, re.MULTILINE)) is not None]
    if not starts:
        return 0, 0
    start = min(starts)
    line_end = output.find("\n", start)
    following = _ANY_HEADER.search(output, line_end + 1) if line_end >= 0 else None
    return start, following.start() if following is not None else len(output)
